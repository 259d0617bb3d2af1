"""Past capacity, AI moves wait their turn fairly, are searched rather than answered by the
quick fallback, and each knows its place and its estimated wait."""

from __future__ import annotations

import asyncio
import time

import pytest

from ai.levels import Level
from server.engines import AiJob, AiPool
from server.engines.fair_queue import (
    FairQueue,
    MoveTimes,
    QueuedJob,
    QueueWait,
    due_waits,
    tell_started,
    tell_waiting,
    wait_for_new,
)

FAST = Level("test", 0, "", None, 0.1, 0.2, None, candidates=1, margin=0, rails=False)
PATIENT = Level("patient", 0, "", None, 5.0, 10.0, None, candidates=1, margin=0, rails=False)


def _job(key: str, n: int, level: Level = FAST) -> QueuedJob:
    future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    return QueuedJob(f"{key}{n}", AiJob("connect4", (n % 7,), level, n), future,  # type: ignore[arg-type]
                     None, float(n), key)


async def test_a_room_asking_many_moves_delays_another_rooms_move_by_one_of_its_own() -> None:
    queue = FairQueue()
    for n in range(4):
        queue.push(_job("a", n))
    queue.push(_job("b", 10))
    queue.push(_job("c", 11))
    queue.push(_job("b", 12))
    expected = ["a0", "b10", "c11", "a1", "b12", "a2", "a3"]
    assert [j.id for j in queue.order()] == expected
    popped = [queue.pop() for _ in range(len(queue))]
    assert [j.id for j in popped if j is not None] == expected
    assert len(queue) == 0 and queue.pop() is None


async def test_a_job_whose_caller_gave_up_is_skipped_and_old_jobs_can_be_taken_out() -> None:
    queue = FairQueue()
    jobs = [_job("a", 0), _job("b", 1), _job("a", 2)]
    for job in jobs:
        queue.push(job)
    jobs[0].future.cancel()
    assert [j.id for j in queue.pop_older_than(1.5)] == ["a0", "b1"]
    assert queue.pop() is jobs[2] and len(queue) == 0


async def test_the_wait_counts_what_busy_workers_still_have_and_each_levels_recent_time() -> None:
    times = MoveTimes()
    running = _job("r", 0, PATIENT)
    running.started_at = 100.0
    for _ in range(3):
        times.add(running.job, 4.0)  # the patient level's searches took 4 s lately
    waiting = [_job("a", 1), _job("b", 2, PATIENT), _job("c", 3)]
    queue = FairQueue()
    for job in waiting:
        job.on_wait = lambda wait: None
        queue.push(job)
    # Two workers: one free, one 1 s into a 4 s search. The fast level has no times yet:
    # its soft time (0.1 s) counts.
    due = due_waits(queue, [None, running], times, 101.0)
    assert [(job.id, wait) for job, wait in due] == [
        ("a1", QueueWait(1, 3, 0.0)), ("b2", QueueWait(2, 3, 0.1)), ("c3", QueueWait(3, 3, 3.0))]
    assert wait_for_new(iter(waiting), [None, running], times, 101.0) == pytest.approx(3.1)
    assert wait_for_new(iter(waiting), [], times, 101.0) is None


