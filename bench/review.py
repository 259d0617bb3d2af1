"""How long a full game review takes: a 42-ply Connect Four game and a 60-ply Othello game.

``python -m bench.review [--runs N] [--no-book] [--book-only] [--cached] [--connect4 MOVES]``:
reviews each game N times in
this process, each run on empty engine tables (as a fresh worker would), and prints the
median and the fastest run's seconds, with how many moves got each verdict. ``--no-book``
reviews the Connect Four game with the opening book turned off (every early position is
then the solver's), to see what the book saves; ``--book-only`` with ``book.txt`` alone (its
second file, every position of the first plies, left out: the book as it was before it).
``--connect4 MOVES`` reviews that game (columns 1-7) instead, say one that leaves the
book's lines early. ``--cached`` reviews the Connect Four game
three times through the position cache on a fresh SQLite database, as the server's workers
do: the first review proves and keeps what it can, each later one (new process-local tiers,
so only the durable table remembers) reads it back and proves only what is left; with
``--idle SECONDS``, between the first review and the second the game's positions are proved
as the server's idle workers would (``ai.review.prove_positions``, each within SECONDS),
and that time is shown apart. The engines are warmed up first; that time is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from unittest import mock

import ai
import games
from ai import review
from ai.connect4 import engine as c4_engine
from ai.othello import engine as othello_engine

CONNECT4_GAME = "464444466336222226633332117711775155155577"
"""42 plies to a full board, between two 6-ply searches choosing among their two best moves
(seed 7); Yellow won."""

OTHELLO_GAME = ("d3c3c4e3f2e2b2a1f3b4d1e1f1g2h1f5d2g1f4c5g3c2e6f6d6d7e7c6d8e8b6h2h3g5g4h5f7"
                "c8b5f8h4b3h6b7a8g6a7b8g8c7a5a6h7a3a4g7h8a2b1c1")
"""60 plies between a 2-ply search and random moves (the same game as tests/ai)."""


def moves_of(game_name: str, text: str) -> list[int]:
    """The game's moves as ints, passes included (``parse_moves`` infers them)."""
    game = games.load(game_name)
    state = game.initial()
    moves: list[int] = []
    final = game.parse_moves(text)
    if game_name == "connect4":
        return [int(c) - 1 for c in text]
    squares = [text[i:i + 2] for i in range(0, len(text), 2)]
    for square in squares:
        legal = state.legal_moves()
        if len(legal) == 1 and game.format_move(legal[0]) == "pass":
            moves.append(legal[0])
            state = state.play(legal[0])
        move = game.parse_move(state, square)
        moves.append(move)
        state = state.play(move)
    assert state == final
    return moves


def timed(game_name: str, moves: list[int], runs: int) -> tuple[list[float], review.Review]:
    seconds = []
    found = None
    for _ in range(runs):
        c4_engine.clear()
        othello_engine.clear()
        started = time.perf_counter()
        found = review.review(game_name, moves)
        seconds.append(time.perf_counter() - started)
    assert found is not None
    return seconds, found


def report(name: str, seconds: list[float], found: review.Review) -> None:
    verdicts = Counter(m.verdict or "unvalued" for m in found.moves)
    exact = sum(m.exact for m in found.moves)
    print(f"{name}: {len(found.moves)} plies, median {statistics.median(seconds):.2f} s, "
          f"fastest {min(seconds):.2f} s over {len(seconds)} runs; {exact} moves exact; "
          + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))


def cached(moves: list[int], idle: float | None = None) -> None:
    """Review ``moves`` three times through the position cache of a new SQLite database
    (after the first, with ``idle``, the idle workers' proofs of its positions)."""
    from bench.review_corpus import migrate
    from server.engines.engine_process import use_proven_cache
    from server.engines.pool import CacheSettings

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/bench.sqlite3"
        asyncio.run(migrate(url))
        for name in ("first review", "second review", "third review"):
            cache = use_proven_cache(CacheSettings(None, url))
            try:
                report(f"connect4, {name}", *timed("connect4", moves, 1))
                if idle is not None and name == "first review":
                    started = time.perf_counter()
                    done = review.prove_positions(
                        "connect4", [moves[:n] for n in range(len(moves), -1, -1)], idle)
                    print(f"connect4, idle workers: {len(done.proved)} positions proved, "
                          f"{len(done.known)} known, {len(done.unproved)} not within {idle} s,"
                          f" in {time.perf_counter() - started:.2f} s")
            finally:
                review.use_store(None)
                cache.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-book", action="store_true",
                        help="review the Connect Four game without the opening book")
    parser.add_argument("--book-only", action="store_true",
                        help="the Connect Four book without its second file (book_every.txt)")
    parser.add_argument("--connect4", default=CONNECT4_GAME, metavar="MOVES",
                        help="the Connect Four game to review (columns 1-7)")
    parser.add_argument("--idle", type=float, default=None, metavar="SECONDS",
                        help="with --cached: the idle workers' proofs after the first review")
    parser.add_argument("--cached", action="store_true",
                        help="review the Connect Four game three times through the position cache")
    args = parser.parse_args(argv)
    for name in ("connect4", "othello"):
        ai.warm_up(name)
    c4 = moves_of("connect4", args.connect4)
    if args.book_only:
        only = c4_engine.book.load(c4_engine.book.BOOK_FILE)
        c4_engine.book._shipped.cache_clear()
        mock.patch.object(c4_engine.book, "_shipped", return_value=only).start()
    if args.cached:
        cached(c4, args.idle)
        return
    if args.no_book:
        with mock.patch.object(c4_engine.book, "lookup", return_value=None):
            report("connect4 (no book)", *timed("connect4", c4, args.runs))
    else:
        report("connect4", *timed("connect4", c4, args.runs))
    if args.connect4 != CONNECT4_GAME:
        return
    report("othello", *timed("othello", moves_of("othello", OTHELLO_GAME), args.runs))


if __name__ == "__main__":
    main()
