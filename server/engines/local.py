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
not allow a win in one). A job that waits in the queue longer than
``queue_timeout`` gets the same quick answer, and so does every job until a first process
is ready: on a first start, which compiles the engines for about a minute, the fallback plays
``rails_move`` (the rules alone, pure Python) until a ready process has filled numba's cache,
then its shallow search.

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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import games as games_module
from server.engines import engine_process
from server.engines.fallback import QUICK_THREAD, prepare_quick_move, quick_answer_off_loop
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
    RunTask,
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

TASK_SECONDS = 600.0
"""Seconds a low-priority task may run on a process before the process is presumed stuck."""


@dataclass
class _Job:
    id: str
    job: AiJob
    future: asyncio.Future[AiAnswer]
    on_progress: Callable[[Progress], None] | None
    queued_at: float


@dataclass
class _Task:
    id: str
    path: str
    args: tuple[Any, ...]
    future: asyncio.Future[Any]
    background: bool = False


class TaskFailed(RuntimeError):
    """A low-priority task raised in its worker, or its worker died or was stopped."""


class BackgroundYielded(TaskFailed):
    """A background task gave its worker back to a move or a task that came: not run
    again (its caller decides what to do next)."""


@dataclass
class _Worker:
    """One engine process, as the pool sees it (parent side)."""

    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    ready: bool = False
    job: _Job | None = None
    task: _Task | None = None
    yielding: bool = False
    """The process was asked to give its task back (``GiveBack``)."""
    watchdog: asyncio.TimerHandle | None = None
    missing: tuple[str, ...] = ()

    def send(self, message: Message) -> None:
        self.conn.send_bytes(encode(message))


