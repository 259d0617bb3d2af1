"""Levels are data: seeded by the migration, edited only when valid, every edit audited and
seen by every server from its next AI move."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from sqlalchemy import inspect

from ai.levels import DEFAULT_LEVELS, find
from server.storage import SqlStore, downgrade, keys, migrate
from server.storage import levels as level_storage
from server.storage import repository as repo
from server.storage.config import create_engine
from server.storage.levels import InvalidLevel, LevelBook, UnknownLevel
from tests import thirdgame

NEW_TABLES = {"level_audit", "levels_version", "calibration_runs", "calibration_results"}


@pytest.fixture(params=["sqlite_url", "pg_url"])
def url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(request.param))


@pytest.fixture
async def stores(url: str) -> AsyncIterator[tuple[SqlStore, SqlStore]]:
    """Two stores on one database, as two servers would have."""
    one, two = SqlStore(url), SqlStore(url)
    await one.open()
    await two.open()
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


@pytest.fixture
async def books(stores: tuple[SqlStore, SqlStore]) -> AsyncIterator[tuple[LevelBook, LevelBook]]:
    one, two = LevelBook(stores[0].engine), LevelBook(stores[1].engine)
    await one.open()
    await two.open()
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


async def test_the_migration_seeds_exactly_the_default_levels(
    books: tuple[LevelBook, LevelBook],
) -> None:
    # Fails when ai.levels.DEFAULT_LEVELS changes: ship the new defaults as a new migration.
    levels = await books[0].levels()
    assert {game: list(ladder) for game, ladder in levels.items()} == {
        game: sorted(ladder, key=lambda lv: lv.order) for game, ladder in DEFAULT_LEVELS.items()
    }
    assert books[0].version == 1


async def test_an_edit_is_audited_and_seen_by_another_server_at_its_next_move(
    books: tuple[LevelBook, LevelBook], monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = 1.0  # longer than the shipped tenth of a second: an edit takes that on a busy machine
    monkeypatch.setattr(level_storage, "FRESH_SECONDS", fresh)
    here, there = books
    before = find("othello", "medium", await there.levels())
    edit = await here.edit("othello", "medium", {"soft_time": 0.2, "max_depth": 5}, "admin-1")
    assert (edit.before, edit.version) == (before, 2)
    assert (edit.after.soft_time, edit.after.max_depth, edit.after.hard_time) == (0.2, 5, 0.8)
    # No message, no restart: the other server's look finds the new version once its last
    # check is FRESH_SECONDS old (a check stands that long: one per AI move was a database
    # read per move at 10,000 players).
    assert find("othello", "medium", await there.levels()) == before
    await asyncio.sleep(fresh)
    assert find("othello", "medium", await there.levels()) == edit.after
    assert there.version == 2
    (entry,) = await there.audit()
    assert (entry.game, entry.level, entry.actor, entry.action) == (
        "othello", "medium", "admin-1", "update"
    )  # fmt: skip
    assert entry.before == before.to_dict() and entry.after == edit.after.to_dict()
    assert entry.at > 0


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"hard_time": 0.1}, "soft_time must not exceed hard_time"),
        ({"candidates": 0}, "candidates must be a whole number between 1 and 64"),
        ({"margin": -1}, "margin must be a whole number between 0 and 1,000"),
        ({"max_depth": 0}, "max_depth must be a whole number between 1 and 64"),
        ({"soft_time": -1.0, "hard_time": 99}, "above 0 and at most 60"),
        ({"nodes": 0}, "nodes must be a whole number between 1 and"),
        ({"candidates": "3"}, "candidates must be a whole number"),
        ({"candidates": 3.0}, "candidates must be a whole number"),
        ({"rails": "yes"}, "rails must be true or false"),
        ({"soft_time": None}, "soft_time must be a number"),
        ({"name": "hardest"}, "name cannot be changed"),
        ({"depth": 3}, "depth is not a level field"),
        ({"order": 4}, "order 4 is taken by 'expert'"),
    ],
)
async def test_impossible_edits_are_refused_with_a_reason_and_change_nothing(
    books: tuple[LevelBook, LevelBook], changes: dict[str, object], reason: str
) -> None:
    book = books[0]
    with pytest.raises(InvalidLevel, match=reason):
        await book.edit("connect4", "hard", changes, "admin-1")
    assert await book.current_version() == 1
    assert await book.audit() == []
    assert find("connect4", "hard", await books[1].levels()) == find("connect4", "hard")


async def test_every_problem_is_reported_at_once(books: tuple[LevelBook, LevelBook]) -> None:
    with pytest.raises(InvalidLevel) as caught:
        await books[0].edit("connect4", "easy", {"candidates": 0, "margin": -2}, "a")
    assert caught.value.problems == {
        "candidates": ["candidates must be a whole number between 1 and 64"],
        "margin": ["margin must be a whole number between 0 and 1,000"],
    }


async def test_an_unknown_level_is_its_own_error(books: tuple[LevelBook, LevelBook]) -> None:
    with pytest.raises(UnknownLevel):
        await books[0].edit("connect4", "grandmaster", {"margin": 0}, "a")


async def test_edits_from_two_servers_both_apply_in_turn(
    books: tuple[LevelBook, LevelBook],
) -> None:
    one, two = books
    await asyncio.gather(
        one.edit("connect4", "easy", {"margin": 3}, "admin-1"),
        two.edit("connect4", "easy", {"candidates": 5}, "admin-2"),
    )
    easy = find("connect4", "easy", await one.levels())
    assert (easy.margin, easy.candidates) == (3, 5)
    assert one.version == 3
    entries = await one.audit("connect4")
    assert {e.actor for e in entries} == {"admin-1", "admin-2"}
    # Each audit row's "before" is the previous row's "after": nothing was lost in between.
    older, newer = sorted(entries, key=lambda e: e.id)
    assert newer.before == older.after


async def test_with_redis_another_server_hears_of_an_edit_without_asking(
    stores: tuple[SqlStore, SqlStore], redis_url: str, redis_prefix: str
) -> None:
    here = LevelBook(stores[0].engine, redis_url, redis_prefix)
    there = LevelBook(stores[1].engine, redis_url, redis_prefix)
    await here.open()
    await there.open()  # returns subscribed: an edit from now on is heard
    heard = asyncio.Event()
    there.on_change(lambda version: heard.set())
    try:
        await here.edit("connect4", "expert", {"soft_time": 1.0}, "admin-1")
        await asyncio.wait_for(heard.wait(), 5)
        assert find("connect4", "expert", there.snapshot()).soft_time == 1.0
        assert there.version == 2
        client = aioredis.Redis.from_url(redis_url)
        try:
            assert await client.get(keys.levels_version(redis_prefix)) == b"2"
            # Redis lost the key (a restart): the version comes from the database again.
            await client.delete(keys.levels_version(redis_prefix))
            assert await there.current_version() == 2
            assert await client.get(keys.levels_version(redis_prefix)) == b"2"
        finally:
            await client.aclose()
    finally:
        await here.close()
        await there.close()


async def test_calibration_runs_are_stored_with_their_table(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    engine = stores[0].engine
    levels = [lv.to_dict() for lv in DEFAULT_LEVELS["connect4"][:3]]
    async with engine.begin() as conn:
        await repo.insert_calibration_run(conn, "r1", "connect4", "cli", 4, 9, "adjacent",
                                          levels, 10.0)  # fmt: skip
    async with engine.connect() as conn:
        (running,) = await repo.list_calibration_runs(conn, "connect4")
    assert (running["status"], running["pairs"], running["ratings"]) == ("running", [], None)
    pairs = [
        {"a": "easy", "b": "medium", "wins": 1, "draws": 1, "losses": 2},
        {"a": "beginner", "b": "easy", "wins": 0, "draws": 0, "losses": 4},
    ]
    ratings = [{"level": "beginner", "elo": 0.0, "error": 0.0, "games": 4, "score": 0.0}]
    async with engine.begin() as conn:
        await repo.finish_calibration_run(conn, "r1", "finished", pairs, ratings, 12.5, 30.0)
    async with stores[1].engine.connect() as conn:
        (run,) = await repo.list_calibration_runs(conn)
        assert await repo.list_calibration_runs(conn, "othello") == []
    assert (run["status"], run["seconds"], run["finished_at"], run["seed"]) == (
        "finished", 12.5, 30.0, 9
    )  # fmt: skip
    assert run["pairs"] == [pairs[1], pairs[0]]  # ladder order
    assert run["ratings"] == ratings and run["levels"] == levels


def table_names(url: str) -> set[str]:
    async def run() -> set[str]:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        finally:
            await engine.dispose()

    return asyncio.run(run())


def count_levels(url: str) -> int:
    async def run() -> int:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return sum(len(ladder) for ladder in (await repo.list_all_levels(conn)).values())
        finally:
            await engine.dispose()

    return asyncio.run(run())


def test_migration_0002_goes_down_to_0001_and_up_again(url: str) -> None:
    migrate(url)
    assert NEW_TABLES <= table_names(url)
    assert count_levels(url) == 10
    downgrade(url, "0001")
    assert table_names(url) & NEW_TABLES == set()
    assert "levels" in table_names(url) and count_levels(url) == 0
    migrate(url)
    assert NEW_TABLES <= table_names(url)
    assert count_levels(url) == 10


@pytest.mark.slow
async def test_with_redis_down_levels_and_edits_still_work_from_the_database(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    book = LevelBook(stores[0].engine, "redis://127.0.0.1:1/0", "discus-test-down")
    await book.open()
    try:
        edit = await book.edit("othello", "easy", {"margin": 5}, "admin-1")
        assert find("othello", "easy", await book.levels()).margin == 5
        assert await book.current_version() == edit.version == 2
    finally:
        await book.close()


async def test_a_game_registered_after_the_migration_gets_its_default_levels_stored(
    stores: tuple[SqlStore, SqlStore],
) -> None:
    thirdgame.register()
    try:
        first = LevelBook(stores[0].engine)
        await first.open()
        levels = await first.levels()
        assert levels[thirdgame.NAME] == thirdgame.LEVELS
        assert first.version == 2  # one version for the levels it stored
        # Stored, so an admin may edit them like any other, and a second server finds them.
        await first.edit(thirdgame.NAME, "beginner", {"margin": 1}, "admin-1")
        second = LevelBook(stores[1].engine)
        await second.open()
        assert find(thirdgame.NAME, "beginner", await second.levels()).margin == 1
        assert second.version == 3
        await first.close()
        await second.close()
    finally:
        thirdgame.unregister()
