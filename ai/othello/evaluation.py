"""The Othello evaluation, compiled, from the side to move's view (weights in ``weights``).

``evaluate(P, O)`` is the static score of a position (a finished game gets ``terminal(P, O)``,
above any evaluation). ``leaf_value(state)`` applies it to a ``games`` state so a plain-Python
reference search can use exactly what the engine uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ai import jitcache
from ai.othello import weights
from ai.othello.weights import (
    C_SQUARE,
    CORNER,
    DISC,
    DISCS,
    FRONTIER,
    MOBILITY,
    PARITY,
    PHASE_DISCS,
    STABLE,
    WIN,
    WIN_PER_EMPTY,
    X_SQUARE,
)
from games.othello import kernels as rules
from games.othello.kernels import CORNERS, final_score, legal_moves, popcount

jitcache.drop_stale(__file__, weights.__file__, rules.__file__)

_U = np.uint64
_S1, _S7, _S8, _S9 = _U(1), _U(7), _U(8), _U(9)
_NOT_A = _U(0xFEFEFEFEFEFEFEFE)
_NOT_H = _U(0x7F7F7F7F7F7F7F7F)
_RANKS_1_8 = _U(0xFF000000000000FF)
_FILES_A_H = _U(0x8181818181818181)
_EDGES = _RANKS_1_8 | _FILES_A_H
_X_SQUARES = _U((1 << 9) | (1 << 14) | (1 << 49) | (1 << 54))
_C_SQUARES = _U((1 << 1) | (1 << 8) | (1 << 6) | (1 << 15) | (1 << 48) | (1 << 57)
                | (1 << 55) | (1 << 62))
_A1, _H1, _A8, _H8 = _U(1), _U(1 << 7), _U(1 << 56), _U(1 << 63)


@njit(cache=True, nogil=True, inline="always")
def _neighbours(x: np.uint64) -> np.uint64:
    """Squares next to any square of ``x`` (no wrapping across the board's edges)."""
    e = (x << _S1) & _NOT_A
    w = (x >> _S1) & _NOT_H
    row = x | e | w
    return (e | w | (row << _S8) | (row >> _S8)) & ~x


@njit(cache=True, nogil=True, inline="always")
def _edge_stable(P: np.uint64) -> np.uint64:
    """``P``'s edge discs joined to a corner it holds by an unbroken line of its discs."""
    s = P & CORNERS
    edge = P & _EDGES
    for _ in range(7):
        grow = (((s << _S1) | (s >> _S1)) & _RANKS_1_8) | (((s << _S8) | (s >> _S8)) & _FILES_A_H)
        s |= grow & edge
    return s


@njit(cache=True, nogil=True, inline="always")
def _empty_corner_neighbours(empty: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The X- and C-squares whose corner is still empty."""
    x = _U(0)
    c = _U(0)
    if empty & _A1:
        x |= _U(1 << 9)
        c |= _U((1 << 1) | (1 << 8))
    if empty & _H1:
        x |= _U(1 << 14)
        c |= _U((1 << 6) | (1 << 15))
    if empty & _A8:
        x |= _U(1 << 49)
        c |= _U((1 << 48) | (1 << 57))
    if empty & _H8:
        x |= _U(1 << 54)
        c |= _U((1 << 55) | (1 << 62))
    return x & _X_SQUARES, c & _C_SQUARES


@njit(cache=True, nogil=True)
def terminal(P: np.uint64, O: np.uint64) -> int:
    """Score of a finished game for ``P``'s side, signed: ``WIN``, plus ``WIN_PER_EMPTY`` per
    empty square (a quicker win is better), plus the final disc difference (empties to the
    winner); a draw is 0. ``to_discs`` turns it back into the disc difference."""
    diff = final_score(P, O)
    empties = 64 - popcount(P | O)
    if diff > 0:
        return WIN + WIN_PER_EMPTY * empties + diff
    if diff < 0:
        return -WIN - WIN_PER_EMPTY * empties + diff
    return 0


@njit(cache=True, nogil=True)
def evaluate(P: np.uint64, O: np.uint64) -> int:
    """Static score for the side owning ``P``, in units of ``DISC`` per disc, below ``WIN``.

    A finished game (neither side can move) gets its ``terminal`` score instead, so a search
    that stops at depth 0 on a finished game still sees the true result.
    """
    mine = popcount(legal_moves(P, O))
    theirs = popcount(legal_moves(O, P))
    if mine == 0 and theirs == 0:
        return terminal(P, O)
    empty = ~(P | O)
    discs = popcount(P | O)
    phase = 0
    if discs > PHASE_DISCS[1]:
        phase = 2
    elif discs > PHASE_DISCS[0]:
        phase = 1
    mobility = mine - theirs
    near_empty = _neighbours(empty)
    frontier = popcount(P & near_empty) - popcount(O & near_empty)
    corners = popcount(P & CORNERS) - popcount(O & CORNERS)
    xs, cs = _empty_corner_neighbours(empty)
    x_squares = popcount(P & xs) - popcount(O & xs)
    c_squares = popcount(P & cs) - popcount(O & cs)
    stable = popcount(_edge_stable(P)) - popcount(_edge_stable(O))
    disc_diff = popcount(P) - popcount(O)
    parity = 1 if (64 - discs) & 1 else -1
    score = (
        MOBILITY[phase] * mobility
        + FRONTIER[phase] * frontier
        + CORNER[phase] * corners
        + X_SQUARE[phase] * x_squares
        + C_SQUARE[phase] * c_squares
        + STABLE[phase] * stable
        + DISCS[phase] * disc_diff
        + PARITY[phase] * parity
    )
    if score >= WIN:
        return WIN - 1
    if score <= -WIN:
        return 1 - WIN
    return score


def leaf_value(state: Any) -> int:
    """``evaluate`` of an Othello ``State`` from its side to move's view (a plain-Python
    reference search calls this at its leaves to see exactly what the engine sees)."""
    player, opponent = state.mover_boards()
    return int(evaluate(_U(player), _U(opponent)))


def to_discs(score: int) -> int:
    """An internal score in disc-like units (a finished game: its disc difference)."""
    if score >= WIN:
        return (score - WIN) % WIN_PER_EMPTY
    if score <= -WIN:
        return -((-score - WIN) % WIN_PER_EMPTY)
    return round(score / DISC)
