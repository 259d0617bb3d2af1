"""Pure game rules. ``games.load(name)`` is the only way in.

Nothing here does I/O, reads a clock or uses unseeded randomness, so the server validates
moves with exactly the code the AI searches with.

A game is a module whose ``GAME`` is a ``Game`` (its rules, notation and static facts) and
one entry in the registry below; a game from elsewhere (a plug-in, a test's game) joins with
``register`` and its engine with ``ai.register``. Nothing outside ``games`` and ``ai`` names
a game: the server asks ``names()`` and ``load(name)``.
"""

from __future__ import annotations

import importlib

from games.base import Game, State
from games.errors import IllegalMove, InvalidNotation

__all__ = ["Game", "State", "IllegalMove", "InvalidNotation", "load", "names", "register",
           "unregister"]

_MODULES: dict[str, str] = {"connect4": "games.connect4", "othello": "games.othello"}
"""The registry: game name -> the module whose ``GAME`` it is, in the order ``names`` lists."""
_LOADED: dict[str, Game] = {}


def names() -> list[str]:
    """The names ``load`` accepts, in a stable order (registration order)."""
    return list(_MODULES)


def load(name: str) -> Game:
    """The game called ``name``; ``ValueError`` naming the known games otherwise."""
    game = _LOADED.get(name)
    if game is not None:
        return game
    try:
        module = _MODULES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(_MODULES)}") from None
    game = importlib.import_module(module).GAME
    _LOADED[name] = game
    return game


def register(name: str, module: str) -> None:
    """Add the game ``name``, whose ``Game`` is ``GAME`` in ``module`` (imported on first
    ``load``). Registering the same module again is a no-op; ``ValueError`` if ``name``
    is taken by another module.

    Every process that plays the game must register it: the server's AI workers are fresh
    processes, so a plug-in registers itself when its module is imported and the workers
    are told to import it (``ai.register``'s ``engine`` module does it)."""
    known = _MODULES.get(name)
    if known is not None and known != module:
        raise ValueError(f"game {name!r} is already {known}, not {module}")
    _MODULES[name] = module


def unregister(name: str) -> None:
    """Forget a registered game (a test's game, after the test); no-op if unknown."""
    _MODULES.pop(name, None)
    _LOADED.pop(name, None)
