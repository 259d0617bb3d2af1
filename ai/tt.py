"""A fixed-size transposition table in flat arrays, shared by every compiled search.

Layout: ``table`` is a ``uint64`` array of shape ``(n, 2)``: column 0 holds the full key (to
reject index collisions), column 1 the packed entry. Entries live in buckets of two: slot 0 is
depth-preferred (kept unless the newcomer searched as deep or the entry is from an older
search), slot 1 is always replaced, so deep results survive and fresh ones are still kept.

Packed entry bits: 0-15 score + 32768, 16-23 depth, 24-25 bound, 26-33 move + 1,
34-41 generation. A packed value of 0 means "no entry".
"""

from __future__ import annotations

import numpy as np
from numba import njit

LOWER = 1  # score is a lower bound (the search failed high)
UPPER = 2  # score is an upper bound (the search failed low)
EXACT = 3  # score is the value at this depth

_U = np.uint64
_SCORE_OFFSET = 32768
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def new_table(bits: int) -> np.ndarray:
    """An empty table of ``2**bits`` entries (16 bytes each)."""
    if not 1 <= bits <= 30:
        raise ValueError(f"table size must be 2**1 .. 2**30 entries, got 2**{bits}")
    return np.zeros((1 << bits, 2), dtype=np.uint64)


@njit(cache=True, inline="always")
def _bucket(table: np.ndarray, key: np.uint64) -> int:
    # np.int64 casts: int() of a uint64 stays unsigned in numba and mixed arithmetic turns float.
    n = table.shape[0]
    # Fibonacci hashing spreads structured keys (bitboards) over the whole table.
    h = (key * _GOLDEN) >> np.uint64(32)
    return int(np.int64(h & np.uint64(n - 1))) & ~1


@njit(cache=True)
def probe(table: np.ndarray, key: np.uint64) -> np.uint64:
    """The packed entry stored for ``key``, or 0 if there is none."""
    i = _bucket(table, key)
    if table[i, 0] == key and table[i, 1] != _U(0):
        return table[i, 1]
    if table[i + 1, 0] == key and table[i + 1, 1] != _U(0):
        return table[i + 1, 1]
    return _U(0)


@njit(cache=True)
def pack(score: int, depth: int, bound: int, move: int, generation: int) -> np.uint64:
    """One entry's packed form; ``move`` -1 means no best move."""
    return (
        _U(score + _SCORE_OFFSET)
        | (_U(depth & 0xFF) << _U(16))
        | (_U(bound) << _U(24))
        | (_U((move + 1) & 0xFF) << _U(26))
        | (_U(generation & 0xFF) << _U(34))
    )


@njit(cache=True)
def store(
    table: np.ndarray,
    key: np.uint64,
    score: int,
    depth: int,
    bound: int,
    move: int,
    generation: int,
) -> None:
    """Record a search result for ``key`` under the bucket's replacement policy."""
    i = _bucket(table, key)
    entry = pack(score, depth, bound, move, generation)
    if table[i + 1, 0] == key and table[i, 0] != key:
        table[i + 1, 1] = entry
        return
    old = table[i, 1]
    if (
        table[i, 0] == key
        or old == _U(0)
        or depth >= entry_depth(old)
        or entry_generation(old) != (generation & 0xFF)
    ):
        if table[i, 0] != key and old != _U(0):
            # The displaced deep entry still gets the always-replace slot.
            table[i + 1, 0] = table[i, 0]
            table[i + 1, 1] = old
        table[i, 0] = key
        table[i, 1] = entry
    else:
        table[i + 1, 0] = key
        table[i + 1, 1] = entry


@njit(cache=True, inline="always")
def entry_score(entry: np.uint64) -> int:
    return int(np.int64(entry & _U(0xFFFF))) - _SCORE_OFFSET


@njit(cache=True, inline="always")
def entry_depth(entry: np.uint64) -> int:
    return int(np.int64((entry >> _U(16)) & _U(0xFF)))


@njit(cache=True, inline="always")
def entry_bound(entry: np.uint64) -> int:
    return int(np.int64((entry >> _U(24)) & _U(3)))


@njit(cache=True, inline="always")
def entry_move(entry: np.uint64) -> int:
    """The stored best move, or -1."""
    return int(np.int64((entry >> _U(26)) & _U(0xFF))) - 1


@njit(cache=True, inline="always")
def entry_generation(entry: np.uint64) -> int:
    return int(np.int64((entry >> _U(34)) & _U(0xFF)))
