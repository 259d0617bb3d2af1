"""The Multi-ProbCut table: how well a shallow search predicts a deep one, by depth and stage.

For a node with ``D`` plies left and ``e`` empty squares, ``shallow_depth(D)`` plies of
full-width search give ``v``; over positions of the project's own self-play, the full
``D``-ply value was fitted as ``a * v + b`` with residual standard deviation ``sigma``
(``ai.othello.probcut_fit`` measures and writes them; ``probcut.json`` ships them, one row
per stage of ``STAGE_EMPTIES`` and depth). The search cuts a null-window node when the
shallow search clears the window by ``t * sigma`` (``weights.PROBCUT_T``): the larger ``t``,
the fewer cuts and the fewer mistakes.

Scores are internal units (``weights.DISC`` a disc), as the kernels see them.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TABLE_FILE = Path(__file__).with_name("probcut.json")
MIN_DEPTH = 3
"""Shallowest depth left that gets a ProbCut: below it the shallow search saves nothing."""
MAX_DEPTH = 16
"""Deepest depth left a fitted row may have."""
KERNEL_DEPTH = 32
"""Deepest depth left the kernel table has room for: depths beyond a stage's deepest fitted
row borrow it (``kernel_table``)."""
STAGE_EMPTIES = 6
"""Empties per stage of the fit: ``e`` belongs to stage ``e // STAGE_EMPTIES``."""


def shallow_depth(depth: int) -> int:
    """The shallow search's depth for ``depth`` plies left: about half (Edax's rule), of the
    same parity, so the evaluation's odd/even swing cancels out of the fit."""
    return max(1, 2 * (depth // 4) + depth % 2)


@dataclass(frozen=True)
class Row:
    """One fitted pair: ``depth`` plies predicted from ``shallow`` plies, at positions with
    ``low``..``high`` empty squares; ``n`` positions, ``a``/``b`` the fit, ``sigma`` its
    residual deviation (internal units)."""

    low: int
    high: int
    depth: int
    shallow: int
    a: float
    b: float
    sigma: float
    n: int


def read(path: Path = TABLE_FILE) -> list[Row]:
    """The fitted rows of ``path`` (``ValueError`` when a row is not a usable fit)."""
    data = json.loads(path.read_text())
    rows = [Row(**row) for row in data["rows"]]
    for row in rows:
        if not (row.sigma > 0 and row.a > 0 and row.shallow == shallow_depth(row.depth)
                and MIN_DEPTH <= row.depth <= MAX_DEPTH and 0 <= row.low <= row.high <= 64):
            raise ValueError(f"{path.name}: not a usable ProbCut row: {row}")
    return rows


@functools.cache
def kernel_table(t: float, path: Path = TABLE_FILE) -> np.ndarray:
    """What the kernels take (``alphabeta._pvs``'s ``probcut``; made once per ``t``, only
    read): ``[empties, depth]`` -> ``(shallow depth, a, b, t * sigma)``, a shallow depth of 0
    where no row was fitted.

    A depth deeper than a stage's deepest fitted row (up to ``KERNEL_DEPTH``) takes the fit of
    the deepest row of the same parity, with its own shallow depth (``shallow_depth``): the
    fits barely change with depth (``a`` near 1, ``b`` near 0, ``sigma`` flat from depth 6
    to 12), and without a row the top of a long search, where most of its nodes hang, would
    be full-width."""
    table = np.zeros((65, KERNEL_DEPTH + 1, 4), dtype=np.float64)
    deepest: dict[tuple[int, int, int], Row] = {}
    for row in read(path):
        table[row.low:row.high + 1, row.depth] = (row.shallow, row.a, row.b, t * row.sigma)
        key = (row.low, row.high, row.depth % 2)
        if key not in deepest or deepest[key].depth < row.depth:
            deepest[key] = row
    for (low, high, _), row in deepest.items():
        for depth in range(row.depth + 2, KERNEL_DEPTH + 1, 2):
            table[low:high + 1, depth] = (shallow_depth(depth), row.a, row.b, t * row.sigma)
    return table
