"""Perft benchmark: move-generator speed of both games, compiled and in plain Python.

``python -m bench.perft [--othello-depth 11] [--connect4-depth 10] [--python-othello-depth 8]
[--python-connect4-depth 8]`` (also ``discus bench perft``)

Perft counts the leaves of the move tree from the start (a forced pass is one ply, a finished
game one leaf), so it measures the rules kernels alone, without any search. For each game it
prints leaves per second of the compiled kernels the game and the AI share, and of a plain
CPython perft written here on Python ints (the same bitboard tricks, no numba anywhere
underneath) as the uncompiled reference; the two must count the same leaves. JIT warm-up
(importing the rules and compiling them, or loading them from numba's cache) is timed apart
and printed on its own line, never charged to a rate. Othello's compiled rate is compared with
Edax's perft, about 400M leaves/s on this kind of machine (``shared/data/README.md``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence

from bench import reference_data

EDAX_PERFT = 400e6
"""Edax's perft on this kind of 2-core machine, leaves per second (shared/data/README.md)."""


def othello_counts() -> dict[int, int]:
    """The reference Othello perft counts by depth (empty if there are none): a fast count is
    only worth printing if it is the right count."""
    path = reference_data("othello/perft.txt")
    if not path.is_file():
        return {}
    rows = (line.split() for line in path.read_text().splitlines())
    return {int(row[0]): int(row[1]) for row in rows if len(row) == 2 and row[0].isdigit()}


# ---------------------------------------------------------------------------------------------
# Plain-Python Othello: the shifts of games/othello/kernels.py on Python ints.

_M64 = (1 << 64) - 1
_INNER = 0x7E7E7E7E7E7E7E7E  # columns b..g: east-west and diagonal runs must not wrap
_DIRS = ((1, _INNER), (8, _M64), (7, _INNER), (9, _INNER))


def _othello_moves(p: int, o: int) -> int:
    moves = 0
    for shift, mask in _DIRS:
        m = o & mask
        t = m & (p << shift)
        for _ in range(5):
            t |= m & (t << shift)
        moves |= t << shift
        t = m & (p >> shift)
        for _ in range(5):
            t |= m & (t >> shift)
        moves |= t >> shift
    return moves & ~(p | o) & _M64


def _othello_flips(p: int, o: int, sq: int) -> int:
    x = 1 << sq
    flipped = 0
    for shift, mask in _DIRS:
        m = o & mask
        t = m & (x << shift)
        for _ in range(5):
            t |= m & (t << shift)
        if (t << shift) & p:
            flipped |= t
        t = m & (x >> shift)
        for _ in range(5):
            t |= m & (t >> shift)
        if (t >> shift) & p:
            flipped |= t
    return flipped


def _othello_perft(p: int, o: int, depth: int) -> int:
    moves = _othello_moves(p, o)
    if not moves:
        if not _othello_moves(o, p) or depth == 1:
            return 1  # a finished game is one leaf; a pass at the last ply is one too
        return _othello_perft(o, p, depth - 1)
    if depth == 1:
        return moves.bit_count()
    total = 0
    while moves:
        bit = moves & -moves
        moves ^= bit
        f = _othello_flips(p, o, bit.bit_length() - 1)
        total += _othello_perft(o ^ f, p | f | bit, depth - 1)
    return total


def python_othello(depth: int) -> int:
    """Othello perft from the start in plain Python (black: e4 d5; white: d4 e5)."""
    black = (1 << 28) | (1 << 35)
    white = (1 << 27) | (1 << 36)
    return 1 if depth <= 0 else _othello_perft(black, white, depth)


# ---------------------------------------------------------------------------------------------
# Plain-Python Connect Four: Pons' layout of games/connect4/kernels.py on Python ints.

