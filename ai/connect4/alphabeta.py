"""Depth-limited Connect Four search, compiled: fail-soft negamax alpha-beta with PVS.

Used when the caller wants a move within a budget rather than a proof. Each node: an
immediate win scores at once; from two plies up, a position where every move loses at once
scores the loss and moves that lose at once are skipped (minimax two plies deeper would give
them the worst score anyway, so values equal plain minimax at the same depth). Moves are tried
table move first, then the killer of the ply, then by winning cells created plus history,
centre first on ties. Wins are ``WIN`` + Pons' score, which depends on the stones on the board
only, so table entries need no adjustment by ply.

Written as a loop over an explicit stack (frame = ply) for the same reasons as
``ai.connect4.solver.negamax``. ``ctl`` is the solver's control array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai import tt
from ai.connect4 import evaluation, solver
from ai.connect4.evaluation import WIN, evaluate
from ai.connect4.solver import CENTRE_FIRST, _tick
from ai.jitcache import drop_stale
from games.connect4 import kernels
from games.connect4.kernels import (
    CELLS,
    WIDTH,
    column_mask,
    non_losing_moves,
    popcount,
    possible,
    winning_cells,
)

drop_stale(__file__, solver.__file__, evaluation.__file__, kernels.__file__, tt.__file__)

INF = 30000
"""Beyond every score (wins are at most ``WIN + 21``)."""
HISTORY_CAP = (1 << 20) - 1

_U = np.uint64
_ENTER, _NEXT, _RETURN = 0, 1, 2
# Frame fields of ``w``.
_A, _B, _A0, _BEST, _BEST_MOVE, _N, _I, _DEPTH, _KIND = 0, 1, 2, 3, 4, 5, 6, 7, 8
_FULL, _NULL, _RESEARCH = 0, 1, 2


def new_heuristics() -> tuple[np.ndarray, np.ndarray]:
    """Killer moves (one per ply) and history counters (per side and cell)."""
    return np.full(CELLS + 2, -1, dtype=np.int64), np.zeros((2, 7 * WIDTH), dtype=np.int64)


@njit(cache=True, nogil=True)
def search(
    current: np.uint64,
    mask: np.uint64,
    depth: int,
    alpha: int,
    beta: int,
    table: np.ndarray,
    use_table: bool,
    generation: int,
    killers: np.ndarray,
    history: np.ndarray,
    ctl: np.ndarray,
    stop: np.ndarray,
    root_filter: bool,
    root_all: bool,
    root_scores: np.ndarray,
) -> int:
    """Fail-soft value of the position (not over) searched ``depth`` plies.

    ``root_filter``: never play a root move that loses at once (the engine; the reference
    tests turn it off to compare with plain minimax at depth 1). ``root_all``: give every
    root move an exact score at this depth in ``root_scores[col]`` (others get -INF), for
    multipv; otherwise ``root_scores[WIDTH]`` is just the best root move. Meaningless once
    ``ctl[ABORTED]`` is set.
    """
    base = popcount(mask)
    plies = CELLS - base + 2
    boards = np.empty((plies, 2), dtype=np.uint64)
    cells = np.empty((plies, WIDTH), dtype=np.uint64)
    cols = np.empty((plies, WIDTH), dtype=np.int64)
    keys = np.empty(WIDTH, dtype=np.int64)
    w = np.empty((plies, 9), dtype=np.int64)
    for col in range(WIDTH + 1):
        root_scores[col] = -INF
    f = 0
    boards[0, 0] = current
    boards[0, 1] = mask
    w[0, _A] = alpha
    w[0, _B] = beta
    w[0, _DEPTH] = depth
    status = _ENTER
    result = 0
    while True:
        if status == _ENTER:
            status = _RETURN
            if _tick(ctl, stop):
                return 0
            c = boards[f, 0]
            m = boards[f, 1]
            d = w[f, _DEPTH]
            a = w[f, _A]
            b = w[f, _B]
            moves = base + f
            if d == 0:
                result = evaluate(c, m)
                continue
            playable = possible(m)
            if playable == _U(0):
                result = 0
                continue
            if f == 0:
                # The root's answer when a shortcut below decides it: win, else a safe move.
                pick = winning_cells(c, m) & playable
                if pick == _U(0):
                    pick = non_losing_moves(c, m)
                if pick == _U(0):
                    pick = playable
                for col in CENTRE_FIRST:
                    if pick & column_mask(col):
                        root_scores[WIDTH] = col
                        break
            if winning_cells(c, m) & playable:
                result = WIN + (CELLS + 1 - moves) // 2
                continue
            candidates = playable
            if d >= 2 or (f == 0 and root_filter):
                candidates = non_losing_moves(c, m)
                if candidates == _U(0):
                    result = -(WIN + (CELLS - moves) // 2)
                    continue
                if d >= 2 and moves >= CELLS - 2:
                    result = 0
                    continue
            table_move = -1
            if use_table:
                entry = tt.probe(table, c + m)
                if entry != _U(0):
                    table_move = tt.entry_move(entry)
                    if f > 0 and tt.entry_depth(entry) >= d:
                        bound = tt.entry_bound(entry)
                        value = tt.entry_score(entry)
                        if (
                            bound == tt.EXACT
                            or (bound == tt.LOWER and value >= b)
                            or (bound == tt.UPPER and value <= a)
                        ):
                            result = value
                            continue
            side = moves & 1
            killer = killers[f]
            n = 0
            for i in range(WIDTH):
                col = CENTRE_FIRST[i]
                cell = candidates & column_mask(col)
                if cell:
                    if col == table_move:
                        key = 1 << 42
                    elif col == killer:
                        key = 1 << 41
                    else:
                        row = popcount(m & column_mask(col))
                        key = (popcount(winning_cells(c | cell, m)) << 21) + min(
                            history[side, 7 * col + row], HISTORY_CAP
                        )
                    j = n
                    while j > 0 and keys[j - 1] < key:
                        keys[j] = keys[j - 1]
                        cells[f, j] = cells[f, j - 1]
                        cols[f, j] = cols[f, j - 1]
                        j -= 1
                    keys[j] = key
                    cells[f, j] = cell
                    cols[f, j] = col
                    n += 1
            w[f, _A0] = a
            w[f, _BEST] = -INF
            w[f, _BEST_MOVE] = -1
            w[f, _N] = n
            w[f, _I] = 0
            status = _NEXT
        if status == _NEXT:
            i = w[f, _I]
            c = boards[f, 0]
            m = boards[f, 1]
            if i < w[f, _N]:
                w[f, _I] = i + 1
                boards[f + 1, 0] = c ^ m
                boards[f + 1, 1] = m | cells[f, i]
                w[f + 1, _DEPTH] = w[f, _DEPTH] - 1
                if i == 0 or (f == 0 and root_all):
                    w[f, _KIND] = _FULL
                    w[f + 1, _A] = -w[f, _B]
                    w[f + 1, _B] = -w[f, _A]
                else:
                    w[f, _KIND] = _NULL
                    w[f + 1, _A] = -w[f, _A] - 1
                    w[f + 1, _B] = -w[f, _A]
                f += 1
                status = _ENTER
                continue
            result = w[f, _BEST]
            if use_table:
                bound = tt.EXACT
                if result <= w[f, _A0]:
                    bound = tt.UPPER
                elif result >= w[f, _B]:
                    bound = tt.LOWER
                tt.store(table, c + m, result, w[f, _DEPTH], bound, w[f, _BEST_MOVE], generation)
            status = _RETURN
        # _RETURN: hand ``result`` of frame f to its parent.
        if f == 0:
            return result
        f -= 1
        score = -result
        i = w[f, _I] - 1
        if w[f, _KIND] == _NULL and w[f, _A] < score < w[f, _B]:
            # The null window failed high inside the window: search this move again fully.
            w[f, _KIND] = _RESEARCH
            w[f + 1, _A] = -w[f, _B]
            w[f + 1, _B] = -w[f, _A]
            w[f + 1, _DEPTH] = w[f, _DEPTH] - 1
            f += 1
            status = _ENTER
            continue
        col = cols[f, i]
        if f == 0:
            root_scores[col] = score
        if score > w[f, _BEST]:
            w[f, _BEST] = score
            w[f, _BEST_MOVE] = col
            if f == 0:
                root_scores[WIDTH] = col
            if score > w[f, _A] and not (f == 0 and root_all):
                w[f, _A] = score
                if score >= w[f, _B]:
                    d = w[f, _DEPTH]
                    killers[f] = col
                    side = (base + f) & 1
                    row = popcount(boards[f, 1] & column_mask(col))
                    history[side, 7 * col + row] += d * d
                    result = score
                    if use_table:
                        tt.store(
                            table,
                            boards[f, 0] + boards[f, 1],
                            score,
                            d,
                            tt.LOWER,
                            col,
                            generation,
                        )
                    status = _RETURN
                    continue
        status = _NEXT
    return result
