"""Build the Connect Four opening book (``ai.connect4.book``) with the exact solver.

``python -m ai.connect4.book_build [--first-plies F] [--second-plies S] [--processes N]
[--out FILE]`` (defaults: ``book.PLIES``, one process a core) visits every position the
book's side can face early in a game: as the first player, positions at even plies below
``--first-plies`` reached by the book's own moves and any reply; as the second player, odd
plies below ``--second-plies``, likewise. Each is solved (``Limits(exact=True)``) and its best
move and score written as a line at once, so a build that is stopped resumes where it was
(entries already in the file are not solved again).

Positions are solved ply by ply from the start, each ply's in parallel on worker processes
(the AI's own engine in each); a worker keeps its solver's table between positions, so the
proofs of earlier plies speed up the later ones. A progress bar says how far the ply is and
the time it has left (from the mean time per position so far).

``--every-ply P`` instead fills the book's second file (``book.EVERY_FILE``) with every
position up to ply P (one of each pair of mirror images) that ``book.txt`` does not hold, so
every move of every position before ply P has a proven value (what the analysis board shows
at once). Shallowest ply first: the values of a ply's positions are the values of every move
of the ply before, so a build cut short still answers the earliest plies in full (solving a
ply-2 position outright costs about what one of its ply-3 children does, and leaves its
proof in the table for them). Each position is solved in turn in this one process (the
solver's table kept from one to the next, siblings one after another), or taken from its
children's values (negamax: no search) where they are all held; a last pass, deepest ply
first, derives what the later plies completed. Resumable like ``build``; a line a position
with the seconds it took.

``--outcomes-ply P`` instead fills the book's third file (``book.OUTCOMES_FILE``) with the
outcome (win, draw or loss, the weak solve: far cheaper than the exact score) and a move that
keeps it of every position at ply P that the other files do not hold, on ``--processes``
workers fed groups of siblings (centre first), each keeping its table (``--table-bits``);
resumable like ``build``; with ``--derive``, then each earlier ply down to ``book.EVERY_PLY +
1`` from its children's (no search: ``derive_outcomes``; the shipped ply 5 came so from ply
6; plies 6 and 7 were searched). ``--verify-outcomes N`` solves N entries again.

``--verify N`` instead solves N entries of the file again, chosen at random, and fails if any
differs; ``--stats`` says what it holds. ``discus book build|verify|stats`` runs the same.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TextIO

import ai
from ai.connect4 import book, engine
from ai.connect4.engine import clear
from ai.connect4.solver import CENTRE_FIRST
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.kernels import CELLS
from games.connect4.rules import Connect4State

Solved = dict[int, tuple[int, int]]
"""Canonical key -> (best column in the canonical orientation, exact score)."""


def _solve(state: Connect4State) -> tuple[int, int]:
    """(best column, exact score) of ``state``; ties go to the column nearest the centre."""
    found = ai.best(state, Limits(exact=True))
    assert found.exact
    return found.move, found.score


def _solve_moves(moves: str) -> tuple[str, int, int, float]:
    """A worker's task: (moves, best column, score, seconds) of the position after ``moves``."""
    started = time.perf_counter()
    column, score = _solve(GAME.parse_moves(moves))
    return moves, column, score, time.perf_counter() - started


def _layers(first_plies: int, second_plies: int,
            solved: Solved) -> Iterator[tuple[int, list[Connect4State]]]:
    """(side, positions) of each ply the book holds, from the start outwards; one of each pair
    of mirror images. ``solved`` must hold the book side's positions of a ply (the caller
    solves them) before the next ply is asked for: the book's move picks what follows."""
    for side, plies in ((0, first_plies), (1, second_plies)):
        layer = [GAME.initial()]
        for _ in range(plies):
            seen: set[int] = set()
            unique = []
            for state in layer:
                key, _ = book.canonical(state)
                if key not in seen and not state.is_over():
                    seen.add(key)
                    unique.append(state)
            if unique and unique[0].to_move == side:
                yield side, unique
                layer = [s.play(_from(solved, s)[0]) for s in unique]
            else:
                layer = [s.play(m) for s in unique for m in s.legal_moves()]


def positions(first_plies: int, second_plies: int, solved: Solved) -> Iterator[Connect4State]:
    """Every position the book should hold, ply by ply from the start (``solved`` gives the
    book's move where the book's side is to move)."""
    for _, layer in _layers(first_plies, second_plies, solved):
        yield from layer


def _from(solved: Solved, state: Connect4State) -> tuple[int, int]:
    key, mirrored = book.canonical(state)
    column, score = solved[key]
    return (6 - column if mirrored else column), score


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{secs:02d}s"


