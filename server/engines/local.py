"""A pool of AI engine processes on this machine: the server's own, or a ``discus worker``'s.

Named ``local`` for where its engines run, beside ``queued`` (the server's jobs go to
``discus worker`` processes elsewhere, through Redis). The code that runs inside each process
is ``server.engines.engine_process``; this module is the parent side.

``AiPool`` keeps one process per core (by default), each warmed up (the engines' JIT compiled
or loaded from cache) before it takes work. ``await pool.think(job, on_progress)`` queues a
job, calls ``on_progress`` with finished search iterations (at most one each
``engine_process.PROGRESS_EVERY`` seconds; none for a quick level's quick search), and
returns an ``AiAnswer`` (with the last iteration's figures). A process that runs past the
level's hard deadline plus ``margin`` seconds, hangs while warming up (past
``warm_up_timeout``), or dies, is killed and replaced, and the move is made anyway by
``quick_move`` (``server.engines.fallback``: a shallow search of a few milliseconds in a
thread of the server process, never its event loop; rails kept: win now if possible, else do
not allow a win in one). A job gets the same quick answer when no worker is ready at all:
every job until a first process is ready (on a first start, which compiles the engines for
about a minute, the fallback plays ``rails_move``, the rules alone, until a ready process has
filled numba's cache, then its shallow search), and a job that waited ``queue_timeout`` while
every worker was dead or being replaced.

A long queue is never a reason for the quick move: past capacity a job waits its turn in a
``FairQueue`` (``server.engines.fair_queue``: round-robin across rooms, oldest first within
one), and its ``on_wait`` is told its place and estimated wait (``QueueWait``). With ``W``
ready workers and every level's hard time at most ``H``, a job with ``n`` jobs ahead of it
starts within ``(n // W + 1) * (H + margin)`` seconds, since a worker that runs past its
job's hard time plus ``margin`` is replaced (that job, and only it, gets the quick move).

Parent and processes talk over a duplex pipe in ``server.engines.messages`` (the same
encoding as the Redis stream's); the parent reads with ``loop.add_reader`` so no thread is
needed on the server side.

Low-priority tasks (a game review, the analysis board: ``run_task``) go to a process only
when no move waits and another ready process stays idle, so a live game's move finds one at
once; and when moves come in faster than the idle processes take them, a task is told to give
its process back (``GiveBack``): a Connect Four proof under way stops within milliseconds
(the task's stop array), any other step at its end, and the task goes back to the head of
the tasks' queue. See ``AiPool.run_task``. A background task (``run_background``: the idle
workers' proofs) is lower still: it starts only when the whole pool is idle and is given up
as soon as a move or another task comes.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import os
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import games as games_module
from server.engines import engine_process
from server.engines.fair_queue import (
    TELL_EVERY,
    FairQueue,
    MoveTimes,
    QueuedJob,
    QueueWait,
    due_waits,
    tell,
    tell_started,
    wait_for_new,
)
from server.engines.fallback import QUICK_THREAD, prepare_quick_move, quick_answer_off_loop
from server.engines.low_priority import (
    BackgroundYielded,
    LowPriority,
    Task,
    TaskFailed,
)
from server.engines.messages import (
    FROM_ENGINE,
    AiAnswer,
    AiJob,
    Answered,
    Failed,
    GiveBack,
    Message,
    Progress,
    Ready,
    Stop,
    TaskDone,
    TaskGivenBack,
    TaskRaised,
    Think,
    Thinking,
    decode,
    encode,
)
from server.engines.pool import (
    DEFAULT_MARGIN,
    DEFAULT_QUEUE_TIMEOUT,
    CacheSettings,
    PoolStats,
)

log = logging.getLogger(__name__)

MAX_FAILED_STARTS = 3
"""Processes in a row that die before warming up, after which no more are started."""

DEFAULT_WARM_UP_TIMEOUT = 600.0
"""Seconds a new process may take to warm up before it is presumed hung and replaced (a
first start compiles every engine kernel: about a minute on a busy two-core machine)."""

STOP_SECONDS = 10.0
"""How long ``AiPool.close`` waits for its processes to exit by themselves before killing
them: a stopping process first writes its buffered durable cache rows, which took over 2 s
on a loaded machine (the earlier limit, which lost them)."""

TELL_CHUNK = 50
"""Waiting moves told where they stand in one turn of the event loop. Past capacity one pass
tells hundreds (``bench.load``, 10,000 clients: about 650 every half second, some 18 ms of
frames in one go, which every acknowledgement arriving meanwhile waited out)."""

READ_BYTES = 1 << 16
"""Most read from one process's pipe at a time (many answers and progress steps)."""


