"""Reviews run on the AI workers at low priority: a live move never waits for one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

import games
from ai.levels import Level
from server.engines import AiJob, AiPool, TaskFailed

C4 = games.load("connect4")
LIVE = Level("live", 0, "", None, 5.0, 10.0, None, candidates=1, margin=0, rails=False)
SEARCH_SECONDS = 0.8
"""What ``scripted_engines:unhurried`` takes for a move: eight iterations 0.1 s apart."""


@pytest.fixture
async def two_workers() -> AsyncIterator[AiPool]:
    pool = AiPool(processes=2, games=("connect4",), search="scripted_engines:unhurried",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    yield pool
    await pool.close()


def a_move(seed: int = 1) -> AiJob:
    return AiJob("connect4", (3,), LIVE, seed)


async def timed_move(pool: AiPool) -> float:
    started = time.monotonic()
    await pool.think(a_move())
    return time.monotonic() - started


@pytest.mark.slow
async def test_a_live_move_gets_the_other_worker_while_a_review_runs(
    two_workers: AiPool,
) -> None:
    review = asyncio.create_task(two_workers.run_task("scripted_engines:nap", 3.0))
    await asyncio.sleep(0.3)
    assert two_workers.snapshot().busy == 1, "the review took one worker"
    seconds = await timed_move(two_workers)
    assert seconds < SEARCH_SECONDS + 0.5, "the move did not wait for the review"
    assert not review.done()
    await review


@pytest.mark.slow
async def test_a_review_never_takes_the_last_idle_worker(two_workers: AiPool) -> None:
    first = asyncio.create_task(timed_move(two_workers))
    await asyncio.sleep(0.1)  # one worker busy with a live move, one idle
    review = asyncio.create_task(two_workers.run_task("scripted_engines:nap", 3.0))
    await asyncio.sleep(0.2)
    assert two_workers.snapshot().busy == 1 and not review.done(), "the review waits"
    second = await timed_move(two_workers)  # the pool is now busy: the idle worker is its
    assert second < SEARCH_SECONDS + 0.5
    await first
    await asyncio.wait_for(review, timeout=10)  # and it starts once two workers are idle


@pytest.mark.slow
async def test_a_waiting_review_lets_queued_moves_go_first(two_workers: AiPool) -> None:
    moves = [asyncio.create_task(timed_move(two_workers)) for _ in range(2)]
    await asyncio.sleep(0.05)
    review = asyncio.create_task(two_workers.run_task("scripted_engines:nap", 0.0))
    third = asyncio.create_task(timed_move(two_workers))
    await asyncio.sleep(0.1)
    assert not review.done()
    done_moves = await asyncio.gather(*moves, third)
    assert done_moves[2] < 2 * SEARCH_SECONDS + 0.5, "the queued move ran before the review"
    await asyncio.wait_for(review, timeout=10)


@pytest.mark.slow
async def test_a_task_that_raises_fails_its_caller_and_the_worker_goes_on(
    two_workers: AiPool,
) -> None:
    with pytest.raises(TaskFailed, match="always fails"):
        await two_workers.run_task("scripted_engines:fail_task")
    assert await two_workers.run_task("scripted_engines:nap", 0.0) in two_workers.pids()


async def test_a_pool_of_one_worker_runs_no_tasks() -> None:
    assert not AiPool(processes=1).runs_tasks
    assert AiPool(processes=2).runs_tasks


@pytest.mark.slow
async def test_a_review_gives_its_worker_back_when_moves_outnumber_the_idle_workers(
    two_workers: AiPool,
) -> None:
    review = asyncio.create_task(two_workers.run_task("scripted_engines:nap", 3.0))
    await asyncio.sleep(0.3)  # the review runs on one worker, the other is idle
    first = asyncio.create_task(timed_move(two_workers))
    await asyncio.sleep(0.1)
    second = await timed_move(two_workers)  # no idle worker left: the review yields
    assert second < SEARCH_SECONDS + 0.5, "the move did not wait for the review"
    await first
    pid = await asyncio.wait_for(review, timeout=10)  # run again, to the end, afterwards
    assert pid in two_workers.pids()


@pytest.mark.slow
async def test_a_proof_under_way_is_stopped_at_once_for_a_live_move(two_workers: AiPool) -> None:
    # The task proves the empty board without the book (minutes): only its stop array ends it.
    review = asyncio.create_task(two_workers.run_task("scripted_engines:endless_proof"))
    await asyncio.sleep(3.0)  # the engine loaded, the proof under way
    first = asyncio.create_task(timed_move(two_workers))
    await asyncio.sleep(0.1)
    second = await timed_move(two_workers)  # no idle worker left: the proof is stopped
    assert second < SEARCH_SECONDS + 0.5, "the move did not wait for the proof"
    assert not review.done(), "the task went back to the queue, not to its caller"
    await first
    review.cancel()
