"""The shipped levels' strength as measured here, so a new server's level ratings mean
something before anyone runs ``discus calibrate``.

Each game's engine entry (``ai.Engine.measured``) holds what ``discus calibrate`` found for
its default levels (``ai.levels.DEFAULT_LEVELS``): Elo relative to the game's weakest level
and its standard error. It stands for a level only while the level is exactly its default
(an admin's edit makes it a different opponent, then a guess until measured), and only until
the database holds a finished calibration run of the game: a run measured where the server
runs always wins.
"""

from __future__ import annotations

from collections.abc import Mapping

from ai.levels import DEFAULT_LEVELS, Level
from ai.views import EngineView

MEASURED: Mapping[str, Mapping[str, tuple[float, float]]] = EngineView("measured")
"""Game -> level name -> (Elo over the weakest level, its standard error)."""


def shipped_measure(game: str, level: Level) -> tuple[float, float] | None:
    """The shipped (Elo, error) of ``level``, or None when it is not the default level of
    that name (or was never measured)."""
    defaults = {lv.name: lv for lv in DEFAULT_LEVELS.get(game, ())}
    if defaults.get(level.name) != level:
        return None
    return MEASURED.get(game, {}).get(level.name)
