"""Where the data lives: ``DATABASE_URL`` / ``REDIS_URL`` (flags win over the environment),
else an SQLite file in the data directory and in-process caches.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

DATA_DIR_ENV = "DISCUS_DATA_DIR"
SQLITE_FILE = "discus.sqlite3"
SQLITE_BUSY_MS = 10_000  # several processes (server, workers) share one SQLite file


def data_dir() -> Path:
    """``$DISCUS_DATA_DIR`` or ``./data``; created on first use, readable by its owner only
    (it holds the server's secret and, with SQLite, the password hashes)."""
    path = Path(os.environ.get(DATA_DIR_ENV) or "data")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    _owner_only(path, 0o700)
    return path


def _owner_only(path: Path, mode: int) -> None:
    """``path`` (created empty if it is a missing file) readable by its owner only; a path
    this user does not own is left as it is."""
    if mode == 0o600 and not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    try:
        os.chmod(path, mode)
    except PermissionError:
        pass


def database_url(url: str | None = None) -> str:
    """The SQLAlchemy async URL to use: ``url``, else ``$DATABASE_URL``, else the SQLite file.

    Plain ``postgres://``, ``postgresql://`` and ``sqlite:///`` URLs get their async driver.
    """
    raw = url or os.environ.get("DATABASE_URL") or ""
    if not raw:
        return f"sqlite+aiosqlite:///{(data_dir() / SQLITE_FILE).resolve()}"
    for plain, driver in (
        ("postgres://", "postgresql+asyncpg://"),
        ("postgresql://", "postgresql+asyncpg://"),
        ("sqlite://", "sqlite+aiosqlite://"),
    ):
        if raw.startswith(plain):
            return driver + raw[len(plain) :]
    if raw.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
        return raw
    raise ValueError(f"unsupported database URL {raw!r}: use postgresql://... or sqlite:///...")


def redis_url(url: str | None = None) -> str | None:
    """``url``, else ``$REDIS_URL``, else None (meaning: in-process caches)."""
    return url or os.environ.get("REDIS_URL") or None


REDIS_CONNECTIONS = 64
"""Connections one process's async Redis client opens at most."""


def async_redis(url: str, decode_responses: bool = False) -> Any:
    """An async Redis client whose commands wait for a free connection when all
    ``REDIS_CONNECTIONS`` are busy. redis-py's plain pool raises ``MaxConnectionsError``
    instead, past 100 connections: a burst of players' commands reached that."""
    import redis.asyncio as aioredis

    pool = aioredis.BlockingConnectionPool.from_url(
        url, max_connections=REDIS_CONNECTIONS, timeout=10, socket_connect_timeout=2.0,
        decode_responses=decode_responses)
    return aioredis.Redis(connection_pool=pool)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str) -> AsyncEngine:
    """An async engine; SQLite gets WAL, enforced foreign keys and fsync on every commit."""
    if not is_sqlite(url):
        # No pre-ping: it costs two extra round trips (BEGIN; ROLLBACK) on every checkout,
        # doubling the time to persist a move. A connection broken by a database restart fails
        # one call and is then replaced by the pool.
        return create_async_engine(url, pool_size=10, max_overflow=20, pool_recycle=1800)
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
        _owner_only(Path(database), 0o600)  # SQLite gives its -wal and -shm files the same
    # One async connection per process: SQLite has one writer at a time anyway, and queueing
    # in the pool is fair and immediate where competing connections would sleep in the busy
    # handler (a 16-game load run saw a 450 ms p99 with a pool, 2 ms without). The store's
    # hot writes (moves, games, players) and quick reads go through connections of
    # ``create_sqlite_writer``'s, one thread each.
    engine = create_async_engine(
        url,
        connect_args={"timeout": SQLITE_BUSY_MS / 1000},
        pool_size=1,
        max_overflow=0,
        pool_timeout=60,
    )
    event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def reads_engine(engine: AsyncEngine) -> AsyncEngine:
    """``engine`` for single reads: on PostgreSQL in autocommit (a read is then one round
    trip, not a BEGIN, the query and a ROLLBACK; asyncpg switches it without a statement),
    sharing the engine's pool; elsewhere the engine itself (aiosqlite would spend a hop
    switching each connection)."""
    if engine.dialect.name != "postgresql":
        return engine
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def create_sqlite_writer(url: str) -> Engine | None:
    """A sync engine on the same SQLite file, for the store's batched writes, or its quick
    reads, in a thread of their own (``sql_store``); None for an in-memory database, which a
    second connection would not see. Same pragmas as ``create_engine``: a commit is durable
    when it returns."""
    database = make_url(url).database
    if not is_sqlite(url) or not database or database == ":memory:":
        return None
    engine = sa_create_engine(
        f"sqlite:///{database}",
        connect_args={"timeout": SQLITE_BUSY_MS / 1000},
        pool_size=1,
        max_overflow=0,
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit is on disk when it returns (NORMAL in WAL survives a killed process but
    # not a power cut; "durable on return" means both).
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    cursor.close()
