"""The position cache shared by every AI worker and server: what searches learned, kept.

Two tiers. The hot tier is Redis (every key with a TTL; see ``keys``) or, without Redis, an
in-process LRU. The durable tier is the SQL ``position_cache`` table: only deep or exact
results go there, buffered and written in batches; a hot miss is looked up there and the hot
tier refilled, so the cache survives a Redis restart and grows with every game.

A worker calls the cache twice per job, never per search node: ``lookup`` at job start (the
root and its children, one round trip per tier) and ``save`` at job end (root and principal
variation). Positions are keyed canonically (``server.storage.symmetry``): a result saved
from one orientation is found from any symmetric one, with its best move turned to match.

The cache holds no AI policy: when a stored result may stand in for a search, and what a
search leaves to store, is ``ai.cached``'s to say; ``CachedResult`` is its type.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.exceptions import RedisError
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from ai.cached import CachedResult
from games.base import State
from server.storage import keys
from server.storage import repository as repo
from server.storage.config import redis_url as resolve_redis_url
from server.storage.symmetry import (
    Canonical,
    canonical,
    move_from_canonical,
    move_to_canonical,
)

log = logging.getLogger(__name__)

UNAVAILABLE = (RedisError, OSError, OperationalError, DBAPIError, asyncio.TimeoutError)
"""Errors that mean a tier is down for now (it reconnects by itself), not a bug."""

DURABLE_MIN_DEPTH = 10  # shallower, inexact results are cheap to recompute: hot tier only
BATCH_SIZE = 64  # durable rows buffered before one INSERT ... ON CONFLICT
BATCH_SECONDS = 5.0  # ... or this long after the oldest buffered row
LRU_ENTRIES = 200_000  # in-process hot tier, per process (about 200 bytes an entry)
LOWER, UPPER, EXACT = 1, 2, 3  # bounds, as in ai.tt: the score is a lower/upper bound, or exact


@dataclass(frozen=True)
class Entry:
    """What the tiers store: a result with its move as text in the canonical orientation."""

    depth: int
    score: int
    bound: int
    move: str | None
    exact: bool

    def better_than(self, other: Entry) -> bool:
        """Proven beats unproven, then the deeper wins. At equal depth a score exact at that
        depth beats a bound, then one with a best move beats one without (a root move's child
        is saved without one), then the newer wins. ``repository.save_cached_positions``
        applies the same rule in SQL. A proven bound (a weak solve's win or loss,
        ``ai.cached.CachedResult.proven_bound``) is not ``exact`` and deeper than any search,
        so it beats every depth-bounded result and no exact score; a proven floor (a position
        proven not lost, ``ai.cached.not_lost_result``), one shallower, beats the same and no
        proven bound."""
        if self.exact != other.exact:
            return self.exact
        if self.depth != other.depth:
            return self.depth > other.depth
        if (self.bound == EXACT) != (other.bound == EXACT):
            return self.bound == EXACT
        return self.move is not None or other.move is None

    def encode(self) -> str:
        return f"{self.depth}|{self.score}|{self.bound}|{self.move or ''}|{int(self.exact)}"

    @staticmethod
    def decode(raw: str | bytes) -> Entry:
        text = raw.decode() if isinstance(raw, bytes) else raw
        depth, score, bound, move, exact = text.split("|")
        return Entry(int(depth), int(score), int(bound), move or None, exact == "1")


class HotTier(Protocol):
    async def get_many(self, game: str, keys: Sequence[str]) -> list[Entry | None]: ...
    async def put_many(self, game: str, entries: dict[str, Entry]) -> None: ...
    async def count(self, counters: dict[str, int]) -> None: ...
    async def close(self) -> None: ...


class LruTier:
    """The hot tier when there is no Redis: one bounded dict per process."""

    def __init__(self, capacity: int = LRU_ENTRIES) -> None:
        self.capacity = capacity
        self._data: OrderedDict[tuple[str, str], Entry] = OrderedDict()

    async def get_many(self, game: str, keys: Sequence[str]) -> list[Entry | None]:
        found: list[Entry | None] = []
        for key in keys:
            entry = self._data.get((game, key))
            if entry is not None:
                self._data.move_to_end((game, key))
            found.append(entry)
        return found

    async def put_many(self, game: str, entries: dict[str, Entry]) -> None:
        for key, entry in entries.items():
            old = self._data.get((game, key))
            if old is None or entry.better_than(old):
                self._data[(game, key)] = entry
            self._data.move_to_end((game, key))
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)

    async def count(self, counters: dict[str, int]) -> None:
        return None

    async def close(self) -> None:
        self._data.clear()


class RedisTier:
    """The hot tier shared by every process: one MGET per lookup, one pipeline per write."""

    def __init__(self, client: Any, prefix: str = keys.DEFAULT_PREFIX) -> None:
        self.client = client
        self.prefix = prefix

    async def get_many(self, game: str, keys_: Sequence[str]) -> list[Entry | None]:
        if not keys_:
            return []
        raw = await self.client.mget([keys.position(self.prefix, game, k) for k in keys_])
        return [None if value is None else Entry.decode(value) for value in raw]

    async def put_many(self, game: str, entries: dict[str, Entry]) -> None:
        if not entries:
            return
        names = [keys.position(self.prefix, game, k) for k in entries]
        # Read first so a shallower result never replaces a deeper one another worker wrote;
        # a race between the two calls costs at most one overwritten entry, never a wrong one.
        old = await self.client.mget(names)
        pipe = self.client.pipeline(transaction=False)
        for name, entry, before in zip(names, entries.values(), old, strict=True):
            if before is None or entry.better_than(Entry.decode(before)):
                pipe.set(name, entry.encode(), ex=keys.POSITION_TTL_SECONDS)
            else:
                pipe.expire(name, keys.POSITION_TTL_SECONDS)
        await pipe.execute()

    async def count(self, counters: dict[str, int]) -> None:
        pipe = self.client.pipeline(transaction=False)
        for field, amount in counters.items():
            if amount:
                pipe.hincrby(keys.cache_stats(self.prefix), field, amount)
        await pipe.execute()

    async def shared_counters(self) -> dict[str, int]:
        raw = await self.client.hgetall(keys.cache_stats(self.prefix))
        return {
            (k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()
        }

    async def close(self) -> None:
        await self.client.aclose()


class SqlTier:
    """The durable tier: the ``position_cache`` table, read in one SELECT per lookup."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def get_many(self, game: str, keys_: Sequence[str]) -> dict[str, Entry]:
        async with self.engine.connect() as conn:
            rows = await repo.find_cached_positions(conn, game, keys_)
        return {key: Entry(*row) for key, row in rows.items()}

    async def put_many(self, rows: dict[tuple[str, str], Entry]) -> None:
        now = time.time()
        values = [
            {
                "game": game,
                "key": key,
                "depth": e.depth,
                "score": e.score,
                "bound": e.bound,
                "best_move": e.move,
                "exact": e.exact,
                "updated_at": now,
            }
            for (game, key), e in sorted(rows.items())  # sorted: no deadlocks between writers
        ]
        async with self.engine.begin() as conn:
            await repo.save_cached_positions(conn, values)


