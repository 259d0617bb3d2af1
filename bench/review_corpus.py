"""Are Connect Four reviews exact and quick once people have played a few hundred games?

``python -m bench.review_corpus [--games 300] [--idle-seconds 300] [--reviews 5] [--seed 1]``
measures the target of the project's review work: a review of any game people play is exact
at every ply within ``TARGET_SECONDS`` once the server has seen a few hundred games.

1. Plays ``--games`` games of the kinds people play, and ``--reviews`` more of the same
   kinds (none of them among the first): the shipped levels against each other, a casual
   human-like player (takes a win in one, often sees a threat, otherwise plays anywhere,
   the centre likelier) against a level or another casual player, and a random player
   against a level; the first plies are sometimes random, so openings vary. Levels play as
   the server's workers do (``ai.search`` with the level's limits, then ``choose_move``),
   their clocks scaled by ``--time-scale`` so that the corpus plays quickly (the
   depth-bounded levels are hardly touched by it; the time-bounded expert plays somewhat
   weaker, its positions alike).
2. Stores the corpus in a fresh SQLite database through the server's ``SqlStore``, as a
   finished game is stored.
3. Lets the idle workers' code work on it for ``--idle-seconds``: the rounds of
   ``server.engines.idle_proving.ProvingPlan`` (the positions of the newest stored games, most
   visited first, too-hard ones retried with a larger budget) proved by
   ``ai.review.prove_positions`` through the position cache of that database, in this
   process (one worker, no pause between rounds: what a pool's idle worker does while
   nobody plays). The deadline stops the proof under way.
4. Reviews each of the new games twice, as a server's worker does (``ai.review.review``
   with its default budget per position, through the position cache, engine tables fresh
   as in a new worker): first on an empty cache (a fresh database for each review), then
   on the corpus's cache after idle proving.

Prints each review's plies, seconds, positions proven before it started (the book or the
cache) and the first ply that was not, moves and positions whose values are exact (exact:
Pons' score proven, as ``ai.review.MoveReview.exact`` means) and the game's moves (to
review again with ``bench.review --connect4``), then the median and maximum seconds and how many
reviews met the target, before and after. Bounded: the corpus's play (quick levels), the
idle time, and at most ``reviews * 2 * (plies + REVIEW_SHARE) * C4_SOLVE_SECONDS`` for the
reviews (with the ply-4 book, seconds each). ``--time-scale``, ``--prove-seconds`` and
``--games-read`` scale it up.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np

import ai
import games
from ai import review
from ai.connect4 import engine as c4_engine
from ai.levels import Level, choose_move, find, loses_in_one, win_in_one
from games.base import State
from games.connect4.rules import Connect4State

TARGET_SECONDS = 30.0
"""The issue's target: a review exact at every ply within this long."""
LEVELS = ("beginner", "easy", "medium", "hard", "expert")
CENTRE = (1, 2, 3, 4, 3, 2, 1)
"""A casual player's weights by column: the centre likelier, as people play."""
MIX = (("level-level", 40), ("casual-level", 40), ("casual-casual", 10), ("random-level", 10))
"""Kinds of games and their shares (in any seat order)."""

C4 = games.load("connect4")
Player = Callable[[State, random.Random], int]


def level_player(name: str, scale: float) -> Player:
    """A shipped level, its clock scaled by ``scale``, choosing as the server does."""
    base = find("connect4", name)
    level: Level = dataclasses.replace(base, soft_time=base.soft_time * scale,
                                       hard_time=base.hard_time * scale)

    def play(state: State, rng: random.Random) -> int:
        iterations = list(ai.search(state, level.limits()))
        return choose_move(state, level, rng.randrange(1 << 30), iterations[-1:])

    return play


def casual(state: State, rng: random.Random) -> int:
    """A casual human: wins in one when it can, blocks a threat and avoids giving one most of
    the time, otherwise any column, the centre likelier."""
    win = win_in_one(state)
    if win is not None:
        return win
    legal = state.legal_moves()
    if rng.random() < 0.8:
        safe = [m for m in legal if not loses_in_one(state, m)]
        legal = safe or legal
    return rng.choices(legal, weights=[CENTRE[m] for m in legal])[0]


def uniform(state: State, rng: random.Random) -> int:
    return rng.choice(state.legal_moves())


