"""``discus worker``: find AI moves for every node of a cluster, on any machine.

Named ``remote_worker`` because it is the far end of ``server.engines.queued``: the nodes it
serves run elsewhere and reach it only through Redis (``server.engines.stream``), unlike the
engine processes a pool starts for itself (``server.engines.engine_process``).

A worker is a local ``AiPool`` (its engine processes, watchdog and quick fallback, exactly
as a single server runs them) fed from the Redis job stream through the consumer group
(``server.engines.stream`` says why Streams). It reads at most as many jobs as it has idle
processes, so a busy worker leaves the rest of the stream to others.

A worker that dies holds its jobs unacknowledged. Every live worker renews the entries it
holds (``XCLAIM ... JUSTID`` resets their idle time) every ``renew`` seconds, and claims
entries idle longer than ``claim_idle`` seconds (``XAUTOCLAIM``): only a dead or cut-off
worker's jobs stay idle that long. A claimed job is searched in what is left of its hard
time since it was first started (``keys.ai_started``), so the asking node's deadline holds;
with too little left it is dropped, and the node plays its quick move.

With the servers' database (``database_url``) a worker's idle processes also prove the
positions people reach, as a server's own do (``server.engines.idle_proving``): a live job takes the
process back at once; each round holds a Redis lock (``keys.idle_proving_lock``), so the
cluster's workers never prove the same batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import secrets
import signal
import socket
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from redis.exceptions import LockError, RedisError

from server.engines.idle_proving import IdleProver
from server.engines.local import AiPool
from server.engines.messages import (
    AiJob,
    Answered,
    CacheCounts,
    Failed,
    Message,
    Posted,
    Progress,
    Started,
    Thinking,
    WorkerAlive,
    encode,
)
from server.engines.pool import CacheSettings
from server.engines.stream import (
    REPLIES_MAXLEN,
    REPLIES_TTL_SECONDS,
    ensure_group,
    entry,
    read,
)
from server.settings import IdleProving
from server.storage import keys
from server.storage.config import async_redis
from server.storage.sql_store import SqlStore

log = logging.getLogger(__name__)

DEFAULT_CLAIM_IDLE = 3.0
"""Seconds a held job may go unrenewed before another worker takes it over."""
DEFAULT_RENEW = 1.0
"""Seconds between a worker's renewals of the jobs it holds (and of its live-worker key)."""
WORKER_TTL_SECONDS = 10
STOP_GRACE_SECONDS = 5.0
"""Seconds past one renewal that a stopping worker waits for its renewals to end."""
MIN_SECONDS_LEFT = 0.05
"""A claimed job with less hard time left than this is not worth starting."""