_BOTTOM = sum(1 << (7 * c) for c in range(7))
_BOARD = sum(0b111111 << (7 * c) for c in range(7))
_TOPS = tuple(1 << (7 * c + 5) for c in range(7))
_COLUMNS = tuple(0b111111 << (7 * c) for c in range(7))


def _four(stones: int) -> bool:
    for shift in (1, 6, 7, 8):
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


def _connect4_perft(current: int, mask: int, depth: int) -> int:
    if depth == 0 or mask == _BOARD or _four(current ^ mask):
        return 1
    total = 0
    for col in range(7):
        if not mask & _TOPS[col]:
            if depth == 1:
                total += 1
            else:
                cell = (mask + (1 << (7 * col))) & _COLUMNS[col]
                total += _connect4_perft(current ^ mask, mask | cell, depth - 1)
    return total


def python_connect4(depth: int) -> int:
    """Connect Four perft from the empty board in plain Python."""
    return _connect4_perft(0, 0, depth)


# ---------------------------------------------------------------------------------------------


def _timed(run: Callable[[], int]) -> tuple[int, float]:
    started = time.perf_counter()
    leaves = run()
    return leaves, time.perf_counter() - started


def warm_up(name: str) -> float:
    """Seconds to import the game's rules and run its perft kernel once (compile or load from
    numba's cache); 0 if this process has already done it."""
    module = f"games.{name}"
    started = time.perf_counter()
    fresh = module not in sys.modules
    game = importlib.import_module(module).GAME
    game.perft(game.initial(), 1)
    return time.perf_counter() - started if fresh else 0.0


def bench(name: str, depth: int, python_depth: int,
          plain: Callable[[int], int]) -> tuple[float, float]:
    """(compiled, plain Python) leaves per second; checks that both count the same leaves."""
    import games

    game = games.load(name)
    start = game.initial()
    leaves, seconds = _timed(lambda: game.perft(start, depth))
    compiled = leaves / seconds
    known = othello_counts() if name == "othello" else {}
    if depth in known and leaves != known[depth]:
        raise AssertionError(f"{name}: perft {depth} gave {leaves}, the shared data {known[depth]}")
    py_leaves, py_seconds = _timed(lambda: plain(python_depth))
    python = py_leaves / py_seconds
    if py_leaves != game.perft(start, python_depth):
        raise AssertionError(f"{name}: plain Python perft {python_depth} disagrees")
    print(f"{name:<9} {'compiled':<13} {depth:>5} {leaves:>14,} {seconds:>8.2f} "
          f"{compiled / 1e6:>11.2f}", flush=True)
    print(f"{name:<9} {'plain Python':<13} {python_depth:>5} {py_leaves:>14,} "
          f"{py_seconds:>8.2f} {python / 1e6:>11.3f}", flush=True)
    return compiled, python


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perft", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--othello-depth", type=int, default=11)
    parser.add_argument("--connect4-depth", type=int, default=10)
    parser.add_argument("--python-othello-depth", type=int, default=8)
    parser.add_argument("--python-connect4-depth", type=int, default=8)
    args = parser.parse_args(argv)

    warm = {name: warm_up(name) for name in ("othello", "connect4")}
    print("JIT warm-up (import, compile or load from numba's cache; not in any rate): "
          + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in warm.items()))
    print(f"{'game':<9} {'kernels':<13} {'depth':>5} {'leaves':>14} {'seconds':>8} "
          f"{'M leaves/s':>11}")
    rates = {
        "othello": bench("othello", args.othello_depth, args.python_othello_depth,
                         python_othello),
        "connect4": bench("connect4", args.connect4_depth, args.python_connect4_depth,
                          python_connect4),
    }
    for name, (compiled, python) in rates.items():
        print(f"{name}: compiled is {compiled / python:.0f}x plain Python")
    othello = rates["othello"][0]
    print(f"othello vs Edax perft (~400M leaves/s): {othello / 1e6:.1f}M = "
          f"{othello / EDAX_PERFT:.2f}x")
    print(f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