def players_of(kind: str, rng: random.Random, scale: float) -> tuple[str, Player, str, Player]:
    """(name, player) for both seats of a game of ``kind``, in a random seat order."""
    def one(part: str) -> tuple[str, Player]:
        if part == "level":
            name = rng.choice(LEVELS)
            return name, level_player(name, scale)
        return part, casual if part == "casual" else uniform

    first, second = kind.split("-")
    a, b = one(first), one(second)
    if rng.random() < 0.5:
        a, b = b, a
    return (*a, *b)


@dataclasses.dataclass(frozen=True)
class Played:
    label: str
    moves: tuple[int, ...]
    result: int


def play_game(rng: random.Random, scale: float) -> Played:
    kind = rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]
    name0, p0, name1, p1 = players_of(kind, rng, scale)
    state = C4.initial()
    moves: list[int] = []
    opening = rng.choice((0, 0, 1, 2, 3, 4))  # random first plies, to vary the openings
    while not state.is_over():
        if len(moves) < opening:
            move = uniform(state, rng)
        else:
            move = (p0 if state.to_move == 0 else p1)(state, rng)
        moves.append(move)
        state = state.play(move)
    return Played(f"{name0} v {name1}", tuple(moves), state.result())


def play_games(count: int, rng: random.Random, scale: float,
               avoid: set[tuple[int, ...]]) -> list[Played]:
    out: list[Played] = []
    while len(out) < count:
        game = play_game(rng, scale)
        if game.moves not in avoid:
            avoid.add(game.moves)
            out.append(game)
    return out


async def store_games(url: str, played: list[Played]) -> None:
    """Keep ``played`` in the database at ``url`` as the server keeps finished games."""
    from server.storage import SqlStore
    from server.storage.store import GameRecord, MoveRecord

    store = SqlStore(url)
    await store.open()
    start = C4.format_position(C4.initial())
    try:
        for n, game in enumerate(played):
            at = 1_000_000.0 + 100 * n
            await store.save_game(GameRecord(
                id=f"corpus-{n}", game="connect4", players=(None, None), ai_level=None,
                ai_seat=None, status="finished", start_position=start, created_at=at,
                result=game.result, reason="four" if game.result else "draw",
                finished_at=at + len(game.moves)))
            for ply, move in enumerate(game.moves):
                await store.append_move(MoveRecord(f"corpus-{n}", ply, C4.format_move(move),
                                                   ply % 2, 1.0, at + ply))
    finally:
        await store.close()


async def migrate(url: str) -> None:
    from server.storage import SqlStore

    store = SqlStore(url)
    await store.open()
    await store.close()


class Deadline(Exception):
    """The idle time is up."""


def idle_proving(url: str, seconds: float, prove_seconds: float, games_read: int) -> None:
    """Rounds of ``ProvingPlan`` on the games stored at ``url`` for ``seconds``, proved here
    through that database's position cache; prints what they did."""
    from server.engines.engine_process import use_proven_cache
    from server.engines.idle_proving import ProvingCounts, ProvingPlan
    from server.engines.pool import CacheSettings
    from server.settings import IdleProving
    from server.storage import SqlStore
    from server.storage.proven import Reached

    plan = ProvingPlan(IdleProving(enabled=True, seconds=prove_seconds, games=games_read))
    counts = ProvingCounts()
    stop = np.zeros(1, dtype=np.int64)
    started = time.perf_counter()
    ends = started + seconds
    timer = threading.Timer(seconds, lambda: stop.__setitem__(0, 1))
    timer.daemon = True

    def check() -> None:
        if time.perf_counter() >= ends:
            raise Deadline

    async def stored() -> list:  # type: ignore[type-arg]
        store = SqlStore(url)
        await store.open()
        try:
            return await store.recent_games("connect4", games_read)
        finally:
            await store.close()

    reached = Reached(games.load("connect4"), games_read)
    reached.add(asyncio.run(stored())[::-1])
    cache = use_proven_cache(CacheSettings(None, url))
    budgets: list[float] = []
    timer.start()
    try:
        while time.perf_counter() < ends:
            wanted, budget = plan.next_round("connect4", reached)
            if not wanted:
                break
            counts.rounds += 1
            budgets.append(budget)
            try:
                done = review.prove_positions(
                    "connect4", [line for _, line in wanted], budget, check, stop)
            except Deadline:
                break
            plan.record("connect4", wanted, done, counts)
    finally:
        timer.cancel()
        review.use_store(None)
        cache.close()
    print(f"idle proving: {time.perf_counter() - started:.0f} s, {counts.rounds} rounds "
          f"(budgets {sorted(set(budgets))} s a position), {counts.proved} positions proved, "
          f"{counts.known} known already, {counts.unproved} too hard for their budget "
          f"({counts.outcomes} of them with their outcome proven)")


