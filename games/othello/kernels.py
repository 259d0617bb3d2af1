"""Othello rules on 64-bit bitboards, compiled: the one implementation the game and the AI share.

Square ``i`` is bit ``i`` with ``i = row * 8 + col``: a1 = 0, h1 = 7, a8 = 56, h8 = 63 (column
letters a..h, rows 1..8). A position is two bitboards from the side to move's view: ``P``
(the player's discs) and ``O`` (the opponent's). Every constant and shift is ``np.uint64``
because numba silently turns mixed signed/unsigned arithmetic into floats.

Directions: east = << 1, west = >> 1, north (row + 1) = << 8, south = >> 8, and the four
diagonals << 9, << 7, >> 7, >> 9. East/west and diagonal runs are confined to the inner six
columns so a run never wraps from the h-file to the a-file of the next row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_U = np.uint64
ZERO = _U(0)
ONE = _U(1)
FULL = _U(0xFFFFFFFFFFFFFFFF)
INNER_COLS = _U(0x7E7E7E7E7E7E7E7E)
"""Columns b..g: what a horizontal or diagonal run may cross without wrapping."""
CORNERS = _U(0x8100000000000081)
S1, S7, S8, S9 = _U(1), _U(7), _U(8), _U(9)

PASS = 64
"""The move that means "I have no legal move"; moves 0..63 are squares."""

BLACK_START = _U((1 << 28) | (1 << 35))  # e4, d5
WHITE_START = _U((1 << 27) | (1 << 36))  # d4, e5


def _ctpop_impl(typingctx: Any, x: Any) -> Any:
    sig = types.uint64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return sig, codegen


def _cttz_impl(typingctx: Any, x: Any) -> Any:
    sig = types.uint64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen


def _ctlz_impl(typingctx: Any, x: Any) -> Any:
    sig = types.uint64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen


# LLVM's ctpop/cttz/ctlz compile to single popcnt/tzcnt instructions on the host CPU.
_ctpop: Any = intrinsic(_ctpop_impl)
_cttz: Any = intrinsic(_cttz_impl)
_ctlz: Any = intrinsic(_ctlz_impl)


def _rays() -> np.ndarray:
    """``RAYS[d, sq]``: the squares beyond ``sq`` in direction ``d`` up to the board's edge.

    Directions 0-3 go to higher indices (east, north, north-east, north-west), 4-7 to lower
    ones (west, south, south-west, south-east).
    """
    steps = ((0, 1), (1, 0), (1, 1), (1, -1), (0, -1), (-1, 0), (-1, -1), (-1, 1))
    rays = np.zeros((8, 64), dtype=np.uint64)
    for d, (dr, dc) in enumerate(steps):
        for sq in range(64):
            r, c, bits = sq // 8 + dr, sq % 8 + dc, 0
            while 0 <= r < 8 and 0 <= c < 8:
                bits |= 1 << (r * 8 + c)
                r, c = r + dr, c + dc
            rays[d, sq] = bits
    return rays


RAYS = _rays()
NEIGHBOURS = np.array(
    [sum(1 << (r * 8 + c) for r in range(sq // 8 - 1, sq // 8 + 2)
         for c in range(sq % 8 - 1, sq % 8 + 2)
         if 0 <= r < 8 and 0 <= c < 8 and r * 8 + c != sq) for sq in range(64)],
    dtype=np.uint64,
)
"""``NEIGHBOURS[sq]``: the up to eight squares touching ``sq`` (a move needs an opponent there)."""


@njit(cache=True, nogil=True, inline="always")
def popcount(x: np.uint64) -> Any:
    """Set bits of ``x`` (the CPU's popcnt through an LLVM intrinsic)."""
    return np.int64(_ctpop(x))


@njit(cache=True, nogil=True, inline="always")
def lowest_square(x: np.uint64) -> Any:
    """Index of the lowest set bit of a non-zero ``x``."""
    return np.int64(_cttz(x))


@njit(cache=True, nogil=True, inline="always")
def square_bit(sq: int) -> np.uint64:
    return ONE << _U(sq)


@njit(cache=True, nogil=True, inline="always")
def _moves_left(P: np.uint64, m: np.uint64, s: np.uint64) -> np.uint64:
    """Empty-or-not squares just past a run of ``m`` that starts next to ``P`` (``<< s``).

    The run is grown one step, then two steps at a time through pairs of ``m`` squares, so
    a run of up to six needs four dependent steps instead of six.
    """
    s2 = s + s
    t = m & (P << s)
    t |= m & (t << s)
    pairs = m & (m << s)
    t |= pairs & (t << s2)
    t |= pairs & (t << s2)
    return t << s


@njit(cache=True, nogil=True, inline="always")
def _moves_right(P: np.uint64, m: np.uint64, s: np.uint64) -> np.uint64:
    s2 = s + s
    t = m & (P >> s)
    t |= m & (t >> s)
    pairs = m & (m >> s)
    t |= pairs & (t >> s2)
    t |= pairs & (t >> s2)
    return t >> s


@njit(cache=True, nogil=True)
def legal_moves(P: np.uint64, O: np.uint64) -> np.uint64:
    """Bitboard of the empty squares where the side owning ``P`` flips at least one disc."""
    mo = O & INNER_COLS
    moves = _moves_left(P, mo, S1) | _moves_right(P, mo, S1)
    moves |= _moves_left(P, O, S8) | _moves_right(P, O, S8)
    moves |= _moves_left(P, mo, S7) | _moves_right(P, mo, S7)
    moves |= _moves_left(P, mo, S9) | _moves_right(P, mo, S9)
    return moves & ~(P | O)


@njit(cache=True, nogil=True)
def flips(P: np.uint64, O: np.uint64, sq: int) -> np.uint64:
    """Discs of ``O`` flipped when ``P``'s side plays on ``sq`` (0 means the move is illegal).

    Along each ray from ``sq`` the nearest square that is not the opponent's decides: if it
    is the player's, every square before it flips. The nearest square is the lowest set bit
    on rays going up the indices and the highest on rays going down.
    """
    f = ZERO
    not_o = ~O
    for d in range(4):
        ray = RAYS[d, sq]
        b = ray & not_o
        first = b & (~b + ONE)
        if first & P:
            f |= ray & (first - ONE)
    for d in range(4, 8):
        ray = RAYS[d, sq]
        b = ray & not_o
        if b:
            first = ONE << (_U(63) - _ctlz(b))
            if first & P:
                f |= ray & ~((first << ONE) - ONE)
    return f


@njit(cache=True, nogil=True)
def final_score(P: np.uint64, O: np.uint64) -> int:
    """Disc difference for ``P``'s side at the end, empty squares going to the winner."""
    p = popcount(P)
    o = popcount(O)
    empties = 64 - p - o
    if p > o:
        return p - o + empties
    if o > p:
        return p - o - empties
    return 0


# An explicit signature: a cached recursion whose argument types differ from the outer call's
# reloads broken (numba #6713).
@njit("int64(uint64, uint64, int64)", cache=True, nogil=True)
def _perft(P: np.uint64, O: np.uint64, depth: int) -> int:
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return 1  # the game is over: one leaf whatever depth is left
        if depth == 1:
            return 1
        return _perft(O, P, depth - 1)  # a forced pass is one ply
    if depth == 1:
        return popcount(moves)
    total = 0
    while moves:
        sq = lowest_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        total += _perft(O ^ f, P | f | (ONE << _U(sq)), depth - 1)
    return total


@njit(cache=True, nogil=True)
def perft(P: np.uint64, O: np.uint64, depth: int) -> int:
    """Leaves ``depth`` plies below (forced pass = one ply, a finished game = one leaf)."""
    if depth <= 0:
        return 1
    return _perft(P, O, depth)
