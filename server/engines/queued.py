"""The server's AI moves found by ``discus worker`` processes on any machine, through Redis.

Named ``queued`` for what it does with a move: it queues the job on the Redis job stream
(``server.engines.stream`` says why Streams) rather than searching it on this machine
(``server.engines.local``). The worker side is ``server.engines.remote_worker``.

A node started with ``--workers 0`` (and ``REDIS_URL``) keeps no engine processes of its own:
``QueuedPool`` is a ``Pool`` like ``AiPool`` (``start``, ``think``, ``snapshot``, ``close``),
so the rooms cannot tell the difference, but each job is one ``Posted`` entry on a stream
every worker reads through one consumer group, and the replies (``Started``, ``Thinking``,
``Answered`` or ``Failed``, the same messages a local engine process sends) come back on a
stream of the node's own.

A busy cluster makes moves wait, never guess: while some worker is alive, a job waits its
turn on the stream (up to ``max_queue_wait``, a bound for a cluster that stopped taking
jobs). A job no worker has started within ``queue_timeout`` seconds while no worker is alive,
or not answered within its level's ``hard_time`` plus ``margin`` after a worker first started
it, is answered by ``quick_move`` in the node's quick-move thread, as the local pool does; the
job is taken off the stream then, and a late answer is ignored.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

import games as games_module
from server.engines.fair_queue import QueueWait
from server.engines.fallback import quick_answer_off_loop
from server.engines.messages import (
    COUNTED,
    REPLIES,
    AiAnswer,
    AiJob,
    Answered,
    Failed,
    Message,
    Posted,
    Progress,
    Started,
    Thinking,
)
from server.engines.pool import DEFAULT_MARGIN, DEFAULT_QUEUE_TIMEOUT, CacheSettings, PoolStats
from server.engines.stream import JOBS_MAXLEN, ensure_group, entry, live_workers, read
from server.storage import keys
from server.storage.config import async_redis

log = logging.getLogger(__name__)

WORKERS_REFRESH_SECONDS = 2.0
"""How often a node re-reads which workers are alive (for ``snapshot``, ``size`` and whether
a job that waits may go on waiting)."""

DEFAULT_MAX_QUEUE_WAIT = 120.0
"""Seconds a job may wait on the stream while workers are alive: past it the cluster is taken
to have stopped taking jobs (workers alive but stuck before reading), and the quick move
answers. A backlog that long means far too few workers for the games: ``docs/DEPLOY.md``."""


@dataclass
class _Pending:
    job: AiJob
    future: asyncio.Future[AiAnswer]
    on_progress: Callable[[Progress], None] | None
    queued_at: float
    timer: asyncio.TimerHandle | None = None
    started: bool = False
    entry_id: str | None = None
    """The job's entry on the stream once posted (taken off it if the quick move answers)."""


@dataclass
class _Workers:
    """The cluster's live workers as last read (``WORKERS_REFRESH_SECONDS``)."""

    processes: int = 0
    busy: int = 0
    restarts: int = 0
    cache: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))
    """The workers' position cache counters, summed over every job each has answered."""
    read_at: float = 0.0