class PositionCache:
    """Look positions up and save what a search learned; see the module docstring.

    ``stats()`` gives this process's counters; ``shared_stats()`` adds the totals of every
    process using the same Redis.
    """

    def __init__(self, hot: HotTier, durable: SqlTier | None) -> None:
        self.hot = hot
        self.durable = durable
        self._pending: dict[tuple[str, str], Entry] = {}
        self._pending_since = 0.0
        self._counters = {
            "lookups": 0,
            "hot_hits": 0,
            "durable_hits": 0,
            "misses": 0,
            "saves": 0,
            "durable_writes": 0,
            "hot_errors": 0,
            "durable_errors": 0,
            "lookup_errors": 0,
            "save_errors": 0,
        }

    # -- by canonical key and move text (no game package needed) ------------------------------

    async def get_entries(self, game: str, wanted: Sequence[str]) -> list[Entry | None]:
        """Entries for canonical keys, hot tier first, then the durable one (refilling hot).

        A tier that is down (Redis restarting, database unreachable) counts as a miss and is
        logged, never raised: the search simply runs without what the cache would have said.
        """
        try:
            found = await self.hot.get_many(game, wanted)
        except UNAVAILABLE as exc:
            self._failed("hot", exc)
            found = [None] * len(wanted)
        missing = [k for k, e in zip(wanted, found, strict=True) if e is None]
        from_durable: dict[str, Entry] = {}
        if missing and self.durable is not None:
            try:
                from_durable = await self.durable.get_many(game, missing)
            except UNAVAILABLE as exc:
                self._failed("durable", exc)
        result = [
            e if e is not None else from_durable.get(k)
            for k, e in zip(wanted, found, strict=True)
        ]
        counts = {
            "lookups": len(wanted),
            "hot_hits": len(wanted) - len(missing),
            "durable_hits": len(from_durable),
            "misses": len(missing) - len(from_durable),
        }
        for field, amount in counts.items():
            self._counters[field] += amount
        try:
            if from_durable:
                await self.hot.put_many(game, from_durable)
            await self.hot.count(counts)
        except UNAVAILABLE as exc:
            self._failed("hot", exc)
        return result

    async def put_entries(self, game: str, entries: dict[str, Entry]) -> None:
        """Save entries under canonical keys: hot now, deep or exact ones durably in batches.
        Like lookups, a tier that is down is logged and skipped."""
        try:
            await self.hot.put_many(game, entries)
        except UNAVAILABLE as exc:
            self._failed("hot", exc)
        self._counters["saves"] += len(entries)
        if self.durable is None:
            return
        for key, entry in entries.items():
            if entry.exact or entry.depth >= DURABLE_MIN_DEPTH:
                old = self._pending.get((game, key))
                if old is None or entry.better_than(old):
                    if not self._pending:
                        self._pending_since = time.monotonic()
                    self._pending[(game, key)] = entry
        if len(self._pending) >= BATCH_SIZE or (
            self._pending and time.monotonic() - self._pending_since >= BATCH_SECONDS
        ):
            await self.flush()

    def _failed(self, tier: str, exc: BaseException) -> None:
        self._counters[f"{tier}_errors"] += 1
        log.warning("position cache: %s tier unavailable: %s", tier, exc)

    async def lookup_cells(
        self, game: str, positions: Sequence[tuple[Sequence[int | None], int]]
    ) -> list[Entry | None]:
        """Results for positions given as (cells, side to move), moves as text in each
        position's own orientation."""
        canon = [canonical(game, cells, to_move) for cells, to_move in positions]
        entries = await self.get_entries(game, [c.key for c in canon])
        return [
            None if e is None else _reorient(e, game, c, to_canonical=False)
            for c, e in zip(canon, entries, strict=True)
        ]

    async def save_cells(
        self, game: str, results: Sequence[tuple[Sequence[int | None], int, Entry]]
    ) -> None:
        """Save results for positions given as (cells, side to move, entry with text move)."""
        entries: dict[str, Entry] = {}
        for cells, to_move, entry in results:
            c = canonical(game, cells, to_move)
            stored = _reorient(entry, game, c, to_canonical=True)
            if c.key not in entries or stored.better_than(entries[c.key]):
                entries[c.key] = stored
        await self.put_entries(game, entries)

    # -- by game state (what the AI worker calls) ----------------------------------------------

    async def lookup(self, states: Sequence[State]) -> list[CachedResult | None]:
        """One result (or None) per state, best move as an int legal in that state."""
        out: list[CachedResult | None] = [None] * len(states)
        for game_name, indices in _by_game(states).items():
            game = _load(game_name)
            cells = [(game.cells(states[i]), states[i].to_move) for i in indices]
            for i, entry in zip(indices, await self.lookup_cells(game_name, cells), strict=True):
                if entry is not None:
                    move = None if entry.move is None else game.parse_move(states[i], entry.move)
                    out[i] = CachedResult(entry.depth, entry.score, entry.bound, move, entry.exact)
        return out

    async def save(self, results: Sequence[tuple[State, CachedResult]]) -> None:
        """Save (state, result) pairs: the root and the principal variation of a search."""
        states = [state for state, _ in results]
        for game_name, indices in _by_game(states).items():
            game = _load(game_name)
            rows = []
            for i in indices:
                state, r = results[i]
                move = None if r.move is None else game.format_move(r.move)
                entry = Entry(r.depth, r.score, r.bound, move, r.exact)
                rows.append((game.cells(state), state.to_move, entry))
            await self.save_cells(game_name, rows)

    # -- housekeeping ----------------------------------------------------------------------

    async def flush(self) -> None:
        """Write the buffered durable results now (``close`` does this too)."""
        if not self._pending or self.durable is None:
            return
        pending, self._pending = self._pending, {}
        try:
            await self.durable.put_many(pending)
        except UNAVAILABLE as exc:
            # Dropped, not retried: these results can be recomputed, and a worker must not
            # stall on a database that is down.
            self._failed("durable", exc)
            return
        self._counters["durable_writes"] += len(pending)

    def stats(self) -> dict[str, float]:
        """This process's counters and its hit rate (hot plus durable hits over lookups)."""
        c = self._counters
        hits = c["hot_hits"] + c["durable_hits"]
        return {**c, "hit_rate": hits / c["lookups"] if c["lookups"] else 0.0}

    async def shared_stats(self) -> dict[str, float]:
        """Counters summed over every process on the same Redis (this process's without)."""
        if not isinstance(self.hot, RedisTier):
            return self.stats()
        c = {k: 0 for k in ("lookups", "hot_hits", "durable_hits", "misses")}
        c.update(await self.hot.shared_counters())
        hits = c["hot_hits"] + c["durable_hits"]
        return {**c, "hit_rate": hits / c["lookups"] if c["lookups"] else 0.0}

    async def close(self) -> None:
        try:
            await self.flush()
        finally:
            await self.hot.close()


