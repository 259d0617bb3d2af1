"""The Connect Four expert's second visit to a position whose outcome the cache holds.

``python -m bench.c4_outcome_cache [--positions 64171,45726,...] [--hard 1177,1717]
[--idle S] [--soft-time S --hard-time S]``: each position's expert move (at its own clock, or
another) as an engine process makes it (``think``, then
``_save``), with a SQLite position cache in a temporary folder and no Redis. ``--positions``
(the expert's weak solve fits its clock, the exact solve does not): a first visit (empty
cache, empty solver table: the weak solve proves the outcome) and a second from a fresh
cache client and an empty table, as another worker would (the outcome read from SQLite, no
weak solve). ``--hard`` (not even the weak solve fits the clock): a visit on an empty cache,
then idle proving of the position within ``--idle`` seconds (``ai.review.prove_positions``),
then a visit from another worker. Prints each visit's seconds, the outcome the answer
reports (``-``: none) and the heuristic's depth, or that the cache answered with an exact
score, and whether the move keeps the position's value (the solver's check, not timed).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import tempfile
import time

import ai
from ai import review
from ai.connect4 import engine
from ai.levels import Level, find
from ai.limits import Limits
from bench.review_corpus import migrate
from games.base import State
from games.connect4 import GAME
from server.engines import AiJob, CacheSettings
from server.engines.engine_process import _save, think, use_proven_cache
from server.engines.messages import Think

POSITIONS = "64171,45726,115371,27173,524712"
"""Found by a scan of random positions 5 to 8 plies in: weak solve 1-2 s, exact 3-5 s."""
HARD = "1177,1717"
"""Edge openings whose weak solve takes 7-11 s, the exact one 20-30 s."""


class _Quiet:
    def send(self, message: object) -> None:
        pass


def visit(url: str, moves: str, level: Level) -> tuple[float, int | None, int, bool, bool]:
    """(seconds, outcome reported, depth, keeps the value, from the cache) of the expert's
    move in the position after ``moves``, by a worker with an empty solver table and its own
    cache."""
    state = GAME.parse_moves(moves)
    job = AiJob("connect4", tuple(int(c) - 1 for c in moves), level, 1)
    engine.clear()
    cache = use_proven_cache(CacheSettings(None, url))
    try:
        started = time.perf_counter()
        answer, learnt = think(_Quiet(), Think(moves, job), ai.search, False, cache)
        seconds = time.perf_counter() - started
        if learnt is not None:
            _save(cache, *learnt)
    finally:
        review.use_store(None)
        cache.close()
    outcome = learnt[1].outcome if learnt is not None else None
    depth = learnt[1].depth if learnt is not None else 0
    return seconds, outcome, depth, _keeps(state, answer.move), answer.cached


def _keeps(state: State, move: int) -> bool:
    """Whether ``move`` keeps the value of ``state``: the same outcome, by the solver."""
    child = state.play(move)
    if child.is_over():
        result = child.result() if child.to_move == 0 else -child.result()
    else:
        result = ai.best(child, Limits(exact=True)).score
    before = ai.best(state, Limits(exact=True)).score
    return _sign(before) == -_sign(result)


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _line(name: str, found: tuple[float, int | None, int, bool, bool]) -> str:
    seconds, outcome, depth, keeps, cached = found
    how = ("the cache's exact answer" if cached else
           f"outcome {'-' if outcome is None else outcome:>2}, depth {depth:2d}")
    return f"{name:<6} {seconds:5.2f} s, {how}, {'keeps' if keeps else 'LOSES'} the value"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", default=POSITIONS)
    parser.add_argument("--hard", default=HARD)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--soft-time", type=float,
                        help="the expert's soft time (default: its own)")
    parser.add_argument("--hard-time", type=float,
                        help="the expert's hard time (default: its own)")
    args = parser.parse_args(argv)
    level = find("connect4", "expert")
    level = dataclasses.replace(level, soft_time=args.soft_time or level.soft_time,
                                hard_time=args.hard_time or level.hard_time)
    os.environ.pop("REDIS_URL", None)  # the durable tier alone: a fresh worker's view
    ai.warm_up("connect4")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/bench.sqlite3"
        asyncio.run(migrate(url))
        for moves in filter(None, args.positions.split(",")):
            print(f"{moves:>10} {_line('first', visit(url, moves, level))}")
            print(f"{'':>10} {_line('second', visit(url, moves, level))}", flush=True)
        for moves in filter(None, args.hard.split(",")):
            print(f"{moves:>10} {_line('first', visit(url, moves, level))}")
            cache = use_proven_cache(CacheSettings(None, url))
            try:
                engine.clear()
                started = time.perf_counter()
                done = review.prove_positions(
                    "connect4", [tuple(int(c) - 1 for c in moves)], args.idle)
                print(f"{'':>10} idle   {time.perf_counter() - started:5.2f} s: "
                      f"{'proved' if done.proved else 'outcome' if done.outcomes else 'nothing'}")
            finally:
                review.use_store(None)
                cache.close()
            print(f"{'':>10} {_line('after', visit(url, moves, level))}", flush=True)


if __name__ == "__main__":
    main()