class Progress:
    """One ply's progress: a bar redrawn in place on a terminal, a line per position
    elsewhere (a log keeps every solve's time)."""

    def __init__(self, out: TextIO, label: str, total: int, processes: int) -> None:
        self.out, self.label, self.total, self.processes = out, label, total, processes
        self.done = 0
        self.spent = 0.0
        self.started = time.perf_counter()
        self.tty = out.isatty()

    def left(self) -> float:
        """Seconds the ply has left: the mean solve so far for each position not done,
        spread over the processes."""
        if not self.done:
            return float("nan")
        return self.spent / self.done * (self.total - self.done) / self.processes

    def step(self, moves: str, column: int, score: int, seconds: float) -> None:
        self.done += 1
        self.spent += seconds
        filled = round(24 * self.done / self.total)
        line = (f"{self.label} [{'#' * filled}{'.' * (24 - filled)}] {self.done}/{self.total}"
                f"  {_clock(time.perf_counter() - self.started)} spent,"
                f" ~{_clock(self.left())} left")
        if self.tty:
            self.out.write("\r" + line + ("\n" if self.done == self.total else ""))
        else:
            self.out.write(f"{line}  | {moves or '-'} -> {column + 1} {score:+d}"
                           f" in {seconds:.2f}s\n")
        self.out.flush()


def build(out: Path, first_plies: int, second_plies: int, processes: int | None = None,
          report: TextIO = sys.stdout) -> int:
    """Solve what ``out`` does not hold yet; returns the number of entries written."""
    solved: Solved = dict(book.load.__wrapped__(out)) if out.exists() else {}
    processes = processes or os.cpu_count() or 1
    written = 0
    with out.open("a") as file, ProcessPoolExecutor(
        processes, initializer=_warm_worker
    ) as pool:
        for side, layer in _layers(first_plies, second_plies, solved):
            todo = [s for s in layer if book.canonical(s)[0] not in solved]
            if not todo:
                continue
            label = f"{'first' if side == 0 else 'second'} player, ply {todo[0].ply:2d}"
            progress = Progress(report, label, len(todo), min(processes, len(todo)))
            futures = [pool.submit(_solve_moves, GAME.format_moves(s.moves)) for s in todo]
            for future in as_completed(futures):
                moves, column, score, seconds = future.result()
                key, mirrored = book.canonical(GAME.parse_moves(moves))
                canonical_column = 6 - column if mirrored else column
                solved[key] = (canonical_column, score)
                file.write(book.format_entry(key, canonical_column, score) + "\n")
                file.flush()
                written += 1
                progress.step(moves, column, score, seconds)
    return written


def every_position(plies: int) -> list[list[Connect4State]]:
    """Every position at each ply up to ``plies`` (index = ply), one of each pair of mirror
    images, games already over left out; siblings stay next to each other, and the centre
    comes first (where people play most: what a build cut short should hold first)."""
    layers = [[GAME.initial()]]
    for _ in range(plies):
        seen: set[int] = set()
        layer = []
        for state in layers[-1]:
            legal = state.legal_moves()
            for col in (c for c in CENTRE_FIRST if c in legal):
                child = state.play(col)
                key, _ = book.canonical(child)
                if key not in seen and not child.is_over():
                    seen.add(key)
                    layer.append(child)
        layers.append(layer)
    return layers


def from_children(state: Connect4State, solved: Solved) -> tuple[int, int] | None:
    """(best column, exact score) of ``state`` from its children's entries in ``solved``
    (a win or a full board scored by the rules), ties to the centre; None if one is missing."""
    best: tuple[int, int] | None = None
    legal = state.legal_moves()
    for col in (c for c in CENTRE_FIRST if c in legal):
        child = state.play(col)
        if child.winner() is not None:
            value = (CELLS + 1 - state.ply) // 2
        elif child.is_over():
            value = 0
        else:
            key, _ = book.canonical(child)
            if key not in solved:
                return None
            value = -solved[key][1]
        if best is None or value > best[1]:
            best = (col, value)
    return best