def _reorient(entry: Entry, game: str, c: Canonical, *, to_canonical: bool) -> Entry:
    if entry.move is None or c.symmetry == 0:
        return entry
    turn = move_to_canonical if to_canonical else move_from_canonical
    return Entry(entry.depth, entry.score, entry.bound, turn(game, entry.move, c.symmetry),
                 entry.exact)


def _by_game(states: Sequence[State]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, state in enumerate(states):
        groups.setdefault(state.game_name, []).append(i)
    return groups


def _load(name: str) -> Any:
    import games

    return games.load(name)


async def open_cache(
    redis_url: str | None = None,
    store: object | None = None,
    *,
    prefix: str = keys.DEFAULT_PREFIX,
    lru_entries: int = LRU_ENTRIES,
) -> PositionCache:
    """The position cache: Redis at ``redis_url`` (else ``$REDIS_URL``) or an in-process LRU,
    over the durable table of ``store`` when it is an open ``SqlStore``."""
    from server.storage.sql_store import SqlStore

    url = resolve_redis_url(redis_url)
    hot: HotTier
    if url:
        import redis.asyncio as redis

        client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
        try:
            await client.ping()
        except UNAVAILABLE as exc:
            # Not fatal: lookups count as misses until Redis is back (the client reconnects).
            where = url.rsplit("@", 1)[-1]  # never log a password
            log.warning("position cache: Redis at %s unavailable at start: %s", where, exc)
        hot = RedisTier(client, prefix)
    else:
        hot = LruTier(lru_entries)
    durable = SqlTier(store.engine) if isinstance(store, SqlStore) else None
    return PositionCache(hot, durable)


class SyncPositionCache:
    """The same cache for synchronous code (AI worker processes): it runs its own event loop.

    Open it once per process with ``open_sync_cache``; not for use inside a running loop.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, cache: PositionCache, store: Any) -> None:
        self._loop = loop
        self.cache = cache
        self._store = store

    def lookup(self, states: Sequence[State], timeout: float | None = None
               ) -> list[CachedResult | None]:
        """As ``PositionCache.lookup``; past ``timeout`` seconds every state is a miss (a
        worker must not spend its move's time waiting for a slow tier)."""
        try:
            return self._loop.run_until_complete(
                asyncio.wait_for(self.cache.lookup(states), timeout))
        except TimeoutError:
            self.cache._failed("lookup", TimeoutError(f"no answer in {timeout} s"))
            return [None] * len(states)

    def save(self, results: Sequence[tuple[State, CachedResult]],
             timeout: float | None = None) -> None:
        """As ``PositionCache.save``; past ``timeout`` seconds the rest is dropped."""
        try:
            self._loop.run_until_complete(asyncio.wait_for(self.cache.save(results), timeout))
        except TimeoutError:
            self.cache._failed("save", TimeoutError(f"no answer in {timeout} s"))

    def flush(self, timeout: float | None = None) -> None:
        """As ``PositionCache.flush``; past ``timeout`` seconds the batch is dropped (it can
        be recomputed; a worker must not stall on a slow database)."""
        try:
            self._loop.run_until_complete(asyncio.wait_for(self.cache.flush(), timeout))
        except TimeoutError:
            self.cache._failed("flush", TimeoutError(f"no answer in {timeout} s"))

    def stats(self) -> dict[str, float]:
        return self.cache.stats()

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self.cache.close())
            if self._store is not None:
                self._loop.run_until_complete(self._store.close())
        finally:
            self._loop.close()


def open_sync_cache(
    redis_url: str | None = None,
    database_url: str | None = None,
    *,
    durable: bool = True,
    prefix: str = keys.DEFAULT_PREFIX,
) -> SyncPositionCache:
    """A cache for a worker process: Redis (or LRU) plus the durable table at
    ``database_url`` (else ``$DATABASE_URL``, else the SQLite file). The server must have
    opened its store (which migrates) before starting workers; workers never migrate."""
    from server.storage.sql_store import SqlStore

    loop = asyncio.new_event_loop()
    store = SqlStore(database_url, migrate=False) if durable else None
    try:
        if store is not None:
            loop.run_until_complete(store.open())
        cache = loop.run_until_complete(open_cache(redis_url, store, prefix=prefix))
    except BaseException:
        if store is not None:
            loop.run_until_complete(store.close())
        loop.close()
        raise
    return SyncPositionCache(loop, cache, store)
