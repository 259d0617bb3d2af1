"""Ratings in every store (memory, SQLite, PostgreSQL): a game is rated once, in one
transaction with its history; the leaderboard's order; scores against the AI levels."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from server.storage.store import (
    GameRecord,
    PlayerKind,
    PlayerRecord,
    RatingChangeRecord,
    RatingRecord,
    Store,
    rating_after,
)
from tests.server.storage.conftest import opened_sql_store

Ratings = Mapping[str, tuple[PlayerKind, RatingRecord]]


def finished(game_id: str, players: tuple[str | None, str | None], result: int,
             level: str | None = None, at: float = 100.0) -> GameRecord:
    return GameRecord(game_id, "connect4", players, level,
                      None if level is None else players.index(None), "finished", "",
                      at, result, "end", at + 1)


def change(current: RatingRecord, game_id: str, rating: float, rd: float, score: float,
           at: float, opponent: str | None = None) -> RatingChangeRecord:
    return RatingChangeRecord(
        game_id, current.player_id, current.game, opponent, None, 1500.0, score,
        current.rating, current.rd, current.volatility, rating, rd, 0.06, current.games + 1, at)


async def people(store: Store, *names: str, kind: PlayerKind = "account") -> None:
    for name in names:
        await store.save_player(PlayerRecord(name, name.title(), kind, 1.0))


async def test_a_game_is_rated_once_with_the_changes_its_caller_computed(store: Store) -> None:
    await people(store, "ann", "bob")
    await store.save_game(finished("g1", ("ann", "bob"), 1))
    seen: list[Ratings] = []

    def rate(players: Ratings) -> list[RatingChangeRecord]:
        seen.append(players)
        ann, bob = players["ann"][1], players["bob"][1]
        return [change(ann, "g1", 1662.0, 290.0, 1.0, 101.0, "bob"),
                change(bob, "g1", 1338.0, 290.0, 0.0, 101.0, "ann")]

    first = await store.rate_game("g1", ["ann", "bob"], rate)
    again = await store.rate_game("g1", ["ann", "bob"], rate)

    assert len(seen) == 1, "the second call found the game rated and did not ask again"
    assert seen[0]["ann"] == ("account", RatingRecord("ann", "connect4", 1500.0, 350.0, 0.06))
    assert sorted(again, key=lambda c: c.player_id) == sorted(first, key=lambda c: c.player_id)
    assert await store.ratings_of("ann") == [rating_after(first[0])]
    assert (await store.ratings_of("bob"))[0].rating == 1338.0
    assert [c.game_id for c in await store.rating_history("ann")] == ["g1"]


async def test_a_rating_starts_from_the_last_one_and_history_is_oldest_first(
    store: Store,
) -> None:
    await people(store, "ann", "bob")
    for n in (1, 2, 3):
        await store.save_game(finished(f"g{n}", ("ann", "bob"), 1, at=100.0 * n))
        await store.rate_game(f"g{n}", ["ann", "bob"], lambda ps, n=n: [
            change(ps["ann"][1], f"g{n}", ps["ann"][1].rating + 10, 300.0 - n, 1.0, 100.0 * n)])

    history = await store.rating_history("ann")
    assert [(c.game_id, c.rating_before, c.rating_after, c.games) for c in history] == [
        ("g1", 1500.0, 1510.0, 1), ("g2", 1510.0, 1520.0, 2), ("g3", 1520.0, 1530.0, 3)]
    assert [c.game_id for c in await store.rating_history("ann", limit=2)] == ["g2", "g3"]
    assert await store.rating_history("ann", game="othello") == []
    assert (await store.ratings_of("ann"))[0].games == 3
    assert await store.ratings_of("bob") == [], "a player the caller left out is not rated"


async def test_unknown_players_and_unknown_games_are_not_rated(store: Store) -> None:
    await people(store, "ann")
    await store.save_game(finished("g1", ("ann", "ghost"), 1))
    seen: list[Ratings] = []
    assert await store.rate_game("g1", ["ann", "ghost"], lambda ps: seen.append(ps) or []) == []
    assert list(seen[0]) == ["ann"]
    assert await store.rate_game("nope", ["ann"], lambda ps: seen.append(ps) or []) == []
    assert len(seen) == 1
    assert await store.ratings_of("ann") == []


async def test_two_games_of_one_player_rated_at_once_both_count(store: Store) -> None:
    await people(store, "ann", "bob", "cat")
    await store.save_game(finished("g1", ("ann", "bob"), 1))
    await store.save_game(finished("g2", ("cat", "ann"), -1))

    def plus_ten(game_id: str, player: str = "ann"):  # type: ignore[no-untyped-def]
        return lambda ps: [change(ps[player][1], game_id, ps[player][1].rating + 10, 300.0,
                                  1.0, 200.0)]

    await asyncio.gather(store.rate_game("g1", ["ann", "bob"], plus_ten("g1")),
                         store.rate_game("g2", ["cat", "ann"], plus_ten("g2")))
    ann = (await store.ratings_of("ann"))[0]
    assert (ann.rating, ann.games) == (1520.0, 2)


async def test_the_leaderboard_is_best_first_and_may_leave_out_uncertain_ratings(
    store: Store,
) -> None:
    await people(store, "ann", "bob", "cat", "dan")
    ratings = {"ann": (1700.0, 60.0), "bob": (1800.0, 200.0), "cat": (1600.0, 80.0),
               "dan": (1650.0, 90.0)}
    for n, (name, (rating, rd)) in enumerate(ratings.items()):
        await store.save_game(finished(f"g{n}", (name, None), 1, level="easy"))
        await store.rate_game(f"g{n}", [name], lambda ps, name=name, rating=rating, rd=rd, n=n: [
            change(ps[name][1], f"g{n}", rating, rd, 1.0, 10.0)])

    everyone = await store.leaderboard("connect4", 10)
    assert [(who.name, r.rating) for who, r in everyone] == [
        ("Bob", 1800.0), ("Ann", 1700.0), ("Dan", 1650.0), ("Cat", 1600.0)]
    certain = await store.leaderboard("connect4", 2, max_rd=110.0)
    assert [who.id for who, _ in certain] == ["ann", "dan"]
    assert await store.leaderboard("othello", 10) == []


async def test_scores_against_levels_are_counted_from_the_players_side(store: Store) -> None:
    await people(store, "ann")
    await store.save_game(finished("g1", ("ann", None), 1, level="easy"))
    await store.save_game(finished("g2", (None, "ann"), 3, level="easy"))  # the AI won
    await store.save_game(finished("g3", (None, "ann"), 0, level="easy"))
    await store.save_game(finished("g4", ("ann", None), -5, level="hard"))
    aborted = GameRecord("g5", "connect4", ("ann", None), "hard", 1, "aborted", "", 1.0,
                         None, "aborted", 2.0)
    await store.save_game(aborted)

    scores = {(s.level, s.wins, s.draws, s.losses)
              for s in await store.scores_against_levels("ann")}
    assert scores == {("easy", 1, 1, 1), ("hard", 0, 0, 1)}


async def test_two_servers_rating_at_once_rate_a_game_once_and_lose_no_update(
    pg_url: str,
) -> None:
    """As two nodes of a cluster might, each with its own store on one PostgreSQL: one game
    rated by both at once, and another game of the same player at the same time."""
    rounds = 4
    async with opened_sql_store(pg_url) as one, opened_sql_store(pg_url) as two:
        await people(one, "ann", "bob")
        games = ["g0"] + [f"g{k}{half}" for k in range(rounds) for half in "ab"]
        for game_id in games:
            await one.save_game(finished(game_id, ("ann", "bob"), 1))
        asked: list[str] = []

        def plus_ten(game_id: str):  # type: ignore[no-untyped-def]
            def rate(ps: Ratings) -> list[RatingChangeRecord]:
                asked.append(game_id)
                ann = ps["ann"][1]
                return [change(ann, game_id, ann.rating + 10, 300.0, 1.0, 200.0)]
            return rate

        await one.rate_game("g0", ["ann", "bob"], plus_ten("g0"))  # ann's row exists now
        for k in range(rounds):
            asked.clear()
            a, b = f"g{k}a", f"g{k}b"
            await asyncio.gather(one.rate_game(a, ["ann", "bob"], plus_ten(a)),
                                 two.rate_game(a, ["ann", "bob"], plus_ten(a)),
                                 two.rate_game(b, ["bob", "ann"], plus_ten(b)))
            assert sorted(asked) == [a, b], "each game was rated once, by one of the two"

        ann = (await two.ratings_of("ann"))[0]
        assert (ann.rating, ann.games) == (1500.0 + 10 * len(games), len(games)), \
            "no update was lost"
