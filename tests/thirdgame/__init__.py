"""The third game, a plug-in defined only under ``tests/``: tic-tac-toe's rules
(``rules``), its negamax engine (``engine``) and its entries in the ``games`` and ``ai``
registries (``register``). Importing ``tests.thirdgame.plugin`` registers it, so listing
that module in ``$DISCUS_PLUGINS`` makes every process that imports ``ai`` (the AI workers
too) know it; importing this package alone registers nothing (test collection must not see
a game only some tests register)."""

from __future__ import annotations

import ai
import games
from ai.levels import Level

NAME = "tictactoe"
PLUGIN = "tests.thirdgame.plugin"
"""The module to list in ``$DISCUS_PLUGINS``."""

LEVELS = (
    Level("beginner", 0, "Plays any move that does not lose at once.", 1, 0.05, 0.2, None,
          candidates=9, margin=2, rails=True),
    Level("perfect", 1, "Never loses.", None, 0.05, 0.2, None, candidates=1, margin=0,
          rails=True),
)


def register() -> None:
    """Add tic-tac-toe to both registries (again: no harm)."""
    games.register(NAME, "tests.thirdgame.rules")
    ai.register(NAME, ai.Engine("tests.thirdgame.engine", LEVELS))


def unregister() -> None:
    games.unregister(NAME)
    ai.unregister(NAME)
