"""Othello: a shipped level (``expert`` by default) against Egaroucid for Web, the strongest
open Othello engine's browser build, compiled natively as a benchmark opponent.

``python -m bench.egaroucid --source DIR [--level 10] [--games 100] [--ours expert]
[--clock SOFT/HARD] [--opening 8-12] [--seed 1] [--build DIR]``

``--source`` is a checkout of Egaroucid's ``src`` folder (the one holding ``web/``), fetched
by whoever runs the bench and kept outside this repository: none of its code or binaries is
ever committed here. The bench writes its own small driver (below: it only reads a position,
calls the engine's search at a level and prints the move), compiles it with ``g++ -O2
-march=native`` into ``--build`` (a cache folder outside the repository by default), and
talks to it over a pipe. Egaroucid's opening book is off (it is never loaded); its level L
searches about L plies in the midgame and solves the endgame exactly from a depth its level
table gives.

Our side plays exactly as the server would play it: ``ai.search`` with the level's limits
(book, clock and exact solve included) and ``choose_move`` with a seed; ``--clock 0.15/0.3``
runs the level at another soft / hard clock (seconds) without editing the level table. Each opening
(``--opening`` random legal moves from the start, seeded) is played twice, the colours
swapped. Prints each game, then W/D/L, the score, the Elo difference with its 95% interval
(from the spread of the pairs' scores), the mean disc difference, both sides' mean seconds a
move measured in the same run, and where our discs went: each of our moves is charged what
Egaroucid's own value moved in its favour between its searches before and after the move,
averaged by the stage of the game (empty squares) the move was made in.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import ai
from ai.levels import Level, choose_move, find
from bench.othello_match import PairedScore, elo, opening
from games.othello import GAME, OthelloState
from games.othello.rules import PASS

DRIVER = r"""
// A pipe driver for Egaroucid for Web, written for Discus' benchmark (not Egaroucid's code).
// Reads lines "<64 squares a1..h8 of X, O or -> <X|O> <level>", prints "<square 0..63 or 64
// for a pass> <value>" from the side to move: the engine's search at that level, book off.
#include <cstdint>
#include <iostream>
#include <string>
// Its code calls max(1ULL, a uint64_t): one type under WebAssembly, two on x86-64 Linux.
inline unsigned long long max(unsigned long long a, unsigned long b) { return a > b ? a : b; }
#include "web/ai.hpp"

