"""Pure game rules. ``games.load(name)`` is the only way in.

Nothing here does I/O, reads a clock or uses unseeded randomness, so the server validates
moves with exactly the code the AI searches with.
"""

from __future__ import annotations

import importlib

from games.base import Game, State
from games.errors import IllegalMove, InvalidNotation

__all__ = ["Game", "State", "IllegalMove", "InvalidNotation", "load", "names"]

_MODULES = {"connect4": "games.connect4", "othello": "games.othello"}


def names() -> list[str]:
    """The names ``load`` accepts, in a stable order."""
    return list(_MODULES)


def load(name: str) -> Game:
    """The game called ``name``; ``ValueError`` naming the known games otherwise."""
    try:
        module = _MODULES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(_MODULES)}") from None
    game: Game = importlib.import_module(module).GAME
    return game
