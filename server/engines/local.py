"""AI moves in worker processes, never in the event loop; a game never stalls.

``AiPool`` keeps one process per core (by default), each warmed up (the engines' JIT compiled
or loaded from cache) before it takes work. ``await pool.think(job, on_progress)`` queues a
job, calls ``on_progress`` with finished search iterations (at most one each
``PROGRESS_EVERY`` seconds; none for a quick level's quick search), and returns an
``AiAnswer`` (with the last iteration's figures). A worker that runs past the level's hard
deadline plus ``margin`` seconds, hangs while warming up (past ``warm_up_timeout``), or dies,
is killed and replaced, and the move is made anyway by ``quick_move`` (a shallow search of a
few milliseconds in a thread of the server process, never its event loop; rails kept: win
now if possible, else do not allow a win in one). A job that waits in the queue longer than
``queue_timeout`` gets the same quick answer.

Workers talk over a duplex pipe with small tuples (below); the parent reads them with
``loop.add_reader`` so no thread is needed on the server side.

With ``CacheSettings``, each worker opens the shared position cache once, after warming up,
and calls it twice per job, never per search node: at the start it looks the position and its
children up, and plays a cached answer without searching when it is what the level's search
would give (``_cached_answer``): for a level that plays the single best move, a result at
least as deep as its search would go, or proven; for a level that chooses among several
moves, exact scores of its candidates and bounds on the rest at exactly its depth, rebuilt
from the children. After sending its answer it saves the search's root, principal variation
and, for a level choosing among several moves, every root move's child (``_save``).

Low-priority tasks (a game review, the analysis board: ``run_task``) go to a worker only
when no move waits and another ready worker stays idle, so a live game's move finds a worker
at once; and when moves come in faster than the idle workers take them, a task is told to
yield (``("yield", task_id)``): a Connect Four proof under way stops within milliseconds (the
task's stop array), any other step at its end, and the task goes back to the head of the
tasks' queue. See ``AiPool.run_task``.

parent -> worker: ``("job", job_id, game, moves, level_dict, seed)``,
``("task", task_id, "module:function", args)``, ``("yield", task_id)`` or ``None`` to stop.
worker -> parent: ``("ready", seconds, missing_games)``,
``("progress", job_id, depth, score, nodes, seconds, exact)``,
``("done", job_id, move, depth, score, nodes, seconds, fallback, cached, counts, exact)``
where ``counts`` is the job's cache ``(lookups, hot_hits, durable_hits, misses)``,
``("failed", job_id, text)``, ``("task_done", task_id, result)``,
``("task_failed", task_id, text)``, ``("task_yielded", task_id)``.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

import games
from ai.cached import cached_iteration, learned, wants_lookup
from ai.connect4.evaluation import MAX_EVAL, WIN
from ai.levels import Level, choose_move
from ai.limits import Iteration, Limits
from games.base import State

log = logging.getLogger(__name__)

DEFAULT_MARGIN = 1.0
"""Seconds past a level's hard deadline before its worker is presumed stuck and killed."""

MAX_FAILED_STARTS = 3
"""Workers in a row that die before warming up, after which no more are started."""

DEFAULT_WARM_UP_TIMEOUT = 600.0
"""Seconds a new worker may take to warm up before it is presumed hung and replaced (a
first start compiles every engine kernel: about a minute on a busy two-core machine)."""

DEFAULT_QUEUE_TIMEOUT = 15.0
"""Seconds a job may wait for a free worker before it is answered by ``quick_move``."""

PROGRESS_EVERY = 0.2
"""Seconds between two progress messages of one job: a page needs a few updates a second,
and a quick level's iterations were each pickled, unpickled and broadcast to the room (the
load profile's largest single cost). A level whose soft time is shorter sends none before
its search has run this long (mostly none at all: its ``done`` carries its last iteration's
figures); a slower level sends its first iteration at once."""

CACHE_LOOKUP_SECONDS = 0.3
"""A job-start cache lookup slower than this counts as a miss (the move's time is the
level's, not the cache's)."""

CACHE_SAVE_SECONDS = 1.0
"""A job-end save slower than this is dropped (the answer has already been sent)."""