class AiPool:
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
    ) -> None:
        self.size = processes or os.cpu_count() or 1
        self.warm_up_timeout = warm_up_timeout
        self.cache = cache
        self.games = tuple(games if games is not None else games_module.names())
        self.margin = margin
        self.queue_timeout = queue_timeout
        self._paths = (search, warm_up)
        self._context = multiprocessing.get_context(start_method)
        self._workers: list[_Worker] = []
        self._queue: collections.deque[_Job] = collections.deque()
        self._tasks: collections.deque[_Task] = collections.deque()
        self._background: collections.deque[_Task] = collections.deque()
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
            target=engine_process.main, args=(child, self.games, *self._paths, self.cache),
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
        try:
            while worker.conn.poll():
                self._on_message(worker, decode(worker.conn.recv_bytes(), *FROM_ENGINE))
        except (EOFError, OSError):
            self._replace(worker, "the worker process died")

    def _on_message(self, worker: _Worker, message: Message) -> None:
        if isinstance(message, Ready):
            self._finish_worker(worker)  # stops the warm-up watchdog
            worker.ready = True
            self._prepare_engines()
            worker.missing = message.missing
            log.info("AI worker %s warmed up in %.2fs", worker.process.pid, message.seconds)
            self._dispatch()
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
            self._dispatch()
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
            for name, amount in message.answer.cache.as_dict().items():
                self.stats.cache[name] += amount
            self._resolve(job, message.answer)
        else:
            log.error("AI job %s failed: %s", job.id, message.error)
            self._answer_quickly(job)
        self._dispatch()

    def _finish_worker(self, worker: _Worker) -> None:
        worker.job = None
        worker.task = None
        worker.yielding = False
        if worker.watchdog is not None:
            worker.watchdog.cancel()
            worker.watchdog = None

    def _resolve(self, job: _Job, answer: AiAnswer) -> None:
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

    def _answer_quickly(self, job: _Job) -> None:
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
        now = time.monotonic()
        while self._queue and self._queue[0].future.done():
            self._queue.popleft()
        for worker in self._workers:
            if not self._queue:
                break
            if not worker.ready or worker.job is not None or worker.task is not None:
                continue
            job = self._queue.popleft()
            worker.job = job
            worker.send(Think(job.id, job.job))
            limit = job.job.level.hard_time + self.margin
            worker.watchdog = self._loop.call_later(
                limit, self._replace, worker, f"no answer within {limit:.1f}s"
            )
        # Jobs nobody could take for too long are answered without the engine; so is every
        # job until a first worker is ready (a first start compiles the engines for about a
        # minute) or when there are no workers left. A worker replaced later warms up from
        # numba's cache in a second or two: jobs wait for it as for any busy worker.
        warming = not self._engines_asked or not self._workers
        while self._queue and (warming or now - self._queue[0].queued_at > self.queue_timeout):
            job = self._queue.popleft()
            self._answer_quickly(job)
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

    def _dispatch_tasks(self) -> None:
        """Give low-priority tasks to idle workers while no move waits and, after each, at
        least one ready worker is still idle: a live move never waits for a task to start."""
        assert self._loop is not None
        while self._tasks and self._tasks[0].future.done():
            self._tasks.popleft()
        while self._tasks and not self._queue and not self._closing:
            idle = [w for w in self._workers if w.ready and w.job is None and w.task is None]
            if len(idle) < 2:
                return
            task = self._tasks.popleft()
            self._start_task(idle[-1], task)
            while self._tasks and self._tasks[0].future.done():
                self._tasks.popleft()
        self._dispatch_background()

    def _dispatch_background(self) -> None:
        """Start a background task only on a pool wholly idle: no move or task waiting or
        running, every worker ready, and at least two of them (one stays free for a move)."""
        assert self._loop is not None
        while self._background and self._background[0].future.done():
            self._background.popleft()
        if not self._background or self._queue or self._tasks or self._closing:
            return
        if any(w.job is not None or w.task is not None for w in self._workers):
            return
        idle = [w for w in self._workers if w.ready]
        if len(idle) < 2 or len(idle) < len(self._workers):
            return
        self._start_task(idle[-1], self._background.popleft())

    def _start_task(self, worker: _Worker, task: _Task) -> None:
        """Hand ``task`` to an idle ``worker``, with a watchdog that replaces the process if
        no answer comes within ``TASK_SECONDS``."""
        assert self._loop is not None
        worker.task = task
        worker.send(RunTask(task.id, task.path, task.args))
        worker.watchdog = self._loop.call_later(
            TASK_SECONDS, self._replace, worker, f"no task answer within {TASK_SECONDS:.0f}s"
        )

    @property
    def runs_tasks(self) -> bool:
        """Whether ``run_task`` can ever run a task: only with two workers or more (one is
        always left idle for live moves)."""
        return self.size >= 2

    async def run_task(self, path: str, *args: Any) -> Any:
        """Run ``module:function(*args)`` in a worker process at low priority and return
        its result (``TaskFailed`` if it raised there, or its worker died).

        A task waits while any move waits, and starts only on a worker whose taking leaves
        another ready worker idle: a live game's move finds a free worker at once. When more
        moves come than idle workers, running tasks are told to yield: the function must
        take the keywords ``check`` (a callable to call between steps: it raises once the
        worker is wanted back) and ``stop`` (a stop array to hand the engines' kernels,
        raised then too); the task is run again from the start later (so it must be safe to
        repeat). A task may wait long on a busy pool (forever on
        a pool of one worker: check ``runs_tasks``). Cancelling the await drops a task not
        yet started."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[Any] = self._loop.create_future()
        self._tasks.append(_Task(str(next(self._ids)), path, tuple(args), future))
        self._dispatch()
        return await future

    async def run_background(self, path: str, *args: Any) -> Any:
        """Run ``module:function(*args)`` as ``run_task`` does, but lower than any task: it
        waits until no move or task waits or runs (and every worker is ready, two at least),
        and once started is given back at the first move or task that comes, raising
        ``BackgroundYielded`` (it is not run again: the caller asks again later; the function
        must keep what it did as it goes). For work that only uses idle time, such as
        proving the positions people reach (``server.engines.idle_proving``). Cancelling the await
        drops a task not yet started."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[Any] = self._loop.create_future()
        self._background.append(_Task(str(next(self._ids)), path, tuple(args), future, True))
        self._dispatch()
        return await future

    async def think(self, job: AiJob,
                    on_progress: Callable[[Progress], None] | None = None) -> AiAnswer:
        """The move for ``job``, always legal, within roughly its level's hard time once a
        worker is free (never later than ``queue_timeout`` + hard time + ``margin``)."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[AiAnswer] = self._loop.create_future()
        entry = _Job(str(next(self._ids)), job, future, on_progress, time.monotonic())
        self._queue.append(entry)
        self._dispatch()
        timer = self._loop.call_later(self.queue_timeout + 0.01, self._dispatch)
        try:
            return await future
        finally:
            timer.cancel()

    def snapshot(self) -> PoolStats:
        self.stats.workers = len(self._workers)
        self.stats.ready = sum(w.ready for w in self._workers)
        self.stats.busy = sum(w.job is not None or w.task is not None for w in self._workers)
        self.stats.queued = len(self._queue)
        return self.stats

    def pids(self) -> list[int | None]:
        return [w.process.pid for w in self._workers]

    async def close(self) -> None:
        """Stop every worker (politely, then by force) and answer queued jobs quickly."""
        self._closing = True
        while self._queue:
            job = self._queue.popleft()
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