def build_every(out: Path, plies: int, report: TextIO = sys.stdout,
                held: Solved | None = None, solve: bool = True) -> int:
    """Write to ``out`` every position up to ``plies`` that neither ``held`` (default: the
    shipped ``book.txt``) nor ``out`` holds; returns the number of entries written. Without
    ``solve``, only what follows from the children already held (a build cut short)."""
    solved: Solved = dict(book.load.__wrapped__(book.BOOK_FILE) if held is None else held)
    if out.exists():
        solved.update(book.load.__wrapped__(out))
    layers = every_position(plies)
    written = 0
    order = [*range(1, plies + 1), *range(plies - 1, -1, -1)]
    with out.open("a") as file:
        for pass_, ply in enumerate(order):
            todo = [s for s in layers[ply] if book.canonical(s)[0] not in solved]
            for n, state in enumerate(todo, 1):
                started = time.perf_counter()
                found = from_children(state, solved)
                how = "children"
                if found is None and (not solve or pass_ >= plies):
                    continue
                if found is None:
                    found, how = _solve(state), "solved"
                seconds = time.perf_counter() - started
                column, score = found
                key, mirrored = book.canonical(state)
                canonical_column = 6 - column if mirrored else column
                solved[key] = (canonical_column, score)
                file.write(book.format_entry(key, canonical_column, score) + "\n")
                file.flush()
                written += 1
                report.write(f"ply {ply} {n}/{len(todo)} {GAME.format_moves(state.moves) or '-'}"
                             f" -> {column + 1} {score:+d} {how} in {seconds:.1f}s\n")
                report.flush()
    return written


def _weak(state: Connect4State) -> tuple[int, int | None]:
    """``engine.outcome_value`` of ``state`` by the solver itself (never the book's files),
    with no time limit."""
    solved = engine.outcome_value(state, from_book=False)
    assert solved is not None  # no time limit
    return solved


def _outcome_after(state: Connect4State, column: int) -> int:
    """The outcome of playing ``column`` for the side that plays it (1, 0 or -1)."""
    child = state.play(column)
    if child.is_over():
        return 0 if child.winner() is None else 1
    return -_weak(child)[0]


def _solve_outcome(state: Connect4State) -> tuple[int, int]:
    """(a column that keeps it, outcome 1/0/-1) of ``state`` by the weak solve, no time limit.
    The solve names the move it proved a win or draw by, unless its table already held the
    answer: then the first column (centre first) whose own outcome keeps it."""
    found, move = _weak(state)
    legal = [col for col in CENTRE_FIRST if col in state.legal_moves()]
    if found < 0:
        return legal[0], found
    if move is not None:
        return move, found
    for col in legal:
        if _outcome_after(state, col) == found:
            return col, found
    raise AssertionError(f"no move keeps {found}: {GAME.format_moves(state.moves)}")


def _outcomes_of(group: list[str]) -> list[tuple[str, int, int, float]]:
    """A worker's task: (moves, column, outcome, seconds) of each position after ``group``'s
    moves (siblings: the worker's table carries one's proof to the next)."""
    out = []
    for moves in group:
        started = time.perf_counter()
        column, found = _solve_outcome(GAME.parse_moves(moves))
        out.append((moves, column, found, time.perf_counter() - started))
    return out


def build_outcomes(out: Path, todo: Sequence[Connect4State], processes: int = 1,
                   table_bits: int | None = None, report: TextIO = sys.stdout) -> int:
    """Write to ``out`` the outcome and a keeping move of each of ``todo`` that neither the
    book's other files nor ``out`` hold; returns the number of entries written.

    Positions go to the workers in groups of siblings (same parent, in ``todo``'s order),
    and each worker keeps its solver's table (``table_bits``) from one group to the next; a
    group's lines are written when it is done, so a build that is stopped resumes there."""
    held = set(book._shipped()) | set(book.load_outcomes.__wrapped__(out))
    groups: dict[str, list[str]] = {}
    keys: dict[str, tuple[int, bool]] = {}  # moves -> canonical key, mirrored
    for state in todo:
        key, mirrored = book.canonical(state)
        if key not in held and not state.is_over():
            held.add(key)
            moves = GAME.format_moves(state.moves)
            keys[moves] = key, mirrored
            groups.setdefault(moves[:-1], []).append(moves)
    progress = Progress(report, "outcomes", len(keys), processes)
    written = 0
    with out.open("a") as file, ProcessPoolExecutor(
        processes, initializer=_warm_worker, initargs=(table_bits,)
    ) as pool:
        for future in as_completed([pool.submit(_outcomes_of, g) for g in groups.values()]):
            for moves, column, found, seconds in future.result():
                key, mirrored = keys[moves]
                file.write(book.format_outcome(key, 6 - column if mirrored else column, found)
                           + "\n")
                written += 1
                progress.step(moves, column, found, seconds)
            file.flush()
    return written


