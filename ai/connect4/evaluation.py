"""The Connect Four evaluation and its weights: every tunable of the heuristic search is here.

Scores are from the side to move. A won game scores ``WIN`` plus Pons' score (22 minus the
winner's stones), so any win is above any evaluation and a quicker win scores higher; the
evaluation itself is clamped inside ``(-WIN, WIN)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai.jitcache import drop_stale
from games.connect4 import kernels
from games.connect4.kernels import BOARD, column_mask, popcount, winning_cells

drop_stale(__file__, kernels.__file__)

WIN = 1000
"""Wins score ``WIN + (22 - winner's stones)``; evaluations stay strictly below ``WIN``."""
MAX_EVAL = WIN - 1

LINE = 1
"""Per own stone in a window of four cells that holds no opponent stone (an open line)."""
THREAT = 10
"""Per empty cell that would complete four for the side (a threat)."""
PARITY_THREAT = 6
"""Extra per threat on the side's good rows (odd rows from the bottom for the first player,
even rows for the second): the rows zugzwang lets that side claim at the end."""
CENTRE = 2
"""Per stone in the centre column, which lies on the most lines."""
TEMPO = 10
"""For the side to move. Without it the side that moved last looked better by about 21
points (the stone it just placed counts; the reply it is owed does not), so scores at odd
and even depths alternated by that much and a level stopped by the clock showed and chose by
whichever depth it reached (``bench.c4_stability``: mean step 21.4 before, see the commit)."""

_U = np.uint64
# Rows 1, 3, 5 counted from the bottom (bit rows 0, 2, 4) of every column.
_ODD_ROWS = _U(sum(0b010101 << (7 * c) for c in range(7)))
_EVEN_ROWS = _U(int(BOARD) ^ int(_ODD_ROWS))


@njit(cache=True, nogil=True, inline="always")
def _side(stones: np.uint64, other: np.uint64, mask: np.uint64, good_rows: np.uint64) -> int:
    free = BOARD & ~other
    total = 0
    for d in (_U(1), _U(6), _U(7), _U(8)):
        starts = free & (free >> d) & (free >> (d + d)) & (free >> (d + d + d))
        lines = (
            popcount(starts & stones)
            + popcount(starts & (stones >> d))
            + popcount(starts & (stones >> (d + d)))
            + popcount(starts & (stones >> (d + d + d)))
        )
        total += LINE * lines
    threats = winning_cells(stones, mask)
    total += THREAT * popcount(threats) + PARITY_THREAT * popcount(threats & good_rows)
    total += CENTRE * popcount(stones & column_mask(3))
    return total


@njit(cache=True, nogil=True)
def evaluate(current: np.uint64, mask: np.uint64) -> int:
    """Static value for the side to move of a position nobody has won; 0 for a full board."""
    if mask == BOARD:
        return 0
    other = current ^ mask
    first_to_move = (popcount(mask) & 1) == 0
    mine_good = _ODD_ROWS if first_to_move else _EVEN_ROWS
    theirs_good = _EVEN_ROWS if first_to_move else _ODD_ROWS
    score = (_side(current, other, mask, mine_good) - _side(other, current, mask, theirs_good)
             + TEMPO)
    return max(-MAX_EVAL, min(MAX_EVAL, score))
