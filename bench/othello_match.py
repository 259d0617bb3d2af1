"""Othello: the expert level with the learned pattern evaluation against the same search
with the hand-made one, at the same time per move.

``python -m bench.othello_match [--games 100] [--time 0.1] [--seed 1] [--new P] [--old P]
[--minutes M]``

A player ``P`` is an evaluation (``patterns``, ``classic``, or a pattern weights file's path
ending in ``.npz``), with ``+mpc`` for the selective search (Multi-ProbCut, at
``weights.PROBCUT_T`` or at ``+mpc@T``, with the shipped table or a fitted one at
``+mpc:FILE.json``): ``--new patterns+mpc --old patterns`` measures what Multi-ProbCut is
worth, ``--new new.npz+mpc --old patterns+mpc`` freshly trained weights,
``--new patterns+mpc:refit.json --old patterns+mpc`` a refitted ProbCut table.

Each opening (``--opening`` random legal moves from the start, 8 to 12 by default, seeded) is
played twice, the colours swapped; both sides search as the expert level does (by the clock
alone: soft ``--time`` seconds, hard twice that, the exact solve when it fits) and play
their search's best move. Prints each game, then the score, the Elo difference with its
95% interval (from the spread of the pairs' scores) and the mean disc difference.
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ai.levels import choose_move, find
from ai.limits import Iteration, Limits
from ai.othello import engine
from games.othello import GAME, OthelloState

BALANCE_DEPTH = 10
"""Depth of the selective search that judges an opening's balance (``opening``)."""


