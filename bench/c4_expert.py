"""Connect Four expert against other levels: does it keep the won game, and how fast does it move?

``python -m bench.c4_expert --positions N [--level expert] [--seed S] [--plies 6-20]
[--processes P]``: the level's move in N random positions 6 to 20 (``--plies``) plies in
(each a uniform number of plies of uniformly random moves; games already over are drawn
again), each searched with empty tables at the level's own clock, then refereed by the
solver with no time limit: how many moves change the game's value (win to draw or loss, draw
to loss), by how long the level thought and by ply, and the longest move. The referee is a
weak solve (win, draw or loss) of the position and of the position after the move, with a
table of its own. The same seed gives the same positions, so two versions of the engine are
compared on one set; ``--processes`` shares them out (1,000 at plies 6-20: 6 minutes on two
cores).

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

``python -m bench.c4_expert --openings N [--opening-plies 4-6] [--seed S] [--processes P]``:
N random openings (each 4 to 6 random moves, not over), each played twice from there, the
expert taking either seat, against the ``Keeper``: a perfect opponent that knows every
move's outcome (the outcomes file where it holds the position, else the referee's weak
solve) and picks at random among the moves that keep its own. Every position the expert
moves in is refereed before and after its move, so the run counts both the games whose
result falls short of the opening's value and the moves that lost it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import NamedTuple, TypeVar

import numpy as np

import ai
from ai import tt
from ai.calibrate import move_seed
from ai.connect4 import book, engine, solver
from ai.levels import Level, choose_move, find
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.rules import Connect4State

T = TypeVar("T")


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


def random_positions(seed: int, count: int, first: int = 6, last: int = 20
                     ) -> list[Connect4State]:
    """``count`` positions (not over), each ``first`` to ``last`` plies of random moves in."""
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = GAME.initial()
        for _ in range(rng.randint(first, last)):
            state = state.play(rng.choice(state.legal_moves()))
            if state.is_over():
                break
        if not state.is_over():
            found.append(state)
    return found


class Referee:
    """Win, draw or loss of any position, proven with no time limit: two null-window searches
    around zero of the solver's own ``negamax`` (its tables are the referee's alone)."""

    def __init__(self) -> None:
        self.table = tt.new_table(24)
        self.cells, self.scores = solver.new_buffers()
        self.stop = np.zeros(1, dtype=np.int64)

    def outcome(self, state: Connect4State) -> int:
        """1, 0 or -1 for the side to move (a finished game: for the side that would move)."""
        if state.is_over():
            return 0 if state.winner() is None else -1
        c, m = np.uint64(state.current), np.uint64(state.mask)
        if solver.immediate_win(c, m) >= 0:
            return 1
        for low, result in ((0, 1), (-1, 0)):
            value = solver.negamax(c, m, state.ply, low, low + 1, self.table, 0,
                                   solver.new_control(), self.stop, self.cells, self.scores)
            if value > low:
                return result
        return -1


class Keeper:
    """The perfect opponent of the openings games: every legal move's outcome, and a seeded
    random choice among those that keep the best of them. Outcomes come from the shipped
    files where they hold the position (verified against the solver when built; from an
    empty table a ply-6 position's weak solve took up to 20 s), else from the ``Referee``.
    The expert reads the same files, so where they hold a position this judges its search
    only past them."""

    def __init__(self) -> None:
        self.referee = Referee()

    def outcome(self, state: Connect4State) -> int:
        """1, 0 or -1 for the side to move (a finished game: for the side that would move)."""
        known = None if state.is_over() else engine.known_outcome(state)
        return self.referee.outcome(state) if known is None else known[0]

    def move(self, state: Connect4State, seed: int) -> int:
        after = {col: -self.outcome(state.play(col)) for col in state.legal_moves()}
        top = max(after.values())
        return random.Random(seed).choice(sorted(c for c, o in after.items() if o == top))


class Judged(NamedTuple):
    """One position of the value-losing measure: the level's move and the referee's verdict."""

    number: int
    position: str
    ply: int
    column: int
    seconds: float
    before: int
    after: int
    referee_seconds: float


def _judge(level_name: str, count: int, seed: int, plies: tuple[int, int], shard: int,
           shards: int) -> list[Judged]:
    """The positions of the measure whose index is ``shard`` modulo ``shards``, judged in
    this process (its own referee; the level's tables emptied before each position, so how
    the positions are shared out does not change any move)."""
    level = find("connect4", level_name)
    referee = Referee()
    judged: list[Judged] = []
    for i, state in enumerate(random_positions(seed, count, *plies)):
        if i % shards != shard:
            continue
        engine.clear()  # as a fresh worker would meet it: nothing learnt from the others
        move, _, seconds = _move(state, level, move_seed(seed, i))
        started = time.perf_counter()
        before = referee.outcome(state)
        after = -referee.outcome(state.play(move))
        judged.append(Judged(i, GAME.format_position(state), state.ply, move, seconds, before,
                             after, time.perf_counter() - started))
        if len(judged) % 50 == 0:
            lost = sum(j.after < j.before for j in judged)
            share = f" (share {shard + 1} of {shards})" if shards > 1 else ""
            print(f"  {len(judged)} positions{share}, {lost} values lost", flush=True)
    return judged


def _share_out(work: Callable[..., list[T]], processes: int, *args: object) -> list[T]:
    """``work(*args, shard, shards)`` for every shard, in this process or in ``processes``
    spawned ones (each warmed once), the shares' lists joined."""
    if processes == 1:
        return work(*args, 0, 1)
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn"),
                             initializer=ai.warm_up, initargs=("connect4",)) as pool:
        shares = [pool.submit(work, *args, shard, processes) for shard in range(processes)]
        return [item for share in shares for item in share.result()]


