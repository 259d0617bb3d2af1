"""Connect Four rules on a bitboard, compiled: the only implementation of the rules.

Layout (Pascal Pons' solver): bit ``7 * col + row`` is the cell in column ``col`` (0 = left)
and row ``row`` (0 = bottom); row 6 of every column is an always-empty sentinel so that shifts
never carry a line from one column into the next. A position is two ``uint64``: ``current``,
the stones of the side to move, and ``mask``, every stone. The other side's stones are
``current ^ mask``; after a move the sides swap by ``current ^ mask``, so the kernels never
branch on colour. ``current + mask`` is a unique key of the position.

Every constant and shift is a ``np.uint64``: mixing signed and unsigned makes numba use floats.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WIDTH = 7
HEIGHT = 6
CELLS = WIDTH * HEIGHT

_U = np.uint64
_H1 = _U(HEIGHT + 1)
_ONE = _U(1)
_ZERO = _U(0)
BOTTOM = _U(sum(1 << (7 * c) for c in range(WIDTH)))
"""The bottom cell of every column."""
BOARD = _U(sum(((1 << HEIGHT) - 1) << (7 * c) for c in range(WIDTH)))
"""Every playable cell (the sentinel row excluded)."""
_COLUMN = _U((1 << HEIGHT) - 1)


@njit(cache=True, nogil=True, inline="always")
def column_mask(col: int) -> np.uint64:
    """Every cell of column ``col``."""
    return _COLUMN << _U(7 * col)


@njit(cache=True, nogil=True, inline="always")
def top_cell(col: int) -> np.uint64:
    return _ONE << _U(7 * col + HEIGHT - 1)


@njit(cache=True, nogil=True, inline="always")
def bottom_cell(col: int) -> np.uint64:
    return _ONE << _U(7 * col)


@njit(cache=True, nogil=True, inline="always")
def can_play(mask: np.uint64, col: int) -> bool:
    """True when column ``col`` is not full."""
    return (mask & top_cell(col)) == _ZERO


@njit(cache=True, nogil=True, inline="always")
def possible(mask: np.uint64) -> np.uint64:
    """The lowest empty cell of every column that is not full."""
    return (mask + BOTTOM) & BOARD


@njit(cache=True, nogil=True, inline="always")
def move_cell(mask: np.uint64, col: int) -> np.uint64:
    """The cell a stone dropped in ``col`` lands on (0 if the column is full)."""
    return (mask + bottom_cell(col)) & column_mask(col)


@njit(cache=True, nogil=True, inline="always")
def alignment(stones: np.uint64) -> bool:
    """True when ``stones`` hold four in a row in any direction."""
    for shift in (_U(1), _U(6), _U(7), _U(8)):
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (shift + shift)):
            return True
    return False


@njit(cache=True, nogil=True)
def four_lines(stones: np.uint64) -> np.uint64:
    """Every stone of ``stones`` that is part of a four in a row (0 when there is none)."""
    cells = _U(0)
    for shift in (_U(1), _U(6), _U(7), _U(8)):
        pairs = stones & (stones >> shift)
        starts = pairs & (pairs >> (shift + shift))
        cells |= starts | (starts << shift) | (starts << (shift + shift))
        cells |= starts << (shift + shift + shift)
    return cells


@njit(cache=True, nogil=True, inline="always")
def winning_cells(stones: np.uint64, mask: np.uint64) -> np.uint64:
    """Empty cells (playable now or later) that would complete four for ``stones``."""
    # Vertical: only the cell on top of three stones.
    r = (stones << _U(1)) & (stones << _U(2)) & (stones << _U(3))
    for shift in (_U(6), _U(7), _U(8)):
        two = shift + shift
        three = two + shift
        p = (stones << shift) & (stones << two)
        r |= p & (stones << three)  # the cell right of three stones
        r |= p & (stones >> shift)  # a gap with two stones left of it and one right
        p = (stones >> shift) & (stones >> two)
        r |= p & (stones << shift)
        r |= p & (stones >> three)
    return r & (BOARD ^ mask)


@njit(cache=True, nogil=True, inline="always")
def play_cell(current: np.uint64, mask: np.uint64, cell: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The position after the side to move drops on ``cell`` (which must be playable)."""
    return current ^ mask, mask | cell


@njit(cache=True, nogil=True)
def play_column(current: np.uint64, mask: np.uint64, col: int) -> tuple[np.uint64, np.uint64]:
    """The position after a stone in ``col`` (which must not be full)."""
    return play_cell(current, mask, move_cell(mask, col))


@njit(cache=True, nogil=True)
def last_mover_won(current: np.uint64, mask: np.uint64) -> bool:
    """True when the side that just moved has four in a row."""
    return alignment(current ^ mask)


@njit(cache=True, nogil=True)
def legal_mask(current: np.uint64, mask: np.uint64) -> int:
    """Bit ``col`` set for every column the side to move may play (none once the game is over)."""
    if alignment(current ^ mask):
        return 0
    bits = 0
    for col in range(WIDTH):
        if can_play(mask, col):
            bits |= 1 << col
    return bits


@njit(cache=True, nogil=True)
def perft(current: np.uint64, mask: np.uint64, depth: int) -> int:
    """Leaves of the move tree ``depth`` plies deep; a finished game is one leaf."""
    if depth == 0 or mask == BOARD or alignment(current ^ mask):
        return 1
    total = 0
    for col in range(WIDTH):
        if can_play(mask, col):
            if depth == 1:
                total += 1
            else:
                c, m = play_column(current, mask, col)
                total += perft(c, m, depth - 1)
    return total


@njit(cache=True, nogil=True, inline="always")
def popcount(x: np.uint64) -> int:
    """Set bits of ``x`` (branch-free SWAR count)."""
    x = x - ((x >> _U(1)) & _U(0x5555555555555555))
    x = (x & _U(0x3333333333333333)) + ((x >> _U(2)) & _U(0x3333333333333333))
    x = (x + (x >> _U(4))) & _U(0x0F0F0F0F0F0F0F0F)
    return int(np.int64((x * _U(0x0101010101010101)) >> _U(56)))


@njit(cache=True, nogil=True, inline="always")
def non_losing_moves(current: np.uint64, mask: np.uint64) -> np.uint64:
    """Playable cells after which the opponent cannot win at once (0: every move loses).

    Assumes the side to move cannot win at once (the caller checked). A cell the opponent
    needs must be taken; two such cells lose; a cell under an opponent's winning cell hands it
    over. This is the only look-ahead the rules offer the search.
    """
    moves = possible(mask)
    theirs = winning_cells(current ^ mask, mask)
    forced = moves & theirs
    if forced:
        if forced & (forced - _ONE):
            return _ZERO
        moves = forced
    return moves & ~(theirs >> _ONE)
