"""What runs inside one engine process of a local pool: warm up, then answer the pool's
messages on the pipe until told to stop.

The parent side is ``server.engines.local.AiPool``; both speak ``server.engines.messages``.
A job (``Think``) is answered with a few ``Thinking`` steps (at most one each
``PROGRESS_EVERY`` seconds; none for a quick level's quick search) and one ``Answered``
carrying the last iteration's figures, or ``Failed``. A low-priority task (``RunTask``) is
answered ``TaskDone``, ``TaskRaised`` or, once the pool asked for the process back
(``GiveBack``), ``TaskGivenBack``.

With ``CacheSettings`` the process opens the shared position cache once, after warming up,
and calls it twice per job, never per search node: at the start it looks the position and its
children up and plays a cached answer without searching when ``ai.cached`` says it is what
the level's search would give (else it hands the search the outcome the cache proves, so a
weak solve is not run twice); after sending its answer it saves what the search taught
(``ai.cached.learned``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import logging
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

import games
from ai.cached import (
    CachedResult,
    cached_iteration,
    known_limits,
    learned,
    wants_lookup,
    worth_caching,
)
from ai.levels import choose_move
from ai.limits import Iteration, Limits
from games.base import State
from server.engines.fallback import quick_move
from server.engines.messages import (
    COUNTED,
    TO_ENGINE,
    AiAnswer,
    AiJob,
    Answered,
    CacheCounts,
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
from server.engines.pool import CacheSettings

log = logging.getLogger(__name__)

PROGRESS_EVERY = 0.2
"""Seconds between two progress messages of one job: a page needs a few updates a second,
and a quick level's iterations were each encoded, decoded and broadcast to the room (the
load profile's largest single cost). A level whose soft time is shorter sends none before
its search has run this long (mostly none at all: its answer carries its last iteration's
figures); a slower level sends its first iteration at once."""

CACHE_LOOKUP_SECONDS = 0.3
"""A job-start cache lookup slower than this counts as a miss (the move's time is the
level's, not the cache's)."""

CACHE_SAVE_SECONDS = 1.0
"""A job-end save slower than this is dropped (the answer has already been sent)."""

PROVEN_LOOKUP_SECONDS = 2.0
"""Most a review or an analysis waits for the proven values of its positions (one lookup for
a whole game: a low-priority task, where proving them again would take far longer)."""

IDLE_FLUSH_SECONDS = 5.0
"""A process with no job for this long writes the results its durable cache tier buffered,
rather than keeping them until a later save or its stop (a killed process would lose them)."""

TASK_POLL_SECONDS = 0.01
"""How often a process running a task looks whether the pool wants it back."""

ENGINE_NICE = 5
"""How much lower than the server's an engine process's CPU priority is (``os.nice``): with
every core searching, a person's move is still read, stored and acknowledged at once, as the
server's event loop goes first; a search is bounded by its clock, not by the CPU it gets,
so it loses a little depth and never its answer (at nice 5 Linux gives it a third of the
server's share while both want the same core)."""

Learned = tuple[State, Iteration, int]
"""What the cache should learn from a search: the root, its last iteration, the level's
candidates."""


class Sends(Protocol):
    def send(self, message: Message) -> None: ...


class _Pipe:
    """The process's end of its pipe, speaking ``messages``."""

    def __init__(self, conn: multiprocessing.connection.Connection) -> None:
        self.conn = conn

    def send(self, message: Message) -> None:
        self.conn.send_bytes(encode(message))

    def recv(self) -> Message:
        return decode(self.conn.recv_bytes(), *TO_ENGINE)

    def poll(self, timeout: float | None = 0.0) -> bool:
        return self.conn.poll(timeout)


def resolve(path: str) -> Callable[..., Any]:
    """The function named ``module:function``."""
    module, _, name = path.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def main(conn: multiprocessing.connection.Connection, game_names: Sequence[str],
         search_path: str, warm_up_path: str,
         cache_settings: CacheSettings | None = None, nice: int = ENGINE_NICE) -> None:
    """Run in the child: lower its priority by ``nice``, warm up, open the cache, then
    answer messages until told to stop or the pipe closes (then flush what the cache
    buffered)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when processes stop
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    pipe = _Pipe(conn)
    started = time.perf_counter()
    search = resolve(search_path)
    warm_up = resolve(warm_up_path)
    missing = []
    for name in game_names:
        _warm_rules(name)
        try:
            warm_up(name)
        except (ImportError, ValueError) as exc:  # no engine for this game (yet)
            missing.append(name)
            log.warning("no engine for %s: %s", name, exc)
    import server.storage  # noqa: F401 - imported now, not inside the first timed job

    cache = use_proven_cache(cache_settings)
    pipe.send(Ready(time.perf_counter() - started, tuple(missing)))
    try:
        while True:
            try:
                if cache is not None and not pipe.poll(IDLE_FLUSH_SECONDS):
                    cache.flush(timeout=CACHE_SAVE_SECONDS)
                    continue
                request = pipe.recv()
            except (EOFError, OSError):
                return
            if isinstance(request, Stop):
                return
            if isinstance(request, GiveBack):
                continue  # for a task that finished before it read this
            if isinstance(request, RunTask):
                try:
                    pipe.send(_run_task(pipe, request))
                except (BrokenPipeError, ConnectionResetError):
                    return
                continue
            assert isinstance(request, Think)
            learnt: Learned | None = None
            try:
                answer, learnt = think(pipe, request, search, request.job.game in missing,
                                       cache)
                pipe.send(Answered(request.job_id, answer))
            except (BrokenPipeError, ConnectionResetError):
                return  # the server is gone
            except Exception as exc:  # report, stay alive for the next job
                pipe.send(Failed(request.job_id, f"{type(exc).__name__}: {exc}"))
            if cache is not None and learnt is not None:
                _save(cache, *learnt)
    finally:
        if cache is not None:
            try:
                cache.close()
            except Exception:
                log.exception("closing the position cache failed")


class TaskYielded(Exception):
    """Raised by a task's ``check`` when the pool wants the process back for a move."""


def _run_task(pipe: _Pipe, request: RunTask) -> TaskDone | TaskRaised | TaskGivenBack:
    """Run one low-priority task in this process.

    The task is called as ``function(*args, check=check, stop=stop)``. Once the pool has
    written something to this process (a ``GiveBack``, or a ``Stop``), a watching thread
    raises ``stop[0]`` (a stop array the engines' kernels poll, so a proof under way ends
    within milliseconds) and keeps it raised, and ``check()``, which the task calls between
    steps, raises ``TaskYielded``."""
    wanted = threading.Event()
    done = threading.Event()
    stop = np.zeros(1, dtype=np.int64)

    def watch() -> None:
        while not done.is_set():
            if wanted.is_set() or pipe.poll(TASK_POLL_SECONDS):
                wanted.set()
                stop[0] = 1  # again and again: the task lowers it after each deadline
                done.wait(TASK_POLL_SECONDS)

    def check() -> None:
        if wanted.is_set():
            raise TaskYielded(f"task {request.task_id} gives its process back")

    watcher = threading.Thread(target=watch, name="discus-task-watch", daemon=True)
    watcher.start()
    try:
        result = resolve(request.path)(*request.args, check=check, stop=stop)
        return TaskDone(request.task_id, result)
    except TaskYielded:
        return TaskGivenBack(request.task_id)
    except Exception as exc:  # report, stay alive for the next job
        return TaskRaised(request.task_id, f"{type(exc).__name__}: {exc}")
    finally:
        done.set()
        watcher.join()


def _open_cache(settings: CacheSettings | None) -> Any:
    """The process's ``SyncPositionCache``, or None (no settings, or it cannot be opened:
    then moves are searched as without a cache)."""
    if settings is None:
        return None
    from server.storage import open_sync_cache

    try:
        return open_sync_cache(settings.redis_url, settings.database_url,
                               durable=settings.database_url is not None, prefix=settings.prefix)
    except Exception:
        log.exception("AI engine process runs without the position cache")
        return None


def use_proven_cache(settings: CacheSettings | None) -> Any:
    """Open this process's position cache (None without settings, or when it cannot be
    opened) and let reviews and analyses run here read and keep proven values in it."""
    cache = _open_cache(settings)
    if cache is not None:
        from ai import review

        review.use_store(_ProvenStore(cache))
    return cache


class _ProvenStore:
    """What reviews and analyses of this process prove, read from and kept in the position
    cache (``ai.review.use_store``): looked up within the move's lookup timeout, saved and
    written durably at once, so the next review of the game, on any worker, finds it."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def lookup(self, states: Sequence[State]) -> list[CachedResult | None]:
        found: list[CachedResult | None] = self.cache.lookup(states,
                                                             timeout=PROVEN_LOOKUP_SECONDS)
        return found

    def save(self, results: Sequence[tuple[State, CachedResult]]) -> None:
        self.cache.save(results, timeout=CACHE_SAVE_SECONDS)
        self.cache.flush(timeout=CACHE_SAVE_SECONDS)


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


def think(pipe: Sends, request: Think,
          search: Callable[[State, Limits], Iterator[Iteration]], missing: bool,
          cache: Any = None) -> tuple[AiAnswer, Learned | None]:
    """The answer to ``request`` (sending ``Thinking`` steps on ``pipe`` meanwhile), and what
    the cache should learn from the search, if one ran. An opening book's answer is not
    cached: the cache would then answer for the book, always with the same one of its
    moves."""
    job: AiJob = request.job
    state = games.load(job.game).initial()
    for move in job.moves:
        state = state.play(move)
    started, cpu = time.perf_counter(), time.process_time()
    if missing:
        move = quick_move(state, job.seed)
        return AiAnswer(move, None, None, None, time.perf_counter() - started,
                        fallback=True, cpu=time.process_time() - cpu), None
    counts = CacheCounts()
    limits = job.level.limits()
    worth = worth_caching(limits)
    if not worth:
        cache = None  # a shallow search costs less than the lookup and the save
    if cache is not None:
        hit, limits, counts = _cached_answer(cache, state, limits)
        if hit is not None:
            # Through ``choose_move`` as a search's answer would go, so the rails still apply.
            move = choose_move(state, job.level, job.seed, [hit])
            return AiAnswer(move, hit.depth, _score_of(hit, move), 0,
                            time.perf_counter() - started, cached=True, exact=hit.exact,
                            cache=counts, cpu=time.process_time() - cpu), None
        limits = remaining(limits, time.perf_counter() - started)
    iterations: list[Iteration] = []
    # A level that may think a while shows its first iteration at once; a quick one sends
    # nothing before PROGRESS_EVERY (its answer carries its last iteration anyway).
    patient = limits.soft_time is None or limits.soft_time >= PROGRESS_EVERY
    sent_at = started - PROGRESS_EVERY if patient else started
    for it in search(state, limits):
        iterations.append(it)
        if time.perf_counter() - sent_at >= PROGRESS_EVERY:
            sent_at = time.perf_counter()
            pipe.send(Thinking(request.job_id,
                               Progress(it.depth, it.score, it.nodes, it.seconds, it.exact)))
    last = iterations[-1] if iterations else None
    move = choose_move(state, job.level, job.seed, iterations[-1:])
    answer = AiAnswer(
        move,
        last.depth if last else None,
        _score_of(last, move) if last else None,
        sum(i.nodes for i in iterations) if iterations else None,
        time.perf_counter() - started,
        exact=last is not None and last.exact,
        book=last is not None and last.book,
        cache=counts,
        cpu=time.process_time() - cpu,
    )
    return answer, ((state, last, limits.multipv)
                    if worth and last is not None and not last.book else None)


MIN_SHARE = 0.25
"""The least share of a level's times a search keeps after a slow cache lookup: it must
still find a move."""


def remaining(limits: Limits, spent: float) -> Limits:
    """``limits`` less the ``spent`` seconds the job already took (the cache lookup): a
    level's hard time counts from the moment the job reached the process, not from the
    search's start, or a slow lookup would push the move past it."""
    if spent <= 0 or (limits.soft_time is None and limits.hard_time is None):
        return limits

    def less(seconds: float | None) -> float | None:
        return None if seconds is None else max(seconds * MIN_SHARE, seconds - spent)

    return dataclasses.replace(limits, soft_time=less(limits.soft_time),
                               hard_time=less(limits.hard_time))


def _score_of(it: Iteration, move: int) -> int | None:
    """The score of the move played: its root score, else the iteration's when it is the
    engine's move, else unknown."""
    scores = dict(it.root_scores)
    if move in scores:
        return scores[move]
    return it.score if move == it.move else None


def _cached_answer(cache: Any, state: State, limits: Limits
                   ) -> tuple[Iteration | None, Limits, CacheCounts]:
    """One lookup of ``state`` and its children (never one per node): the iteration a search
    with ``limits`` would end with when the cache can stand in for it (``ai.cached`` decides),
    else None and ``limits`` with the outcome the cache proves, if any (``known_limits``:
    the search need not prove it again); and what the lookup counted."""
    if not wants_lookup(limits):
        return None, limits, CacheCounts()
    children = [state.play(m) for m in state.legal_moves()]
    before = cache.stats()
    try:
        found = cache.lookup([state, *children], timeout=CACHE_LOOKUP_SECONDS)
    except ValueError:  # a stored move this position cannot play: search instead
        log.exception("unusable position cache entry")
        found = [None] * (1 + len(children))
    after = cache.stats()
    counts = CacheCounts(**{k: int(after[k] - before[k]) for k in COUNTED})
    answer = cached_iteration(state, limits, found[0], found[1:])
    if answer is None:
        limits = known_limits(state, limits, found[0], found[1:])
    return answer, limits, counts
