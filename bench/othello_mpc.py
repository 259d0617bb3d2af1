"""Othello: what Multi-ProbCut buys and costs, against the full-width search in the same run.

``python -m bench.othello_mpc [--positions 24] [--depths 8,10,12] [--t 1.0,1.5,2.0]
[--games 0] [--time 0.5] [--minutes M] [--seed 1]``

1. **Fixed depths.** Midgame positions (``--empties`` empty squares, one per self-play game
   of the training pipeline, seeded apart from the fit's games) are searched to each depth by
   the full-width search and by the selective one at each ``t``, every search from empty
   tables. Prints, per depth and ``t``: the selective search's nodes and seconds to finish
   that depth as ratios of the full-width one's (their sums over the positions), how many
   best moves differ from the full-width best move at that depth, and the mean absolute
   score difference in discs.
2. **Match** (``--games`` > 0): the expert's search with Multi-ProbCut (``weights.PROBCUT_T``
   unless ``--match-t``) against the same search without, at the same time per move, through
   ``bench.othello_match`` (openings played with both colours).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

from ai.limits import Limits
from ai.othello import engine, train
from ai.othello.weights import PROBCUT_T
from bench import othello_match
from games.othello import OthelloState

SEED_BASE = 7_777_777
"""Bench games are seeded apart from the fit's (``ai.othello.train.game_seed``)."""


def positions(count: int, low: int, high: int, seed: int) -> list[OthelloState]:
    """``count`` positions with ``low``..``high`` empties, one per seeded self-play game."""
    out: list[OthelloState] = []
    game = 0
    while len(out) < count:
        rng = random.Random(SEED_BASE + seed * 10_007 + game)
        seen = [s for s in train.play_game(SEED_BASE + seed * 10_007 + game)
                if low <= 64 - sum(b.bit_count() for b in s.mover_boards()) <= high
                and len(s.legal_moves()) > 1]
        if seen:
            out.append(rng.choice(seen))
        game += 1
    return out


def run(state: OthelloState, depth: int, t: float | None) -> tuple[int, int, int, float]:
    """(move, score, nodes, seconds) of ``depth``'s iteration; ``t`` None: full-width."""
    engine.clear()
    last = None
    for it in engine.search(state, Limits(depth=depth, selective=t is not None),
                            probcut_t=t):
        last = it
    assert last is not None and last.depth == depth
    return last.move, last.score, last.nodes, last.seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_mpc",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=24)
    parser.add_argument("--empties", default="26-46", help="empty squares, e.g. 26-46")
    parser.add_argument("--depths", default="8,10,12")
    parser.add_argument("--t", default="1.0,1.5,2.0", help="confidences to measure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=0, help="match games (even); 0: none")
    parser.add_argument("--time", type=float, default=0.5, help="match: soft seconds a move")
    parser.add_argument("--match-t", type=float, default=PROBCUT_T)
    parser.add_argument("--opening", default="8-12", help="match: random moves first")
    parser.add_argument("--minutes", type=float, default=None,
                        help="match: start no new pair of games after this many minutes")
    args = parser.parse_args(argv)
    low, _, high = args.empties.partition("-")
    depths = [int(d) for d in args.depths.split(",") if d]
    ts = [float(t) for t in args.t.split(",") if t]
    engine.warm_up()
    started = time.perf_counter()
    states = positions(args.positions, int(low), int(high or low), args.seed)
    print(f"{len(states)} positions, {args.empties} empties; full-width vs Multi-ProbCut, "
          "fresh tables each search", flush=True)
    print(f"{'depth':>5} {'t':>5} {'nodes':>12} {'ratio':>6} {'seconds':>8} {'ratio':>6} "
          f"{'moves differ':>12} {'|score diff|':>12}")
    for depth in depths:
        full = [run(s, depth, None) for s in states]
        full_nodes = sum(r[2] for r in full)
        full_seconds = sum(r[3] for r in full)
        print(f"{depth:>5} {'full':>5} {full_nodes:>12,} {1:>6.2f} {full_seconds:>8.2f} "
              f"{1:>6.2f} {'-':>12} {'-':>12}", flush=True)
        for t in ts:
            mpc = [run(s, depth, t) for s in states]
            nodes = sum(r[2] for r in mpc)
            seconds = sum(r[3] for r in mpc)
            differ = sum(m[0] != f[0] for m, f in zip(mpc, full, strict=True))
            diff = sum(abs(m[1] - f[1]) for m, f in zip(mpc, full, strict=True)) / len(states)
            print(f"{depth:>5} {t:>5.2f} {nodes:>12,} {nodes / full_nodes:>6.2f} "
                  f"{seconds:>8.2f} {seconds / full_seconds:>6.2f} "
                  f"{f'{differ}/{len(states)}':>12} {diff:>12.2f}", flush=True)
    print(f"({time.perf_counter() - started:.0f} s)", flush=True)
    if args.games > 0:
        print(flush=True)
        othello_match.main([
            "--games", str(args.games), "--time", str(args.time), "--seed", str(args.seed),
            "--opening", args.opening, "--new", f"patterns+mpc@{args.match_t:g}",
            "--old", "patterns",
            *([] if args.minutes is None else ["--minutes", str(args.minutes)]),
        ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
