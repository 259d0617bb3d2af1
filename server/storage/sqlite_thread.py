"""One thread and its one sync connection to a SQLite file, for work the event loop hands
over whole: a batch of writes in one transaction (``sql_store``'s writer), or one quick read
(the store's reader, the level book's version check).

Why: through aiosqlite every statement, and the commit or rollback, is a hop between its
thread and the event loop, and under load each hop waits for a turn of the busy loop. Here a
whole write batch or read is one hand-off. In WAL mode a reader reads beside the writer and
sees every commit that has returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

from server.storage.config import create_sqlite_writer

T = TypeVar("T")


class SqliteThread:
    """Runs ``fn(conn, *args)`` on its own connection, one call at a time, in its thread."""

    def __init__(self, engine: Engine, name: str) -> None:
        self._engine = engine
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    @classmethod
    def start(cls, url: str, name: str) -> SqliteThread | None:
        """A thread on the SQLite file of ``url``; None for another database or an
        in-memory one (which a second connection would not see)."""
        engine = create_sqlite_writer(url)
        return None if engine is None else cls(engine, name)

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn`` in one transaction, committed (durable) before this returns."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._write, fn, args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn`` on the connection outside any transaction of its own (each statement
        sees what was committed before it)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._read, fn, args)

    def _write(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        with self._engine.begin() as conn:
            return fn(conn, *args)

    def _read(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        conn: Connection
        with self._engine.connect() as conn:
            return fn(conn, *args)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._engine.dispose)
        self._thread.shutdown(wait=True)
