"""The search engines. ``ai.search(state, limits)`` is the only way in.

Each game has its own compiled engine module (``ai.connect4``, ``ai.othello``) because the
hot loops are specialised to its bitboards; this module only picks the right one. Engines
never print, send or sleep: they yield finished iterations and the caller decides what to do.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

from ai.limits import Iteration, Limits
from games.base import State

__all__ = ["Iteration", "Limits", "search", "best", "warm_up"]

_ENGINES = {"connect4": "ai.connect4", "othello": "ai.othello"}


def _engine(game_name: str) -> ModuleType:
    try:
        return importlib.import_module(_ENGINES[game_name])
    except KeyError:
        raise ValueError(f"no engine for game {game_name!r}") from None


def search(state: State, limits: Limits) -> Iterator[Iteration]:
    """Yield each finished iteration of a search of ``state`` within ``limits``.

    The first iteration is always produced (even past a deadline) when the side to move has
    a move, so a caller always gets a legal move; stop iterating whenever you like.
    Raises ``ValueError`` if the game is over.
    """
    if state.is_over():
        raise ValueError("the game is over: there is nothing to search")
    engine: Iterator[Iteration] = _engine(state.game_name).search(state, limits)
    return engine


def best(state: State, limits: Limits) -> Iteration:
    """The last finished iteration of ``search(state, limits)``: the engine's answer."""
    last: Iteration | None = None
    for iteration in search(state, limits):
        last = iteration
    assert last is not None, "engines always finish at least one iteration"
    return last


def warm_up(game_name: str) -> float:
    """Compile (or load from cache) the engine's kernels; returns the seconds it took.

    Call once per process before the first timed move so JIT time is never charged to it.
    """
    seconds: float = _engine(game_name).warm_up()
    return seconds
