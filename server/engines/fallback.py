"""The quick move: a legal, sensible move at once, for when no engine answers in time.

Every pool falls back on it (a job that waited too long, an engine process that died or
hung, a worker that never answered, a pool closing) and an engine process uses it for a game
it has no engine for. It is a shallow search in the calling process, with the rails kept (win
in one, else never allow one), so it is never a random move; the server runs it in one
thread of its own, never in its event loop (``quick_move_off_loop``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import games
from ai.levels import Level, choose_move, loses_in_one, win_in_one
from ai.limits import Limits
from games.base import State

log = logging.getLogger(__name__)

QUICK_LIMITS = Limits(depth=3, nodes=20_000)
"""The fallback's search: three plies, and a node budget (no clock: a timer thread per call
would cost more than the search) that keeps it to a few milliseconds on any position."""

_QUICK_LEVEL = Level("quick", 0, "", QUICK_LIMITS.depth, 0.1, 0.1, QUICK_LIMITS.nodes,
                     candidates=1, margin=0, rails=True)


def quick_move(state: State, seed: int, engine: bool = True) -> int:
    """A legal move at once, for when no engine answers: the engine's best move after a
    shallow search (``QUICK_LIMITS``, in the calling process), with the rails kept (win in
    one, else never allow one). ``seed`` matters only for a game without an engine, or with
    ``engine`` false, whose move is then ``rails_move``'s.

    The first call with ``engine`` in a process loads the engine's compiled kernels (a
    fraction of a second from numba's cache; about a minute on a first start, which compiles
    them); ``AiPool`` calls it so only once its workers have filled the cache
    (``prepare_quick_move``), and until then plays ``rails_move``. Later calls take
    milliseconds.
    """
    if not engine:
        return rails_move(state, seed)
    import ai

    try:
        iterations = [ai.best(state, QUICK_LIMITS)]
    except (ImportError, ValueError):  # no engine for this game: the rails alone
        return rails_move(state, seed)
    return choose_move(state, _QUICK_LEVEL, seed, iterations)


def rails_move(state: State, seed: int) -> int:
    """A quick pure-Python search over the rules alone (no engine kernel, so nothing to
    compile): a win in one if there is one; else, among the moves that do not allow a win in
    one, the one leaving the opponent the fewest replies, then the one nearest the middle of
    the legal moves (Connect Four's centre columns), then one chosen by ``seed``."""
    legal = state.legal_moves()
    if len(legal) == 1:
        return legal[0]
    winning = win_in_one(state)
    if winning is not None:
        return winning
    safe = [m for m in legal if not loses_in_one(state, m)] or legal
    middle = (len(legal) - 1) / 2
    tiebreak = random.Random(seed)
    return min(safe, key=lambda m: (len(state.play(m).legal_moves()),
                                    abs(legal.index(m) - middle), tiebreak.random()))


QUICK_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="discus-quick")
"""Where the server runs ``quick_move``: never in the event loop (even a fallback search is
an AI turn), and one at a time (the Othello engine keeps one set of tables per process)."""


async def quick_move_off_loop(state: State, seed: int, engine: bool = True) -> int:
    """``quick_move`` in the server's quick-move thread, for a coroutine to await."""
    return await asyncio.get_running_loop().run_in_executor(QUICK_THREAD, quick_move, state,
                                                            seed, engine)


async def quick_answer_off_loop(game: str, moves: Sequence[int], seed: int,
                                engine: bool = True) -> int:
    """The quick move after ``moves`` from the start of ``game``, off the loop; should the
    fallback itself fail, the first legal move (a game must never stall)."""
    state = games.load(game).initial()
    for move in moves:
        state = state.play(move)
    try:
        return await quick_move_off_loop(state, seed, engine)
    except Exception:
        log.exception("the quick fallback failed; playing the first legal move")
        return state.legal_moves()[0]


def prepare_quick_move(game_names: Sequence[str], engine: bool = True) -> None:
    """Load what ``quick_move`` needs for these games (with ``engine`` false, the rules'
    kernels only), so its first call is quick too."""
    for name in game_names:
        try:
            quick_move(games.load(name).initial(), 0, engine)
        except Exception:
            log.exception("the quick fallback of %s could not be prepared", name)