def opening(rng: random.Random, low: int, high: int, balanced: float | None = None
            ) -> OthelloState:
    """A position ``low``..``high`` random legal moves from the start that is not over; with
    ``balanced``, only one that a selective ``BALANCE_DEPTH``-ply search of this checkout
    scores within that many discs of even (drawn again until one is).

    Random moves often leave one side lost: both games of the pair then go to the side the
    opening favours whoever plays it, and a match of such openings scores near 50% however
    much stronger one player is (10-ply against 14-ply searches: 16 of 20 pairs split so).
    Balanced openings let the stronger player's strength show."""
    while True:
        state = GAME.initial()
        for _ in range(rng.randint(low, high)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if state.is_over():
            continue
        if balanced is None:
            return state
        *_, last = engine.search(state, Limits(depth=BALANCE_DEPTH, selective=True))
        engine.clear()  # the judging must not warm the tables a player reads
        if abs(last.score) <= balanced:
            return state


@dataclass(frozen=True)
class Player:
    """What ``engine.search`` is given for one side: ``evaluation``, whether the search is
    ``selective``, its ProbCut ``t`` and ``table`` (None: the shipped ones)."""

    evaluation: str
    selective: bool
    t: float | None
    table: Path | None


@functools.cache
def player(spec: str) -> Player:
    """The player of a spec like ``patterns``, ``patterns+mpc@1.5`` or
    ``new.npz+mpc:refit.json`` (``ValueError`` for anything else); read once per spec, not
    at every move."""
    evaluation, _, selective = spec.partition("+")
    selective, _, table = selective.partition(":")
    if selective and not selective.startswith("mpc") or table and not selective:
        raise ValueError(f"unknown player {spec!r}: an evaluation, then +mpc, +mpc@T "
                         "or +mpc@T:TABLE.json")
    _, _, t = selective.partition("@")
    path = Path(table) if table else None
    if path is not None and not path.is_file():
        raise ValueError(f"{spec!r}: no ProbCut table at {path}")
    return Player(evaluation, bool(selective), float(t) if t else None, path)


_THREADS: dict[str, ThreadPoolExecutor] = {}
"""One thread per player: the engine's tables are per thread, so each player keeps its own
from move to move, as an engine process does, and neither reads what the other stored."""


def _think(spec: str, state: OthelloState, seconds: float) -> list[Iteration]:
    side = player(spec)
    limits = Limits(soft_time=seconds, hard_time=2 * seconds, selective=side.selective)
    return list(engine.search(state, limits, evaluation=side.evaluation, probcut_t=side.t,
                              probcut_table=side.table))


def play(start: OthelloState, black: str, white: str, seconds: float, seed: int) -> int:
    """Black's final disc difference when ``black`` and ``white`` (players) play on."""
    level = find("othello", "expert")
    state = start
    while not state.is_over():
        spec = black if state.to_move == 0 else white
        thread = _THREADS.setdefault(spec, ThreadPoolExecutor(max_workers=1))
        iterations = thread.submit(_think, spec, state, seconds).result()
        state = state.play(choose_move(state, level, seed + state.ply, iterations[-1:]))
    return state.result()


def elo(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)



@dataclass
class PairedScore:
    """A match played in pairs of games, one opening each, each side with each colour: its
    score, and the 95% interval from the spread of the pairs' scores (an opening's luck
    cancels within its pair). Each game is added as the disc margin of the side measured."""

    discs: list[int] = field(default_factory=list)
    points: float = 0.0
    pairs: list[float] = field(default_factory=list)
    _pair: float = 0.0

    def add(self, mine: int) -> None:
        score = 1.0 if mine > 0 else 0.5 if mine == 0 else 0.0
        self.points += score
        self._pair += score
        self.discs.append(mine)

    def end_pair(self) -> None:
        self.pairs.append(self._pair / 2)
        self._pair = 0.0

    @property
    def games(self) -> int:
        return len(self.discs)

    @property
    def score(self) -> float:
        return self.points / self.games

    @property
    def spread(self) -> float:
        """The standard error of the score (0 before two pairs)."""
        if len(self.pairs) < 2:
            return 0.0
        return statistics.stdev(self.pairs) / math.sqrt(len(self.pairs))

    @property
    def wins(self) -> int:
        return sum(d > 0 for d in self.discs)

    @property
    def draws(self) -> int:
        return sum(d == 0 for d in self.discs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_match",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="even; default 100")
    parser.add_argument("--time", type=float, default=0.1, help="soft seconds a move")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--opening", default="8-12", help="random moves first, e.g. 8-12")
    parser.add_argument("--balanced", type=float, default=None, metavar="DISCS",
                        help="only openings a 10-ply search scores within DISCS of even")
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no new pair of games after this many minutes")
    parser.add_argument("--new", default="patterns", help="player under test")
    parser.add_argument("--old", default="classic", help="player it plays against")
    args = parser.parse_args(argv)
    for spec in (args.new, args.old):
        try:
            player(spec)
        except ValueError as exc:
            parser.error(str(exc))
    low, _, high = args.opening.partition("-")
    engine.warm_up()
    rng = random.Random(args.seed)
    tally = PairedScore()
    started = time.perf_counter()
    print(f"{args.new} vs {args.old}, {args.time:g} s a move (hard {2 * args.time:g} s), "
          f"openings of {args.opening} random moves, seed {args.seed}", flush=True)
    for pair in range(args.games // 2):
        if args.minutes is not None and time.perf_counter() - started > 60 * args.minutes:
            break
        start = opening(rng, int(low), int(high or low), args.balanced)
        for new_is_black in (True, False):
            black, white = (args.new, args.old) if new_is_black else (args.old, args.new)
            result = play(start, black, white, args.time, args.seed * 1000 + pair)
            mine = result if new_is_black else -result
            tally.add(mine)
            print(f"game {2 * pair + (0 if new_is_black else 1) + 1:3d}: "
                  f"{args.new} {'black' if new_is_black else 'white'} {mine:+3d}  "
                  f"total {tally.points:g}/{tally.games}", flush=True)
        tally.end_pair()
    discs, n, score, spread = tally.discs, tally.games, tally.score, tally.spread
    low_elo, high_elo = elo(score - 1.96 * spread), elo(score + 1.96 * spread)
    wins, draws = tally.wins, tally.draws
    print(f"\n{'games':>6} {'won':>4} {'drawn':>5} {'lost':>4} {'score':>7} {'Elo':>6} "
          f"{'95% interval':>14} {'discs':>6} {'s/move':>6}")
    print(f"{n:>6} {wins:>4} {draws:>5} {n - wins - draws:>4} {score:>7.3f} "
          f"{elo(score):>+6.0f} {f'{low_elo:+.0f}..{high_elo:+.0f}':>14} "
          f"{statistics.mean(discs):>+6.1f} {args.time:>6g}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
