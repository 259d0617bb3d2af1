"""The difficulty levels every server plays with, read from the database and kept current.

``LevelBook`` holds a copy of every game's levels and the levels version it was read at.
``await book.levels()`` checks the version (one Redis GET when Redis is configured, else one
one-row SELECT; a check stands for ``FRESH_SECONDS``) and reloads only when it changed, so an
admin's edit is used from the next AI move on every server (on other servers, from the
moves asked a tenth of a second after it), with no restart. The AI job carries the
``Level`` itself to the worker process (``server.engines.AiJob``), so workers need no copy
of their own.

``await book.edit(game, name, changes, actor)`` validates, writes, audits and bumps the
version in one transaction, then mirrors the version to Redis and publishes it on the
levels channel; other servers' books, subscribed to that channel, reload at once (and call
their ``on_change`` listeners, e.g. to tell admin pages) instead of at their next check.

Usage (server glue)::

    book = LevelBook(store.engine, redis_url)
    await book.open()
    level = find(game, name, await book.levels())   # per AI move
    ...
    await book.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError
from sqlalchemy.ext.asyncio import AsyncEngine

from ai.levels import DEFAULT_LEVELS, Level
from server.storage import keys
from server.storage import repository as repo
from server.storage.config import reads_engine
from server.storage.repository import InvalidLevel, UnknownLevel
from server.storage.sqlite_thread import SqliteThread

log = logging.getLogger(__name__)

__all__ = ["AuditEntry", "InvalidLevel", "LevelBook", "LevelEdit",
           "UnknownLevel"]  # fmt: skip

Levels = Mapping[str, tuple[Level, ...]]

FRESH_SECONDS = 0.1
"""How long a check of the levels' version stands for the AI moves that come after it: an
edit made on another server is played from the moves asked this long after it."""

SUBSCRIBE_WAIT = 5.0
"""Seconds ``LevelBook.open`` waits for Redis to confirm the levels subscription."""


@dataclass(frozen=True)
class LevelEdit:
    """What one edit did: the level before and after, and the levels version it made."""

    game: str
    before: Level
    after: Level
    version: int


@dataclass(frozen=True)
class AuditEntry:
    """One audited change: ``before``/``after`` are ``Level.to_dict`` (None: created/deleted)."""

    id: int
    game: str
    level: str
    actor: str
    action: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    at: float


class LevelBook:
    """The current levels of every game, shared by all servers through the database.

    Call ``open()`` before use and ``close()`` at shutdown. Safe to use from one event loop
    (concurrent ``levels()`` calls share one reload).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        redis_url: str | None = None,
        prefix: str = keys.DEFAULT_PREFIX,
    ) -> None:
        self._engine = engine
        self._reads = reads_engine(engine)
        self._redis_url = redis_url
        self._prefix = prefix
        self._redis: aioredis.Redis | None = None
        self._listener: asyncio.Task[None] | None = None
        self._levels: Levels = {}
        self._version = -1
        self._reload_lock = asyncio.Lock()
        self._checked_at = -FRESH_SECONDS
        """When the last check that succeeded began (``time.monotonic``)."""
        self._check: asyncio.Future[Levels] | None = None
        self._listeners: list[Callable[[int], None]] = []
        self._subscribed = asyncio.Event()
        """Set once Redis has confirmed the subscription to the levels channel."""
        self._reader: SqliteThread | None = None
        """On a SQLite file, where the version is read before every AI move: one hand-off
        instead of aiosqlite's hops (``server.storage.sqlite_thread``)."""

    async def open(self) -> None:
        """Store the default levels of a registered game the database has none of
        (``ai.levels.DEFAULT_LEVELS``), read the levels; with Redis, mirror the version and
        listen for edits.

        With Redis it returns once the levels channel is subscribed (or after
        ``SUBSCRIBE_WAIT`` seconds if Redis does not answer; the listener keeps trying), and
        reads the levels after that, so no edit announced since falls between the read and
        the subscription.
        """
        if self._redis_url:
            self._redis = aioredis.Redis.from_url(self._redis_url)
            self._listener = asyncio.create_task(self._listen())
            try:
                await asyncio.wait_for(self._subscribed.wait(), SUBSCRIBE_WAIT)
            except TimeoutError:
                log.warning("levels channel not subscribed within %g s; going on without it",
                            SUBSCRIBE_WAIT)
        if self._reader is None:
            self._reader = SqliteThread.start(
                self._engine.url.render_as_string(hide_password=False), "discus-levels")
        async with self._engine.begin() as conn:
            seeded = await repo.seed_missing_levels(conn, DEFAULT_LEVELS, time.time())
        if seeded:
            log.info("stored the default levels of %s", ", ".join(seeded))
        await self._reload()
        await self._mirror(self._version)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None
        if self._reader is not None:
            reader, self._reader = self._reader, None
            await reader.close()

    @property
    def version(self) -> int:
        """The version of the levels held now (-1 before ``open``)."""
        return self._version

    def snapshot(self) -> Levels:
        """The levels held now, without checking for edits (for listings, not AI moves)."""
        return self._levels

    def on_change(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(new_version)`` after every reload caused by an edit (any server)."""
        self._listeners.append(listener)

    async def levels(self) -> Levels:
        """The current levels of every game (the shape of ``ai.levels.DEFAULT_LEVELS``),
        reloaded first if any server edited them before the last check, which began at most
        ``FRESH_SECONDS`` ago (this book's own edits: at once).

        Every AI move calls this. Callers that arrive while a check is under way share it,
        and one that began less than ``FRESH_SECONDS`` ago stands: under load (bench.load,
        1,000 clients) separate checks took 12% of the event loop; shared ones, at 10,000
        clients, were still a database read (a thread hand-off) for nearly every AI move.
        """
        if self._check is None:
            if time.monotonic() - self._checked_at < FRESH_SECONDS:
                return self._levels
            began = time.monotonic()
            self._check = asyncio.ensure_future(self._checked_levels())
            self._check.add_done_callback(lambda check: self._check_done(check, began))
        return await asyncio.shield(self._check)

    def _check_done(self, check: asyncio.Future[Levels], began: float) -> None:
        self._check = None
        if not check.cancelled() and check.exception() is None:
            self._checked_at = began

    async def _checked_levels(self) -> Levels:
        if await self.current_version() != self._version:
            await self._reload()
        return self._levels

    async def current_version(self) -> int:
        """The newest levels version: Redis's mirror when there is one, else the database's.
        A Redis that lost the key (restarted) or fails falls back to the database."""
        if self._redis is not None:
            try:
                raw = await self._redis.get(keys.levels_version(self._prefix))
                if raw is not None:
                    return int(raw)
            except RedisError as exc:
                log.warning("levels version from Redis failed, asking the database: %s", exc)
                return await self._database_version()
            version = await self._database_version()
            await self._mirror(version)
            return version
        return await self._database_version()

    async def _database_version(self) -> int:
        if self._reader is not None:
            return await self._reader.read(repo.levels_version_now)
        async with self._reads.connect() as conn:
            return await repo.read_levels_version(conn)

    async def _reload(self) -> None:
        async with self._reload_lock:
            async with self._engine.connect() as conn:
                version = await repo.read_levels_version(conn)
                if version == self._version:
                    return
                levels = await repo.list_all_levels(conn)
            changed = self._version >= 0
            self._levels, self._version = levels, version
        if changed:
            for listener in self._listeners:
                try:
                    listener(version)
                except Exception:
                    log.exception("levels listener failed")

    async def _mirror(self, version: int) -> None:
        """Raise Redis's copy of the version to ``version`` (never lower it: a slow server
        must not hide a newer edit)."""
        if self._redis is None:
            return
        name = keys.levels_version(self._prefix)
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(name)
                        stored = await pipe.get(name)
                        if stored is not None and int(stored) >= version:
                            await pipe.reset()
                            return
                        pipe.multi()
                        pipe.set(name, version)
                        await pipe.execute()
                        return
                    except aioredis.WatchError:
                        continue
        except RedisError as exc:
            log.warning("could not mirror the levels version to Redis: %s", exc)

    async def _listen(self) -> None:
        """Reload as soon as another server announces an edit (best effort: ``levels()``
        checks the version anyway, so a lost message only delays the reload to then)."""
        assert self._redis is not None
        channel = keys.levels_channel(self._prefix)
        while True:
            try:
                async with self._redis.pubsub() as pubsub:
                    await pubsub.subscribe(channel)
                    async for message in pubsub.listen():
                        if message.get("type") == "subscribe":  # Redis's confirmation
                            self._subscribed.set()
                        elif message.get("type") == "message":
                            if int(message["data"]) != self._version:
                                await self._reload()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError, ValueError) as exc:
                log.warning("levels channel lost (%s); listening again in 1s", exc)
                await asyncio.sleep(1.0)
            except Exception:
                log.exception("levels listener failed; listening again in 1s")
                await asyncio.sleep(1.0)

    # --- admin actions -------------------------------------------------------------------

    async def edit(self, game: str, name: str, changes: Mapping[str, Any], actor: str) -> LevelEdit:
        """Change one level (validated: ``InvalidLevel`` lists every problem, ``UnknownLevel``
        if there is no such level), audited in the same transaction; every server uses it
        from its next AI move."""
        async with self._engine.begin() as conn:
            before, after, version = await repo.update_level(
                conn, game, name, dict(changes), actor, time.time()
            )
        await self._mirror(version)
        if self._redis is not None:
            try:
                await self._redis.publish(keys.levels_channel(self._prefix), version)
            except RedisError as exc:
                log.warning("could not announce the levels edit: %s", exc)
        await self._reload()
        return LevelEdit(game, before, after, version)

    async def audit(self, game: str | None = None, limit: int = 100) -> list[AuditEntry]:
        """Audited changes, newest first."""
        async with self._engine.connect() as conn:
            rows = await repo.list_level_audit(conn, game, limit)
        return [
            AuditEntry(
                id=row["id"],
                game=row["game"],
                level=row["level"],
                actor=row["actor"],
                action=row["action"],
                before=row["before"],
                after=row["after"],
                at=row["created_at"],
            )
            for row in rows
        ]