async def started_pool(search: str, queue_timeout: float) -> AiPool:
    pool = AiPool(processes=1, games=("connect4",), margin=0.5, queue_timeout=queue_timeout,
                  search=f"scripted_engines:{search}", warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    return pool


@pytest.mark.slow
async def test_one_worker_takes_turns_between_rooms_not_one_rooms_moves_first() -> None:
    pool = await started_pool("steady", queue_timeout=15.0)
    try:
        answered: list[str] = []

        async def ask(room: str, n: int) -> None:
            answer = await pool.think(AiJob("connect4", (n,), FAST, n), room=room)
            assert not answer.fallback
            answered.append(f"{room}{n}")

        await asyncio.gather(*(ask("busy", n) for n in range(5)), ask("other", 6))
    finally:
        await pool.close()
    # The first job went straight to the worker; then the rooms take turns.
    assert answered[:3] == ["busy0", "busy1", "other6"]


async def test_a_long_queue_tells_each_waiting_move_after_a_second_then_every_five() -> None:
    # 200 rooms' moves, all queued at 0 s, wait for one worker that takes one every 0.5 s;
    # the pool looks every 0.5 s for 20 s.
    queue = FairQueue()
    told: dict[str, list[tuple[float, QueueWait]]] = {}
    for n in range(200):
        job = _job(f"room{n}-", n)
        job.queued_at = 0.0
        job.on_wait = (lambda key: lambda wait: told[key].append((now, wait)))(job.id)
        told[job.id] = []
        queue.push(job)
    now = 0.0
    while now <= 20.0:
        tell_waiting(queue, [None], MoveTimes(), now)
        queue.pop()
        now += 0.5
    # Each move still waiting was told first after 1 s, then at most every 5 s, each time
    # with a place nearer the front: at 1, 6, 11 and 16 s, where a move moving up every half
    # second was told each second before (20 times).
    for tells in told.values():
        times = [t for t, _ in tells]
        assert not times or times[0] >= 1.0
        assert all(b - a >= 5.0 for a, b in zip(times, times[1:], strict=False))
        places = [w.position for _, w in tells]
        assert places == sorted(places, reverse=True) and len(set(places)) == len(places)
    assert max(len(tells) for tells in told.values()) == 4
    assert [t for t, _ in told["room199-199"]] == [1.0, 6.0, 11.0, 16.0]


async def test_a_worker_taking_a_waiting_move_says_so_only_for_a_search_a_person_sees(
) -> None:
    """``STARTED`` ends a wait that would otherwise show until the move; a quick level's move
    comes within milliseconds of its start, so it ends the wait itself (no extra frame)."""
    times = MoveTimes()
    for _ in range(3):
        times.add(AiJob("connect4", (), FAST, 0), 0.01)
        times.add(AiJob("connect4", (), PATIENT, 0), 2.0)
    told: list[QueueWait] = []
    quick, slow, never_told = _job("q", 1), _job("s", 2, PATIENT), _job("n", 3, PATIENT)
    for job in (quick, slow, never_told):
        job.on_wait = told.append
    quick.told = slow.told = QueueWait(3, 5, 2.0)
    for job in (quick, slow, never_told):
        tell_started(job, times)
    assert told == [QueueWait(0, 0, 0.0)]
    assert slow.told == QueueWait(0, 0, 0.0) and quick.told == QueueWait(3, 5, 2.0)


@pytest.mark.slow
async def test_a_move_that_waits_past_the_queue_timeout_is_searched_and_told_its_place(
) -> None:
    # Each search takes 0.8 s; the queue timeout is 0.2 s, which once meant the quick move
    # for every job that waited behind another.
    pool = await started_pool("unhurried", queue_timeout=0.2)
    try:
        told: dict[int, list[QueueWait]] = {1: [], 2: [], 3: []}
        started = time.monotonic()
        answers = await asyncio.gather(*(
            pool.think(AiJob("connect4", (n,), PATIENT, n), room=f"room{n}",
                       on_wait=told[n].append) for n in (1, 2, 3)))
        waited = time.monotonic() - started
        stats = pool.snapshot()
    finally:
        await pool.close()
    assert [a.fallback for a in answers] == [False, False, False]
    assert [a.depth for a in answers] == [8, 8, 8]
    assert stats.fallbacks == 0 and stats.wait_seconds == 0.0
    # A worker took the first at once, the second within TELL_EVERY: never said to wait.
    assert told[1] == told[2] == []
    # The third waited behind two searches: told it is next (one 0.8 s search left to wait
    # for, as the first took), then that a worker took it.
    first, last = told[3]
    assert (first.position, first.length) == (1, 1) and 0 < first.seconds < 0.8
    assert last == QueueWait(0, 0, 0.0)
    assert waited >= 3 * 0.8