def take_frames(unread: bytearray) -> list[bytes]:
    """Take every whole message out of ``unread`` (bytes read from a pipe written by
    ``Connection.send_bytes``: each a 4-byte big-endian length, or -1 and an 8-byte length,
    then the bytes); a partial one stays for the next read."""
    frames = []
    while len(unread) >= 4:
        (size,) = struct.unpack_from("!i", unread)
        start = 4
        if size == -1:
            if len(unread) < 12:
                break
            (size,) = struct.unpack_from("!Q", unread, 4)
            start = 12
        if len(unread) < start + size:
            break
        frames.append(bytes(unread[start:start + size]))
        del unread[:start + size]
    return frames


@dataclass
class _Worker:
    """One engine process, as the pool sees it (parent side)."""

    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    ready: bool = False
    job: QueuedJob | None = None
    task: Task | None = None
    yielding: bool = False
    """The process was asked to give its task back (``GiveBack``)."""
    watchdog: asyncio.TimerHandle | None = None
    missing: tuple[str, ...] = ()
    unread: bytearray = field(default_factory=bytearray)
    """What was read from the pipe past its last whole message."""

    def send(self, message: Message) -> None:
        self.conn.send_bytes(encode(message))


class AiPool(LowPriority):
    """A fixed number of warmed-up engine processes and a queue of moves to find.

    Call ``start()`` inside the running loop before ``think``; ``close()`` at shutdown.
    """

    def __init__(
        self,
        processes: int | None = None,
        games: Sequence[str] | None = None,
        margin: float = DEFAULT_MARGIN,
        queue_timeout: float = DEFAULT_QUEUE_TIMEOUT,
        search: str = "ai:search",
        warm_up: str = "ai:warm_up",
        start_method: str = "spawn",
        cache: CacheSettings | None = None,
        warm_up_timeout: float = DEFAULT_WARM_UP_TIMEOUT,
        nice: int = engine_process.ENGINE_NICE,
    ) -> None:
        self.size = processes or os.cpu_count() or 1
        self.nice = nice
        """How much lower the engine processes' CPU priority is than the server's."""
        self.warm_up_timeout = warm_up_timeout
        self.cache = cache
        self.games = tuple(games if games is not None else games_module.names())
        self.margin = margin
        self.queue_timeout = queue_timeout
        self._paths = (search, warm_up)
        self._context = multiprocessing.get_context(start_method)
        self._workers: list[_Worker] = []
        self._queue = FairQueue()
        self._times = MoveTimes()
        self._telling: asyncio.TimerHandle | None = None
        self._dispatching: asyncio.Handle | None = None
        """A ``_dispatch`` due at the loop's next turn (after the answers read in this one)."""
        self._tasks: collections.deque[Task] = collections.deque()
        self._background: collections.deque[Task] = collections.deque()
        self._quick_pending: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._closing = False
        self._failed_starts = 0
        self._engines_asked = False
        self._engines_ready = False
        """Whether the quick fallback searches with the engines (loaded in this process once
        a worker is ready, ``_prepare_engines``) or plays ``rails_move``."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stats = PoolStats(workers=0, ready=0, busy=0, queued=0)

    async def start(self, wait_ready: bool = False, timeout: float = 120.0) -> None:
        """Start the worker processes; with ``wait_ready``, until all have warmed up."""
        self._loop = asyncio.get_running_loop()
        for _ in range(self.size):
            self._spawn()
        # Off the loop: the server's own fallback loads the rules' kernels now, the engines'
        # once a worker is ready (then from numba's cache, never compiling them here: on a
        # first start that took the server a minute, and held up its own event loop).
        self._loop.run_in_executor(QUICK_THREAD, prepare_quick_move, self.games, False)
        if wait_ready:
            deadline = time.monotonic() + timeout
            while not all(w.ready for w in self._workers):
                if time.monotonic() > deadline:
                    raise TimeoutError("AI workers did not warm up in time")
                await asyncio.sleep(0.05)

    def _spawn(self) -> None:
        assert self._loop is not None
        parent, child = self._context.Pipe(duplex=True)
        process = self._context.Process(  # type: ignore[attr-defined]
            target=engine_process.main,
            args=(child, self.games, *self._paths, self.cache, self.nice),
            name="discus-ai-worker", daemon=True,
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self._workers.append(worker)
        self._loop.add_reader(parent.fileno(), self._on_readable, worker)
        # A worker hung while warming up (rather than dead) would never be replaced without
        # this: it counts as a failed start, like one that dies.
        worker.watchdog = self._loop.call_later(
            self.warm_up_timeout, self._replace, worker,
            f"not warmed up within {self.warm_up_timeout:.0f}s",
        )

    def _on_readable(self, worker: _Worker) -> None:
        """One read of everything the process has written (``READ_BYTES`` at most: the loop
        calls again for the rest), each whole message handled, then one ``_dispatch`` for
        every process that answered in this turn of the loop."""
        try:
            data = os.read(worker.conn.fileno(), READ_BYTES)
        except OSError:
            data = b""
        if not data:
            self._replace(worker, "the worker process died")
            return
        worker.unread += data
        for frame in take_frames(worker.unread):
            self._on_message(worker, decode(frame, *FROM_ENGINE))
        if self._dispatching is None:
            assert self._loop is not None
            self._dispatching = self._loop.call_soon(self._dispatch)

    def _on_message(self, worker: _Worker, message: Message) -> None:
        if isinstance(message, Ready):
            self._finish_worker(worker)  # stops the warm-up watchdog
            worker.ready = True
            self._prepare_engines()
            worker.missing = message.missing
            log.info("AI worker %s warmed up in %.2fs", worker.process.pid, message.seconds)
            return
        if isinstance(message, TaskDone | TaskRaised | TaskGivenBack):
            task = worker.task
            if task is None or message.task_id != task.id:
                return
            self._finish_worker(worker)
            if isinstance(message, TaskGivenBack) and task.background:
                if not task.future.done():
                    task.future.set_exception(BackgroundYielded(
                        "the background task gave its worker back"))
            elif isinstance(message, TaskGivenBack):
                self._tasks.appendleft(task)  # first again once two workers are idle
            elif not task.future.done():
                if isinstance(message, TaskDone):
                    task.future.set_result(message.result)
                else:
                    task.future.set_exception(TaskFailed(message.error))
            return
        assert isinstance(message, Thinking | Answered | Failed)
        job = worker.job
        if job is None or message.job_id != job.id:
            return
        if isinstance(message, Thinking):
            if job.on_progress is not None:
                try:
                    job.on_progress(message.progress)
                except Exception:
                    log.exception("progress callback failed")
            return
        self._finish_worker(worker)
        if isinstance(message, Answered):
            if job.started_at is not None:
                self._times.add(job.job, time.monotonic() - job.started_at)
            for name, amount in message.answer.cache.as_dict().items():
                self.stats.cache[name] += amount
            self._resolve(job, message.answer)
        else:
            log.error("AI job %s failed: %s", job.id, message.error)
            self._answer_quickly(job)

    def _finish_worker(self, worker: _Worker) -> None:
        worker.job = None
        worker.task = None
        worker.yielding = False
        if worker.watchdog is not None:
            worker.watchdog.cancel()
            worker.watchdog = None

    def _resolve(self, job: QueuedJob, answer: AiAnswer) -> None:
        self.stats.jobs += 1
        self.stats.fallbacks += answer.fallback
        self.stats.from_cache += answer.cached
        self.stats.seconds.append(time.monotonic() - job.queued_at)
        if not job.future.done():
            job.future.set_result(answer)

    def _prepare_engines(self) -> None:
        """Once: load the engines for the quick fallback's search in this process (from the
        cache a ready worker filled); until that is done it plays ``rails_move``."""
        assert self._loop is not None
        if self._engines_asked:
            return
        self._engines_asked = True
        loading = self._loop.run_in_executor(QUICK_THREAD, prepare_quick_move, self.games)
        loading.add_done_callback(lambda _: setattr(self, "_engines_ready", True))

    def _answer_quickly(self, job: QueuedJob) -> None:
        """Answer ``job`` with ``quick_move``, searched in the quick-move thread; ``close``
        waits for answers still being found."""
        assert self._loop is not None
        started = time.perf_counter()

        async def answer() -> None:
            try:
                move = await quick_answer_off_loop(job.job.game, job.job.moves, job.job.seed,
                                                   self._engines_ready)
            except Exception as exc:  # not even a position: the job itself is wrong
                if not job.future.done():
                    job.future.set_exception(exc)
                return
            self._resolve(job, AiAnswer(move, None, None, None, time.perf_counter() - started,
                                        fallback=True))

        found = self._loop.create_task(answer())
        self._quick_pending.add(found)
        found.add_done_callback(self._quick_pending.discard)

    def _replace(self, worker: _Worker, why: str) -> None:
        """Kill ``worker``, answer its job quickly, and start a fresh process in its place."""
        assert self._loop is not None
        if worker not in self._workers:
            return
        log.warning("replacing AI worker %s: %s", worker.process.pid, why)
        self._workers.remove(worker)
        self._loop.remove_reader(worker.conn.fileno())
        job, task = worker.job, worker.task
        self._finish_worker(worker)
        if task is not None and not task.future.done():
            task.future.set_exception(TaskFailed(f"its AI worker was replaced: {why}"))
        worker.process.kill()
        worker.conn.close()
        self._loop.run_in_executor(None, worker.process.join, 5)
        if job is not None:
            self._answer_quickly(job)
        self._failed_starts = 0 if worker.ready else self._failed_starts + 1
        if self._failed_starts >= MAX_FAILED_STARTS:
            # Workers die before they are ready (a broken engine build): stop spawning them;
            # queued jobs are answered by ``quick_move`` when they time out.
            log.error("AI workers keep dying while warming up; running without them")
            self._prepare_engines()  # the quick fallback is all there is now
            self._dispatch()
            return
        if not self._closing:
            self.stats.restarts += 1
            self._spawn()
            self._dispatch()

    def _dispatch(self) -> None:
        assert self._loop is not None
        if self._dispatching is not None:
            self._dispatching.cancel()
            self._dispatching = None
        now = time.monotonic()
        for worker in self._workers:
            if not self._queue:
                break
            if not worker.ready or worker.job is not None or worker.task is not None:
                continue
            job = self._queue.pop()
            if job is None:
                break
            worker.job = job
            job.started_at = now
            worker.send(Think(job.id, job.job))
            limit = job.job.level.hard_time + self.margin
            worker.watchdog = self._loop.call_later(
                limit, self._replace, worker, f"no answer within {limit:.1f}s"
            )
            tell_started(job, self._times)
        # Without an engine to search them, jobs are answered by the quick move: every job
        # until a first worker is ready (a first start compiles the engines for about a
        # minute) or when there are no workers left, and jobs that waited ``queue_timeout``
        # while no worker was ready (all dead or being replaced; a replaced worker warms up
        # from numba's cache in a second or two). Busy workers are no reason: jobs wait.
        if not self._engines_asked or not self._workers:
            for job in self._queue.drain():
                self._answer_quickly(job)
        elif not any(w.ready for w in self._workers):
            for job in self._queue.pop_older_than(now - self.queue_timeout):
                self._answer_quickly(job)
        if self._queue and self._telling is None:
            self._telling = self._loop.call_later(TELL_EVERY / 2, self._tell_waiting)
        # Any move or task at all: background tasks give their workers back at once.
        if self._queue or self._tasks or any(
                w.job is not None or (w.task is not None and not w.task.background)
                for w in self._workers):
            for worker in self._workers:
                if worker.task is not None and worker.task.background and not worker.yielding:
                    worker.yielding = True
                    worker.send(GiveBack(worker.task.id))
        # Moves still waiting: workers running tasks give them back, one per waiting move.
        wanted = len(self._queue) - sum(w.yielding for w in self._workers)
        for worker in self._workers:
            if wanted <= 0:
                break
            if worker.task is not None and not worker.yielding:
                worker.yielding = True
                worker.send(GiveBack(worker.task.id))
                wanted -= 1
        self._dispatch_tasks()

    async def think(self, job: AiJob, on_progress: Callable[[Progress], None] | None = None,
                    room: str | None = None,
                    on_wait: Callable[[QueueWait], None] | None = None) -> AiAnswer:
        """The move for ``job``, always legal, within roughly its level's hard time once a
        worker is free (see the module docstring for the bound past capacity). ``room``
        keys the queue's fairness (None: the job is its own key); ``on_wait`` is told
        where the job stands while it waits (``QueueWait``)."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[AiAnswer] = self._loop.create_future()
        job_id = str(next(self._ids))
        entry = QueuedJob(job_id, job, future, on_progress, time.monotonic(),
                          room or f"job:{job_id}", on_wait)
        self._queue.push(entry)
        self._dispatch()
        timer = self._loop.call_later(self.queue_timeout + 0.01, self._dispatch)
        try:
            return await future
        finally:
            timer.cancel()

    def _running(self) -> list[QueuedJob | None]:
        """Each ready worker's job (None: free for a move, a task would give it back)."""
        return [w.job for w in self._workers if w.ready]

    def _tell_waiting(self) -> None:
        self._telling = None
        if self._queue:
            due = due_waits(self._queue, self._running(), self._times, time.monotonic())
            self._tell_some(due, 0)
            assert self._loop is not None
            self._telling = self._loop.call_later(TELL_EVERY / 2, self._tell_waiting)

    def _tell_some(self, due: list[tuple[QueuedJob, QueueWait]], start: int) -> None:
        """Tell ``TELL_CHUNK`` of ``due`` from ``start``, the rest at the loop's next turns;
        a job a worker took meanwhile, or answered, is not told it waits."""
        end = start + TELL_CHUNK
        for job, wait in due[start:end]:
            if job.started_at is None and not job.future.done():
                tell(job, wait)
        if end < len(due):
            assert self._loop is not None
            self._loop.call_soon(self._tell_some, due, end)

    def snapshot(self) -> PoolStats:
        self.stats.workers = len(self._workers)
        self.stats.ready = sum(w.ready for w in self._workers)
        self.stats.busy = sum(w.job is not None or w.task is not None for w in self._workers)
        self.stats.queued = len(self._queue)
        self.stats.wait_seconds = wait_for_new(self._queue.order(), self._running(),
                                               self._times, time.monotonic())
        return self.stats

    def pids(self) -> list[int | None]:
        return [w.process.pid for w in self._workers]

    async def close(self) -> None:
        """Stop every worker (politely, then by force) and answer queued jobs quickly."""
        self._closing = True
        for handle in (self._telling, self._dispatching):
            if handle is not None:
                handle.cancel()
        self._telling = self._dispatching = None
        for job in self._queue.drain():
            self._answer_quickly(job)
        while self._tasks or self._background:
            waiting = (self._tasks or self._background).popleft()
            if not waiting.future.done():
                waiting.future.set_exception(TaskFailed("the AI pool is closing"))
        for worker in list(self._workers):
            if self._loop is not None:
                self._loop.remove_reader(worker.conn.fileno())
            running, task = worker.job, worker.task
            self._finish_worker(worker)  # no watchdog may fire while the pool closes
            if task is not None and not task.future.done():
                task.future.set_exception(TaskFailed("the AI pool is closing"))
            if running is not None:
                self._answer_quickly(running)
            try:
                worker.send(Stop())
            except OSError:
                pass
        deadline = time.monotonic() + STOP_SECONDS
        for worker in self._workers:
            await asyncio.to_thread(worker.process.join, max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                await asyncio.to_thread(worker.process.join, 2.0)
            worker.conn.close()
        self._workers.clear()
        if self._quick_pending:
            await asyncio.gather(*self._quick_pending, return_exceptions=True)
