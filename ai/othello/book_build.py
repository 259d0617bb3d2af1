"""Build the Othello opening book (``ai.othello.book``) with the engine's own search.

``discus book build othello`` (or ``python -m ai.othello.book_build [--plies P] [--out
FILE]``) visits, for each colour, the positions that colour can face before ply ``P``
(default ``book.PLIES``) when it plays the book's moves and the opponent plays anything; one
of each set of symmetric positions. Each is searched ``book.DEPTH`` plies deep with every
root move scored exactly, from empty tables (so a fresh search gives the same entry), and its
near-best moves are written as a line at once: a stopped build resumes where it was.

``--verify N`` searches N random entries again and fails if any differs; ``--stats`` says
what the file holds.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from ai.limits import Limits
from ai.othello import book, engine, patterns
from ai.progress import Progress
from games.othello import GAME, OthelloState

Entries = dict[tuple[int, int], book.Entry]


def score_moves(state: OthelloState, depth: int = book.DEPTH, margin: int = book.MARGIN
                ) -> book.Entry:
    """The moves of ``state`` within ``margin`` discs of the best in a ``depth`` search from
    empty tables, best first (ties by square), as squares of ``state``."""
    engine.clear()
    legal = state.legal_moves()
    last = list(engine.search(state, Limits(depth=depth, multipv=len(legal))))[-1]
    best = max(s for _, s in last.root_scores)
    return tuple(sorted(((m, s) for m, s in last.root_scores if s >= best - margin),
                        key=lambda pair: (-pair[1], pair[0])))


def to_key_orientation(state: OthelloState, moves: book.Entry) -> tuple[tuple[int, int],
                                                                         book.Entry]:
    key, t = book.canonical(state)
    source = patterns.TRANSFORMS[t].tolist()
    return key, tuple((source.index(m), s) for m, s in moves)


def _layers(plies: int, entries: Entries) -> Iterator[list[OthelloState]]:
    """Each colour's book positions ply by ply, one of each symmetric set; ``entries`` must
    hold a layer's positions (the caller scores them) before the next layer is asked for."""
    for side in (0, 1):
        layer = [GAME.initial()]
        for _ in range(plies):
            seen: set[tuple[int, int]] = set()
            unique = []
            for state in layer:
                key, _ = book.canonical(state)
                if key not in seen and not state.is_over():
                    seen.add(key)
                    unique.append(state)
            mine = [s for s in unique if s.to_move == side]
            if mine:
                yield mine
            layer = []
            for state in unique:
                if state.to_move == side:
                    key, t = book.canonical(state)
                    source = patterns.TRANSFORMS[t]
                    layer += [state.play(int(source[m])) for m, _ in entries[key]]
                else:
                    layer += [state.play(m) for m in state.legal_moves()]


def positions(plies: int, entries: Entries) -> Iterator[OthelloState]:
    for layer in _layers(plies, entries):
        yield from layer


def build(out: Path, plies: int, report: TextIO = sys.stdout) -> int:
    """Score what ``out`` does not hold yet; returns the number of entries written."""
    entries: Entries = dict(book.load.__wrapped__(out)) if out.exists() else {}
    written = 0
    with out.open("a") as file:
        for layer in _layers(plies, entries):
            todo = [s for s in layer if book.canonical(s)[0] not in entries]
            if not todo:
                continue
            progress = Progress(report, f"ply {todo[0].ply:2d}", len(todo))
            for state in todo:
                key, moves = to_key_orientation(state, score_moves(state))
                entries[key] = moves
                file.write(book.format_entry(key, moves) + "\n")
                file.flush()
                written += 1
                progress.step()
    return written


def verify(path: Path, count: int, plies: int, seed: int = 1) -> int:
    """Search ``count`` random entries again from empty tables; returns how many differ."""
    entries = book.load.__wrapped__(path)
    held = [s for s in positions(plies, entries) if book.canonical(s)[0] in entries]
    wrong = 0
    for state in random.Random(seed).sample(held, min(count, len(held))):
        stored = book.lookup(state, path)
        fresh = score_moves(state)
        if stored != fresh:
            wrong += 1
            print(f"differs: {GAME.format_position(state)} book {stored}, search {fresh}",
                  flush=True)
    return wrong


def stats(path: Path, plies: int) -> list[str]:
    entries = book.load.__wrapped__(path)
    by_ply: dict[int, int] = {}
    choices = 0
    for state in positions(plies, entries):
        by_ply[state.ply] = by_ply.get(state.ply, 0) + 1
        choices += len(entries[book.canonical(state)[0]])
    lines = [f"{len(entries)} entries, {path.stat().st_size if path.exists() else 0} bytes; "
             f"positions before ply {plies} for either colour, {book.DEPTH}-ply search, moves "
             f"within {book.MARGIN} disc of the best ({choices / max(len(entries), 1):.1f} a "
             "position)"]
    lines += [f"ply {ply:2d}: {count:5d} positions" for ply, count in sorted(by_ply.items())]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai.othello.book_build",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=book.PLIES)
    parser.add_argument("--out", type=Path, default=book.BOOK_FILE)
    parser.add_argument("--verify", type=int, default=None, metavar="N")
    parser.add_argument("--stats", action="store_true", help="say what the book holds")
    args = parser.parse_args(argv)
    if args.stats:
        print("\n".join(stats(args.out, args.plies)))
        return 0
    engine.warm_up()
    if args.verify is not None:
        wrong = verify(args.out, args.verify, args.plies)
        print(f"{args.verify} entries searched again: {wrong} differ")
        return 1 if wrong else 0
    written = build(args.out, args.plies)
    print(f"{written} entries written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
