"""How much the Connect Four heuristic's score moves from one search depth to the next.

``python -m bench.c4_stability [--positions N] [--depths 4-12]``: seeded random positions
(plies 2 to 20, nobody about to be proven lost or won), each searched at every depth of the
range from empty tables; prints per pair of consecutive depths the mean and signed mean of
``score(d + 1) - score(d)`` (a signed mean far from 0 is the odd/even swing: the side that
moved last looks better) and how often the best move changes, over iterations that are not
proven. A level bounded by the clock stops at whatever depth its time allows, so a swing
here is a swing in what players see and in the moves it picks.
"""

from __future__ import annotations

import argparse
import random
import statistics

import ai
from ai.connect4.engine import clear
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.rules import Connect4State


def positions(count: int, seed: int = 7) -> list[Connect4State]:
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = GAME.initial()
        for _ in range(rng.randrange(2, 21)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            found.append(state)
    return found


def depth_scores(state: Connect4State, depths: range) -> list[tuple[int, int, bool]]:
    """(score, move, exact) at each depth, each search from empty tables."""
    out = []
    for depth in depths:
        clear()
        found = ai.best(state, Limits(depth=depth))
        out.append((found.score, found.move, found.exact))
    return out


def swing(states: list[Connect4State], depths: range) -> dict[int, tuple[float, float, float]]:
    """Per depth d: (mean |s(d+1) - s(d)|, mean s(d+1) - s(d), share of best-move changes)."""
    steps: dict[int, list[tuple[int, bool]]] = {d: [] for d in depths[:-1]}
    for state in states:
        scores = depth_scores(state, depths)
        for d, (a, ma, ea), (b, mb, eb) in zip(depths, scores, scores[1:], strict=False):
            if not (ea or eb):
                steps[d].append((b - a, ma != mb))
    return {
        d: (statistics.fmean(abs(x) for x, _ in pairs), statistics.fmean(x for x, _ in pairs),
            sum(changed for _, changed in pairs) / len(pairs))
        for d, pairs in steps.items() if pairs
    }


def mean_swing(states: list[Connect4State], depths: range) -> float:
    """The mean |score(d + 1) - score(d)| over every depth pair and position."""
    return statistics.fmean(v[0] for v in swing(states, depths).values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--depths", default="4-12")
    args = parser.parse_args(argv)
    low, high = (int(x) for x in args.depths.split("-"))
    ai.warm_up("connect4")
    depths = range(low, high + 1)
    table = swing(positions(args.positions), depths)
    print(f"{args.positions} positions; score(d+1) - score(d), unproven iterations only")
    for d, (mean_abs, signed, changed) in table.items():
        print(f"  {d:2d} -> {d + 1:2d}: mean |step| {mean_abs:6.2f}  signed {signed:+7.2f}  "
              f"best move changes {changed:5.1%}")
    print(f"mean |step| over all depths: {statistics.fmean(v[0] for v in table.values()):.2f}")


if __name__ == "__main__":
    main()
