"""Othello: how far each evaluation is from the exact final disc difference, on positions
with 20 to 24 empty squares that training never saw.

``python -m bench.othello_mae [--per-empties 10] [--seed 7] [--candidate FILE]``

Positions come from self-play games as the trainer plays them (``train.play_game``), from
seeds the trainer does not use; one position per game at a chosen number of empties. Each is
solved exactly, then scored by the learned pattern evaluation and by the hand-made one (in
their disc-like units, ``weights.DISC`` a disc). The hand-made evaluation was never scaled to
discs, so it is also shown after the best single scale factor (least squares), which is the
most charitable reading of it. ``--candidate`` adds a column for pattern weights in a file
(freshly trained ones, before they ship).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from ai import tt
from ai.othello import engine, train
from ai.othello.weights import DISC, TT_BITS
from games.othello import OthelloState

SEED_BASE = 10**9
"""Held-out games' seeds start here (the trainer's: ``ai.othello.train.game_seed``)."""


def held_out(per_empties: int, seed: int, low: int = 20, high: int = 24
             ) -> list[OthelloState]:
    wanted = {e: per_empties for e in range(low, high + 1)}
    out: list[OthelloState] = []
    index = 0
    while any(wanted.values()):
        game = train.play_game(SEED_BASE + seed * 10_007 + index)
        index += 1
        target = low + index % (high - low + 1)
        for state in game:
            empties = 64 - (state.black | state.white).bit_count()
            if empties == target and wanted[target]:
                wanted[target] -= 1
                out.append(state)
                break
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_mae",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--per-empties", type=int, default=10,
                        help="positions at each of 20..24 empties (default 10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--candidate", help="a pattern weights file (.npz) to score too")
    args = parser.parse_args(argv)
    engine.warm_up()
    positions = held_out(args.per_empties, args.seed)
    table = tt.new_table(TT_BITS)
    exact, new, old, candidate, empties = [], [], [], [], []
    started = time.perf_counter()
    for i, state in enumerate(positions):
        P, O = state.mover_boards()
        t0 = time.perf_counter()
        exact.append(train.solve_exact(P, O, table))
        new.append(engine.leaf_value(state, "patterns") / DISC)
        old.append(engine.leaf_value(state, "classic") / DISC)
        if args.candidate:
            candidate.append(engine.leaf_value(state, args.candidate) / DISC)
        empties.append(64 - (P | O).bit_count())
        print(f"{i + 1:3d}/{len(positions)} {empties[-1]} empties: exact {exact[-1]:+3d}, "
              f"patterns {new[-1]:+6.1f}, hand-made {old[-1]:+6.1f}  "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
    y, a, b, c = np.array(exact, float), np.array(new), np.array(old), np.array(candidate)
    e = np.array(empties)
    scale = float(b @ y / (b @ b))
    print(f"\n{'empties':>8} {'positions':>9} {'patterns':>9} {'hand-made':>10} "
          f"{'hand-made x' + format(scale, '.2f'):>15}{' candidate' if len(c) else ''}"
          "   mean absolute error, discs")
    for group in [*range(20, 25), None]:
        m = np.ones(len(e), bool) if group is None else e == group
        if m.any():
            print(f"{'20-24' if group is None else group:>8} {int(m.sum()):>9} "
                  f"{np.abs(a[m] - y[m]).mean():>9.2f} {np.abs(b[m] - y[m]).mean():>10.2f} "
                  f"{np.abs(scale * b[m] - y[m]).mean():>15.2f}"
                  + (f" {np.abs(c[m] - y[m]).mean():>9.2f}" if len(c) else ""))
    print(f"({time.perf_counter() - started:.0f} s, seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
