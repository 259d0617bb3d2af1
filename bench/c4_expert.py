"""Connect Four expert against other levels: does it keep the won game, and how fast does it move?

``python -m bench.c4_expert [--games N] [--opponent hard|perfect] [--sides both]``: N games
with the expert moving first and N with it moving second, against ``--opponent`` (a level, or
the solver choosing at random among its best moves; each game seeded differently), in
this process at the levels' own clocks. Prints the score per colour, how the expert's moves
were found (the opening book, a proof within its clock, the heuristic, or forced: one legal
move), its move times per phase, and, for its games as the first player, the first move
after which the solver no longer proves a first-player win (there should be none: the first
player wins with perfect play). The check solves each position after the expert's moves
from the book's depth on (earlier ones are the book's); those solves are not in the move
times.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

import ai
from ai.calibrate import move_seed
from ai.connect4 import book
from ai.levels import Level, choose_move, find
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.rules import Connect4State


def _move(state: Connect4State, level: Level, seed: int) -> tuple[int, str, float]:
    """(move, how it was found, seconds)."""
    started = time.perf_counter()
    how = "book" if book.lookup(state) is not None else ""
    iterations = list(ai.search(state, level.limits())) if len(state.legal_moves()) > 1 else []
    seconds = time.perf_counter() - started
    if not how:
        how = ("forced" if not iterations else
               "proof" if iterations[-1].exact else "heuristic")
    return choose_move(state, level, seed, iterations[-1:]), how, seconds


class Perfect:
    """The opponent that never errs: the solver's exact score of every move, and a seeded
    random choice among the best (remembered per position: early proofs take seconds)."""

    def __init__(self) -> None:
        self.best: dict[tuple[int, int], list[int]] = {}

    def move(self, state: Connect4State, seed: int) -> int:
        key = (state.current, state.mask)
        if key not in self.best:
            scored = ai.best(state, Limits(exact=True, multipv=7)).root_scores
            top = max(score for _, score in scored)
            self.best[key] = sorted(move for move, score in scored if score == top)
        return random.Random(seed).choice(self.best[key])


def play(expert: Level, other: Level | Perfect, expert_first: bool, seed: int,
         check: bool) -> tuple[int, list[tuple[int, str, float]], int | None]:
    """(result for the expert +1/0/-1, its moves as (ply, how, seconds), the ply after which a
    first-player win was no longer proven, if it ever was not)."""
    state = GAME.initial()
    expert_seat = 0 if expert_first else 1
    moves: list[tuple[int, str, float]] = []
    lost_at: int | None = None
    while not state.is_over():
        mine = state.to_move == expert_seat
        if mine:
            move, how, seconds = _move(state, expert, move_seed(seed, state.ply))
            moves.append((state.ply, how, seconds))
        elif isinstance(other, Perfect):
            move = other.move(state, move_seed(seed, state.ply))
        else:
            move = _move(state, other, move_seed(seed, state.ply))[0]
        state = state.play(move)
        if (mine and check and lost_at is None and state.ply >= book.PLIES[0]
                and not state.is_over() and ai.best(state, Limits(exact=True)).score >= 0):
            lost_at = state.ply  # the second player, to move, is no longer lost
    winner = state.winner()
    result = 0 if winner is None else (1 if winner == expert_seat else -1)
    return result, moves, lost_at


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--opponent", default="hard",
                        help="a level's name, or 'perfect' (the solver choosing at random "
                        "among its best moves)")
    parser.add_argument("--sides", choices=("both", "first", "second"), default="both")
    args = parser.parse_args(argv)
    ai.warm_up("connect4")
    expert = find("connect4", "expert")
    other = Perfect() if args.opponent == "perfect" else find("connect4", args.opponent)
    print(f"book: {len(book.load())} entries (first player before ply {book.PLIES[0]}, "
          f"second before ply {book.PLIES[1]})")
    sides = {"both": (True, False), "first": (True,), "second": (False,)}[args.sides]
    for expert_first in sides:
        results: Counter[int] = Counter()
        found: Counter[str] = Counter()
        times: dict[str, list[float]] = {"book": [], "proof": [], "heuristic": [], "forced": []}
        lost = []
        for game in range(args.games):
            result, moves, lost_at = play(expert, other, expert_first, 1000 + game,
                                          check=expert_first)
            results[result] += 1
            for _, how, seconds in moves:
                found[how] += 1
                times[how].append(seconds)
            if lost_at is not None:
                lost.append((game, lost_at))
        side = "first" if expert_first else "second"
        print(f"expert {side} vs {args.opponent}: {results[1]} won, {results[0]} drawn, "
              f"{results[-1]} lost")
        for how, spent in times.items():
            if spent:
                print(f"  {how:9} {found[how]:4d} moves, mean {statistics.fmean(spent):.3f} s, "
                      f"max {max(spent):.3f} s")
        if expert_first:
            print(f"  games where a first-player win stopped being proven: {len(lost)} {lost}")


if __name__ == "__main__":
    main()
