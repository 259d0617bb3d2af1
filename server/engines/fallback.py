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
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import games
from ai.levels import Level, choose_move
from ai.limits import Limits
from games.base import State

log = logging.getLogger(__name__)

QUICK_LIMITS = Limits(depth=3, nodes=20_000)
"""The fallback's search: three plies, and a node budget (no clock: a timer thread per call
would cost more than the search) that keeps it to a few milliseconds on any position."""

_QUICK_LEVEL = Level("quick", 0, "", QUICK_LIMITS.depth, 0.1, 0.1, QUICK_LIMITS.nodes,
                     candidates=1, margin=0, rails=True)


def quick_move(state: State, seed: int) -> int:
    """A legal move at once, for when no engine answers: the engine's best move after a
    shallow search (``QUICK_LIMITS``, in the calling process), with the rails kept (win in
    one, else never allow one). ``seed`` matters only for a game without an engine, whose
    move is then a seeded choice among the moves the rails allow.

    The first call in a process loads the engine's compiled kernels (a fraction of a second;
    ``AiPool.start`` does it off the event loop, ``prepare_quick_move``); later calls take
    milliseconds.
    """
    import ai

    try:
        iterations = [ai.best(state, QUICK_LIMITS)]
    except (ImportError, ValueError):  # no engine for this game: the rails alone
        iterations = []
    return choose_move(state, _QUICK_LEVEL, seed, iterations)


QUICK_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="discus-quick")
"""Where the server runs ``quick_move``: never in the event loop (even a fallback search is
an AI turn), and one at a time (the Othello engine keeps one set of tables per process)."""


async def quick_move_off_loop(state: State, seed: int) -> int:
    """``quick_move`` in the server's quick-move thread, for a coroutine to await."""
    return await asyncio.get_running_loop().run_in_executor(QUICK_THREAD, quick_move, state,
                                                            seed)


async def quick_answer_off_loop(game: str, moves: Sequence[int], seed: int) -> int:
    """The quick move after ``moves`` from the start of ``game``, off the loop; should the
    fallback itself fail, the first legal move (a game must never stall)."""
    state = games.load(game).initial()
    for move in moves:
        state = state.play(move)
    try:
        return await quick_move_off_loop(state, seed)
    except Exception:
        log.exception("the quick fallback failed; playing the first legal move")
        return state.legal_moves()[0]


def prepare_quick_move(game_names: Sequence[str]) -> None:
    """Load what ``quick_move`` needs for these games, so its first call is quick too."""
    for name in game_names:
        try:
            quick_move(games.load(name).initial(), 0)
        except Exception:
            log.exception("the quick fallback of %s could not be prepared", name)