IDLE_FLUSH_SECONDS = 5.0
"""A worker with no job for this long writes the results its durable cache tier buffered,
rather than keeping them until a later save or its stop (a killed worker would lose them)."""

STOP_SECONDS = 10.0
"""How long ``AiPool.close`` waits for its workers to exit by themselves before killing them:
a stopping worker first writes its buffered durable cache rows, which took over 2 s on a
loaded machine (the earlier limit, which lost them)."""

TASK_SECONDS = 600.0
"""Seconds a low-priority task may run on a worker before the worker is presumed stuck."""

TASK_POLL_SECONDS = 0.01
"""How often a worker running a task looks whether the parent wants it back."""

COUNTED = ("lookups", "hot_hits", "durable_hits", "misses")
"""The cache counters each ``done`` message carries, in this order."""


@dataclass(frozen=True)
class CacheSettings:
    """Where workers find the shared position cache (``server.storage.open_sync_cache``).

    ``redis_url`` None means each worker keeps an in-process LRU; ``database_url`` is the
    server's (already migrated) database, whose ``position_cache`` table is the durable tier.
    """

    redis_url: str | None
    database_url: str | None
    """None: no durable tier (the server keeps no SQL database)."""
    prefix: str = "discus"

    def tiers(self) -> tuple[str, str]:
        """Names of the hot and the durable tier, as ``stats`` reports them."""
        durable = "sqlite" if (self.database_url or "").startswith("sqlite") else "postgresql"
        return ("redis" if self.redis_url else "lru"), durable


@dataclass(frozen=True)
class AiJob:
    """Find a move for the position reached by ``moves`` from the start of ``game``."""

    game: str
    moves: tuple[int, ...]
    level: Level
    seed: int


@dataclass(frozen=True)
class AiAnswer:
    """The move to play. ``fallback`` is true when ``quick_move`` made it (no search)."""

    move: int
    depth: int | None
    score: int | None
    nodes: int | None
    seconds: float
    fallback: bool = False
    cached: bool = False
    """The move came from the position cache; no search ran."""
    exact: bool = False
    """``score`` is proven (the search's last iteration was exact)."""


@dataclass(frozen=True)
class Progress:
    depth: int
    score: int
    nodes: int
    seconds: float
    exact: bool


def win_in(game: str, ply: int, score: int, exact: bool) -> int | None:
    """A proven Connect Four result as the ``ai_thinking`` message's ``win_in``, from the
    search's ``score`` for the side to move at ``ply``: exact scores are Pons' (22 minus the
    winner's stones), and the heuristic search scores a win it found as ``WIN`` plus Pons'.
    None when nothing is proven, for a draw, and for other games (no length is known)."""
    if game != "connect4":
        return None
    if exact:
        pons = score
    elif abs(score) > MAX_EVAL:
        pons = score - WIN if score > 0 else score + WIN
    else:
        return None
    if pons == 0:
        return None
    mine = ply // 2  # the stones the side to move has played (it moves at even or odd plies)
    if pons > 0:
        return 22 - pons - mine
    return -(22 + pons - (ply - mine))


QUICK_LIMITS = Limits(depth=3, nodes=20_000)
"""The fallback's search: three plies, and a node budget (no clock: a timer thread per call
would cost more than the search) that keeps it to a few milliseconds on any position."""

_QUICK_LEVEL = Level("quick", 0, "", QUICK_LIMITS.depth, 0.1, 0.1, QUICK_LIMITS.nodes,
                     candidates=1, margin=0, rails=True)


def quick_move(state: State, seed: int) -> int:
    """A legal move at once, for when no worker answers: the engine's best move after a
    shallow search (``QUICK_LIMITS``, in the calling process), with the rails kept (win in
    one, else never allow one). ``seed`` matters only for a game without an engine, whose
    move is then a seeded choice among the moves the rails allow.

    The first call in a process loads the engine's compiled kernels (a fraction of a second;
    ``AiPool.start`` does it off the event loop, ``prepare_quick_move``); later calls take
    milliseconds.
    """
    import ai

    try:
        iterations = [ai.best(state, QUICK_LIMITS)]
    except (ImportError, ValueError):  # no engine for this game: the rails alone
        iterations = []
    return choose_move(state, _QUICK_LEVEL, seed, iterations)


