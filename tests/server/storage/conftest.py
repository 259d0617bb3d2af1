"""Real databases for storage tests: each test gets its own PostgreSQL database (dropped
afterwards), its own SQLite file, and its own Redis key prefix (deleted afterwards). Those of
``database_url`` (and so ``store``) are copies of ones migrated once a session; ``pg_url``,
``sqlite_url`` and ``sql_url`` are empty, as a first start finds them."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest
import redis.asyncio as aioredis

from server.storage import SqlStore
from server.storage.memory import MemoryStore
from server.storage.migrate import migrate
from server.storage.store import Store

PG_HOST = os.environ.get("DISCUS_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("DISCUS_TEST_PG_PORT", "5432"))
PG_USERS = ("postgres", "root")
REDIS_URL = os.environ.get("DISCUS_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


async def _admin_connection() -> tuple[asyncpg.Connection, str]:
    errors = []
    for user in PG_USERS:
        try:
            conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=user, database="postgres")
            return conn, user
        except (OSError, asyncpg.PostgresError) as exc:
            errors.append(f"{user}: {exc}")
    pytest.fail(f"PostgreSQL at {PG_HOST}:{PG_PORT} refused every user: {'; '.join(errors)}")


async def create_database(template: str | None = None) -> tuple[str, str]:
    """A fresh, uniquely named database, empty or a copy of the database ``template``
    (which nobody may be connected to): (async SQLAlchemy URL, name)."""
    conn, user = await _admin_connection()
    name = f"discus_test_{uuid.uuid4().hex[:16]}"
    copy = "" if template is None else f' TEMPLATE "{template}"'
    try:
        await conn.execute(f'CREATE DATABASE "{name}"{copy}')
    finally:
        await conn.close()
    return f"postgresql+asyncpg://{user}@{PG_HOST}:{PG_PORT}/{name}", name


async def create_migrated_template() -> str:
    """The name of a new database migrated to the newest schema, to copy with
    ``create_database(template=...)``: a copy costs about half of running every migration
    again on an empty one (0.15 s against 0.27 s here). Drop it with ``drop_database``."""
    url, name = await create_database()
    store = SqlStore(url)
    await store.open()
    await store.close()
    return name


@asynccontextmanager
async def migrated_copy(backend: str, folder: Path, sqlite_file: Path,
                        pg_template: str) -> AsyncIterator[str]:
    """A database of one test's own at the newest schema (``backend`` "sqlite": a copy of
    ``sqlite_file`` in ``folder``; else a PostgreSQL copy of ``pg_template``, dropped after)."""
    if backend == "sqlite":
        path = folder / "discus.sqlite3"
        shutil.copy2(sqlite_file, path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    url, name = await create_database(template=pg_template)
    try:
        yield url
    finally:
        await drop_database(name)


def migrated_sqlite_file(path: Path) -> Path:
    """A SQLite file at ``path`` migrated to the newest schema, to copy for each test that
    wants one (a copy takes under a millisecond; migrating takes 0.09 s here)."""
    migrate(f"sqlite+aiosqlite:///{path}")
    assert not path.with_name(path.name + "-wal").exists(), "a copy would miss the WAL"
    return path


async def drop_database(name: str) -> None:
    conn, _ = await _admin_connection()
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """The URL of a PostgreSQL database that exists for this test only."""
    url, name = await create_database()
    try:
        yield url
    finally:
        await drop_database(name)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def database_url(backend: str, tmp_path: Path, migrated_sqlite: Path,
                       migrated_postgres: str) -> AsyncIterator[str | None]:
    """A URL for the parametrised backend (None for the in-memory store): a database of this
    test's own, already at the newest schema (a copy of the session's ``migrated_sqlite`` or
    ``migrated_postgres``). Tests of the migrations use ``sqlite_url`` and ``pg_url``."""
    if backend == "memory":
        yield None
        return
    async with migrated_copy(backend, tmp_path, migrated_sqlite, migrated_postgres) as url:
        yield url


@asynccontextmanager
async def opened_sql_store(url: str) -> AsyncIterator[SqlStore]:
    """A migrated ``SqlStore`` at ``url``, closed afterwards."""
    store = SqlStore(url)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture(params=["sqlite_url", "pg_url"])
def sql_url(request: pytest.FixtureRequest) -> str:
    """A fresh SQLite file, then a fresh PostgreSQL database: the two SQL backends."""
    return str(request.getfixturevalue(request.param))


@pytest.fixture
async def sql_store(sql_url: str) -> AsyncIterator[SqlStore]:
    async with opened_sql_store(sql_url) as store:
        yield store


@pytest.fixture
async def store(database_url: str | None) -> AsyncIterator[Store]:
    """An open store of every kind: MemoryStore, SqlStore on SQLite, SqlStore on PostgreSQL."""
    s: Store = MemoryStore() if database_url is None else SqlStore(database_url)
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A key prefix owned by this test; every key under it is deleted afterwards."""
    import redis

    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    try:
        names = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if names:
            client.delete(*names)
    finally:
        client.close()


async def drop_keys(prefix: str) -> None:
    """Delete every key under ``prefix`` in the shared Redis (what a test's nodes left)."""
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        names = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
        if names:
            await client.delete(*names)
    finally:
        await client.aclose()


@pytest.fixture
def redis_url() -> str:
    """The real Redis the cache tests use (shared: tests touch only their own prefix)."""
    return REDIS_URL


@pytest.fixture
async def redis_client() -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        yield client
    finally:
        await client.aclose()
