"""The shipped levels' strength as measured here, so a new server's level ratings mean
something before anyone runs ``discus calibrate``.

Each entry is what ``discus calibrate`` found for ``ai.levels.DEFAULT_LEVELS`` on the
project's 2-core machine: Elo relative to the game's weakest level and its standard error.
It stands for a level only while the level is exactly its default (an admin's edit makes it
a different opponent, then a guess until measured), and only until the database holds a
finished calibration run of the game: a run measured where the server runs always wins.
Measure again whenever the default levels or the engines change:

    discus calibrate connect4 --pairs all --games-per-pair 24 --seed 7
    discus calibrate othello --games-per-pair 16 --seed 7
"""

from __future__ import annotations

from collections.abc import Mapping

from ai.levels import DEFAULT_LEVELS, Level

MEASURED: Mapping[str, Mapping[str, tuple[float, float]]] = {
    # 240 games (every pair) in 5.5 min, 2026-11-26.
    "connect4": {"beginner": (0.0, 0.0), "easy": (451.0, 115.0), "medium": (641.0, 123.0),
                 "hard": (931.0, 134.0), "expert": (1130.0, 142.0)},
    # 64 games (adjacent pairs) in 9 min, 2026-11-26; medium-hard went 16-0, so hard's
    # figure rests on a wide error.
    "othello": {"beginner": (0.0, 0.0), "easy": (406.0, 149.0), "medium": (673.0, 185.0),
                "hard": (1281.0, 311.0), "expert": (1586.0, 333.0)},
}
"""Game -> level name -> (Elo over the weakest level, its standard error)."""


def shipped_measure(game: str, level: Level) -> tuple[float, float] | None:
    """The shipped (Elo, error) of ``level``, or None when it is not the default level of
    that name (or was never measured)."""
    defaults = {lv.name: lv for lv in DEFAULT_LEVELS.get(game, ())}
    if defaults.get(level.name) != level:
        return None
    return MEASURED.get(game, {}).get(level.name)