def derive_outcomes(out: Path, todo: Sequence[Connect4State],
                    report: TextIO = sys.stdout) -> int:
    """Write to ``out`` the outcome of each of ``todo`` that no file holds but whose every
    child one of them holds or ends the game: the best of the children's outcomes negated,
    its move centre first, no search. Returns the number of entries written."""
    exact = book._shipped()
    outcomes = dict(book.load_outcomes.__wrapped__(out))

    def child_outcome(child: Connect4State) -> int | None:
        """The child's outcome for its side to move, or None if nothing holds it."""
        if child.is_over():
            return 0 if child.winner() is None else -1
        key, _ = book.canonical(child)
        if key in exact:
            return (exact[key][1] > 0) - (exact[key][1] < 0)
        return outcomes[key][1] if key in outcomes else None

    written = 0
    with out.open("a") as file:
        for state in todo:
            key, mirrored = book.canonical(state)
            if key in exact or key in outcomes or state.is_over():
                continue
            values = {col: child_outcome(state.play(col)) for col in CENTRE_FIRST
                      if col in state.legal_moves()}
            known = {col: value for col, value in values.items() if value is not None}
            if len(known) < len(values):
                continue
            column = min(known, key=known.__getitem__)  # worst for the opponent, centre first
            found = -known[column]
            canonical_column = 6 - column if mirrored else column
            outcomes[key] = (canonical_column, found)
            file.write(book.format_outcome(key, canonical_column, found) + "\n")
            written += 1
        report.write(f"{written} outcomes derived from their children's\n")
    return written


def verify_outcomes(path: Path, ply: int, count: int, seed: int = 1) -> int:
    """Weak-solve ``count`` random entries of ``path`` at ``ply`` again, each from an empty
    table, and check the outcome and that the entry's move keeps it; returns how many
    differ."""
    entries = book.load_outcomes.__wrapped__(path)
    held = [s for s in every_position(ply)[ply] if book.canonical(s)[0] in entries]
    wrong = 0
    for state in random.Random(seed).sample(held, min(count, len(held))):
        entry = book.outcome(state, path)
        assert entry is not None
        column, found = entry
        clear()
        solved, _ = _weak(state)
        kept = _outcome_after(state, column)
        if solved != found or (found >= 0 and kept != found):
            wrong += 1
            print(f"differs: {GAME.format_moves(state.moves)} file {column + 1} {found:+d}, "
                  f"solver {solved:+d}, file's move {kept:+d}", flush=True)
    return wrong


def _warm_worker(table_bits: int | None = None) -> None:
    ai.warm_up("connect4")
    if table_bits is not None:
        engine.use_exact_table(table_bits)


def verify(path: Path, count: int, first_plies: int, second_plies: int,
           seed: int = 1) -> int:
    """Solve ``count`` random entries again, each from empty tables, and check that the
    book's move keeps the proven score; returns the number that differ."""
    entries = book.load.__wrapped__(path)
    held = [s for s in positions(first_plies, second_plies, entries)
            if book.canonical(s)[0] in entries]
    wrong = 0
    for state in random.Random(seed).sample(held, min(count, len(held))):
        column, score = book.lookup(state, path) or (-1, 0)
        clear()
        _, solved = _solve(state)
        child = state.play(column)
        kept = score if child.is_over() else -ai.best(child, Limits(exact=True)).score
        if solved != score or kept != score:
            wrong += 1
            print(f"differs: {GAME.format_moves(state.moves) or '-'} book {column + 1} "
                  f"{score:+d}, solver {solved:+d}, book move {kept:+d}", flush=True)
    return wrong


def stats(path: Path, first_plies: int, second_plies: int) -> list[str]:
    """Lines saying how big the book is and what it holds, ply by ply."""
    entries = book.load.__wrapped__(path)
    by_ply: dict[int, list[int]] = {}
    for state in positions(first_plies, second_plies, entries):
        if book.canonical(state)[0] in entries:
            by_ply.setdefault(state.ply, []).append(entries[book.canonical(state)[0]][1])
    lines = [f"{len(entries)} entries, {path.stat().st_size} bytes; first player before ply "
             f"{first_plies}, second player before ply {second_plies}"]
    for ply, scores in sorted(by_ply.items()):
        wins = sum(s > 0 for s in scores)
        lines.append(f"ply {ply:2d}: {len(scores):5d} positions ({wins} won, "
                     f"{scores.count(0)} drawn, {len(scores) - wins - scores.count(0)} lost "
                     "for the side to move)")
    return lines + every_stats(book.EVERY_PLY) + outcome_stats(book.OUTCOMES_PLY)


