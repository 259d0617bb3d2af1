"""The local pool's queue of AI moves: fair across rooms, and able to say how long a move waits.

Past capacity (more moves asked than workers to search them) a move waits here for a free
engine process rather than being answered by the quick fallback: a level that promises a
search gets one. Waiting must then be fair and visible:

- **Fair.** Jobs are kept per key (a room's id; a job without one is its own key) and taken
  round-robin, each key's oldest first: a room that asks for many moves at once (an engine
  match, a bot) delays another room's move by one of its own at most, never by all of them.
- **Visible.** ``due_waits`` gives every waiting job its place and an estimated wait, from
  the recent time each level's searches took (``MoveTimes``: a level with none yet counts
  its soft time) and what the busy workers still have to do; the pool tells each waiting
  job's ``on_wait`` (``QueueWait``) and shows the wait a new move would have in its stats.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from server.engines.messages import AiAnswer, AiJob, Progress

log = logging.getLogger(__name__)

MOVE_TIMES_KEPT = 20
"""Recent search times kept per level for the estimate."""


@dataclass(frozen=True)
class QueueWait:
    """Where a waiting AI move stands: ``position`` 1 is the next a free worker takes;
    ``length`` the moves waiting in all; ``seconds`` the estimated wait until a worker
    starts it. ``position`` 0 (and ``seconds`` 0): a worker took it, it is being searched."""

    position: int
    length: int
    seconds: float


STARTED = QueueWait(0, 0, 0.0)
"""What a job that was told it waits is told once a worker takes it."""


@dataclass
class QueuedJob:
    """One move asked of the pool, from ``think`` to its answer."""

    id: str
    job: AiJob
    future: asyncio.Future[AiAnswer]
    on_progress: Callable[[Progress], None] | None
    queued_at: float
    key: str
    on_wait: Callable[[QueueWait], None] | None = None
    started_at: float | None = None
    """When a worker took it (None while it waits)."""
    told: QueueWait | None = None
    """What ``on_wait`` was last told (None: never, so nothing to take back at the start)."""
    told_at: float = 0.0


@dataclass
class MoveTimes:
    """The recent seconds each level's searches took on a worker (from its start there to
    its answer, queueing left out): what a waiting move is expected to cost."""

    kept: dict[tuple[str, str], collections.deque[float]] = field(default_factory=dict)
    means: dict[tuple[str, str], float] = field(default_factory=dict)
    """Each ``kept``'s mean, worked out as a time is added: ``expected`` is asked for every
    waiting move each time the waits are told (thousands, past capacity)."""

    def add(self, job: AiJob, seconds: float) -> None:
        key = (job.game, job.level.name)
        times = self.kept.setdefault(key, collections.deque(maxlen=MOVE_TIMES_KEPT))
        times.append(seconds)
        self.means[key] = sum(times) / len(times)

    def expected(self, job: AiJob) -> float:
        """The mean of the recent searches of the job's game and level; before any, the
        level's soft time (what its search aims at), never more than its hard time."""
        mean = self.means.get((job.game, job.level.name))
        if mean is None:
            return min(job.level.soft_time, job.level.hard_time)
        return mean


class FairQueue:
    """Jobs waiting for a worker, taken round-robin across keys, oldest first within one."""

    def __init__(self) -> None:
        self._by_key: collections.OrderedDict[str, collections.deque[QueuedJob]] = (
            collections.OrderedDict())
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def push(self, job: QueuedJob) -> None:
        self._by_key.setdefault(job.key, collections.deque()).append(job)
        self._length += 1

    def pop(self) -> QueuedJob | None:
        """The next job to search (skipping any whose future is already done), or None."""
        while self._by_key:
            key, jobs = next(iter(self._by_key.items()))
            job = jobs.popleft()
            self._length -= 1
            if jobs:
                self._by_key.move_to_end(key)  # the key's next job waits for the others' turns
            else:
                del self._by_key[key]
            if not job.future.done():
                return job
        return None

    def pop_older_than(self, cutoff: float) -> list[QueuedJob]:
        """Take out every job queued before ``cutoff`` (the pool answers them quickly)."""
        old = [job for job in self.order() if job.queued_at < cutoff]
        for job in old:
            jobs = self._by_key[job.key]
            jobs.remove(job)
            if not jobs:
                del self._by_key[job.key]
        self._length -= len(old)
        return old

    def drain(self) -> list[QueuedJob]:
        """Take out every job, in the order they would have been searched."""
        jobs = list(self.order())
        self._by_key.clear()
        self._length = 0
        return jobs

    def order(self) -> Iterator[QueuedJob]:
        """The waiting jobs in the order ``pop`` will give them: each key's first job in key
        order, then each key's second, and so on."""
        queues = list(self._by_key.values())
        depth = 0
        while queues:
            for jobs in queues:
                yield jobs[depth]
            depth += 1
            queues = [jobs for jobs in queues if len(jobs) > depth]


