"""Durable storage: SQL games and players, and the shared position cache.

The server calls exactly these::

    store = open_store(database_url)          # a Store; await store.open() before use
    cache = await open_cache(redis_url, store)  # PositionCache (Redis + SQL, or LRU + SQL)

``discus migrate`` calls ``migrate(url)``. With no URL (and no ``$DATABASE_URL``) everything
lives in an SQLite file under ``$DISCUS_DATA_DIR`` (default ``./data``), which migrates itself
when opened. Room logic never imports this package; only the server glue and workers do.
"""

from __future__ import annotations

from server.storage.cache import (
    CachedResult,
    PositionCache,
    SyncPositionCache,
    open_cache,
    open_sync_cache,
)
from server.storage.config import database_url, redis_url
from server.storage.migrate import downgrade, main_migrate, migrate
from server.storage.sql_store import SqlStore
from server.storage.store import Store

__all__ = [
    "CachedResult",
    "PositionCache",
    "SqlStore",
    "SyncPositionCache",
    "database_url",
    "downgrade",
    "main_migrate",
    "migrate",
    "open_cache",
    "open_store",
    "open_sync_cache",
    "redis_url",
]


def open_store(url: str | None = None) -> Store:
    """The SQL store for ``url`` (else ``$DATABASE_URL``, else the SQLite file); not yet
    connected: ``await store.open()`` connects and makes the schema current."""
    return SqlStore(url)
