"""AI moves through Redis: a node without workers, `discus worker` processes anywhere.

Against the real Redis, each test under its own key prefix. Worker deaths are real: a worker
in its own process group is SIGKILLed while it holds a job.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import ai
from ai.connect4.engine import clear as clear_connect4_tables
from ai.levels import Level, choose_move
from games.connect4 import GAME as C4
from server.engines import AiJob, AiPool, Progress
from server.engines.queued import QueuedPool, live_workers
from server.engines.remote_worker import Worker
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    REDIS_URL,
    redis_prefix,
)

DEPTH_SIX = Level("six", 9, "The best move at depth 6.", 6, 20.0, 30.0, None, candidates=1,
                  margin=0, rails=True)
PATIENT = Level("patient", 9, "Waits for its search.", None, 4.0, 8.0, None, candidates=1,
                margin=0, rails=False)
SCRIPTED = str(Path(__file__).parents[1])


async def _node(prefix: str, **options: float) -> QueuedPool:
    node = QueuedPool(REDIS_URL, games=("connect4",), prefix=prefix, **options)
    await node.start()
    return node


async def _worker(prefix: str, **options: object) -> tuple[Worker, asyncio.Task[None]]:
    pool = AiPool(processes=1, games=("connect4",),
                  search=str(options.pop("search", "ai:search")),
                  warm_up=str(options.pop("warm_up", "ai:warm_up")))
    worker = Worker(REDIS_URL, prefix=prefix, pool=pool, **options)  # type: ignore[arg-type]
    ready = asyncio.Event()
    task = asyncio.create_task(worker.run(ready))
    await asyncio.wait_for(ready.wait(), 120)
    return worker, task


async def _stop(worker: Worker, task: asyncio.Task[None]) -> None:
    worker.stop()
    await asyncio.wait_for(task, 30)


@pytest.fixture
async def node(redis_prefix: str) -> AsyncIterator[QueuedPool]:  # noqa: F811
    pool = await _node(redis_prefix, queue_timeout=20.0)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.mark.slow
async def test_a_node_without_engines_gets_the_moves_its_own_pool_would_find(
    node: QueuedPool, redis_prefix: str, tmp_path: Path  # noqa: F811
) -> None:
    alive = tmp_path / "alive"
    worker, task = await _worker(redis_prefix, heartbeat=alive)
    try:
        seen: list[Progress] = []
        moves = (3, 3, 2)
        answer = await node.think(AiJob("connect4", moves, DEPTH_SIX, 7), seen.append)
        await asyncio.sleep(2.5)  # the node re-reads the live workers every 2 s
        stats = node.snapshot()
        beat = alive.stat().st_mtime
        looked_at = time.time()
    finally:
        await _stop(worker, task)
    assert looked_at - beat < 2  # the healthcheck's file is touched while Redis answers
    assert not answer.fallback and answer.depth == 6
    assert seen and seen[-1].depth <= 6  # progress came back (coalesced, so maybe not all)
    # The same search in this process, from tables as fresh as the warmed-up worker's.
    ai.warm_up("connect4")
    clear_connect4_tables()
    state = C4.parse_moves("".join(str(m + 1) for m in moves))
    iterations = list(ai.search(state, DEPTH_SIX.limits()))
    assert answer.move == choose_move(state, DEPTH_SIX, 7, iterations[-1:])
    assert (stats.jobs, stats.fallbacks, stats.workers) == (1, 0, 1)


async def test_with_no_worker_at_all_the_node_plays_its_quick_move_after_the_queue_timeout(
    redis_prefix: str,  # noqa: F811
) -> None:
    node = await _node(redis_prefix, queue_timeout=0.5)
    try:
        started = time.monotonic()
        answer = await node.think(AiJob("connect4", (3,), DEPTH_SIX, 1))
        waited = time.monotonic() - started
    finally:
        await node.close()
    assert answer.fallback and answer.move in C4.parse_moves("4").legal_moves()
    assert waited >= 0.5
    assert node.snapshot().fallbacks == 1


@pytest.mark.slow
async def test_a_late_worker_does_not_search_a_job_its_node_already_answered(
    redis_prefix: str,  # noqa: F811
) -> None:
    node = await _node(redis_prefix, queue_timeout=0.3)
    try:
        answer = await node.think(AiJob("connect4", (3,), DEPTH_SIX, 1))
        worker, task = await _worker(redis_prefix, search="scripted_engines:steady",
                                     warm_up="scripted_engines:warm_up")
        await asyncio.sleep(1.5)
        await _stop(worker, task)
    finally:
        await node.close()
    assert answer.fallback
    assert worker.jobs_done == 0 and worker.pool.snapshot().jobs == 0


@pytest.mark.slow
async def test_a_stopping_worker_ends_even_when_a_redis_call_loses_the_cancel(
    redis_prefix: str,  # noqa: F811
) -> None:
    # redis-py has been seen to lose a cancel that lands inside a command (its issues 2028
    # and 2551); a worker stopping then waited on its renewals for good. Here a renewal's
    # SET is slow (3 s, a Redis under strain) and eats the cancel that stopping sends it.
    worker, task = await _worker(redis_prefix, search="scripted_engines:steady",
                                 warm_up="scripted_engines:warm_up", renew=0.2)
    real_set = worker._client.set
    inside = asyncio.Event()
    eaten: list[float] = []

    async def set_losing_a_cancel(*args: object, **options: object) -> object:
        inside.set()
        try:
            await asyncio.sleep(3.0)
            return await real_set(*args, **options)
        except asyncio.CancelledError:
            eaten.append(time.monotonic())
            return None

    worker._client.set = set_losing_a_cancel
    await asyncio.wait_for(inside.wait(), 10)  # a renewal is inside the slow SET now
    stopped = time.monotonic()
    worker.stop()
    done, _ = await asyncio.wait({task}, timeout=10)
    took = time.monotonic() - stopped
    worker._client.set = real_set  # so that a worker still running takes the cancel below
    if not done:  # end it by cancelling its renewals, now that a cancel reaches them
        for other in asyncio.all_tasks():
            if other.get_name() == "discus-worker-renew":
                other.cancel()
        await asyncio.wait({task}, timeout=30)
    assert eaten, "the stop's cancel never reached a SET: the test proved nothing"
    assert done and took < 5, f"the worker was still running {took:.1f} s after stop()"


@pytest.mark.slow
async def test_moves_past_a_clusters_capacity_wait_their_turn_and_are_searched(
    redis_prefix: str,  # noqa: F811
) -> None:
    # One engine process in the cluster, each search 0.8 s: three moves asked at once wait
    # up to 1.6 s on the stream, well past the 0.3 s queue timeout, which counts only while
    # no worker is alive.
    node = await _node(redis_prefix, queue_timeout=0.3)
    worker, task = await _worker(redis_prefix, search="scripted_engines:unhurried",
                                 warm_up="scripted_engines:warm_up")
    try:
        await asyncio.sleep(2.5)  # the node re-reads the live workers every 2 s
        answers = await asyncio.wait_for(asyncio.gather(
            *(node.think(AiJob("connect4", (3,), PATIENT, seed)) for seed in range(3))), 30)
    finally:
        await _stop(worker, task)
        await node.close()
    assert [(a.fallback, a.depth) for a in answers] == [(False, 8)] * 3
    assert worker.jobs_done == 3 and node.snapshot().fallbacks == 0


def _spawn_stuck_worker(prefix: str) -> subprocess.Popen[bytes]:
    """A `discus worker` whose engine hangs mid-search, in a process group of its own."""
    code = (
        "import asyncio\n"
        "from server.engines.remote_worker import Worker\n"
        "from server.engines import AiPool\n"
        f"pool = AiPool(processes=1, games=('connect4',), search='scripted_engines:stuck',\n"
        "              warm_up='scripted_engines:warm_up')\n"
        f"asyncio.run(Worker({REDIS_URL!r}, prefix={prefix!r}, pool=pool, renew=0.2).run())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SCRIPTED, os.getcwd()])}
    return subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)


@pytest.mark.slow
async def test_a_job_held_by_a_killed_worker_is_searched_by_another_within_its_hard_time(
    redis_prefix: str,  # noqa: F811
) -> None:
    node = await _node(redis_prefix, queue_timeout=60.0, margin=1.0)
    holder = _spawn_stuck_worker(redis_prefix)
    try:
        client_wait = time.monotonic() + 60
        while not await live_workers(node._client, redis_prefix):
            assert time.monotonic() < client_wait, "the stuck worker never came up"
            await asyncio.sleep(0.1)
        started = asyncio.Event()
        thinking = asyncio.create_task(
            node.think(AiJob("connect4", (3,), PATIENT, 2), lambda _: started.set()))
        await asyncio.wait_for(started.wait(), 30)  # the holder's engine is searching
        first_start = time.monotonic()
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(10)
        rescuer, task = await _worker(redis_prefix, search="scripted_engines:steady",
                                      warm_up="scripted_engines:warm_up", claim_idle=0.5,
                                      renew=0.2)
        try:
            answer = await asyncio.wait_for(thinking, 30)
            answered = time.monotonic() - first_start
        finally:
            await _stop(rescuer, task)
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
        await node.close()
    # The rescuer's scripted engine always plays the last legal move at depth 3; the
    # node's quick fallback would have said so (fallback) and found no depth.
    assert not answer.fallback and answer.depth == 3
    assert answer.move == C4.parse_moves("4").legal_moves()[-1]
    assert answered < PATIENT.hard_time + 1.0
    assert rescuer.jobs_done == 1


@pytest.mark.slow
async def test_a_person_plays_the_ai_on_a_server_whose_moves_come_from_a_worker(
    node: QueuedPool, redis_prefix: str  # noqa: F811
) -> None:
    from wsclient import Client

    from server.app import running
    from server.storage.memory import MemoryStore

    worker, task = await _worker(redis_prefix)
    try:
        async with running(port=0, store=MemoryStore(), pool=node) as server:
            ann = await Client.open(server.url, "Ann")
            await ann.send(type="create_room", game="connect4",
                           opponent={"kind": "ai", "level": "easy"}, seat=1)
            state = await ann.expect("room_state")
            opening = await ann.expect("move_made", ply=0, timeout=20)
            await ann.send(type="move", room=state["room"]["id"], ply=1,
                           move=opening["position"]["legal_moves"][0])
            await ann.expect("move_made", ply=1)
            reply = await ann.expect("move_made", ply=2, timeout=20)
            await ann.close()
    finally:
        await _stop(worker, task)
    assert opening["thought"]["depth"] >= 1 and opening["seat"] == reply["seat"] == 0
    assert worker.jobs_done == 2 and node.snapshot().fallbacks == 0