def _free_at(running: list[QueuedJob | None], times: MoveTimes, now: float) -> list[float]:
    """In how many seconds each ready worker is free (a heap): at once for a free one, its
    job's expected time less what it already spent for a busy one, never below zero."""
    free_at = [0.0 if job is None or job.started_at is None
               else max(0.0, times.expected(job.job) - (now - job.started_at))
               for job in running]
    heapq.heapify(free_at)
    return free_at


def wait_for_new(waiting: Iterator[QueuedJob], running: list[QueuedJob | None],
                 times: MoveTimes, now: float) -> float | None:
    """The estimated wait of a move asked now (behind every waiting one); None without a
    ready worker."""
    free_at = _free_at(running, times, now)
    if not free_at:
        return None
    for job in waiting:
        heapq.heapreplace(free_at, free_at[0] + times.expected(job.job))
    return free_at[0]


TELL_EVERY = 1.0
"""Seconds before a waiting job's first ``QueueWait`` (a move that a worker takes within this
long is never said to wait)."""

TELL_AGAIN = 5.0
"""Seconds between two ``QueueWait`` of one waiting job. Past capacity thousands of moves
wait and each one's place changes with every move taken: told each second, a node at 10,000
clients sent six times the frames of its moves (`bench.load`'s `frames_by_type`); a person
needs the wait, not each step of it."""


TELL_STARTED_FROM = 0.25
"""Seconds of expected search from which a job told it waits is told a worker took it
(``STARTED``); a quicker search's move ends the wait itself, sooner than a person sees."""


def tell_waiting(queue: FairQueue, running: list[QueuedJob | None], times: MoveTimes,
                 now: float) -> None:
    """Tell each waiting job where it stands now (``on_wait``): first once it has waited
    ``TELL_EVERY``, then at most every ``TELL_AGAIN`` while its place changes."""
    for job, wait in due_waits(queue, running, times, now):
        tell(job, wait)


def due_waits(queue: FairQueue, running: list[QueuedJob | None], times: MoveTimes,
              now: float) -> list[tuple[QueuedJob, QueueWait]]:
    """What ``tell_waiting`` tells, each job marked as told, for a caller that tells them
    a few at a time (``tell``): past capacity a pass tells hundreds of moves, and each tell
    is a frame to every member of a room.

    Each waiting job's estimated wait: the workers (``running``: each ready worker's job,
    None when free) take the jobs in search order, each busy for its level's expected time
    (``MoveTimes``; a running job's less what it already spent, never below zero). A pool
    without a ready worker tells nothing. One plain loop: past capacity the pool runs this
    every half second over every waiting move (7,000 at 10,000 clients: 15 ms a pass through
    chained generators, 9 to 13 ms now, on a noisy machine)."""
    free_at = _free_at(running, times, now)
    if not free_at:
        return []
    length = len(queue)
    first_by, again_by = now - TELL_EVERY, now - TELL_AGAIN
    due = []
    position = 0
    for job in queue.order():
        position += 1
        start = free_at[0]
        heapq.heapreplace(free_at, start + times.expected(job.job))
        if job.on_wait is None:
            continue
        told = job.told
        if told is None:
            if job.queued_at > first_by:
                continue
        elif job.told_at > again_by or told.position == position:
            continue
        told = QueueWait(position, length, round(start, 1))
        job.told, job.told_at = told, now
        due.append((job, told))
    return due


def tell_started(job: QueuedJob, times: MoveTimes) -> None:
    """A worker took ``job``: if it was told it waits, tell it it no longer does, unless its
    search is expected to take less than ``TELL_STARTED_FROM``: then its move, due at once,
    ends the wait itself (past capacity, a quick level's moves would otherwise each cost one
    more frame for a notice that is out of date a few milliseconds later)."""
    if job.told is not None and times.expected(job.job) >= TELL_STARTED_FROM:
        job.told = STARTED
        tell(job, STARTED)


def tell(job: QueuedJob, wait: QueueWait) -> None:
    """Call the job's ``on_wait`` with ``wait`` (a failing callback is logged, not raised)."""
    assert job.on_wait is not None
    try:
        job.on_wait(wait)
    except Exception:
        log.exception("a queue wait callback failed")
