"""The learned Othello evaluation: pattern tables per game stage, as Logistello, Edax and
Egaroucid evaluate (the weights are fitted by ``ai.othello.train`` and ship in
``patterns.npz``).

A *pattern* is an ordered tuple of squares (an edge with its two X-squares, a 2x5 or 3x3
corner block, a row, a diagonal). Each pattern has instances all over the board, its images
under the board's eight symmetries; every instance reads the same table, indexed by the
ternary number of its squares in order (0 empty, 1 the side to move's disc, 2 the
opponent's). A configuration and its mirror image within a pattern that is itself symmetric
(an edge read right to left) share one weight: the file stores one weight per class
("compact" tables) and ``load`` spreads it over every index of the class ("full" tables),
so the compiled evaluation is one table read per instance. The score of a position is the
stage's bias plus the sum of its instances' weights, plus a weight for each side's number of
legal moves and one for the parity of the empty squares, in ``weights.DISC`` units per disc
of final disc difference for the side to move. Stages are windows of ``STAGE_EMPTIES``
empty squares.

``evaluate(P, O, table)`` is the compiled evaluation (``table`` from ``load``);
``instance_indices`` is a plain-Python reference of its index computation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from ai import jitcache
from ai.othello import weights
from ai.othello.weights import DISC, WIN
from games.othello import kernels as rules
from games.othello.kernels import legal_moves, popcount

jitcache.drop_stale(__file__, weights.__file__, rules.__file__)

WEIGHTS_FILE = Path(__file__).with_name("patterns.npz")
"""The shipped weights: ``discus train othello --games 16000 --seed 1 --jobs 2`` (835,593
positions from 16,000 self-play games; 37 minutes of a 2-core machine). The first 6,000 of
those games were the first round's, which the second beat by 70 Elo at 0.1 s a move."""
VERSION = 1
"""Format and pattern set of the weights file; ``load`` refuses any other."""
STAGE_EMPTIES = 5
"""Empty squares per stage: stage ``s`` covers ``5s`` to ``5s + 4`` empties."""
STAGES = 12
"""Stages 0..11; positions with more than 59 empties (the start) use the last."""