def value_losing(level: Level, count: int, seed: int, plies: tuple[int, int] = (6, 20),
                 processes: int = 1) -> None:
    """Print how often ``level`` loses the game's value in ``count`` random positions
    ``plies`` (first, last) in, judged by ``processes`` processes (each position's move is
    the same whatever their number; its time is not, on a machine with other work)."""
    judged = sorted(_share_out(_judge, processes, level.name, count, seed, plies),
                    key=lambda j: j.number)
    lost = [j for j in judged if j.after < j.before]
    by_ply = Counter(j.ply for j in judged)
    lost_by_ply = Counter(j.ply for j in lost)
    times = [j.seconds for j in judged]
    print(f"{level.name}: {len(lost)} of {count} moves lost the game's value "
          f"({100 * len(lost) / count:.1f}%); seed {seed}")
    print(f"  move time: mean {statistics.fmean(times):.3f} s, max {max(times):.3f} s "
          f"(hard limit {level.hard_time} s); referee "
          f"{sum(j.referee_seconds for j in judged):.0f} s in all")
    print("  by ply (lost/positions): " + ", ".join(
        f"{ply}: {lost_by_ply[ply]}/{by_ply[ply]}" for ply in sorted(by_ply)))
    for j in lost:
        print(f"  after {j.position}: played {j.column + 1}, "
              f"lost a {['loss', 'draw', 'win'][j.before + 1]}")


class Played(NamedTuple):
    """One game of the openings measure, from the expert's side."""

    number: int
    opening: str
    seat: int
    value: int  # the opening's outcome for the expert: 1, 0 or -1
    result: int
    lost: list[tuple[str, int, int]]  # (position, column, its outcome) of each move losing it
    seconds: list[float]


