"""Canonical position keys under each game's symmetries, and moves carried between
orientations. Pure functions on plain ints; no game package needed.

A position is given as the game's ``cells`` (owner 0/1/None, row by row from the top, as
``Game.cells`` returns them) and the side to move. It becomes two bitboards relative to the
side to move (``mine``, ``theirs``; bit ``row * cols + col``), so a position and its
colour-swapped twin share a key and scores stay from the side to move. The canonical form is
the smallest ``(mine, theirs)`` over the game's symmetries; ``symmetry`` says which transform
took the asking position there, so a best move stored canonically can be turned back.

Connect Four has one mirror (columns reversed). Othello has the 8 symmetries of the square:
symmetry ``s`` transposes if bit 0 is set, then flips rows if bit 1, then flips columns if
bit 2 -- each an involution, undone in the reverse order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

M64 = (1 << 64) - 1
C4_ROWS, C4_COLS = 6, 7
PASS = "pass"


@dataclass(frozen=True)
class Canonical:
    """Where a position lives in the cache: ``key`` and the ``symmetry`` that maps the asking
    orientation onto the canonical one."""

    game: str
    key: str
    symmetry: int


# -- Othello: the dihedral group on an 8x8 bitboard ------------------------------------------


def flip_rows(x: int) -> int:
    """Row r goes to row 7 - r (a byte swap, since each row is one byte)."""
    return int.from_bytes(x.to_bytes(8, "little"), "big")


def flip_columns(x: int) -> int:
    """Column c goes to column 7 - c (bits reversed inside every byte)."""
    x = ((x >> 1) & 0x5555555555555555) | ((x & 0x5555555555555555) << 1)
    x = ((x >> 2) & 0x3333333333333333) | ((x & 0x3333333333333333) << 2)
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0F) | ((x & 0x0F0F0F0F0F0F0F0F) << 4)
    return x & M64


def transpose(x: int) -> int:
    """Square (r, c) goes to (c, r): three delta swaps across the main diagonal."""
    t = 0x0F0F0F0F00000000 & (x ^ (x << 28))
    x ^= t ^ (t >> 28)
    t = 0x3333000033330000 & (x ^ (x << 14))
    x ^= t ^ (t >> 14)
    t = 0x5500550055005500 & (x ^ (x << 7))
    x ^= t ^ (t >> 7)
    return x & M64


def othello_transform(x: int, symmetry: int) -> int:
    if symmetry & 1:
        x = transpose(x)
    if symmetry & 2:
        x = flip_rows(x)
    if symmetry & 4:
        x = flip_columns(x)
    return x


def _othello_square(row: int, col: int, symmetry: int, inverse: bool) -> tuple[int, int]:
    steps = [1, 2, 4]
    for bit in reversed(steps) if inverse else steps:
        if symmetry & bit:
            if bit == 1:
                row, col = col, row
            elif bit == 2:
                row = 7 - row
            else:
                col = 7 - col
    return row, col


# -- Connect Four: one mirror ----------------------------------------------------------------

_C4_COLUMN = [sum(1 << (r * C4_COLS + c) for r in range(C4_ROWS)) for c in range(C4_COLS)]


def mirror_columns(x: int) -> int:
    """Connect Four column c goes to column 6 - c."""
    out = 0
    for c in range(C4_COLS):
        shift = (C4_COLS - 1 - c) - c
        part = x & _C4_COLUMN[c]
        out |= part << shift if shift >= 0 else part >> -shift
    return out


def c4_transform(x: int, symmetry: int) -> int:
    return mirror_columns(x) if symmetry & 1 else x


# -- both games ------------------------------------------------------------------------------

_SYMMETRIES = {"connect4": 2, "othello": 8}
_SIZES = {"connect4": C4_ROWS * C4_COLS, "othello": 64}


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
    return othello_transform(x, symmetry) if game == "othello" else c4_transform(x, symmetry)


def canonical(game: str, cells: Sequence[int | None], to_move: int) -> Canonical:
    """The canonical key of a position given by its cells and side to move."""
    if game not in _SYMMETRIES:
        raise ValueError(f"no symmetries known for game {game!r}")
    if len(cells) != _SIZES[game]:
        raise ValueError(f"{game} has {_SIZES[game]} cells, got {len(cells)}")
    mine, theirs = bitboards(cells, to_move)
    best: tuple[int, int] | None = None
    chosen = 0
    for s in range(_SYMMETRIES[game]):
        image = (transform(game, mine, s), transform(game, theirs, s))
        if best is None or image < best:
            best, chosen = image, s
    assert best is not None
    return Canonical(game, f"{best[0]:016x}{best[1]:016x}", chosen)


def move_to_canonical(game: str, move: str, symmetry: int) -> str:
    """A move in the asking orientation, written in the canonical orientation."""
    return _move(game, move, symmetry, inverse=False)


def move_from_canonical(game: str, move: str, symmetry: int) -> str:
    """A move stored in the canonical orientation, written in the asking orientation."""
    return _move(game, move, symmetry, inverse=True)


def _move(game: str, move: str, symmetry: int, inverse: bool) -> str:
    text = move.strip().lower()
    if game == "connect4":
        if not (text.isdigit() and 1 <= int(text) <= C4_COLS):
            raise ValueError(f"not a Connect Four column: {move!r}")
        column = int(text)
        return str(C4_COLS + 1 - column) if symmetry & 1 else str(column)
    if text == PASS:
        return PASS
    if len(text) != 2 or text[0] not in "abcdefgh" or text[1] not in "12345678":
        raise ValueError(f"not an Othello square: {move!r}")
    row, col = _othello_square(int(text[1]) - 1, ord(text[0]) - ord("a"), symmetry, inverse)
    return f"{chr(ord('a') + col)}{row + 1}"
