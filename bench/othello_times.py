"""Othello: how long a level's moves take against its hard time, on its own clock.

``python -m bench.othello_times [--level expert] [--per-stage 6] [--seed 1]``

Random positions (uniformly random legal moves from the start) with 44, 36, 28, 24 and 22
empty squares, ``--per-stage`` of each, each searched with empty tables as a fresh worker
would, timed from the call of the search to the level's chosen move (``choose_move``: what a
worker does before it answers). Prints the longest and mean move times per stage, how the
move was found (midgame, win/loss/draw solve, exact solve), and every move over the hard time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence

import ai
from ai.levels import choose_move, find
from ai.othello import engine
from games.othello import GAME, OthelloState

STAGES = (44, 36, 28, 24, 22)


def positions(rng: random.Random, empties: int, count: int) -> list[OthelloState]:
    found: list[OthelloState] = []
    while len(found) < count:
        state = GAME.initial()
        while 64 - (state.black | state.white).bit_count() > empties and not state.is_over():
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            found.append(state)
    return found


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_times",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="expert")
    parser.add_argument("--per-stage", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    ai.warm_up("othello")
    level = find("othello", args.level)
    rng = random.Random(args.seed)
    print(f"{level.name}: soft {level.soft_time} s, hard {level.hard_time} s")
    every: list[float] = []
    for empties in STAGES:
        times: list[float] = []
        kinds: dict[str, int] = {}
        for i, state in enumerate(positions(rng, empties, args.per_stage)):
            engine.clear()
            started = time.perf_counter()
            iterations = list(ai.search(state, level.limits()))
            choose_move(state, level, i, iterations[-1:])
            seconds = time.perf_counter() - started
            last = iterations[-1]
            # (getattr: the same bench times older engines, whose iterations have no outcome)
            kind = ("book" if last.book else "win/loss/draw"
                    if getattr(last, "outcome", None) is not None
                    else "exact" if last.exact else "midgame")
            kinds[kind] = kinds.get(kind, 0) + 1
            times.append(seconds)
            if seconds > level.hard_time:
                print(f"  over the hard time: {seconds:.3f} s, {GAME.format_position(state)}")
        every += times
        print(f"{empties} empties: max {max(times):.3f} s, mean {statistics.fmean(times):.3f} s;"
              f" {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}", flush=True)
    print(f"all {len(every)} moves: max {max(every):.3f} s (hard {level.hard_time} s), "
          f"{sum(t > level.hard_time for t in every)} over")


if __name__ == "__main__":
    main()
