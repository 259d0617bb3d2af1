"""Alembic migrations go up and down on both databases, and match the models exactly."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command
from sqlalchemy import Connection, inspect

from server.storage import SqlStore, downgrade, migrate
from server.storage.config import create_engine
from server.storage.migrate import alembic_config

TABLES = {"players", "games", "moves", "levels", "tokens", "position_cache", "game_reviews",
          "accounts", "sessions", "ratings", "rating_history", "tournaments",
          "tournament_entrants", "tournament_pairings", "chat_lines", "chat_silences"}


def tables_and_indexes(url: str) -> tuple[set[str], set[str]]:
    def look(conn: Connection) -> tuple[set[str], set[str]]:
        found = inspect(conn)
        names = set(found.get_table_names())
        indexes = {i["name"] for t in names for i in found.get_indexes(t) if i["name"]}
        return names, indexes

    async def run() -> tuple[set[str], set[str]]:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(look)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def differences_from_models(url: str) -> None:
    """Raises if the migrated schema differs from the models (``alembic check``)."""

    def check(conn: Connection) -> None:
        config = alembic_config(url)
        config.attributes["connection"] = conn
        command.check(config)

    async def run() -> None:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                await conn.run_sync(check)
        finally:
            await engine.dispose()

    asyncio.run(run())


@pytest.fixture(params=["sqlite_url", "pg_url"])
def url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(request.param))


def test_migrating_up_creates_every_table_and_index(url: str) -> None:
    migrate(url)
    tables, indexes = tables_and_indexes(url)
    assert TABLES <= tables
    assert {"ix_games_player0_created", "ix_games_player1_created", "ix_games_unfinished"} <= (
        indexes
    )


def test_the_migrated_schema_matches_the_models(url: str) -> None:
    migrate(url)
    differences_from_models(url)


def test_migrating_twice_changes_nothing(url: str) -> None:
    migrate(url)
    migrate(url)
    assert TABLES <= tables_and_indexes(url)[0]


def test_migrating_down_removes_everything_and_up_again_restores_it(url: str) -> None:
    migrate(url)
    downgrade(url, "base")
    assert tables_and_indexes(url)[0] & TABLES == set()
    migrate(url)
    assert TABLES <= tables_and_indexes(url)[0]


async def test_opening_a_store_on_an_empty_database_migrates_it(url: str) -> None:
    store = SqlStore(url)
    await store.open()
    try:
        assert await store.load_game("none") is None
    finally:
        await store.close()


async def test_two_stores_opening_one_postgres_database_together_both_succeed(
    pg_url: str,
) -> None:
    stores = [SqlStore(pg_url) for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    for s in stores:
        await s.close()