_BASE: dict[str, tuple[str, ...]] = {
    "edge_2x": ("a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "b2", "g2"),
    "corner_2x5": ("a1", "b1", "c1", "d1", "e1", "a2", "b2", "c2", "d2", "e2"),
    "corner_3x3": ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"),
    "row_2": ("a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2"),
    "row_3": ("a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3"),
    "row_4": ("a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4"),
    "diag_8": ("a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"),
    "diag_7": ("b1", "c2", "d3", "e4", "f5", "g6", "h7"),
    "diag_6": ("c1", "d2", "e3", "f4", "g5", "h6"),
    "diag_5": ("d1", "e2", "f3", "g4", "h5"),
    "diag_4": ("e1", "f2", "g3", "h4"),
}
"""Each pattern's instance in the a1 corner (or the first row/diagonal), squares in order."""


def _square(name: str) -> int:
    return (int(name[1]) - 1) * 8 + "abcdefgh".index(name[0])


_K1 = np.uint64(0x5555555555555555)
_K2 = np.uint64(0x3333333333333333)
_K4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_B1 = np.uint64(0x00FF00FF00FF00FF)
_B2 = np.uint64(0x0000FFFF0000FFFF)
_T1 = np.uint64(0x5500550055005500)
_T2 = np.uint64(0x3333000033330000)
_T4 = np.uint64(0x0F0F0F0F00000000)
_S1, _S2, _S4, _S7, _S8 = (np.uint64(k) for k in (1, 2, 4, 7, 8))
_S14, _S16, _S28, _S32 = (np.uint64(k) for k in (14, 16, 28, 32))


@njit(cache=True, nogil=True, inline="always")
def _mirror(x: np.uint64) -> np.uint64:
    """Each row read right to left (a1 <-> h1)."""
    x = ((x >> _S1) & _K1) | ((x & _K1) << _S1)
    x = ((x >> _S2) & _K2) | ((x & _K2) << _S2)
    return ((x >> _S4) & _K4) | ((x & _K4) << _S4)


@njit(cache=True, nogil=True, inline="always")
def _flip(x: np.uint64) -> np.uint64:
    """Rows in reverse order (a1 <-> a8)."""
    x = ((x >> _S8) & _B1) | ((x & _B1) << _S8)
    x = ((x >> _S16) & _B2) | ((x & _B2) << _S16)
    return (x >> _S32) | (x << _S32)


@njit(cache=True, nogil=True, inline="always")
def _transpose(x: np.uint64) -> np.uint64:
    """Rows become columns (a symmetry about a diagonal)."""
    t = _T4 & (x ^ (x << _S28))
    x ^= t ^ (t >> _S28)
    t = _T2 & (x ^ (x << _S14))
    x ^= t ^ (t >> _S14)
    t = _T1 & (x ^ (x << _S7))
    return x ^ t ^ (t >> _S7)


@njit(cache=True, nogil=True, inline="always")
def _images(x: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64, np.uint64,
                                    np.uint64, np.uint64, np.uint64]:
    """The board under the eight symmetries, in ``TRANSFORMS`` order."""
    m = _mirror(x)
    t = _transpose(x)
    tm = _mirror(t)
    return x, m, _flip(x), _flip(m), t, tm, _flip(t), _flip(tm)


@njit(cache=True, nogil=True)
def image_of(x: np.uint64, t: int) -> np.uint64:
    """The board ``x`` under symmetry ``t``: the disc on square ``TRANSFORMS[t][sq]`` of
    ``x`` lands on ``sq``."""
    return _images(x)[t]


def _transforms() -> list[np.ndarray]:
    """For each symmetry ``t``, ``source[sq]``: the square of the board whose disc lands on
    ``sq`` of its ``t``-image. Reading a pattern's base squares on the image reads the
    instance ``source[base]`` on the board itself, so each instance is defined by the very
    bit operations the compiled evaluation runs."""
    out = []
    for t in range(8):
        source = np.empty(64, dtype=np.int64)
        for sq in range(64):
            dst = int(image_of(np.uint64(1 << sq), t))
            source[dst.bit_length() - 1] = sq
        out.append(source)
    return out


TRANSFORMS = _transforms()


@dataclass(frozen=True)
class Pattern:
    """One pattern: its instances (rows of squares) and its compact classes."""

    name: str
    size: int
    """Squares per instance; the full table has ``3 ** size`` entries."""
    instances: np.ndarray
    """(instances, size) squares, each instance in the order that reads its index."""
    transforms: tuple[int, ...]
    """Per instance, the symmetry whose image of the board holds it on the base squares."""
    compact: np.ndarray
    """``compact[index]``: the class (shared weight) of each full index."""
    classes: int
    """Number of distinct weights."""


def _pattern(name: str, base: tuple[str, ...]) -> Pattern:
    squares = np.array([_square(s) for s in base], dtype=np.int64)
    size = len(squares)
    instances: list[np.ndarray] = []
    used: list[int] = []
    self_maps: list[np.ndarray] = []  # orders of the base's own squares it is symmetric under
    for t, source in enumerate(TRANSFORMS):
        image = source[squares]
        if set(image.tolist()) == set(squares.tolist()):
            self_maps.append(np.array([list(squares).index(s) for s in image]))
        if not any(set(image.tolist()) == set(i.tolist()) for i in instances):
            instances.append(image)
            used.append(t)
    # Index of every configuration, and of the same configuration read in each self-symmetric
    # order: the smallest is the class representative.
    count = 3**size
    digits = (np.arange(count)[:, None] // 3 ** np.arange(size)[None, :]) % 3
    powers = 3 ** np.arange(size)
    least = np.arange(count)
    for order in self_maps:
        least = np.minimum(least, digits[:, order] @ powers)
    _, compact = np.unique(least, return_inverse=True)
    return Pattern(name, size, np.array(instances), tuple(used), compact.astype(np.int64),
                   int(compact.max()) + 1)


PATTERNS: tuple[Pattern, ...] = tuple(_pattern(n, b) for n, b in _BASE.items())


def _layout() -> tuple[np.ndarray, np.ndarray, int, int]:
    """Which pattern each symmetry's image is read for (``USES[t, p]``), the offset of each
    pattern's full table in a stage's row, the patterns' entries in the row plus one and the
    number of instances."""
    uses = np.zeros((8, len(PATTERNS)), dtype=np.bool_)
    offsets = np.zeros(len(PATTERNS), dtype=np.int64)
    total = 0
    for p, pattern in enumerate(PATTERNS):
        offsets[p] = total
        total += 3**pattern.size
        uses[list(pattern.transforms), p] = True
    return uses, offsets, total + 1, int(uses.sum())


USES, PATTERN_OFFSETS, _PATTERN_ENTRIES, INSTANCES = _layout()
MOBILITY = _PATTERN_ENTRIES - 1
"""Offset in a stage's full row of a table indexed by the side to move's number of legal
moves (64 entries), then of one by the opponent's (64): besides the patterns, as Logistello
has, because mobility is what a midgame is about and 128 weights fit from little data."""
PARITY = MOBILITY + 128
"""Offset of a table of two weights indexed by the parity of the empty squares (odd: the
side to move would play last)."""
BIAS = PARITY + 2
"""Index of the stage's bias in its full row."""
ROW = BIAS + 1
_CLASSES = sum(p.classes for p in PATTERNS)
FEATURES = _CLASSES + 128 + 2 + 1
"""Compact weights per stage (patterns, mobility, parity, the bias last): the unknowns the
trainer fits."""
COLUMNS = INSTANCES + 3
"""Features of a position: one per pattern instance, both mobilities and the parity."""
TERNARY = np.array([sum(3**k for k in range(10) if b >> k & 1) for b in range(1024)],
                   dtype=np.int64)
"""``TERNARY[bits]``: the base-3 number with digit 1 where ``bits`` has a 1."""
_DIAG = tuple(np.uint64(sum(1 << (8 * r + r + d) for r in range(8 - d))) for d in range(5))
_GATHER = np.uint64(0x0101010101010101)
"""Multiplying squares that are all in different columns by this adds every row into the
top one without carries: bit ``56 + c`` is the square of column ``c``."""


@njit(cache=True, nogil=True, inline="always")
def _bits(p: int, x: np.uint64) -> np.uint64:
    """The base squares of pattern ``p`` (``_BASE`` order) on board ``x``, packed in order."""
    if p == 0:  # a1..h1, b2, g2
        return (x & np.uint64(0xFF)) | ((x >> _S1) & np.uint64(0x100)) | (
            (x >> np.uint64(5)) & np.uint64(0x200))
    if p == 1:  # a1..e1, a2..e2
        return (x & np.uint64(0x1F)) | ((x >> np.uint64(3)) & np.uint64(0x3E0))
    if p == 2:  # a1..c1, a2..c2, a3..c3
        return (x & np.uint64(7)) | ((x >> np.uint64(5)) & np.uint64(0x38)) | (
            (x >> np.uint64(10)) & np.uint64(0x1C0))
    if p <= 5:  # rows 2, 3, 4
        return (x >> np.uint64(8 * (p - 2))) & np.uint64(0xFF)
    d = p - 6  # diagonals from a1, b1, c1, d1, e1
    return ((x & _DIAG[d]) * _GATHER) >> np.uint64(56 + d)


@njit(cache=True, nogil=True, inline="always")
def _indices_into(P: np.uint64, O: np.uint64, out: np.ndarray) -> None:
    """Each instance's full-row index (pattern offset included) into ``out``."""
    ps = _images(P)
    os_ = _images(O)
    i = 0
    for t in range(8):
        bp = ps[t]
        bo = os_[t]
        for p in range(USES.shape[1]):
            if USES[t, p]:
                out[i] = PATTERN_OFFSETS[p] + TERNARY[_bits(p, bp)] + 2 * TERNARY[_bits(p, bo)]
                i += 1


def stage_of(empties: int) -> int:
    return min(empties, STAGES * STAGE_EMPTIES - 1) // STAGE_EMPTIES


def compact_offsets() -> np.ndarray:
    """Start of each pattern's classes in a stage's compact vector."""
    return np.cumsum([0] + [p.classes for p in PATTERNS])[:-1]


def full_to_compact() -> np.ndarray:
    """For each index of a full row, its compact feature (the bias maps to the bias)."""
    out = np.empty(ROW, dtype=np.int64)
    start = 0
    for p, c0 in zip(PATTERNS, compact_offsets(), strict=True):
        out[start : start + 3**p.size] = c0 + p.compact
        start += 3**p.size
    out[MOBILITY:BIAS] = _CLASSES + np.arange(BIAS - MOBILITY)
    out[BIAS] = FEATURES - 1
    return out


def expand(compact: np.ndarray) -> np.ndarray:
    """(stages, FEATURES) compact weights -> (stages, ROW) full table rows, same dtype."""
    return np.ascontiguousarray(compact[:, full_to_compact()])


def save(path: Path, compact: np.ndarray, meta: dict[str, str] | None = None) -> None:
    """Write (stages, FEATURES) int16 compact weights, in ``DISC`` units, to ``path``."""
    assert compact.shape == (STAGES, FEATURES) and compact.dtype == np.int16
    extra = {k: np.array(v) for k, v in (meta or {}).items()}
    np.savez_compressed(path, version=np.array(VERSION), weights=compact,
                        **extra)  # type: ignore[arg-type]


def load_compact(path: Path = WEIGHTS_FILE) -> np.ndarray:
    """The (stages, FEATURES) int16 compact weights of ``path``; ``ValueError`` if the file
    is of another version or shape."""
    with np.load(path) as data:
        version = int(data["version"])
        compact = data["weights"]
    if version != VERSION or compact.shape != (STAGES, FEATURES):
        raise ValueError(f"{path.name}: version {version}, shape {compact.shape}; this engine "
                         f"reads version {VERSION}, shape {(STAGES, FEATURES)}")
    return compact.astype(np.int16)


@functools.lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> np.ndarray:
    """The compiled evaluation's (stages, ROW) int16 table from the weights file."""
    # Not made read-only: numba types a read-only array apart, and the kernels' signatures
    # take a plain one. Callers must not write to it.
    return expand(load_compact(path))


@njit(cache=True, nogil=True)
def score(P: np.uint64, O: np.uint64, table: np.ndarray) -> int:
    """The patterns' sum for ``P``'s side (no game-over test), in ``DISC`` units."""
    empties = 64 - popcount(P | O)
    stage = min(empties, STAGES * STAGE_EMPTIES - 1) // STAGE_EMPTIES
    row = table[stage]
    total = np.int64(row[BIAS])
    ps = _images(P)
    os_ = _images(O)
    for t in range(8):
        bp = ps[t]
        bo = os_[t]
        for p in range(USES.shape[1]):
            if USES[t, p]:
                total += row[PATTERN_OFFSETS[p] + TERNARY[_bits(p, bp)] + 2 * TERNARY[_bits(p, bo)]]
    total += row[MOBILITY + popcount(legal_moves(P, O))]
    total += row[MOBILITY + 64 + popcount(legal_moves(O, P))]
    total += row[PARITY + (empties & 1)]
    return int(total)


@njit(cache=True, nogil=True)
def evaluate(P: np.uint64, O: np.uint64, table: np.ndarray) -> int:
    """Static score for ``P``'s side in ``DISC`` units per disc, strictly within ``WIN``;
    the caller scores finished games (``evaluation.terminal``) before calling this."""
    s = score(P, O, table)
    if s >= WIN:
        return WIN - 1
    if s <= -WIN:
        return 1 - WIN
    return s


@njit(cache=True, nogil=True)
def full_indices(players: np.ndarray, opponents: np.ndarray) -> np.ndarray:
    """(positions, COLUMNS) full-row indices of many positions: each pattern instance's
    (offset included, in the compiled evaluation's order), then both mobilities and the
    parity."""
    n = players.shape[0]
    out = np.empty((n, COLUMNS), dtype=np.int64)
    for j in range(n):
        P = players[j]
        O = opponents[j]
        _indices_into(P, O, out[j])
        out[j, INSTANCES] = MOBILITY + popcount(legal_moves(P, O))
        out[j, INSTANCES + 1] = MOBILITY + 64 + popcount(legal_moves(O, P))
        out[j, INSTANCES + 2] = PARITY + ((64 - popcount(P | O)) & 1)
    return out


def instance_indices(player: int, opponent: int) -> list[tuple[str, int]]:
    """Plain Python: (pattern name, ternary index) of every instance, for ``player`` to move
    (the reference the compiled index computation is tested against)."""
    out = []
    for t in range(8):
        for p in PATTERNS:
            if t not in p.transforms:
                continue
            inst = p.instances[p.transforms.index(t)]
            idx = 0
            for k, sq in enumerate(inst.tolist()):
                cell = 1 if player >> sq & 1 else 2 if opponent >> sq & 1 else 0
                idx += cell * 3**k
            out.append((p.name, idx))
    return out


def extra_indices(player: int, opponent: int) -> list[int]:
    """Plain Python: the full-row indices of the mobility and parity features."""
    mine = sum(1 for sq in range(64) if _legal(player, opponent, sq))
    theirs = sum(1 for sq in range(64) if _legal(opponent, player, sq))
    empties = 64 - (player | opponent).bit_count()
    return [MOBILITY + mine, MOBILITY + 64 + theirs, PARITY + empties % 2]


def _legal(player: int, opponent: int, sq: int) -> bool:
    """Whether ``player`` may play ``sq``, walking the eight lines square by square."""
    if (player | opponent) >> sq & 1:
        return False
    r, c = divmod(sq, 8)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1), (0, -1), (-1, 0), (-1, -1), (-1, 1)):
        rr, cc, seen = r + dr, c + dc, 0
        while 0 <= rr < 8 and 0 <= cc < 8 and opponent >> (rr * 8 + cc) & 1:
            rr, cc, seen = rr + dr, cc + dc, seen + 1
        if seen and 0 <= rr < 8 and 0 <= cc < 8 and player >> (rr * 8 + cc) & 1:
            return True
    return False


def features(player: int, opponent: int) -> list[int]:
    """The compact features of a position (one per instance, mobility, parity, then the
    bias): a row of the trainer's design matrix, in plain Python."""
    offsets = dict(zip((p.name for p in PATTERNS), compact_offsets(), strict=True))
    by_name = {p.name: p for p in PATTERNS}
    return [int(offsets[n] + by_name[n].compact[i]) for n, i in instance_indices(player, opponent)
            ] + [_CLASSES + i - MOBILITY for i in extra_indices(player, opponent)] + [FEATURES - 1]


def disc_units(discs: float) -> int:
    return round(discs * DISC)