_QUICK_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="discus-quick")
"""Where the server runs ``quick_move``: never in the event loop (even a fallback search is
an AI turn), and one at a time (the Othello engine keeps one set of tables per process)."""


async def quick_move_off_loop(state: State, seed: int) -> int:
    """``quick_move`` in the server's quick-move thread, for a coroutine to await."""
    return await asyncio.get_running_loop().run_in_executor(_QUICK_THREAD, quick_move, state,
                                                            seed)


def prepare_quick_move(game_names: Sequence[str]) -> None:
    """Load what ``quick_move`` needs for these games, so its first call is quick too."""
    for name in game_names:
        try:
            quick_move(games.load(name).initial(), 0)
        except Exception:
            log.exception("the quick fallback of %s could not be prepared", name)


# --- the worker process ------------------------------------------------------------------------


def _resolve(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def _worker_main(conn: multiprocessing.connection.Connection, game_names: Sequence[str],
                 search_path: str, warm_up_path: str,
                 cache_settings: CacheSettings | None = None) -> None:
    """Run in the child: warm up, open the cache, then answer jobs until told to stop or the
    pipe closes (then flush what the cache buffered)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when workers stop
    started = time.perf_counter()
    search = _resolve(search_path)
    warm_up = _resolve(warm_up_path)
    missing = []
    for name in game_names:
        _warm_rules(name)
        try:
            warm_up(name)
        except (ImportError, ValueError) as exc:  # no engine for this game (yet)
            missing.append(name)
            log.warning("no engine for %s: %s", name, exc)
    import server.storage  # noqa: F401 - imported now, not inside the first timed job

    cache = _open_cache(cache_settings)
    conn.send(("ready", time.perf_counter() - started, tuple(missing)))
    try:
        while True:
            try:
                if cache is not None and not conn.poll(IDLE_FLUSH_SECONDS):
                    cache.flush(timeout=CACHE_SAVE_SECONDS)
                    continue
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            if request[0] == "yield":
                continue  # for a task that finished before it read this
            if request[0] == "task":
                try:
                    conn.send(_run_task(conn, *request[1:]))
                except (BrokenPipeError, ConnectionResetError):
                    return
                continue
            _, job_id, game, moves, level_dict, seed = request
            learned: tuple[State, Iteration, int] | None = None
            try:
                answer, learned = _answer(conn, job_id, game, moves, Level.from_dict(level_dict),
                                          seed, search, game in missing, cache)
                conn.send(answer)
            except (BrokenPipeError, ConnectionResetError):
                return  # the server is gone
            except Exception as exc:  # report, stay alive for the next job
                conn.send(("failed", job_id, f"{type(exc).__name__}: {exc}"))
            if cache is not None and learned is not None:
                _save(cache, *learned)
    finally:
        if cache is not None:
            try:
                cache.close()
            except Exception:
                log.exception("closing the position cache failed")


class TaskYielded(Exception):
    """Raised by a task's ``check`` when the parent wants the worker back for a move."""


def _run_task(conn: multiprocessing.connection.Connection, task_id: int, path: str,
              args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Run one low-priority task in the worker: its ``task_done``, ``task_failed`` or, when
    the parent asked for the worker back, ``task_yielded``.

    The task is called as ``function(*args, check=check, stop=stop)``. Once the parent has
    written something to this worker (a ``yield``, or a stop), a watching thread raises
    ``stop[0]`` (a stop array the engines' kernels poll, so a proof under way ends within
    milliseconds) and keeps it raised, and ``check()``, which the task calls between steps,
    raises ``TaskYielded``."""
    wanted = threading.Event()
    done = threading.Event()
    stop = np.zeros(1, dtype=np.int64)

    def watch() -> None:
        while not done.is_set():
            if wanted.is_set() or conn.poll(TASK_POLL_SECONDS):
                wanted.set()
                stop[0] = 1  # again and again: the task lowers it after each deadline
                done.wait(TASK_POLL_SECONDS)

    def check() -> None:
        if wanted.is_set():
            raise TaskYielded(f"task {task_id} gives its worker back")

    watcher = threading.Thread(target=watch, name="discus-task-watch", daemon=True)
    watcher.start()
    try:
        return ("task_done", task_id, _resolve(path)(*args, check=check, stop=stop))
    except TaskYielded:
        return ("task_yielded", task_id)
    except Exception as exc:  # report, stay alive for the next job
        return ("task_failed", task_id, f"{type(exc).__name__}: {exc}")
    finally:
        done.set()
        watcher.join()


def _open_cache(settings: CacheSettings | None) -> Any:
    """The worker's ``SyncPositionCache``, or None (no settings, or it cannot be opened:
    then moves are searched as without a cache)."""
    if settings is None:
        return None
    from server.storage import open_sync_cache

    try:
        return open_sync_cache(settings.redis_url, settings.database_url,
                               durable=settings.database_url is not None, prefix=settings.prefix)
    except Exception:
        log.exception("AI worker runs without the position cache")
        return None


def _save(cache: Any, state: State, last: Iteration, candidates: int) -> None:
    """Save what the search taught (``ai.cached.learned``): one call to the cache."""
    try:
        cache.save(learned(state, last, candidates), timeout=CACHE_SAVE_SECONDS)
    except Exception:
        log.exception("saving to the position cache failed")


def _warm_rules(game_name: str) -> None:
    """Load the game's compiled rules now, so the first job is not charged for it."""
    state = games.load(game_name).initial()
    for move in state.legal_moves():
        state.play(move).is_over()


def _answer(conn: multiprocessing.connection.Connection, job_id: int, game: str,
            moves: Sequence[int], level: Level, seed: int,
            search: Callable[[State, Limits], Iterator[Iteration]], missing: bool,
            cache: Any = None) -> tuple[tuple, tuple[State, Iteration, int] | None]:
    """The ``done`` message, and what the cache should learn from the search (if one ran):
    the root, the last iteration and the level's candidates. An opening book's answer is not
    cached: the cache would then answer for the book, always with the same one of its moves."""
    state = games.load(game).initial()
    for move in moves:
        state = state.play(move)
    started = time.perf_counter()
    if missing:
        move = quick_move(state, seed)
        return ("done", job_id, move, None, None, None, time.perf_counter() - started, True,
                False, (0, 0, 0, 0), False), None
    counts: tuple[int, ...] = (0, 0, 0, 0)
    limits = level.limits()
    if cache is not None:
        hit, counts = _cached_answer(cache, state, limits)
        if hit is not None:
            # Through ``choose_move`` as a search's answer would go, so the rails still apply.
            move = choose_move(state, level, seed, [hit])
            return ("done", job_id, move, hit.depth, _score_of(hit, move), 0,
                    time.perf_counter() - started, False, True, counts, hit.exact), None
    iterations: list[Iteration] = []
    # A level that may think a while shows its first iteration at once; a quick one sends
    # nothing before PROGRESS_EVERY (its answer carries its last iteration anyway).
    patient = limits.soft_time is None or limits.soft_time >= PROGRESS_EVERY
    sent_at = started - PROGRESS_EVERY if patient else started
    for it in search(state, limits):
        iterations.append(it)
        if time.perf_counter() - sent_at >= PROGRESS_EVERY:
            sent_at = time.perf_counter()
            conn.send(("progress", job_id, it.depth, it.score, it.nodes, it.seconds, it.exact))
    last = iterations[-1] if iterations else None
    move = choose_move(state, level, seed, iterations[-1:])
    return (
        "done", job_id, move,
        last.depth if last else None,
        _score_of(last, move) if last else None,
        sum(i.nodes for i in iterations) if iterations else None,
        time.perf_counter() - started, False, False, counts, last is not None and last.exact,
    ), ((state, last, limits.multipv) if last is not None and not last.book else None)


def _score_of(it: Iteration, move: int) -> int | None:
    """The score of the move played: its root score, else the iteration's when it is the
    engine's move, else unknown."""
    scores = dict(it.root_scores)
    if move in scores:
        return scores[move]
    return it.score if move == it.move else None


def _cached_answer(cache: Any, state: State, limits: Limits
                   ) -> tuple[Iteration | None, tuple[int, ...]]:
    """One lookup of ``state`` and its children (never one per node): the iteration a search
    with ``limits`` would end with when the cache can stand in for it (``ai.cached`` decides),
    and the lookup's counters."""
    if not wants_lookup(limits):
        return None, (0, 0, 0, 0)
    children = [state.play(m) for m in state.legal_moves()]
    before = cache.stats()
    try:
        found = cache.lookup([state, *children], timeout=CACHE_LOOKUP_SECONDS)
    except ValueError:  # a stored move this position cannot play: search instead
        log.exception("unusable position cache entry")
        found = [None] * (1 + len(children))
    after = cache.stats()
    counts = tuple(int(after[k] - before[k]) for k in COUNTED)
    return cached_iteration(state, limits, found[0], found[1:]), counts


# --- the parent side ----------------------------------------------------------------------------


@dataclass
class _Job:
    id: int
    job: AiJob
    future: asyncio.Future[AiAnswer]
    on_progress: Callable[[Progress], None] | None
    queued_at: float


@dataclass
class _Task:
    id: int
    path: str
    args: tuple[Any, ...]
    future: asyncio.Future[Any]


class TaskFailed(RuntimeError):
    """A low-priority task raised in its worker, or its worker died or was stopped."""


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: multiprocessing.connection.Connection
    ready: bool = False
    job: _Job | None = None
    task: _Task | None = None
    yielding: bool = False
    """The worker was asked to give its task back (``yield``)."""
    watchdog: asyncio.TimerHandle | None = None
    missing: tuple[str, ...] = ()


@dataclass
class PoolStats:
    """What an operator wants to see (the ``stats`` message; the admin issue shows it).

    ``seconds``: for recent moves, the time from ``think`` to its answer (queueing included).
    ``cache``: the workers' position cache counters (``COUNTED``), summed over every job.
    """

    workers: int
    ready: int
    busy: int
    queued: int
    jobs: int = 0
    fallbacks: int = 0
    from_cache: int = 0
    restarts: int = 0
    seconds: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=500))
    cache: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))

    def percentile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1) of ``seconds``, None before the first move."""
        if not self.seconds:
            return None
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Pool(Protocol):
    """What the server needs of its AI: ``AiPool`` (engine processes of its own) and
    ``server.engines.queued.QueuedPool`` (a cluster's ``discus worker`` processes) both are one."""

    @property
    def size(self) -> int:
        """Engine processes that can search at once (a calibration keeps this many busy)."""

    games: tuple[str, ...]
    cache: CacheSettings | None

    async def start(self, wait_ready: bool = False, timeout: float = 120.0) -> None: ...

    async def think(self, job: AiJob,
                    on_progress: Callable[[Progress], None] | None = None) -> AiAnswer: ...

    def snapshot(self) -> PoolStats: ...

    async def close(self) -> None: ...


class AiPool:
    """A fixed number of warmed-up engine processes and a queue of moves to find.

    Call ``start()`` inside the running loop before ``think``; ``close()`` at shutdown.
    """

    def __init__(
        self,
        processes: int | None = None,
        games: Sequence[str] = ("connect4", "othello"),
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
        self.games = tuple(games)
        self.margin = margin
        self.queue_timeout = queue_timeout
        self._paths = (search, warm_up)
        self._context = multiprocessing.get_context(start_method)
        self._workers: list[_Worker] = []
        self._queue: collections.deque[_Job] = collections.deque()
        self._tasks: collections.deque[_Task] = collections.deque()
        self._quick_pending: set[asyncio.Future[int]] = set()
        self._ids = itertools.count(1)
        self._closing = False
        self._failed_starts = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stats = PoolStats(workers=0, ready=0, busy=0, queued=0)

    async def start(self, wait_ready: bool = False, timeout: float = 120.0) -> None:
        """Start the worker processes; with ``wait_ready``, until all have warmed up."""
        self._loop = asyncio.get_running_loop()
        for _ in range(self.size):
            self._spawn()
        # Off the loop: the server's own fallback search loads its kernels once.
        self._loop.run_in_executor(_QUICK_THREAD, prepare_quick_move, self.games)
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
            target=_worker_main, args=(child, self.games, *self._paths, self.cache),
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
                self._on_message(worker, worker.conn.recv())
        except (EOFError, OSError):
            self._replace(worker, "the worker process died")

    def _on_message(self, worker: _Worker, message: tuple) -> None:
        kind = message[0]
        if kind == "ready":
            self._finish_worker(worker)  # stops the warm-up watchdog
            worker.ready = True
            worker.missing = message[2]
            log.info("AI worker %s warmed up in %.2fs", worker.process.pid, message[1])
            self._dispatch()
            return
        if kind in ("task_done", "task_failed", "task_yielded"):
            task = worker.task
            if task is None or message[1] != task.id:
                return
            self._finish_worker(worker)
            if kind == "task_yielded":
                self._tasks.appendleft(task)  # first again once two workers are idle
            elif not task.future.done():
                if kind == "task_done":
                    task.future.set_result(message[2])
                else:
                    task.future.set_exception(TaskFailed(message[2]))
            self._dispatch()
            return
        job = worker.job
        if job is None or message[1] != job.id:
            return
        if kind == "progress":
            if job.on_progress is not None:
                try:
                    job.on_progress(Progress(*message[2:7]))
                except Exception:
                    log.exception("progress callback failed")
            return
        self._finish_worker(worker)
        if kind == "done":
            _, _, move, depth, score, nodes, seconds, fallback, cached, counts, exact = message
            for name, amount in zip(COUNTED, counts, strict=True):
                self.stats.cache[name] += amount
            self._resolve(job, AiAnswer(move, depth, score, nodes, seconds, fallback, cached,
                                        exact))
        else:
            log.error("AI job %s failed: %s", job.id, message[2])
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

    def _answer_quickly(self, job: _Job) -> None:
        """Answer ``job`` with ``quick_move``, searched in the quick-move thread; ``close``
        waits for answers still being found."""
        assert self._loop is not None
        started = time.perf_counter()
        state = games.load(job.job.game).initial()
        for move in job.job.moves:
            state = state.play(move)
        found = self._loop.run_in_executor(_QUICK_THREAD, quick_move, state, job.job.seed)
        self._quick_pending.add(found)

        def answer(done: asyncio.Future[int]) -> None:
            self._quick_pending.discard(done)
            if done.cancelled() or done.exception() is not None:
                log.error("the quick fallback failed; playing the first legal move",
                          exc_info=None if done.cancelled() else done.exception())
                move = state.legal_moves()[0]
            else:
                move = done.result()
            self._resolve(job, AiAnswer(move, None, None, None, time.perf_counter() - started,
                                        fallback=True))

        found.add_done_callback(answer)

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
            worker.conn.send(("job", job.id, job.job.game, job.job.moves,
                              job.job.level.to_dict(), job.job.seed))
            limit = job.job.level.hard_time + self.margin
            worker.watchdog = self._loop.call_later(
                limit, self._replace, worker, f"no answer within {limit:.1f}s"
            )
        # Jobs nobody could take for too long are answered without the engine.
        while self._queue and now - self._queue[0].queued_at > self.queue_timeout:
            job = self._queue.popleft()
            self._answer_quickly(job)
        # Moves still waiting: workers running tasks give them back, one per waiting move.
        wanted = len(self._queue) - sum(w.yielding for w in self._workers)
        for worker in self._workers:
            if wanted <= 0:
                break
            if worker.task is not None and not worker.yielding:
                worker.yielding = True
                worker.conn.send(("yield", worker.task.id))
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
            worker = idle[-1]
            worker.task = task
            worker.conn.send(("task", task.id, task.path, task.args))
            worker.watchdog = self._loop.call_later(
                TASK_SECONDS, self._replace, worker, f"no task answer within {TASK_SECONDS:.0f}s"
            )
            while self._tasks and self._tasks[0].future.done():
                self._tasks.popleft()

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
        self._tasks.append(_Task(next(self._ids), path, tuple(args), future))
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
        entry = _Job(next(self._ids), job, future, on_progress, time.monotonic())
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
        while self._tasks:
            waiting = self._tasks.popleft()
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
                worker.conn.send(None)
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
