"""Connect Four benchmark: Pons' six sets solved exactly, and perft rates.

``python -m bench.connect4 [--fast N] [--medium N] [--slow N] [--hardest N]``

For each set, a fixed sample (the first lines of the file) is solved by the compiled solver
with a logically cleared table per position, as Pons measured his C++ solver; it prints the
mean time and nodes per position, how many scores were right, and the ratios to Pons' figures
in ``shared/data/README.md``. JIT warm-up seconds are on their own line. Perft rates are in
``bench.perft``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence

import numpy as np

from ai import tt
from ai.connect4 import engine, solver
from bench import reference_data
from games.connect4 import GAME
from games.connect4.rules import Connect4State

PONS = {
    # set: (mean seconds, mean nodes) of Pons' C++ solver, 2**24 table, on this kind of machine
    "Test_L3_R1": (4.4e-6, 51),
    "Test_L2_R1": (46e-6, 449),
    "Test_L2_R2": (8.4e-3, 39_800),
    "Test_L1_R1": (0.65e-3, 3_300),
    "Test_L1_R2": (164e-3, 1_190_000),
    "Test_L1_R3": (6.7, 49_800_000),  # first 45 positions only
}


def load(name: str, count: int) -> tuple[list[Connect4State], list[int]]:
    text = reference_data(f"connect4/{name}").read_text()
    lines = [line.split() for line in text.splitlines() if line.strip()]
    lines = lines[:count]
    return [GAME.parse_position(moves) for moves, _ in lines], [int(s) for _, s in lines]


def solve_set(
    states: list[Connect4State], table: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Scores, nodes per position, and the wall and CPU seconds of one compiled batch.

    The table is emptied first (not timed); within the batch each position starts a new
    generation and ignores older entries, which is a cleared table at no cost.
    """
    currents = np.array([s.current for s in states], dtype=np.uint64)
    masks = np.array([s.mask for s in states], dtype=np.uint64)
    table.fill(0)  # also faults every page in before the clock starts
    cells, scores = solver.new_buffers()
    out_scores = np.zeros(len(states), dtype=np.int64)
    out_nodes = np.zeros(len(states), dtype=np.int64)
    stop = np.zeros(1, dtype=np.int64)
    started, cpu = time.perf_counter(), time.process_time()
    solver.solve_batch(
        currents, masks, table, solver.new_control(), stop, cells, scores, out_scores, out_nodes
    )
    return out_scores, out_nodes, time.perf_counter() - started, time.process_time() - cpu


def _time(unit: float) -> str:
    if unit >= 1:
        return f"{unit:.2f} s"
    if unit >= 1e-3:
        return f"{unit * 1e3:.2f} ms"
    return f"{unit * 1e6:.1f} us"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.connect4", description=__doc__)
    parser.add_argument("--fast", type=int, default=1000, help="lines of L3_R1, L2_R1, L1_R1")
    parser.add_argument("--medium", type=int, default=200, help="lines of L2_R2")
    parser.add_argument("--slow", type=int, default=40, help="lines of L1_R2")
    parser.add_argument("--hardest", type=int, default=5, help="lines of L1_R3 (0 to skip)")
    parser.add_argument("--table-bits", type=int, default=engine.EXACT_TABLE_BITS)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    warm = engine.warm_up()
    print(
        f"JIT warm-up (compile or load from cache): {warm:.2f} s "
        f"(first call in this process {time.perf_counter() - started:.2f} s)"
    )

    sizes = {
        "Test_L3_R1": args.fast,
        "Test_L2_R1": args.fast,
        "Test_L2_R2": args.medium,
        "Test_L1_R1": args.fast,
        "Test_L1_R2": args.slow,
        "Test_L1_R3": args.hardest,
    }
    print(f"\nexact solves, table 2**{args.table_bits}, cleared before each position")
    header = (
        f"{'set':<11} {'n':>5} {'right':>6} {'mean time':>10} {'Pons':>9} {'ratio':>6}"
        f" {'cpu time':>10} {'ratio':>6} {'mean nodes':>11} {'Pons':>10} {'ratio':>6}"
        f" {'Mnodes/s':>8}"
    )
    print(header)
    print("-" * len(header))
    status = 0
    table = tt.new_table(args.table_bits)
    for name, size in sizes.items():
        if size <= 0:
            continue
        states, want = load(name, size)
        got, nodes, seconds, cpu = solve_set(states, table)
        right = int(sum(int(g) == w for g, w in zip(got, want, strict=True)))
        status |= right != len(states)
        mean_t, mean_n = seconds / len(states), float(nodes.mean())
        mean_c = cpu / len(states)
        pons_t, pons_n = PONS[name]
        print(
            f"{name[5:]:<11} {len(states):>5} {right:>6} {_time(mean_t):>10} {_time(pons_t):>9}"
            f" {mean_t / pons_t:>6.2f} {_time(mean_c):>10} {mean_c / pons_t:>6.2f}"
            f" {mean_n:>11.0f} {pons_n:>10} {mean_n / pons_n:>6.2f}"
            f" {nodes.sum() / seconds / 1e6:>8.2f}",
            flush=True,
        )
    print("(ratio = ours / Pons' wall time; Pons' L1_R3 figure is the mean of its first 45")
    print(f" positions; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")

    return int(status)


if __name__ == "__main__":
    raise SystemExit(main())
