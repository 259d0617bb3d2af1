"""The exact Connect Four solver, compiled: Pascal Pons' method on the shared rules kernels.

A node never plays a move that loses at once (``non_losing_moves``), orders moves by how many
winning cells they create (centre first on ties), keeps upper and lower bounds in the shared
transposition table and narrows the score of the root with repeated null-window searches.

Scores are Pons': from the side to move, 22 minus the winner's stones, signed; 0 a draw.
Every bound stored is a true bound on the position's value whatever the root, so the table
never has to be cleared for correctness.

Control array ``ctl`` (int64): ``[NODES]`` nodes searched so far, ``[MAX_NODES]`` budget,
``[ABORTED]`` set when the stop flag or the budget ended the search (the results are then
meaningless), ``[FRESH]`` 1 to ignore entries of other generations (a "cleared" table),
``[ROOT_MOVE]`` the root column that failed high in the last ``negamax`` call (-1 if none
did): a move proven to score at least its window's top.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai import tt
from ai.jitcache import drop_stale
from games.connect4 import kernels
from games.connect4.kernels import (
    CELLS,
    WIDTH,
    column_mask,
    move_cell,
    non_losing_moves,
    popcount,
    possible,
    winning_cells,
)

drop_stale(__file__, kernels.__file__, tt.__file__)

NODES, MAX_NODES, ABORTED, FRESH, ROOT_MOVE = 0, 1, 2, 3, 4
POLL = 4095
"""The stop flag and the node budget are checked when ``nodes & POLL == 0``."""
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)

_U = np.uint64


def new_control(max_nodes: int | None = None, fresh: bool = False) -> np.ndarray:
    ctl = np.zeros(5, dtype=np.int64)
    ctl[ROOT_MOVE] = -1
    ctl[MAX_NODES] = max_nodes if max_nodes is not None else np.iinfo(np.int64).max
    ctl[FRESH] = int(fresh)
    return ctl


def new_buffers() -> tuple[np.ndarray, np.ndarray]:
    """The search's stack, one row per number of stones (so levels never clash).

    ``cells[f]``: the ordered move cells, then the position (current, mask);
    ``scores[f]``: their ordering scores, then alpha, beta, the number of moves, the next one.
    """
    return np.zeros((CELLS + 2, WIDTH + 2), dtype=np.uint64), np.zeros(
        (CELLS + 2, WIDTH + 4), dtype=np.int64
    )


@njit(cache=True, nogil=True, inline="always")
def _tick(ctl: np.ndarray, stop: np.ndarray) -> bool:
    """Count a node; True when the search must unwind now."""
    n = ctl[NODES] + 1
    ctl[NODES] = n
    if (n & POLL) == 0 and (stop[0] != 0 or n >= ctl[MAX_NODES]):
        ctl[ABORTED] = 1
    return ctl[ABORTED] != 0


@njit(cache=True, nogil=True, inline="always")
def _order(
    current: np.uint64,
    mask: np.uint64,
    candidates: np.uint64,
    cells: np.ndarray,
    scores: np.ndarray,
    row: int,
) -> int:
    """Fill ``cells[row]`` with the candidate cells best first; returns how many."""
    if (candidates & (candidates - _U(1))) == _U(0):
        cells[row, 0] = candidates  # a forced move needs no ordering
        return 1
    n = 0
    for i in range(WIDTH):
        cell = candidates & column_mask(CENTRE_FIRST[i])
        if cell:
            score = popcount(winning_cells(current | cell, mask))
            j = n
            # Stable insertion: on equal scores the more central (earlier) column stays first.
            while j > 0 and scores[row, j - 1] < score:
                cells[row, j] = cells[row, j - 1]
                scores[row, j] = scores[row, j - 1]
                j -= 1
            cells[row, j] = cell
            scores[row, j] = score
            n += 1
    return n


_ENTER, _NEXT, _RETURN = 0, 1, 2


@njit(cache=True, nogil=True)
def negamax(
    current: np.uint64,
    mask: np.uint64,
    moves: int,
    alpha: int,
    beta: int,
    table: np.ndarray,
    generation: int,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
) -> int:
    """Fail-soft bound on the value: <= alpha means value <= result, >= beta value >= result.

    The side to move must not be able to win at once (the caller checks). Written as a loop
    over an explicit stack (frame = number of stones) rather than by recursion: numba's
    recursive calls pass every array anew, and its on-disk cache cannot reload a cached
    function that calls a recursive one.
    """
    # Frames live in the caller's buffers (see ``new_buffers``): no allocation per call.
    ctl[ROOT_MOVE] = -1
    boards = cells[:, WIDTH:]
    windows = scores[:, WIDTH:]
    f = moves
    boards[f, 0] = current
    boards[f, 1] = mask
    windows[f, 0] = alpha
    windows[f, 1] = beta
    status = _ENTER
    result = 0
    while True:
        if status == _ENTER:
            status = _RETURN
            if _tick(ctl, stop):
                return 0
            c = boards[f, 0]
            m = boards[f, 1]
            a = windows[f, 0]
            b = windows[f, 1]
            candidates = non_losing_moves(c, m)
            if candidates == _U(0):
                result = -((CELLS - f) // 2)
                continue
            if f >= CELLS - 2:
                result = 0
                continue
            low = -((CELLS - 2 - f) // 2)
            high = (CELLS - 1 - f) // 2
            entry = tt.probe(table, c + m)
            if entry != _U(0) and (ctl[FRESH] == 0 or tt.entry_generation(entry) == generation):
                bound = tt.entry_bound(entry)
                value = tt.entry_score(entry)
                if bound != tt.UPPER and value > low:
                    low = value
                if bound != tt.LOWER and value < high:
                    high = value
            if a < low:
                a = low
                if a >= b:
                    result = a
                    continue
            if b > high:
                b = high
                if a >= b:
                    result = b
                    continue
            windows[f, 0] = a
            windows[f, 1] = b
            windows[f, 2] = _order(c, m, candidates, cells, scores, f)
            windows[f, 3] = 0
            status = _NEXT
        if status == _NEXT:
            i = windows[f, 3]
            c = boards[f, 0]
            m = boards[f, 1]
            if i < windows[f, 2]:
                windows[f, 3] = i + 1
                cell = cells[f, i]
                boards[f + 1, 0] = c ^ m
                boards[f + 1, 1] = m | cell
                windows[f + 1, 0] = -windows[f, 1]
                windows[f + 1, 1] = -windows[f, 0]
                f += 1
                status = _ENTER
                continue
            result = windows[f, 0]
            tt.store(table, c + m, result, CELLS - f, tt.UPPER, -1, generation)
            status = _RETURN
        # _RETURN: hand ``result`` of frame f to its parent.
        if f == moves:
            return result
        f -= 1
        score = -result
        if score >= windows[f, 1]:
            tt.store(table, boards[f, 0] + boards[f, 1], score, CELLS - f, tt.LOWER, -1, generation)
            if f == moves:
                cutoff = cells[f, windows[f, 3] - 1]
                for col in range(WIDTH):
                    if cutoff & column_mask(col):
                        ctl[ROOT_MOVE] = col
            result = score
            status = _RETURN
            continue
        if score > windows[f, 0]:
            windows[f, 0] = score
        status = _NEXT


@njit(cache=True, nogil=True)
def immediate_win(current: np.uint64, mask: np.uint64) -> int:
    """A column that wins at once, or -1."""
    wins = winning_cells(current, mask) & possible(mask)
    for col in CENTRE_FIRST:
        if wins & column_mask(col):
            return col
    return -1


@njit(cache=True, nogil=True)
def solve(
    current: np.uint64,
    mask: np.uint64,
    table: np.ndarray,
    generation: int,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
) -> int:
    """The exact value from the side to move (game not over); meaningless if ctl[ABORTED]."""
    moves = popcount(mask)
    return solve_within(current, mask, -((CELLS - moves) // 2), (CELLS + 1 - moves) // 2,
                        table, generation, ctl, stop, cells, scores)


@njit(cache=True, nogil=True)
def solve_within(
    current: np.uint64,
    mask: np.uint64,
    low: int,
    high: int,
    table: np.ndarray,
    generation: int,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
) -> int:
    """``solve`` told that the value lies in ``[low, high]`` (an ``outcome`` already proven:
    a win is at least 1, a loss at most -1); meaningless if ctl[ABORTED]."""
    moves = popcount(mask)
    if immediate_win(current, mask) >= 0:
        return (CELLS + 1 - moves) // 2
    low = max(low, -((CELLS - moves) // 2))
    high = min(high, (CELLS + 1 - moves) // 2)
    while low < high:
        # Probe near 0 first, then halve towards the bound: most positions are close games.
        med = low + (high - low) // 2
        half_low = -((-low) // 2)  # truncates towards zero like C
        if med <= 0 and half_low < med:
            med = half_low
        elif med >= 0 and high // 2 > med:
            med = high // 2
        r = negamax(current, mask, moves, med, med + 1, table, generation, ctl, stop, cells, scores)
        if ctl[ABORTED] != 0:
            return 0
        if r <= med:
            high = r
        else:
            low = r
    return low


@njit(cache=True, nogil=True)
def outcome(
    current: np.uint64,
    mask: np.uint64,
    table: np.ndarray,
    generation: int,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
) -> int:
    """The weak solve: 1 if the side to move wins, 0 a draw, -1 a loss (game not over).

    At most two null-window searches around zero (is the value above 0? below 0?), far
    cheaper than ``solve``'s walk towards the exact score, whose first probes are far from
    zero. ``ctl[ROOT_MOVE]`` is then a column that keeps a win or a draw when the search
    that proved it failed high on one (-1 when the table or a shortcut decided it, and for
    a loss). Meaningless if ctl[ABORTED].
    """
    moves = popcount(mask)
    win = immediate_win(current, mask)
    if win >= 0:
        ctl[ROOT_MOVE] = win
        return 1
    if negamax(current, mask, moves, 0, 1, table, generation, ctl, stop, cells, scores) > 0:
        return 1
    if ctl[ABORTED] != 0:
        return 0
    if negamax(current, mask, moves, -1, 0, table, generation, ctl, stop, cells, scores) >= 0:
        return 0
    return -1


@njit(cache=True, nogil=True)
def move_value_at_least(
    current: np.uint64,
    mask: np.uint64,
    col: int,
    target: int,
    table: np.ndarray,
    generation: int,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
) -> bool:
    """True when playing ``col`` (legal, not an immediate win) scores at least ``target``."""
    moves = popcount(mask)
    cell = move_cell(mask, col)
    if not (non_losing_moves(current, mask) & cell):
        return -((CELLS - moves) // 2) >= target
    r = -negamax(
        current ^ mask,
        mask | cell,
        moves + 1,
        -target,
        -target + 1,
        table,
        generation,
        ctl,
        stop,
        cells,
        scores,
    )
    return r >= target


@njit(cache=True, nogil=True)
def solve_batch(
    currents: np.ndarray,
    masks: np.ndarray,
    table: np.ndarray,
    ctl: np.ndarray,
    stop: np.ndarray,
    cells: np.ndarray,
    scores: np.ndarray,
    out_scores: np.ndarray,
    out_nodes: np.ndarray,
) -> None:
    """Solve many positions, each with a logically cleared table (a new generation).

    For benchmarks: one call, so the time per position is the solver's own.
    """
    for i in range(currents.shape[0]):
        ctl[FRESH] = 1
        before = ctl[NODES]
        out_scores[i] = solve(currents[i], masks[i], table, i & 0xFF, ctl, stop, cells, scores)
        out_nodes[i] = ctl[NODES] - before
