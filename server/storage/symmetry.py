"""Canonical position keys under each game's symmetries, and moves carried between
orientations. The symmetries are the game's own (``Game.symmetries``, ``Game.transform``,
``Game.transform_move``): this module names no game.

A position is given as the game's ``cells`` (owner 0/1/None, row by row from the top, as
``Game.cells`` returns them) and the side to move. It becomes two bitboards relative to the
side to move (``mine``, ``theirs``; bit ``i`` for cell ``i``), so a position and its
colour-swapped twin share a key and scores stay from the side to move. The canonical form is
the smallest ``(mine, theirs)`` over the game's symmetries; ``symmetry`` says which transform
took the asking position there, so a best move stored canonically can be turned back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import games

PASS = "pass"


@dataclass(frozen=True)
class Canonical:
    """Where a position lives in the cache: ``key`` and the ``symmetry`` that maps the asking
    orientation onto the canonical one."""

    game: str
    key: str
    symmetry: int


def bitboards(cells: Sequence[int | None], to_move: int) -> tuple[int, int]:
    """(stones of the side to move, stones of the other side), bit ``i`` for cell ``i``."""
    mine = theirs = 0
    for i, owner in enumerate(cells):
        if owner is None:
            continue
        if owner == to_move:
            mine |= 1 << i
        else:
            theirs |= 1 << i
    return mine, theirs


def transform(game: str, x: int, symmetry: int) -> int:
    """The image of the cells ``x`` under the game's ``symmetry``."""
    return games.load(game).transform(x, symmetry)


def canonical(game: str, cells: Sequence[int | None], to_move: int) -> Canonical:
    """The canonical key of a position given by its cells and side to move; ``ValueError``
    for an unknown game or a wrong number of cells."""
    rules = games.load(game)
    size = rules.rows * rules.cols
    if len(cells) != size:
        raise ValueError(f"{game} has {size} cells, got {len(cells)}")
    mine, theirs = bitboards(cells, to_move)
    best: tuple[int, int] | None = None
    chosen = 0
    for s in range(rules.symmetries):
        image = (rules.transform(mine, s), rules.transform(theirs, s))
        if best is None or image < best:
            best, chosen = image, s
    assert best is not None
    width = max(16, -(-size // 4))  # hex digits of a board's bits (16: the 64-bit keys so far)
    return Canonical(game, f"{best[0]:0{width}x}{best[1]:0{width}x}", chosen)


def move_to_canonical(game: str, move: str, symmetry: int) -> str:
    """A move in the asking orientation, written in the canonical orientation."""
    return games.load(game).transform_move(move, symmetry)


def move_from_canonical(game: str, move: str, symmetry: int) -> str:
    """A move stored in the canonical orientation, written in the asking orientation."""
    return games.load(game).transform_move(move, symmetry, inverse=True)