class Worker:
    """One ``discus worker``: ``await run()`` until ``stop()``."""

    def __init__(self, redis_url: str, processes: int | None = None,
                 database_url: str | None = None, prefix: str = keys.DEFAULT_PREFIX,
                 games: Sequence[str] | None = None,
                 claim_idle: float = DEFAULT_CLAIM_IDLE, renew: float = DEFAULT_RENEW,
                 pool: AiPool | None = None, heartbeat: Path | None = None,
                 idle_proving: IdleProving | None = None) -> None:
        self.prefix = prefix
        self.claim_idle = claim_idle
        self.renew = renew
        self.heartbeat = heartbeat
        """A file touched after each renewal that reached Redis (a container's healthcheck
        reads its age)."""
        self.name = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.pool = pool or AiPool(processes=processes, games=games,
                                   cache=CacheSettings(redis_url, database_url, prefix))
        self.jobs_done = 0
        self._redis_url = redis_url
        # Any: redis-py's stubs type stream replies as str | int, not as the nested lists they are.
        self._client: Any = None
        self._held: dict[str, asyncio.Task[None]] = {}
        self._freed = asyncio.Event()
        """Set when a held job is settled: there is room for another."""
        self._stopping = asyncio.Event()
        self._finished = asyncio.Event()
        """Set once the held jobs are answered: the renewals end."""
        self._database_url = database_url
        self.idle_proving = idle_proving or IdleProving()
        """Off unless enabled (``discus worker`` turns it on with a database)."""
        self.prover: IdleProver | None = None

    def stop(self) -> None:
        """Take no more jobs; ``run`` returns once the held ones are answered."""
        self._stopping.set()
        self._freed.set()

    async def run(self, ready: asyncio.Event | None = None) -> None:
        self._client = async_redis(self._redis_url)
        try:
            await ensure_group(self._client, self.prefix)
            await self.pool.start(wait_ready=True, timeout=self.pool.warm_up_timeout)
            renewing = asyncio.create_task(self._renew_forever(), name="discus-worker-renew")
            proving = asyncio.create_task(self._prove_while_idle(), name="discus-worker-prove")
            log.info("AI worker %s: %d processes, taking jobs", self.name, self.pool.size)
            if ready is not None:
                ready.set()
            try:
                await self._take_jobs()
                if self._held:
                    await asyncio.gather(*self._held.values(), return_exceptions=True)
            finally:
                await self._end(renewing, proving)
                await self._client.delete(keys.ai_worker(self.prefix, self.name))
        finally:
            await self.pool.close()
            await self._client.aclose(close_connection_pool=True)

    async def _end(self, renewing: asyncio.Task[None], proving: asyncio.Task[None]) -> None:
        """End the renewals without hanging on them: they stop at their next turn even if
        a cancel is lost inside a Redis call (a stopping worker once waited 30 s here for a
        cancelled renewal), and one still running after that is left, with a warning. The
        proving ends by itself once ``stop`` is called."""
        self._finished.set()
        renewing.cancel()
        _, pending = await asyncio.wait({renewing}, timeout=self.renew + STOP_GRACE_SECONDS)
        if pending:
            log.warning("AI worker %s: its renewals did not end when stopped", self.name)
        await asyncio.gather(proving, return_exceptions=True)

    async def _prove_while_idle(self) -> None:
        """Idle proving (``server.engines.idle_proving``) on this worker's pool, reading the stored
        games from the servers' database, until ``stop``; nothing without a database, when
        turned off, or with one process (never kept from live jobs)."""
        if not self.idle_proving.enabled or self._database_url is None:
            return
        store = SqlStore(self._database_url, migrate=False)  # the servers own the schema
        try:
            await store.open()
            self.prover = IdleProver(store, self.pool, self.idle_proving, self._stopping,
                                     lock=self._round_lock)
            await self.prover.run()
        except Exception:
            log.exception("idle proving stopped")
        finally:
            await store.close()

    @contextlib.asynccontextmanager
    async def _round_lock(self, game: str, seconds: float) -> AsyncIterator[bool]:
        """Whether this worker holds the cluster's idle-proving round of ``game`` (expiring
        after ``seconds`` should it die holding it)."""
        assert self._client is not None
        lock = self._client.lock(keys.idle_proving_lock(self.prefix, game), timeout=seconds,
                                 blocking=False)
        try:
            held = bool(await lock.acquire())
        except RedisError:
            held = False
        try:
            yield held
        finally:
            if held:
                with contextlib.suppress(RedisError, LockError):
                    await lock.release()

    def _idle(self) -> int:
        return self.pool.size - len(self._held)

    async def _take_jobs(self) -> None:
        assert self._client is not None
        stream = keys.ai_jobs(self.prefix)
        next_claim = 0.0
        while not self._stopping.is_set():
            if self._idle() <= 0:
                self._freed.clear()
                await self._freed.wait()
                continue
            try:
                if time.monotonic() >= next_claim:
                    next_claim = time.monotonic() + self.renew
                    _, claimed, *_ = await self._client.xautoclaim(
                        stream, keys.AI_GROUP, self.name, int(self.claim_idle * 1000),
                        count=self._idle())
                    for entry_id, fields in claimed:
                        self._hold(entry_id, fields, claimed=True)
                    if self._idle() <= 0:
                        continue
                batches = await self._client.xreadgroup(
                    keys.AI_GROUP, self.name, {stream: ">"}, count=self._idle(),
                    block=int(self.renew * 1000))
            except RedisError:
                log.warning("reading AI jobs failed; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for _, entries in batches or []:
                for entry_id, fields in entries:
                    self._hold(entry_id, fields, claimed=False)

    def _hold(self, entry_id: bytes, fields: dict[bytes, bytes] | None, claimed: bool) -> None:
        key = entry_id.decode()
        if key in self._held:
            return
        task = asyncio.create_task(self._answer(key, fields, claimed))
        self._held[key] = task
        task.add_done_callback(lambda _: self._release(key))

    def _release(self, key: str) -> None:
        self._held.pop(key, None)
        self._freed.set()

    async def _answer(self, entry_id: str, fields: dict[bytes, bytes] | None,
                      claimed: bool) -> None:
        assert self._client is not None
        if not fields:
            await self._settle(entry_id)  # deleted while a dead worker held it
            return
        try:
            posted = read(fields, Posted)
        except ValueError:
            log.exception("AI job %s is not a job; dropped", entry_id)
            await self._settle(entry_id)
            return
        assert isinstance(posted, Posted)
        job_id, replies = posted.job_id, keys.ai_replies(self.prefix, posted.node)
        sending: set[asyncio.Task[None]] = set()
        try:
            job = await self._job(entry_id, posted, claimed)
            if job is None:
                return
            await self._reply(replies, Started(job_id, time.time()))

            def progress(p: Progress) -> None:  # already coalesced by the engine processes
                task = asyncio.create_task(self._reply(replies, Thinking(job_id, p)))
                sending.add(task)
                task.add_done_callback(sending.discard)

            answer = await self.pool.think(job, progress)
            await asyncio.gather(*sending, return_exceptions=True)
            await self._reply(replies, Answered(job_id, answer))
            self.jobs_done += 1
        except Exception as exc:
            log.exception("AI job %s failed", entry_id)
            try:
                await self._reply(replies, Failed(job_id, type(exc).__name__))
            except RedisError:
                pass
        finally:
            await self._settle(entry_id)

    async def _job(self, entry_id: str, posted: Posted, claimed: bool) -> AiJob | None:
        """The job to search, its level's clock cut to what is left of its hard time when it
        was started before; None when that is next to nothing."""
        assert self._client is not None
        level = posted.job.level
        started_key = keys.ai_started(self.prefix)
        now = time.time()
        if not claimed and now > posted.start_by:
            log.info("AI job %s was read too late; its node has played a quick move", entry_id)
            return None
        first = await self._client.hget(started_key, entry_id) if claimed else None
        if first is None:
            await self._client.hset(started_key, entry_id, now)
            return posted.job
        left = float(first) + level.hard_time - now
        if left < MIN_SECONDS_LEFT:
            log.info("claimed AI job %s has no time left; dropped", entry_id)
            return None
        hard = min(level.hard_time, left)
        level = dataclasses.replace(level, hard_time=hard, soft_time=min(level.soft_time, hard))
        log.info("AI job %s claimed from a silent worker, %.2fs left", entry_id, left)
        return dataclasses.replace(posted.job, level=level)

    async def _reply(self, stream: str, message: Message) -> None:
        assert self._client is not None
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.xadd(stream, entry(message), maxlen=REPLIES_MAXLEN, approximate=True)
            pipe.expire(stream, REPLIES_TTL_SECONDS)
            await pipe.execute()

    async def _settle(self, entry_id: str) -> None:
        """Acknowledge and delete the job: nobody needs it any more."""
        assert self._client is not None
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.xack(keys.ai_jobs(self.prefix), keys.AI_GROUP, entry_id)
                pipe.xdel(keys.ai_jobs(self.prefix), entry_id)
                pipe.hdel(keys.ai_started(self.prefix), entry_id)
                await pipe.execute()
        except RedisError:
            log.warning("could not acknowledge AI job %s", entry_id, exc_info=True)

    async def _renew_forever(self) -> None:
        """Keep the held jobs from looking abandoned, and say this worker is alive."""
        assert self._client is not None
        while not self._finished.is_set():
            try:
                held = list(self._held)
                if held:
                    await self._client.xclaim(keys.ai_jobs(self.prefix), keys.AI_GROUP,
                                              self.name, 0, held, justid=True)
                stats = self.pool.snapshot()
                alive = WorkerAlive(self.name, stats.ready, len(self._held), self.jobs_done,
                                    stats.restarts, CacheCounts(**stats.cache))
                await self._client.set(keys.ai_worker(self.prefix, self.name), encode(alive),
                                       ex=WORKER_TTL_SECONDS)
                if self.heartbeat is not None:
                    self.heartbeat.touch()
            except RedisError:
                log.warning("renewing held AI jobs failed", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._finished.wait(), self.renew)


def run(redis_url: str, processes: int | None = None, database_url: str | None = None,
        heartbeat: Path | None = None, idle_proving: bool = True) -> None:
    """``discus worker``: run until SIGINT or SIGTERM, then answer the held jobs and stop.
    ``idle_proving`` (with a database): idle processes prove the positions people reach."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    async def main() -> None:
        worker = Worker(redis_url, processes, database_url, heartbeat=heartbeat,
                        idle_proving=IdleProving(enabled=idle_proving))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, worker.stop)
        await worker.run()

    asyncio.run(main())