def _play_openings(count: int, seed: int, plies: tuple[int, int], shard: int, shards: int
                   ) -> list[Played]:
    """The openings games of the openings whose index is ``shard`` modulo ``shards``: each
    twice, the expert in either seat (its tables emptied before each game, as a fresh worker
    would meet it), against a ``Keeper`` of this process."""
    expert = find("connect4", "expert")
    keeper = Keeper()
    played: list[Played] = []
    for i, start in enumerate(random_positions(seed, count, *plies)):
        if i % shards != shard:
            continue
        for seat in (0, 1):
            engine.clear()
            game_seed = move_seed(seed, 2 * i + seat)
            value = keeper.outcome(start) * (1 if start.to_move == seat else -1)
            state, lost, seconds = start, [], []
            while not state.is_over():
                if state.to_move == seat:
                    move, _, spent = _move(state, expert, move_seed(game_seed, state.ply))
                    seconds.append(spent)
                    before = keeper.outcome(state)
                    if -keeper.outcome(state.play(move)) < before:
                        lost.append((GAME.format_position(state), move, before))
                else:
                    move = keeper.move(state, move_seed(game_seed, state.ply))
                state = state.play(move)
            winner = state.winner()
            result = 0 if winner is None else (1 if winner == seat else -1)
            played.append(Played(i, GAME.format_position(start), seat, value, result, lost,
                                 seconds))
        print(f"  opening {i + 1}: {played[-2].result:+d} as first, "
              f"{played[-1].result:+d} as second", flush=True)
    return played


def opening_games(count: int, seed: int, plies: tuple[int, int] = (4, 6),
                  processes: int = 1) -> None:
    """Print the openings measure: per the opening's value for the expert, its results; the
    expert's moves that lost a game's value; its move times."""
    played = sorted(_share_out(_play_openings, processes, count, seed, plies),
                    key=lambda p: (p.number, p.seat))
    names = {1: "won", 0: "drawn", -1: "lost"}
    print(f"expert against the keeper: {count} openings of {plies[0]}-{plies[1]} random "
          f"moves, each played in both seats; seed {seed}")
    for value in (1, 0, -1):
        games = [p for p in played if p.value == value]
        if games:
            results = Counter(p.result for p in games)
            short = sum(p.result < value for p in games)
            print(f"  {names[value]:5} openings: {len(games):3d} games, {results[1]} won, "
                  f"{results[0]} drawn, {results[-1]} lost; {short} fell short of the value")
    lost = [(p, move) for p in played for move in p.lost]
    moves = [s for p in played for s in p.seconds]
    print(f"  expert moves: {len(moves)}, {len(lost)} lost the game's value; time mean "
          f"{statistics.fmean(moves):.3f} s, max {max(moves):.3f} s")
    for p, (position, column, before) in lost:
        print(f"  game {p.number + 1} ({'first' if p.seat == 0 else 'second'}, from "
              f"{p.opening}): after {position} played {column + 1}, lost a "
              f"{['loss', 'draw', 'win'][before + 1]}")


def _span(text: str) -> tuple[int, int]:
    """"FIRST-LAST" (or one number) as (first, last)."""
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=0,
                        help="measure value-losing moves in this many random positions "
                        "instead of playing games")
    parser.add_argument("--level", default="expert", help="the level --positions measures")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", default="6-20",
                        help="FIRST-LAST: how many random moves in the --positions are")
    parser.add_argument("--openings", type=int, default=0,
                        help="play this many random openings in both seats against the "
                        "keeper instead of the games below")
    parser.add_argument("--opening-plies", default="4-6",
                        help="FIRST-LAST: how many random moves the --openings are")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--opponent", default="hard",
                        help="a level's name, or 'perfect' (the solver choosing at random "
                        "among its best moves)")
    parser.add_argument("--processes", type=int, default=1,
                        help="--positions or --openings shared out among this many "
                        "processes")
    parser.add_argument("--sides", choices=("both", "first", "second"), default="both")
    args = parser.parse_args(argv)
    ai.warm_up("connect4")
    if args.positions:
        value_losing(find("connect4", args.level), args.positions, args.seed,
                     _span(args.plies), args.processes)
        return
    if args.openings:
        opening_games(args.openings, args.seed, _span(args.opening_plies), args.processes)
        return
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