def review_one(url: str, moves: tuple[int, ...]) -> tuple[float, int, int, int, int | None]:
    """(seconds, positions proven before it, moves exact, positions exact, the first ply
    whose position was not proven before it) of a review of ``moves`` through the cache of
    the database at ``url``, as a fresh worker would."""
    from server.engines.engine_process import use_proven_cache
    from server.engines.pool import CacheSettings

    cache = use_proven_cache(CacheSettings(None, url))
    try:
        states = [C4.initial()]
        for move in moves:
            states.append(states[-1].play(move))
        live = [s for s in states if not s.is_over()]
        hits = cache.lookup(live)
        proven = [c4_engine.known_value(cast(Connect4State, s)) is not None
                  or (hit is not None and hit.exact and hit.bound == 3)
                  for s, hit in zip(live, hits, strict=True)]
        first = proven.index(False) if False in proven else None
        c4_engine.clear()
        started = time.perf_counter()
        found = review.review("connect4", list(moves))
        seconds = time.perf_counter() - started
    finally:
        review.use_store(None)
        cache.close()
    return (seconds, sum(proven) + len(states) - len(live), sum(m.exact for m in found.moves),
            sum(found.values_exact), first)


def reviews(name: str, new: list[Played], url_of: Callable[[int], str]) -> list[float]:
    seconds = []
    met = 0
    for n, game in enumerate(new):
        took, known, exact, values, first = review_one(url_of(n), game.moves)
        plies = len(game.moves)
        seconds.append(took)
        met += values == plies + 1 and took <= TARGET_SECONDS
        print(f"  {name} review {n + 1} ({game.label}, {plies} plies): {took:6.1f} s, "
              f"{known}/{plies + 1} positions proven before, {exact}/{plies} moves exact, "
              f"{values}/{plies + 1} values exact; first unproven ply {first}; "
              f"{''.join(C4.format_move(m) for m in game.moves)}", flush=True)
    print(f"{name}: median {statistics.median(seconds):.1f} s, max {max(seconds):.1f} s; "
          f"{met} of {len(new)} reviews exact at every ply within {TARGET_SECONDS:.0f} s",
          flush=True)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="games stored before reviewing")
    parser.add_argument("--idle-seconds", type=float, default=300.0,
                        help="how long the idle workers' code proves the corpus's positions")
    parser.add_argument("--reviews", type=int, default=5, help="new games reviewed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-scale", type=float, default=0.25,
                        help="the levels' clocks while playing the games")
    parser.add_argument("--prove-seconds", type=float, default=None,
                        help="the first budget of one position's idle proof "
                             "(default: the server's, IdleProving.seconds)")
    parser.add_argument("--games-read", type=int, default=None,
                        help="newest stored games whose positions are proved "
                             "(default: the server's, IdleProving.games)")
    args = parser.parse_args(argv)
    from server.settings import IdleProving

    defaults = IdleProving()
    prove_seconds = args.prove_seconds or defaults.seconds
    games_read = args.games_read or defaults.games
    ai.warm_up("connect4")
    rng = random.Random(args.seed)
    started = time.perf_counter()
    seen: set[tuple[int, ...]] = set()
    corpus = play_games(args.games, rng, args.time_scale, seen)
    new = play_games(args.reviews, rng, args.time_scale, seen)
    plies = [len(g.moves) for g in corpus]
    print(f"played {len(corpus)} games (median {statistics.median(plies):.0f} plies) and "
          f"{len(new)} new ones in {time.perf_counter() - started:.0f} s", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        def empty(n: int) -> str:
            url = f"sqlite+aiosqlite:///{Path(folder) / f'empty{n}.sqlite3'}"
            asyncio.run(migrate(url))
            return url

        corpus_url = f"sqlite+aiosqlite:///{Path(folder) / 'corpus.sqlite3'}"
        before = reviews("before (empty cache)", new, empty)
        asyncio.run(store_games(corpus_url, corpus))
        idle_proving(corpus_url, args.idle_seconds, prove_seconds, games_read)
        after = reviews("after (corpus + idle proving)", new, lambda n: corpus_url)
    print(f"median {statistics.median(before):.1f} s -> {statistics.median(after):.1f} s, "
          f"max {max(before):.1f} s -> {max(after):.1f} s; "
          f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