int main() {
    board_init();
    mobility_init();
    stability_init();
    parent_transpose_table.first_init();
    child_transpose_table.first_init();
    evaluate_init();
    std::string squares, side;
    int level;
    std::cout << "ready" << std::endl;
    while (std::cin >> squares >> side >> level) {
        Board board;
        board.player = 0ULL;
        board.opponent = 0ULL;
        for (int sq = 0; sq < 64; ++sq) {
            uint64_t bit = 1ULL << (HW2_M1 - sq);
            if (squares[sq] == side[0]) board.player |= bit;
            else if (squares[sq] != '-') board.opponent |= bit;
        }
        Search_result result = ai(board, level, false, false, false);
        int square = result.policy < 0 ? 64 : HW2_M1 - result.policy;
        std::cout << square << " " << result.value << std::endl;
    }
    return 0;
}
"""


def build(source: Path, out: Path) -> Path:
    """The driver compiled against ``source`` into ``out`` (again only when the driver or the
    source's ``web/ai.hpp`` is newer than the binary)."""
    if not (source / "web" / "ai.hpp").exists():
        raise SystemExit(f"{source} is not Egaroucid's src folder (no web/ai.hpp)")
    out.mkdir(parents=True, exist_ok=True)
    driver, binary = out / "driver.cpp", out / "egaroucid-driver"
    if not driver.exists() or driver.read_text() != DRIVER:
        driver.write_text(DRIVER)
    newest = max(driver.stat().st_mtime, (source / "web" / "ai.hpp").stat().st_mtime)
    if not binary.exists() or binary.stat().st_mtime < newest:
        print(f"compiling the driver into {out} ...", flush=True)
        subprocess.run(["g++", "-O2", "-march=native", "-std=c++17", "-DNO_BOOK",
                        f"-I{source}", str(driver), "-o", str(binary), "-lpthread"],
                       check=True)
    return binary


class Egaroucid:
    """The driver process: one position in, one move out."""

    def __init__(self, binary: Path) -> None:
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline().strip()
        if ready != "ready":
            raise RuntimeError(f"the driver said {ready!r}")

    def move(self, state: OthelloState, level: int) -> tuple[int, int | None]:
        """Its move and its search's value (discs, from the side to move; None for a pass)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if state.legal_moves() == [PASS]:
            return PASS, None
        self.proc.stdin.write(f"{GAME.format_position(state)} {level}\n")
        square, value = (int(word) for word in self.proc.stdout.readline().split()[:2])
        if square not in state.legal_moves():
            raise RuntimeError(f"Egaroucid played {square} in {GAME.format_position(state)}")
        return square, value

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def our_move(state: OthelloState, level: Level, seed: int) -> int:
    """The level's move as a server's engine process makes it."""
    iterations = list(ai.search(state, level.limits()))
    return choose_move(state, level, seed, iterations[-1:])


STAGES = ((45, 60), (35, 44), (25, 34), (15, 24), (0, 14))
"""Empty squares at our move, for the losses by stage (``play``'s ``losses``)."""


def play(start: OthelloState, ours_black: bool, level: Level, opponent: Egaroucid,
         opponent_level: int, seed: int, seconds: dict[str, list[float]],
         losses: dict[tuple[int, int], list[int]]) -> int:
    """Our final disc difference from ``start``; each side's seconds a move into ``seconds``.

    Each of our moves between two of Egaroucid's searches is charged what its value moved in
    its favour from the first search to the second (discs by its eyes, at its level: exact
    once it solves), into ``losses`` by the stage of ``STAGES`` our move was made in."""
    state = start
    value: int | None = None  # Egaroucid's value at its last search, its side to move
    ours_since = 0  # our moves since then
    empties_at = 0  # empties at the last of them
    while not state.is_over():
        ours = (state.to_move == 0) == ours_black
        began = time.perf_counter()
        if ours:
            move = our_move(state, level, seed + state.ply)
            ours_since += 1
            empties_at = 64 - (state.black | state.white).bit_count()
        else:
            move, now = opponent.move(state, opponent_level)
            if value is not None and now is not None and ours_since == 1:
                stage = next(st for st in STAGES if st[0] <= empties_at <= st[1])
                losses[stage].append(now - value)
            value, ours_since = now, 0
        if move != PASS:
            seconds["ours" if ours else "theirs"].append(time.perf_counter() - began)
        state = state.play(move)
    result = state.result()
    return result if ours_black else -result


def clock(text: str) -> tuple[float, float]:
    """``"0.15/0.3"`` as (soft, hard) seconds."""
    soft, _, hard = text.partition("/")
    try:
        return float(soft), float(hard or soft)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not SOFT/HARD seconds: {text!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.egaroucid",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="Egaroucid's src folder (holding web/), outside this repository")
    parser.add_argument("--build", type=Path,
                        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "discus-bench" / "egaroucid")
    parser.add_argument("--level", type=int, default=10, help="Egaroucid's level")
    parser.add_argument("--ours", default="expert", help="our Othello level")
    parser.add_argument("--clock", type=clock, default=None, metavar="SOFT/HARD",
                        help="our level's soft / hard clock in seconds instead of its own")
    parser.add_argument("--games", type=int, default=100, help="even; default 100")
    parser.add_argument("--opening", default="8-12", help="random moves first, e.g. 8-12")
    parser.add_argument("--balanced", type=float, default=None, metavar="DISCS",
                        help="only openings a 10-ply search scores within DISCS of even")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    binary = build(args.source.resolve(), args.build)
    level = find("othello", args.ours)
    if args.clock is not None:
        level = dataclasses.replace(level, soft_time=args.clock[0], hard_time=args.clock[1])
    low, _, high = args.opening.partition("-")
    ai.warm_up("othello")
    opponent = Egaroucid(binary)
    rng = random.Random(args.seed)
    tally = PairedScore()
    seconds: dict[str, list[float]] = {"ours": [], "theirs": []}
    losses: dict[tuple[int, int], list[int]] = {stage: [] for stage in STAGES}
    started = time.perf_counter()
    print(f"{args.ours} ({level.soft_time:g}/{level.hard_time:g} s) vs Egaroucid for Web "
          f"level {args.level} (book off), openings of {args.opening} random moves, "
          f"seed {args.seed}", flush=True)
    try:
        for pair in range(args.games // 2):
            start = opening(rng, int(low), int(high or low), args.balanced)
            for ours_black in (True, False):
                mine = play(start, ours_black, level, opponent, args.level,
                            args.seed * 1000 + pair, seconds, losses)
                tally.add(mine)
                print(f"game {tally.games:3d}: {args.ours} {'black' if ours_black else 'white'} "
                      f"{mine:+3d}  total {tally.points:g}/{tally.games}", flush=True)
            tally.end_pair()
    finally:
        opponent.close()
    discs, n, score, spread = tally.discs, tally.games, tally.score, tally.spread
    wins, draws = tally.wins, tally.draws
    print(f"\n{'games':>6} {'won':>4} {'drawn':>5} {'lost':>4} {'score':>7} {'Elo':>6} "
          f"{'95% interval':>14} {'discs':>6} {'ours s/move':>11} {'theirs s/move':>13}")
    print(f"{n:>6} {wins:>4} {draws:>5} {n - wins - draws:>4} {score:>7.3f} "
          f"{elo(score):>+6.0f} "
          f"{f'{elo(score - 1.96 * spread):+.0f}..{elo(score + 1.96 * spread):+.0f}':>14} "
          f"{statistics.mean(discs):>+6.1f} {statistics.mean(seconds['ours'] or [0]):>11.2f} "
          f"{statistics.mean(seconds['theirs'] or [0]):>13.2f}")
    print("discs a move our moves lost by Egaroucid's eyes, by empty squares at the move: "
          + ", ".join(f"{low}-{high} {statistics.mean(lost or [0]):+.2f} ({len(lost)})"
                      for (low, high), lost in losses.items()))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
