"""The search engines. ``ai.search(state, limits)`` is the only way in.

Each game has its own compiled engine module (``ai.connect4``, ``ai.othello``) because the
hot loops are specialised to its bitboards; this module only picks the right one. Engines
never print, send or sleep: they yield finished iterations and the caller decides what to do.

The registry: a game's ``Engine`` entry names its engine module, its default difficulty
levels, the measured strength of those levels and how its games are reviewed. A game from
elsewhere joins with ``games.register`` and ``register`` here, from a module of its own;
listing that module in ``$DISCUS_PLUGINS`` (comma-separated) has every process import it
the first time it imports ``ai`` -- the server's AI worker processes included, which start
fresh and so would not know a game registered in the server's process only.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType

from ai import levels as _levels
from ai import review as _review
from ai.levels import Level
from ai.limits import Iteration, Limits
from games.base import State

__all__ = ["Engine", "Iteration", "Limits", "search", "best", "warm_up", "engine",
           "register", "unregister", "names", "win_in", "PLUGINS_VARIABLE"]

PLUGINS_VARIABLE = "DISCUS_PLUGINS"
"""The environment variable listing plug-in modules (comma-separated) ``ai`` imports."""


@dataclass(frozen=True)
class Engine:
    """One game's engine as the registry knows it.

    - ``module``: has ``search(state, limits)`` (an iterator of ``Iteration``) and
      ``warm_up()`` (seconds spent compiling or loading).
    - ``levels``: the difficulty levels a fresh server offers (``ai.levels.DEFAULT_LEVELS``).
    - ``measured``: level name -> (Elo over the weakest level, its standard error), as
      ``discus calibrate`` found for exactly these levels (``server.ratings.level_calibration``).
    - ``review``: how its positions are valued and its moves judged (``ai.review``).
    - ``openings``: short opening lines (moves back to back, in notation) ``discus
      calibrate`` plays before the levels take over, so a pair's games differ.
    """

    module: str
    levels: tuple[Level, ...]
    measured: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    review: _review.ReviewRules = field(default_factory=_review.ReviewRules)
    openings: tuple[str, ...] = ("",)


_ENGINES: dict[str, Engine] = {
    "connect4": Engine(
        "ai.connect4", _levels.CONNECT4_LEVELS, _levels.CONNECT4_MEASURED, _review.CONNECT4,
        # Two plies each, no line the mirror image of another (the mirror is the same game).
        openings=("44", "43", "34", "33", "35", "42", "24", "32"),
    ),
    "othello": Engine(
        "ai.othello", _levels.OTHELLO_LEVELS, _levels.OTHELLO_MEASURED, _review.OTHELLO,
        # The three second moves after f5 (perpendicular, diagonal, parallel) and replies.
        openings=("f5d6c3", "f5d6c4", "f5d6c5", "f5f6e6", "f5f6d3", "f5f4e3", "f5f4f3",
                  "f5d6c3d3"),
    ),
}
ENGINES: Mapping[str, Engine] = MappingProxyType(_ENGINES)
"""Every registered engine by game name (read-only; ``register`` adds one)."""


def names() -> list[str]:
    """The games with an engine, in registration order."""
    return list(_ENGINES)


def engine(game_name: str) -> Engine:
    """The registry entry of ``game_name``'s engine; ``ValueError`` if it has none."""
    try:
        return _ENGINES[game_name]
    except KeyError:
        raise ValueError(f"no engine for game {game_name!r}") from None


def register(game_name: str, entry: Engine) -> None:
    """Add (or replace) the engine of ``game_name`` (register the game itself with
    ``games.register``). See the module docstring for the other processes."""
    _ENGINES[game_name] = entry


def unregister(game_name: str) -> None:
    """Forget a registered engine (a test's game, after the test); no-op if unknown."""
    _ENGINES.pop(game_name, None)


def _engine(game_name: str) -> ModuleType:
    return importlib.import_module(engine(game_name).module)


def search(state: State, limits: Limits) -> Iterator[Iteration]:
    """Yield each finished iteration of a search of ``state`` within ``limits``.

    The first iteration is always produced (even past a deadline) when the side to move has
    a move, so a caller always gets a legal move; stop iterating whenever you like.
    Raises ``ValueError`` if the game is over.
    """
    if state.is_over():
        raise ValueError("the game is over: there is nothing to search")
    found: Iterator[Iteration] = _engine(state.game_name).search(state, limits)
    return found


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


def win_in(game_name: str, ply: int, score: int, exact: bool) -> int | None:
    """A search's proven result as the ``ai_thinking`` message's ``win_in`` (see
    ``ai.review.ReviewRules.win_in``); None for a game without an engine."""
    try:
        rules = engine(game_name).review
    except ValueError:
        return None
    return rules.win_in(ply, score, exact)


for _plugin in filter(None, (m.strip() for m in os.environ.get(PLUGINS_VARIABLE, "").split(","))):
    importlib.import_module(_plugin)
