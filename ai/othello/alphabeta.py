"""The compiled Othello searches: a midgame PVS over the evaluation and an exact endgame solver.

Both are fail-soft negamax alpha-beta with principal-variation (null-window) re-searches over
the rules kernels of ``games.othello.kernels`` (the same code ``State.play`` uses).

Midgame (``mid_root``/``_pvs``): scores in ``weights.DISC`` units from the side to move; a
finished game scores ``evaluation.terminal`` (above any evaluation). A forced pass is one ply
(as in the game protocol), so a plain negamax over ``games`` states at the same depth gets the
same value when the table is off. Ordering: the table's move, then near the leaves two
killers per ply and history plus, with enough depth left, fewest opponent replies and
corners; higher up (``MID_EVAL_SORT``) the evaluation after each move, or a one-ply search
from it (``MID_SEARCH_SORT``), against the opponent's replies.

Endgame (``end_root``/``_solve``): the exact final disc difference for the side to move,
empties to the winner. Near the root (many empties) moves are sorted fastest-first (fewest
opponent replies, then fewest potential replies, corners first) and bounds go to the table;
with more empties still (``END_EVAL_SORT``, ``END_SEARCH_SORT``) the midgame evaluation of
the position after each move, or a one-ply search from it, weighs in (``leaves``: the pattern
table, as in the midgame; it orders moves, never changes a score). Deeper, the move leaving
the fewest replies goes first (from ``END_FIRST`` empties), then the rest in parity order
(squares of regions with an odd number of empties first, corners first) straight from
the empty squares without generating a move list; the last empty square is scored by
counting its flips. Every stored bound is a true bound on the exact score, so the endgame
table is never cleared for correctness.

Control array ``ctl`` (int64): ``[NODES]`` nodes so far, ``[MAX_NODES]`` budget, ``[ABORTED]``
set once the stop flag or the budget ended the search (its results are then meaningless),
``[USE_TT]`` 0 to search without either table (reference comparisons: the endgame table only
turns on at ``END_TT`` empties, so its tests need a table-free solve of bigger endgames),
``[GENERATION]``, ``[SELECTIVE]`` 1 to let the midgame prune by Multi-ProbCut.

Multi-ProbCut (Buro's selective search, midgame only): at a null-window node whose depth
left ``D`` has a row in the ``probcut`` table (``ai.othello.probcut``: the shallow depth
``d``, and the fit ``deep = a * shallow + b`` with its error ``sigma`` for that ``D`` and the
node's empties), a null-window search to ``d`` around ``(beta + t * sigma - b) / a`` (and
likewise below ``alpha``) that fails predicts that the full search would fail too, with a
confidence set by ``t``, and the node returns that bound at once. Never at a principal-
variation node (its window is wider than one), never in the endgame solver. Its shallow
searches are selective themselves (the fit was measured with full-width ones; on 12
positions of 26-46 empties this took the nodes to depth 16 from 54.6M to 38.8M with the
same best moves but one), and a selective search keys its table entries apart
(``_MPC_SALT``) so a full-width search sharing the table never reads a selective bound as
its own.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ai import jitcache, tt
from ai.othello import evaluation, patterns, weights
from ai.othello.evaluation import evaluate, terminal
from ai.othello.weights import (
    DISC,
    END_ETC,
    END_EVAL_MOBILITY,
    END_EVAL_SORT,
    END_FIRST,
    END_SEARCH_SORT,
    END_SHALLOW,
    END_SORT,
    END_TT,
    INF,
    MID_EVAL_MOBILITY,
    MID_EVAL_SORT,
    MID_SEARCH_SORT,
    ORDER_SORT_DEPTH,
    WIN,
)
from games.othello import kernels as rules
from games.othello.kernels import (
    CORNERS,
    NEIGHBOURS,
    ONE,
    PASS,
    ZERO,
    final_score,
    flips,
    legal_moves,
    lowest_square,
    popcount,
)

jitcache.drop_stale(__file__, tt.__file__, evaluation.__file__, patterns.__file__,
                    weights.__file__, rules.__file__)

NODES, MAX_NODES, ABORTED, USE_TT, GENERATION, SELECTIVE = 0, 1, 2, 3, 4, 5
POLL = 4095
"""The stop flag and the node budget are checked when ``nodes & POLL == 0``."""
MAX_PLY = 128
"""Deepest midgame ply from the root (passes included) the per-ply buffers hold."""

_U = np.uint64
_K1 = _U(0x9E3779B97F4A7C15)
_K2 = _U(0xC2B2AE3D27D4EB4F)
_S1, _S7, _S8, _S9, _S29, _S32 = _U(1), _U(7), _U(8), _U(9), _U(29), _U(32)
_NOT_A = _U(0xFEFEFEFEFEFEFEFE)
_NOT_H = _U(0x7F7F7F7F7F7F7F7F)
_END_SALT = _U(0x5851F42D4C957F2D)
_MPC_SALT = _U(0x2545F4914F6CDD1D)
_QUADRANTS = (_U(0x000000000F0F0F0F), _U(0x00000000F0F0F0F0),
              _U(0x0F0F0F0F00000000), _U(0xF0F0F0F000000000))


def new_control(max_nodes: int | None = None, use_tt: bool = True, generation: int = 0,
                selective: bool = False) -> np.ndarray:
    ctl = np.zeros(6, dtype=np.int64)
    ctl[MAX_NODES] = max_nodes if max_nodes is not None else np.iinfo(np.int64).max
    ctl[USE_TT] = int(use_tt)
    ctl[GENERATION] = generation & 0xFF
    ctl[SELECTIVE] = int(selective)
    return ctl


NO_PROBCUT = np.zeros((0, 0, 4), dtype=np.float64)
"""A ``probcut`` table with no rows: the midgame never prunes selectively with it."""
PROBCUT_MARGIN = WIN - 64 * DISC
"""Windows beyond this (a finished game's scores) get no ProbCut: the fits are of
evaluations, not of won or lost games."""


def new_buffers() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-ply move buffers, killers (two per ply) and the history table of the midgame."""
    return (
        np.zeros((MAX_PLY + 1, 64), dtype=np.int64),
        np.full((MAX_PLY + 1, 2), -1, dtype=np.int64),
        np.zeros(65, dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def hash_key(P: np.uint64, O: np.uint64) -> np.uint64:
    """A 64-bit key of the position from the side to move's view."""
    h = (P * _K1) ^ ((O ^ (O >> _S29)) * _K2)
    return h ^ (h >> _S32)


@njit(cache=True, nogil=True, inline="always")
def _tick(ctl: np.ndarray, stop: np.ndarray) -> bool:
    """Count a node; True when the search must unwind now."""
    n = ctl[NODES] + 1
    ctl[NODES] = n
    if (n & POLL) == 0 and (stop[0] != 0 or n >= ctl[MAX_NODES]):
        ctl[ABORTED] = 1
    return ctl[ABORTED] != 0


# ---------------------------------------------------------------------------------------------
# Midgame


CLASSIC = np.zeros((0, patterns.ROW), dtype=np.int16)
"""The ``pattern_table`` that selects the hand-made evaluation (``evaluation.evaluate``)."""


@njit(cache=True, nogil=True, inline="always")
def leaf(P: np.uint64, O: np.uint64, pattern_table: np.ndarray) -> int:
    """The static score the midgame uses: the patterns of ``pattern_table`` (a finished game
    gets its ``terminal`` score), or the hand-made evaluation when the table has no rows."""
    if pattern_table.shape[0] == 0:
        return evaluate(P, O)
    if legal_moves(P, O) == ZERO and legal_moves(O, P) == ZERO:
        return terminal(P, O)
    return patterns.evaluate(P, O, pattern_table)


@njit(cache=True, nogil=True, inline="always")
def _near(x: np.uint64) -> np.uint64:
    """Squares touching a square of ``x`` (a move must touch an opponent disc)."""
    e = (x << _S1) & _NOT_A
    w = (x >> _S1) & _NOT_H
    row = x | e | w
    return e | w | (row << _S8) | (row >> _S8)


@njit(cache=True, nogil=True, inline="always")
def _static(P: np.uint64, O: np.uint64, leaves: np.ndarray) -> int:
    """``leaf`` without its finished-game test (what orders moves, never a score)."""
    if leaves.shape[0] == 0:
        return evaluate(P, O)
    return patterns.score(P, O, leaves)


@njit("UniTuple(int64, 2)(uint64, uint64, int64, int64, int64, int16[:, ::1])",
      cache=True, nogil=True)
def _order_search(P: np.uint64, O: np.uint64, depth: int, alpha: int, beta: int,
                  leaves: np.ndarray) -> tuple[int, int]:
    """(score, nodes) of a small fail-soft alpha-beta to ``depth`` over ``_static``: what
    orders the moves of endgame nodes far from the end and of midgame nodes far from the
    leaves (no table, no ordering)."""
    if depth <= 0:
        return _static(P, O, leaves), 1
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return DISC * final_score(P, O), 1
        score, nodes = _order_search(O, P, depth, -beta, -alpha, leaves)
        return -score, nodes + 1
    best = -INF
    nodes = 1
    while moves:
        sq = lowest_square(moves)
        moves &= moves - ONE
        f = flips(P, O, sq)
        score, sub = _order_search(O ^ f, P | f | (ONE << _U(sq)), depth - 1, -beta, -alpha,
                                   leaves)
        nodes += sub
        if -score > best:
            best = -score
            if best > alpha:
                alpha = best
                if alpha >= beta:
                    break
    return best, nodes


@njit(cache=True, nogil=True, inline="always")
def _count(ctl: np.ndarray, stop: np.ndarray, k: int) -> None:
    """Count ``k`` nodes at once, polling the stop flag when a multiple of POLL + 1 passes."""
    old = ctl[NODES]
    new = old + k
    ctl[NODES] = new
    if (old | POLL) != (new | POLL) and (stop[0] != 0 or new >= ctl[MAX_NODES]):
        ctl[ABORTED] = 1


@njit(cache=True, nogil=True)
def _order_mid(
    P: np.uint64, O: np.uint64, moves: np.uint64, depth: int, ply: int, tt_move: int,
    buf: np.ndarray, killers: np.ndarray, history: np.ndarray, keys: np.ndarray,
    leaves: np.ndarray, ctl: np.ndarray, stop: np.ndarray,
) -> int:
    """Fill ``buf[ply]`` with the moves best first; returns how many.

    The table's move first. Near the leaves (less than ``MID_EVAL_SORT`` plies left), then
    the killers, then history plus, from ``ORDER_SORT_DEPTH``, fewest opponent replies and
    corners. Higher up, where a node's subtree dwarfs sorting its moves, by what a search
    does after each move: fewest opponent replies and potential replies (as the endgame
    solver) weighed against the evaluation of the position after the move, or a one-ply
    search from it (``MID_SEARCH_SORT``), whose nodes are counted as the search's."""
    n = 0
    scored = depth >= MID_EVAL_SORT
    while moves:
        sq = lowest_square(moves)
        moves &= moves - ONE
        if sq == tt_move:
            key = 1 << 50
        elif scored:
            f = flips(P, O, sq)
            b = ONE << _U(sq)
            nP, nO = O ^ f, P | f | b
            replies = legal_moves(nP, nO)
            k = 4 * (popcount(replies) + popcount(replies & CORNERS))
            k += popcount(_near(nO) & ~(nP | nO))
            if depth >= MID_SEARCH_SORT:
                e, sub = _order_search(nP, nO, 1, -INF, INF, leaves)
                _count(ctl, stop, sub)
            else:
                e = _static(nP, nO, leaves)
            key = -(MID_EVAL_MOBILITY * k + e)
        elif sq == killers[ply, 0]:
            key = 1 << 39
        elif sq == killers[ply, 1]:
            key = 1 << 38
        else:
            key = history[sq]
            if depth >= ORDER_SORT_DEPTH:
                f = flips(P, O, sq)
                b = ONE << _U(sq)
                replies = legal_moves(O ^ f, P | f | b)
                key += (1 << 20) * (32 - popcount(replies) - 4 * popcount(replies & CORNERS))
            if (ONE << _U(sq)) & CORNERS:
                key += 1 << 30
        # Insertion sort: move lists are short.
        j = n
        while j > 0 and keys[j - 1] < key:
            keys[j] = keys[j - 1]
            buf[ply, j] = buf[ply, j - 1]
            j -= 1
        keys[j] = key
        buf[ply, j] = sq
        n += 1
    return n


# Recursive kernels get explicit signatures: with ``cache=True`` a recursion whose argument
# types differ from the outer call's (an int literal, say) reloads broken (numba #6713).
@njit(
    "int64(uint64, uint64, int64, int64, int64, int64, uint64[:, ::1], int64[::1], int64[::1],"
    " int64[:, ::1], int64[:, ::1], int64[::1], int16[:, ::1], float64[:, :, ::1])",
    cache=True, nogil=True,
)
def _pvs(
    P: np.uint64, O: np.uint64, depth: int, alpha: int, beta: int, ply: int,
    table: np.ndarray, ctl: np.ndarray, stop: np.ndarray,
    buf: np.ndarray, killers: np.ndarray, history: np.ndarray, pattern_table: np.ndarray,
    probcut: np.ndarray,
) -> int:
    if _tick(ctl, stop):
        return 0
    if depth <= 0:
        return leaf(P, O, pattern_table)
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return terminal(P, O)
        return -_pvs(O, P, depth - 1, -beta, -alpha, ply + 1, table, ctl, stop, buf, killers,
                     history, pattern_table, probcut)
    use_tt = ctl[USE_TT] != 0 and depth >= 2
    key = hash_key(P, O)
    if ctl[SELECTIVE] != 0:
        key ^= _MPC_SALT
    tt_move = -1
    alpha0 = alpha
    if use_tt:
        entry = tt.probe(table, key)
        if entry != ZERO:
            tt_move = tt.entry_move(entry)
            if tt.entry_depth(entry) >= depth:
                score = tt.entry_score(entry)
                bound = tt.entry_bound(entry)
                if bound == tt.EXACT:
                    return score
                if bound == tt.LOWER and score >= beta:
                    return score
                if bound == tt.UPPER and score <= alpha:
                    return score
    if (
        ctl[SELECTIVE] != 0 and beta - alpha == 1 and depth < probcut.shape[1]
        and -PROBCUT_MARGIN < alpha and beta < PROBCUT_MARGIN
    ):
        # Multi-ProbCut; ``probcut[empties, depth]`` holds ``(d, a, b, t * sigma)``. The
        # shallow searches are selective too (as Edax's are): deep nodes' shallow searches
        # are deep themselves, and full-width ones cost most of a selective search's nodes.
        empties = 64 - popcount(P | O)
        d = int(probcut[empties, depth, 0])
        if d > 0:
            a = probcut[empties, depth, 1]
            b = probcut[empties, depth, 2]
            margin = probcut[empties, depth, 3]
            cut = 0
            high = int(math.ceil((beta + margin - b) / a))
            if high < PROBCUT_MARGIN:
                score = _pvs(P, O, d, high - 1, high, ply, table, ctl, stop, buf, killers,
                             history, pattern_table, probcut)
                if score >= high:
                    cut = 1
            low = int(math.floor((alpha - margin - b) / a))
            if cut == 0 and ctl[ABORTED] == 0 and low > -PROBCUT_MARGIN:
                score = _pvs(P, O, d, low, low + 1, ply, table, ctl, stop, buf, killers,
                             history, pattern_table, probcut)
                if score <= low:
                    cut = -1
            if ctl[ABORTED] != 0:
                return 0
            if cut > 0:
                return beta
            if cut < 0:
                return alpha
    keys = np.empty(40, dtype=np.int64)
    n = _order_mid(P, O, moves, depth, ply, tt_move, buf, killers, history, keys,
                   pattern_table, ctl, stop)
    best = -INF
    best_move = -1
    for i in range(n):
        sq = buf[ply, i]
        f = flips(P, O, sq)
        nP = O ^ f
        nO = P | f | (ONE << _U(sq))
        if i == 0:
            score = -_pvs(nP, nO, depth - 1, -beta, -alpha, ply + 1, table, ctl, stop, buf,
                          killers, history, pattern_table, probcut)
        else:
            score = -_pvs(nP, nO, depth - 1, -alpha - 1, -alpha, ply + 1, table, ctl, stop,
                          buf, killers, history, pattern_table, probcut)
            if alpha < score < beta:
                score = -_pvs(nP, nO, depth - 1, -beta, -score, ply + 1, table, ctl, stop,
                              buf, killers, history, pattern_table, probcut)
        if ctl[ABORTED] != 0:
            return 0
        if score > best:
            best = score
            best_move = sq
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    if killers[ply, 0] != sq:
                        killers[ply, 1] = killers[ply, 0]
                        killers[ply, 0] = sq
                    history[sq] += depth * depth
                    break
    if use_tt:
        if best <= alpha0:
            bound = tt.UPPER
        elif best >= beta:
            bound = tt.LOWER
        else:
            bound = tt.EXACT
        tt.store(table, key, best, depth, bound, best_move, ctl[GENERATION])
    return best


@njit(cache=True, nogil=True)
def mid_root(
    P: np.uint64, O: np.uint64, depth: int, root_moves: np.ndarray, scores: np.ndarray,
    multipv: int, table: np.ndarray, ctl: np.ndarray, stop: np.ndarray,
    buf: np.ndarray, killers: np.ndarray, history: np.ndarray, pattern_table: np.ndarray,
    probcut: np.ndarray,
) -> int:
    """Search ``root_moves`` (in that order) to ``depth``; fills ``scores``, returns the best.

    Leaves are scored by ``leaf`` with ``pattern_table``; with ``ctl[SELECTIVE]`` set, nodes
    with a row in ``probcut`` may be cut by Multi-ProbCut (``NO_PROBCUT``: never). The best
    ``multipv`` moves get exact scores; the others' scores may be upper bounds. A root with
    no legal move must be given ``[PASS]``. If ``ctl[ABORTED]`` is set, only the moves before
    the one the stop interrupted have scores (as above, over those moves), and the index
    returned is the best of them (0 when none finished).
    """
    n = root_moves.shape[0]
    best = -INF
    best_i = 0
    for i in range(n):
        # The k-th best exact score so far is the bar another move must clear to be exact.
        bar = -INF
        if i >= multipv:
            tmp = np.sort(scores[:i])
            bar = tmp[i - multipv]
        sq = root_moves[i]
        if sq == PASS:
            nP, nO = O, P
        else:
            f = flips(P, O, sq)
            nP, nO = O ^ f, P | f | (ONE << _U(sq))
        if i < multipv:
            score = -_pvs(nP, nO, depth - 1, -INF, INF, 1, table, ctl, stop, buf, killers,
                          history, pattern_table, probcut)
        else:
            score = -_pvs(nP, nO, depth - 1, -bar - 1, -bar, 1, table, ctl, stop, buf,
                          killers, history, pattern_table, probcut)
            if score > bar:
                score = -_pvs(nP, nO, depth - 1, -INF, -bar, 1, table, ctl, stop, buf,
                              killers, history, pattern_table, probcut)
        if ctl[ABORTED] != 0:
            return best_i
        scores[i] = score
        if score > best:
            best = score
            best_i = i
    if ctl[USE_TT] != 0:
        key = hash_key(P, O)
        if ctl[SELECTIVE] != 0:
            key ^= _MPC_SALT
        tt.store(table, key, best, depth, tt.EXACT, root_moves[best_i], ctl[GENERATION])
    return best_i


# ---------------------------------------------------------------------------------------------
# Endgame


def _lines(step_row: int, step_col: int) -> np.ndarray:
    """Every full line of the board in one direction (rows, columns or diagonals)."""
    lines = set()
    for start in range(64):
        r, c, bits = start // 8, start % 8, 0
        while 0 <= r < 8 and 0 <= c < 8:
            bits |= 1 << (r * 8 + c)
            r, c = r + step_row, c + step_col
        lines.add(bits)
    maximal = [a for a in lines if not any(a != b and a & b == a for b in lines)]
    return np.array(sorted(maximal), dtype=np.uint64)


_ROWS = _lines(0, 1)
_COLS = _lines(1, 0)
_DIAG9 = _lines(1, 1)
_DIAG7 = _lines(1, -1)
_FILES_AH = _U(0x8181818181818181)
_RANKS_18 = _U(0xFF000000000000FF)
_BORDER = _FILES_AH | _RANKS_18


@njit(cache=True, nogil=True, inline="always")
def _full(filled: np.uint64, lines: np.ndarray) -> np.uint64:
    """The squares of ``lines`` that have no empty square left."""
    full = ZERO
    for line in lines:
        if filled & line == line:
            full |= line
    return full


@njit(cache=True, nogil=True)
def stable_discs(P: np.uint64, O: np.uint64) -> np.uint64:
    """Discs of ``P`` that can never be flipped (a sound under-estimate).

    A disc is stable when, along each of its four lines, the line is full or a neighbour on
    the line is the board's edge or a stable disc of the same colour: no run through it can
    then be outflanked. Grown from the corners until nothing changes.
    """
    filled = P | O
    full_h = _full(filled, _ROWS)
    full_v = _full(filled, _COLS)
    full_9 = _full(filled, _DIAG9)
    full_7 = _full(filled, _DIAG7)
    stable = ZERO
    while True:
        h = full_h | _FILES_AH | ((stable << _S1) & _NOT_A) | ((stable >> _S1) & _NOT_H)
        v = full_v | _RANKS_18 | (stable << _S8) | (stable >> _S8)
        d9 = full_9 | _BORDER | ((stable << _S9) & _NOT_A) | ((stable >> _S9) & _NOT_H)
        d7 = full_7 | _BORDER | ((stable << _S7) & _NOT_H) | ((stable >> _S7) & _NOT_A)
        grown = stable | (P & h & v & d9 & d7)
        if grown == stable:
            return stable
        stable = grown


@njit(cache=True, nogil=True, inline="always")
def _last1(P: np.uint64, O: np.uint64, sq: int) -> int:
    """Exact score with one empty square ``sq``: whoever can moves there, else it is over."""
    diff = 2 * popcount(P) - 63  # p - o with p + o = 63
    near = NEIGHBOURS[sq]
    # A move flips only through a touching opponent disc: skip the flip test when none touches.
    if near & O:
        f = flips(P, O, sq)
        if f != ZERO:
            return diff + 1 + 2 * popcount(f)
    if near & P:
        f = flips(O, P, sq)
        if f != ZERO:
            return diff - 1 - 2 * popcount(f)
    if diff > 0:
        return diff + 1
    return diff - 1


@njit(cache=True, nogil=True, inline="always")
def _odd_regions(empty: np.uint64) -> np.uint64:
    """Empty squares of the quadrants holding an odd number of empties (parity ordering)."""
    odd = ZERO
    for q in _QUADRANTS:
        if popcount(empty & q) & 1:
            odd |= q
    return odd


@njit(cache=True, nogil=True, inline="always")
def _solve2(P: np.uint64, O: np.uint64, alpha: int, beta: int) -> tuple[int, int]:
    """(exact score, nodes) with two empty squares, unrolled: no move list, no recursion."""
    empty = ~(P | O)
    x = lowest_square(empty)
    y = lowest_square(empty & (empty - ONE))
    best = -INF
    nodes = 1
    f = flips(P, O, x) if NEIGHBOURS[x] & O else ZERO
    if f != ZERO:
        nodes += 1
        best = -_last1(O ^ f, P | f | (ONE << _U(x)), y)
    if best < beta:
        f = flips(P, O, y) if NEIGHBOURS[y] & O else ZERO
        if f != ZERO:
            nodes += 1
            score = -_last1(O ^ f, P | f | (ONE << _U(y)), x)
            if score > best:
                best = score
    if best == -INF:
        # The side to move passes; the opponent moves or the game is over.
        f = flips(O, P, x) if NEIGHBOURS[x] & P else ZERO
        if f != ZERO:
            nodes += 2
            best = _last1(P ^ f, O | f | (ONE << _U(x)), y)
        if best == -INF or best > alpha:
            f = flips(O, P, y) if NEIGHBOURS[y] & P else ZERO
            if f != ZERO:
                nodes += 2
                score = _last1(P ^ f, O | f | (ONE << _U(y)), x)
                if best == -INF or score < best:
                    best = score
        if best == -INF:
            best = final_score(P, O)
    return best, nodes


# The shallow solver takes no arrays (each array argument costs numba's calls several words)
# and returns its node count instead of writing it; the caller polls the stop flag.
@njit("UniTuple(int64, 2)(uint64, uint64, int64, int64, int64)", cache=True, nogil=True)
def _solve_shallow(P: np.uint64, O: np.uint64, alpha: int, beta: int, n: int
                   ) -> tuple[int, int]:
    """(exact score, nodes) with few empties: parity order, no sorting, no table."""
    if n == 2:
        return _solve2(P, O, alpha, beta)
    if n == 1:
        return _last1(P, O, lowest_square(~(P | O))), 1
    # No move list: try the empty squares next to an opponent disc, in parity order.
    empty = ~(P | O)
    odd = _odd_regions(empty)
    near_o = _near(O)
    best = -INF
    nodes = 1
    done = ZERO
    if n >= END_FIRST:
        # The move leaving the opponent fewest replies goes first (keyed as in sorted nodes);
        # most cutoffs come from the first move, so the rest keep the cheap parity order.
        fewest = 1 << 20
        first = -1
        first_f = ZERO
        m = legal_moves(P, O)
        while m:
            sq = lowest_square(m)
            m &= m - ONE
            f = flips(P, O, sq)
            b = ONE << _U(sq)
            replies = legal_moves(O ^ f, P | f | b)
            k = 4 * (popcount(replies) + popcount(replies & CORNERS))
            if b & CORNERS:
                k -= 2
            if b & odd:
                k -= 1
            if k < fewest:
                fewest = k
                first = sq
                first_f = f
        if first >= 0:
            done = ONE << _U(first)
            score, sub = _solve_shallow(O ^ first_f, P | first_f | done, -beta, -alpha, n - 1)
            nodes += sub
            best = -score
            if best > alpha:
                alpha = best
                if alpha >= beta:
                    return best, nodes
    for group in range(3):
        if group == 0:
            cand = empty & near_o & odd & CORNERS & ~done
        elif group == 1:
            cand = empty & near_o & odd & ~CORNERS & ~done
        else:
            cand = empty & near_o & ~odd & ~done
        while cand:
            sq = lowest_square(cand)
            cand &= cand - ONE
            f = flips(P, O, sq)
            if f == ZERO:
                continue
            score, sub = _solve_shallow(O ^ f, P | f | (ONE << _U(sq)), -beta, -alpha, n - 1)
            nodes += sub
            score = -score
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        return best, nodes
    if best == -INF:
        # No move: pass if the opponent can move, else the game is over.
        if legal_moves(O, P) == ZERO:
            return final_score(P, O), nodes
        score, sub = _solve_shallow(O, P, -beta, -alpha, n)
        return -score, nodes + sub
    return best, nodes


@njit(
    "int64(uint64, uint64, int64, int64, int64, uint64[:, ::1], int64[::1], int64[::1],"
    " int64[:, :, ::1], int16[:, ::1])",
    cache=True, nogil=True,
)
def _solve(
    P: np.uint64, O: np.uint64, alpha: int, beta: int, n: int, table: np.ndarray,
    ctl: np.ndarray, stop: np.ndarray, sb: np.ndarray, leaves: np.ndarray,
) -> int:
    """Exact final disc difference for ``P``'s side (fail-soft within ``alpha``..``beta``)."""
    if n <= END_SHALLOW:
        score, nodes = _solve_shallow(P, O, alpha, beta, n)
        _count(ctl, stop, nodes)
        return score
    if _tick(ctl, stop):
        return 0
    moves = legal_moves(P, O)
    if moves == ZERO:
        if legal_moves(O, P) == ZERO:
            return final_score(P, O)
        return -_solve(O, P, -beta, -alpha, n, table, ctl, stop, sb, leaves)
    # Stability cutoff: the opponent's stable discs stay theirs, which caps our score. Only
    # worth computing when alpha is high enough for the cap to fall below it.
    if alpha >= 64 - 2 * popcount(O):
        cap = 64 - 2 * popcount(stable_discs(O, P))
        if cap <= alpha:
            return cap
    use_tt = n >= END_TT and ctl[USE_TT] != 0
    key = ZERO
    tt_move = -1
    alpha0 = alpha
    if use_tt:
        key = hash_key(P, O) ^ _END_SALT
        entry = tt.probe(table, key)
        if entry != ZERO:
            tt_move = tt.entry_move(entry)
            score = tt.entry_score(entry)
            bound = tt.entry_bound(entry)
            if bound == tt.EXACT:
                return score
            if bound == tt.LOWER:
                if score >= beta:
                    return score
                if score > alpha:
                    alpha = score
            elif bound == tt.UPPER:
                if score <= alpha:
                    return score
                if score < beta:
                    beta = score
    best = -INF
    best_move = -1
    if n >= END_SORT:
        # Fastest first: the move leaving the opponent fewest replies (corners count more).
        sqs = sb[n, 0]
        keys = sb[n, 1]
        flipped = sb[n, 2]  # each move's flips (bits as int64), so they are computed once
        odd = _odd_regions(~(P | O))
        count = 0
        m = moves
        etc = use_tt and n >= END_ETC
        while m:
            sq = lowest_square(m)
            m &= m - ONE
            f = flips(P, O, sq)
            if etc:
                # Enhanced transposition cutoff: a child whose stored upper bound already
                # proves this node reaches beta ends it before any child is searched.
                child = tt.probe(table, hash_key(O ^ f, P | f | (ONE << _U(sq))) ^ _END_SALT)
                if child != ZERO and tt.entry_bound(child) != tt.LOWER:
                    score = -tt.entry_score(child)
                    if score >= beta:
                        tt.store(table, key, score, n, tt.LOWER, sq, ctl[GENERATION])
                        return score
            b = ONE << _U(sq)
            replies = legal_moves(O ^ f, P | f | b)
            # Fewest replies first, corner replies counted twice, then fewest potential
            # replies (empty squares touching our discs); a corner, then a square of an odd
            # region (parity), gains a little.
            k = 4 * (popcount(replies) + popcount(replies & CORNERS))
            k += popcount(_near(P | f | b) & ~(P | O | b))
            if sq == tt_move:
                k = -(1 << 40)
            else:
                if b & CORNERS:
                    k -= 2
                if b & odd:
                    k -= 1
                if n >= END_SEARCH_SORT:
                    # Farther still, a shallow search's: nodes this high are few.
                    e, sub = _order_search(O ^ f, P | f | b, 1, -INF, INF, leaves)
                    _count(ctl, stop, sub)
                    k = END_EVAL_MOBILITY * k + e
                elif n >= END_EVAL_SORT:
                    # Far from the end the evaluation of the position after the move (from
                    # the opponent's side: lower is better for us) orders better still.
                    k = END_EVAL_MOBILITY * k + _static(O ^ f, P | f | b, leaves)
            j = count
            while j > 0 and keys[j - 1] > k:
                keys[j] = keys[j - 1]
                sqs[j] = sqs[j - 1]
                flipped[j] = flipped[j - 1]
                j -= 1
            keys[j] = k
            sqs[j] = sq
            flipped[j] = np.int64(f)
            count += 1
        for i in range(count):
            sq = sqs[i]
            f = _U(flipped[i])
            nP = O ^ f
            nO = P | f | (ONE << _U(sq))
            if i == 0:
                score = -_solve(nP, nO, -beta, -alpha, n - 1, table, ctl, stop, sb, leaves)
            else:
                score = -_solve(nP, nO, -alpha - 1, -alpha, n - 1, table, ctl, stop, sb, leaves)
                if alpha < score < beta:
                    score = -_solve(nP, nO, -beta, -score, n - 1, table, ctl, stop, sb, leaves)
            if ctl[ABORTED] != 0:
                return 0
            if score > best:
                best = score
                best_move = sq
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
    else:
        odd = _odd_regions(~(P | O))
        first = True
        for group in range(3):
            if group == 0:
                cand = moves & odd & CORNERS
            elif group == 1:
                cand = moves & odd & ~CORNERS
            else:
                cand = moves & ~odd
            while cand:
                sq = lowest_square(cand)
                cand &= cand - ONE
                f = flips(P, O, sq)
                nP = O ^ f
                nO = P | f | (ONE << _U(sq))
                if first:
                    score = -_solve(nP, nO, -beta, -alpha, n - 1, table, ctl, stop, sb, leaves)
                    first = False
                else:
                    score = -_solve(nP, nO, -alpha - 1, -alpha, n - 1, table, ctl, stop, sb, leaves)
                    if alpha < score < beta:
                        score = -_solve(nP, nO, -beta, -score, n - 1, table, ctl, stop, sb, leaves)
                if ctl[ABORTED] != 0:
                    return 0
                if score > best:
                    best = score
                    best_move = sq
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            break
            if alpha >= beta:
                break
    if use_tt:
        if best <= alpha0:
            bound = tt.UPPER
        elif best >= beta:
            bound = tt.LOWER
        else:
            bound = tt.EXACT
        tt.store(table, key, best, n, bound, best_move, ctl[GENERATION])
    return best


@njit(cache=True, nogil=True)
def solve(P: np.uint64, O: np.uint64, alpha: int, beta: int, table: np.ndarray,
          ctl: np.ndarray, stop: np.ndarray, leaves: np.ndarray) -> int:
    """Exact score of any position (fail-soft in ``alpha``..``beta``); see ``_solve``.
    ``leaves`` (a ``pattern_table``) orders the moves far from the end."""
    n = 64 - popcount(P | O)
    sb = np.empty((65, 3, 40), dtype=np.int64)
    return _solve(P, O, alpha, beta, n, table, ctl, stop, sb, leaves)


@njit(cache=True, nogil=True)
def end_root(
    P: np.uint64, O: np.uint64, root_moves: np.ndarray, scores: np.ndarray, multipv: int,
    table: np.ndarray, ctl: np.ndarray, stop: np.ndarray, low: int, high: int,
    leaves: np.ndarray,
) -> int:
    """Solve ``root_moves`` (in that order); fills ``scores``, returns the best one's index.

    Like ``mid_root``: the best ``multipv`` scores are exact, the others may be upper bounds.
    ``low=-INF, high=INF`` solves exactly. Within a narrower window the scores are exact only
    inside it (fail-soft bounds
    beyond), and once a move reaches ``high`` the rest are not searched (their scores stay
    as given): ``low=-1, high=1`` is the win/loss/draw solve, whose best move is the first,
    in the given order, of those that win, else draw. ``leaves`` orders moves as in
    ``solve``.
    """
    n = root_moves.shape[0]
    empties = 64 - popcount(P | O)
    sb = np.empty((65, 3, 40), dtype=np.int64)
    best = -INF
    best_i = 0
    for i in range(n):
        if best >= high:
            break
        bar = -INF
        if i >= multipv:
            tmp = np.sort(scores[:i])
            bar = tmp[i - multipv]
        bar = max(bar, low)
        sq = root_moves[i]
        if sq == PASS:
            nP, nO, left = O, P, empties
        else:
            f = flips(P, O, sq)
            nP, nO, left = O ^ f, P | f | (ONE << _U(sq)), empties - 1
        if i < multipv:
            score = -_solve(nP, nO, -high, -low, left, table, ctl, stop, sb, leaves)
        else:
            score = -_solve(nP, nO, -bar - 1, -bar, left, table, ctl, stop, sb, leaves)
            if bar < score < high:
                score = -_solve(nP, nO, -high, -bar, left, table, ctl, stop, sb, leaves)
        if ctl[ABORTED] != 0:
            return best_i
        scores[i] = score
        if score > best:
            best = score
            best_i = i
    return best_i