class QueuedPool:
    """A ``Pool`` over the Redis job stream; see the module docstring.

    Call ``start()`` inside the running loop before ``think``; ``close()`` at shutdown.
    """

    def __init__(self, redis_url: str, games: Sequence[str] | None = None,
                 margin: float = DEFAULT_MARGIN, queue_timeout: float = DEFAULT_QUEUE_TIMEOUT,
                 prefix: str = keys.DEFAULT_PREFIX, database_url: str | None = None,
                 max_queue_wait: float = DEFAULT_MAX_QUEUE_WAIT) -> None:
        self.games = tuple(games if games is not None else games_module.names())
        self.margin = margin
        self.queue_timeout = queue_timeout
        self.max_queue_wait = max(max_queue_wait, queue_timeout)
        self.prefix = prefix
        self.cache: CacheSettings | None = CacheSettings(redis_url, database_url, prefix)
        """Where the workers' position cache is (they open it themselves; shown in stats)."""
        self.node = secrets.token_hex(6)
        self._redis_url = redis_url
        # Any: redis-py's stubs type stream replies as str | int, not as the nested lists they are.
        self._client: Any = None
        self._replies = keys.ai_replies(prefix, self.node)
        self._pending: dict[str, _Pending] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._quick: set[asyncio.Task[None]] = set()
        self._workers = _Workers()
        self._closing = False
        self.stats = PoolStats(workers=0, ready=0, busy=0, queued=0)

    @property
    def size(self) -> int:
        """Worker processes in the cluster (at least 1: what a calibration may keep busy)."""
        return max(1, self._workers.processes)

    async def start(self, wait_ready: bool = False, timeout: float = 120.0) -> None:
        """Connect and start reading answers; with ``wait_ready``, until a worker is live."""
        self._client = async_redis(self._redis_url)
        await ensure_group(self._client, self.prefix)
        self._reader = asyncio.create_task(self._read_replies(), name="discus-ai-replies")
        deadline = time.monotonic() + timeout
        await self._refresh_workers()
        while wait_ready and self._workers.processes == 0:
            if time.monotonic() > deadline:
                raise TimeoutError("no AI worker joined in time")
            await asyncio.sleep(0.1)
            await self._refresh_workers()

    async def think(self, job: AiJob, on_progress: Callable[[Progress], None] | None = None,
                    room: str | None = None,
                    on_wait: Callable[[QueueWait], None] | None = None) -> AiAnswer:
        """The move for ``job``, always legal and searched while a worker lives: it waits its
        turn while any worker is alive (at most ``max_queue_wait``), the quick move answering
        only after ``queue_timeout`` with no live worker, or hard time + ``margin`` after a
        worker started it and went silent. The cluster's workers take jobs in the order posted
        (``room`` is not used) and no place is known (``on_wait`` is never called)."""
        assert self._client is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        loop = asyncio.get_running_loop()
        job_id = f"{self.node}-{next(self._ids)}"
        pending = _Pending(job, loop.create_future(), on_progress, time.monotonic())
        self._pending[job_id] = pending
        pending.timer = loop.call_later(self.queue_timeout, self._waited, job_id)
        try:
            try:
                posted = Posted(job_id, self.node, job, time.time() + self.max_queue_wait)
                pending.entry_id = await self._client.xadd(
                    keys.ai_jobs(self.prefix), entry(posted), maxlen=JOBS_MAXLEN,
                    approximate=True)
            except RedisError:
                log.warning("could not queue an AI job; playing a quick move", exc_info=True)
                self._fall_back(job_id, "Redis refused the job")
            return await pending.future
        finally:
            self._forget(job_id)

    def _forget(self, job_id: str) -> None:
        pending = self._pending.pop(job_id, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()

    def _resolve(self, job_id: str, answer: AiAnswer) -> None:
        pending = self._pending.get(job_id)
        if pending is None or pending.future.done():
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self.stats.jobs += 1
        self.stats.fallbacks += answer.fallback
        self.stats.from_cache += answer.cached
        self.stats.seconds.append(time.monotonic() - pending.queued_at)
        pending.future.set_result(answer)

    def _waited(self, job_id: str) -> None:
        """``queue_timeout`` passed and no worker started the job: it waits on while a worker
        is alive (within ``max_queue_wait``); else the quick move answers."""
        pending = self._pending.get(job_id)
        if pending is None or pending.future.done() or pending.started:
            return
        left = pending.queued_at + self.max_queue_wait - time.monotonic()
        if self._workers.processes > 0 and left > 0:
            pending.timer = asyncio.get_running_loop().call_later(
                min(self.queue_timeout, left), self._waited, job_id)
            return
        why = "no worker is alive" if self._workers.processes == 0 else (
            f"no worker started it within {self.max_queue_wait:.0f}s")
        self._fall_back(job_id, why)

    def _fall_back(self, job_id: str, why: str) -> None:
        """Answer with ``quick_move`` (off the loop); a worker's answer after this is ignored."""
        pending = self._pending.get(job_id)
        if pending is None or pending.future.done():
            return
        log.warning("AI job %s answered by the quick move: %s", job_id, why)
        started = time.perf_counter()
        job = pending.job
        if not pending.started and pending.entry_id is not None:
            self._withdraw(pending.entry_id)

        async def answer() -> None:
            try:
                move = await quick_answer_off_loop(job.game, job.moves, job.seed)
            except Exception as exc:  # not even a position: the job itself is wrong
                if not pending.future.done():
                    pending.future.set_exception(exc)
                return
            self._resolve(job_id, AiAnswer(move, None, None, None,
                                           time.perf_counter() - started, fallback=True))

        task = asyncio.get_running_loop().create_task(answer())
        self._quick.add(task)
        task.add_done_callback(self._quick.discard)

    def _withdraw(self, entry_id: str) -> None:
        """Take a job the quick move answered off the stream, so no worker spends a search
        on it (best effort: a worker that already read it searches it, and the answer is
        ignored)."""
        assert self._client is not None

        async def withdraw() -> None:
            try:
                await self._client.xdel(keys.ai_jobs(self.prefix), entry_id)
            except RedisError:
                log.warning("could not take AI job %s off the stream", entry_id)

        task = asyncio.get_running_loop().create_task(withdraw())
        self._quick.add(task)
        task.add_done_callback(self._quick.discard)

    async def _read_replies(self) -> None:
        """Read this node's reply stream for as long as the pool runs; reconnect on errors."""
        assert self._client is not None
        last = "0"
        while not self._closing:
            try:
                if time.monotonic() - self._workers.read_at > WORKERS_REFRESH_SECONDS:
                    await self._refresh_workers()
                batches = await self._client.xread({self._replies: last}, count=256, block=500)
            except RedisError:
                log.warning("reading AI answers failed; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for _, entries in batches:
                for entry_id, fields in entries:
                    last = entry_id
                    try:
                        self._on_reply(read(fields, *REPLIES))
                    except Exception:
                        log.exception("a bad AI reply was ignored")
            if batches:
                # Read entries are of no further use; the TTL covers a node that vanished.
                await self._client.xtrim(self._replies, minid=last)

    def _on_reply(self, reply: Message) -> None:
        assert isinstance(reply, Started | Thinking | Answered | Failed)
        job_id = reply.job_id
        pending = self._pending.get(job_id)
        if pending is None or pending.future.done():
            return
        if isinstance(reply, Started):
            if not pending.started:  # a claimed-again job keeps the first start's deadline
                pending.started = True
                if pending.timer is not None:
                    pending.timer.cancel()
                limit = pending.job.level.hard_time + self.margin
                pending.timer = asyncio.get_running_loop().call_later(
                    limit, self._fall_back, job_id, f"no answer within {limit:.1f}s")
        elif isinstance(reply, Thinking):
            if pending.on_progress is not None:
                try:
                    pending.on_progress(reply.progress)
                except Exception:
                    log.exception("progress callback failed")
        elif isinstance(reply, Answered):
            # Its cache counts are not added here: the workers' own totals (``WorkerAlive``)
            # are what ``snapshot`` shows, and they already hold them.
            self._resolve(job_id, reply.answer)
        else:
            self._fall_back(job_id, f"the worker failed: {reply.error}")

    async def _refresh_workers(self) -> None:
        assert self._client is not None
        workers = await live_workers(self._client, self.prefix)
        self._workers = _Workers(
            processes=sum(w.processes for w in workers),
            busy=sum(w.busy for w in workers),
            restarts=sum(w.restarts for w in workers),
            cache={name: sum(getattr(w.cache, name) for w in workers) for name in COUNTED},
            read_at=time.monotonic(),
        )

    def snapshot(self) -> PoolStats:
        """This node's jobs, and the cluster's live workers as last read (their cache
        counters too: those count every node's jobs)."""
        self.stats.workers = self.stats.ready = self._workers.processes
        self.stats.busy = self._workers.busy
        self.stats.restarts = self._workers.restarts
        self.stats.cache = dict(self._workers.cache)
        self.stats.queued = sum(not p.started for p in self._pending.values())
        return self.stats

    def pids(self) -> list[int | None]:
        return []  # the processes are the workers', on other machines

    async def close(self) -> None:
        """Answer every job still waiting with a quick move, then disconnect."""
        self._closing = True
        for job_id in list(self._pending):
            self._fall_back(job_id, "the server is stopping")
        if self._quick:
            await asyncio.gather(*self._quick, return_exceptions=True)
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._client is not None:
            try:
                await self._client.delete(self._replies)
            except RedisError:
                pass
            await self._client.aclose(close_connection_pool=True)
