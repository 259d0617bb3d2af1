"""Engines that misbehave on purpose, for testing the worker pool's guarantees.

Loaded by path (``scripted_engines:stuck``) inside the worker processes, which inherit the
test run's ``sys.path``. None of these is a real engine; the real ones are ``ai.search``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from unittest import mock

import numpy as np

from ai.limits import Iteration, Limits
from games.base import State


def warm_up(game_name: str) -> float:
    return 0.0


def crash_on_start(game_name: str) -> float:
    """A warm-up that kills the process (a broken engine build)."""
    os._exit(4)


def steady(state: State, limits: Limits) -> Iterator[Iteration]:
    """Three iterations that all prefer the last legal move, ranked best first, scored
    +1, +2, +3 (the best move's score is the iteration's)."""
    legal = state.legal_moves()
    for depth in (1, 2, 3):
        scores = tuple((m, depth - i) for i, m in enumerate(reversed(legal)))
        yield Iteration(depth=depth, score=depth, move=legal[-1], pv=(legal[-1],),
                        nodes=10 * depth, seconds=0.001 * depth, root_scores=scores)


def unhurried(state: State, limits: Limits) -> Iterator[Iteration]:
    """Eight iterations 0.1 s apart (``seconds`` is the real time since the start), all for
    the last legal move."""
    legal = state.legal_moves()
    started = time.perf_counter()
    for depth in range(1, 9):
        time.sleep(0.1)
        yield Iteration(depth=depth, score=0, move=legal[-1], pv=(legal[-1],), nodes=depth,
                        seconds=time.perf_counter() - started)


def stuck(state: State, limits: Limits) -> Iterator[Iteration]:
    """One iteration, then never returns (a search ignoring its hard deadline)."""
    legal = state.legal_moves()
    yield Iteration(depth=1, score=0, move=legal[-1], pv=(), nodes=1, seconds=0.0)
    time.sleep(3600)


def dies(state: State, limits: Limits) -> Iterator[Iteration]:
    """The process vanishes mid-search (a crash in compiled code looks like this)."""
    os._exit(3)
    yield  # pragma: no cover - makes this a generator


def nap(seconds: float, check: Callable[[], None] = lambda: None, stop: object = None) -> int:
    """A low-priority task that takes ``seconds`` and answers with its process id; it checks
    every 0.05 s whether to give its worker back."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        check()
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    return os.getpid()


def stubborn_nap(seconds: float, check: Callable[[], None] = lambda: None,
                 stop: object = None) -> int:
    """``nap`` that never checks (a task that cannot yield)."""
    time.sleep(seconds)
    return os.getpid()


def fail_task(check: Callable[[], None] = lambda: None, stop: object = None) -> None:
    """A low-priority task that raises."""
    raise ValueError("this task always fails")


def endless_proof(check: Callable[[], None], stop: np.ndarray) -> int:
    """A task that proves the empty Connect Four board (minutes without the book): it ends
    only when ``stop`` is raised, then gives its worker back through ``check``."""
    from ai.connect4 import engine
    from games.connect4 import GAME

    with mock.patch.object(engine.book, "lookup", return_value=None):
        found = engine.exact_value(GAME.initial(), None, stop)
    check()
    return -1 if found is None else found[0]


def slow_warm_up(game_name: str) -> float:
    """A warm-up that takes as long as a short first start's compiling (3 s)."""
    time.sleep(3.0)
    return 3.0


OTHELLO_LINE = ("e6", "f6", "d3", "e7", "e8", "d8", "g6", "f8")
"""Eight Othello plies after which Black has no move but to pass."""


def othello_line(state: State, limits: Limits) -> Iterator[Iteration]:
    """Plays ``OTHELLO_LINE``'s move for the ply reached (discs on the board less the four
    of the start; past the line, the first legal move). A position with nothing but a pass
    is never the engine's to search: the server plays such a pass itself, so being asked for
    one fails loudly."""
    from games.othello import GAME

    legal = state.legal_moves()
    if [GAME.format_move(m) for m in legal] == ["pass"]:
        raise AssertionError("the engine was asked to search a forced pass")
    ply = sum(cell is not None for cell in GAME.cells(state)) - 4
    move = GAME.parse_move(state, OTHELLO_LINE[ply]) if ply < len(OTHELLO_LINE) else legal[0]
    yield Iteration(depth=1, score=0, move=move, pv=(move,), nodes=1, seconds=0.0)