def outcome_stats(ply: int, path: Path | None = None) -> list[str]:
    """Lines saying what the outcomes file holds and how much of every position at ``ply``
    it and the other two files hold (a build may be cut short)."""
    path = book.OUTCOMES_FILE if path is None else path
    entries = book.load_outcomes.__wrapped__(path)
    results = [outcome for _, outcome in entries.values()]
    keys = {book.canonical(s)[0] for s in every_position(ply)[ply]}
    held = sum(k in entries or k in book._shipped() for k in keys)
    return [f"outcomes file {path.name}: {len(entries)} entries ({results.count(1)} won, "
            f"{results.count(0)} drawn, {results.count(-1)} lost for the side to move); "
            f"ply {ply}: {held}/{len(keys)} positions held with the other files"]


def every_stats(plies: int, path: Path | None = None) -> list[str]:
    """Lines saying how much of every position up to ``plies`` the two files hold (the
    second one, ``--every-ply``, may be a build cut short), and at which plies every move is
    valued (what the analysis board answers at once)."""
    path = book.EVERY_FILE if path is None else path
    extra = book.load.__wrapped__(path)
    held = {**extra, **book.load.__wrapped__(book.BOOK_FILE)}
    lines = [f"second file {path.name}: {len(extra)} entries"]
    for ply, layer in enumerate(every_position(plies)):
        keys = [book.canonical(s)[0] for s in layer]
        valued = sum(from_children(s, held) is not None for s in layer)
        lines.append(f"ply {ply:2d}: {sum(k in held for k in keys)}/{len(layer)} positions "
                     f"held, every move valued at {valued}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai.connect4.book_build",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--first-plies", type=int, default=book.PLIES[0])
    parser.add_argument("--second-plies", type=int, default=book.PLIES[1])
    parser.add_argument("--out", type=Path, default=book.BOOK_FILE)
    parser.add_argument("--processes", type=int, default=None,
                        help="worker processes solving at once (default: one a core)")
    parser.add_argument("--verify", type=int, default=None, metavar="N")
    parser.add_argument("--every-ply", type=int, default=None, metavar="P",
                        help="solve every position up to ply P into the second file")
    parser.add_argument("--table-bits", type=int, default=None, metavar="B",
                        help="with --every-ply: a solver table of 2**B entries (16 bytes "
                             "each; a larger one proves the first plies sooner)")
    parser.add_argument("--no-solve", action="store_true",
                        help="with --every-ply: only what follows from held children")
    parser.add_argument("--outcomes-ply", type=int, default=None, metavar="P",
                        help="weak-solve every position at ply P into the outcomes file "
                             f"(the book's is ply {book.OUTCOMES_PLY})")
    parser.add_argument("--derive", action="store_true",
                        help="with --outcomes-ply: then each earlier ply from its children's")
    parser.add_argument("--verify-outcomes", type=int, default=None, metavar="N",
                        help="with --outcomes-ply: solve N entries again instead")
    parser.add_argument("--stats", action="store_true", help="say what the book holds")
    args = parser.parse_args(argv)
    if args.stats:
        print("\n".join(stats(args.out, args.first_plies, args.second_plies)))
        return 0
    if args.verify is not None:
        ai.warm_up("connect4")
        wrong = verify(args.out, args.verify, args.first_plies, args.second_plies)
        print(f"{args.verify} entries solved again: {wrong} differ")
        return 1 if wrong else 0
    if args.outcomes_ply is not None:
        out = book.OUTCOMES_FILE if args.out == book.BOOK_FILE else args.out
        if args.verify_outcomes is not None:
            ai.warm_up("connect4")
            wrong = verify_outcomes(out, args.outcomes_ply, args.verify_outcomes)
            print(f"{args.verify_outcomes} entries solved again: {wrong} differ")
            return 1 if wrong else 0
        layers = every_position(args.outcomes_ply)
        written = build_outcomes(out, layers[-1], args.processes or os.cpu_count() or 1,
                                 args.table_bits)
        for ply in range(args.outcomes_ply - 1, book.EVERY_PLY, -1) if args.derive else ():
            written += derive_outcomes(out, layers[ply])  # free, from the children
        print(f"{written} entries written to {out}")
        return 0
    if args.every_ply is not None:
        ai.warm_up("connect4")
        if args.table_bits is not None:
            engine.use_exact_table(args.table_bits)
        out = book.EVERY_FILE if args.out == book.BOOK_FILE else args.out
        written = build_every(out, args.every_ply, solve=not args.no_solve)
        print(f"{written} entries written to {out}")
        return 0
    written = build(args.out, args.first_plies, args.second_plies, args.processes)
    print(f"{written} entries written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
