"""Every message between the server and its engines is a type, and one encoding carries each
of them on the local pipe and on the Redis streams alike: a job answered through Redis comes
back exactly as through the pipe."""

from __future__ import annotations

import asyncio
import dataclasses
import typing

import pytest

from ai.levels import DEFAULT_LEVELS, Level
from server.engines import AiAnswer, AiJob, AiPool, CacheCounts, Progress, QueuedPool
from server.engines.messages import (
    COUNTED,
    FROM_ENGINE,
    REPLIES,
    TO_ENGINE,
    Answered,
    Failed,
    GiveBack,
    Message,
    Posted,
    Ready,
    RunTask,
    Started,
    Stop,
    TaskDone,
    TaskGivenBack,
    TaskRaised,
    Think,
    Thinking,
    WorkerAlive,
    decode,
    encode,
)
from server.engines.remote_worker import Worker
from server.engines.stream import live_workers
from server.storage import keys
from server.storage.config import async_redis
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    REDIS_URL,
    redis_prefix,
)

LEVEL = DEFAULT_LEVELS["othello"][1]
JOB = AiJob("othello", (19, 18, 17), LEVEL, 42)
ANSWER = AiAnswer(20, 7, -3, 12345, 0.25, cached=True, exact=True,
                  cache=CacheCounts(11, 9, 1, 1), cpu=0.2)

ONE_OF_EACH: list[Message] = [
    Think("7", JOB),
    Posted("node-7", "node", JOB, 1_700_000_000.5),
    Started("node-7", 1_700_000_001.25),
    Thinking("7", Progress(5, -2, 9000, 0.4, False)),
    Answered("7", ANSWER),
    Answered("8", AiAnswer(3, None, None, None, 0.001, fallback=True)),
    Failed("7", "ValueError: no such move"),
    Ready(12.5, ("othello",)),
    Stop(),
    RunTask("3", "ai.review:review_moves", ("connect4", (3, 3, 2), 1.5)),
    GiveBack("3"),
    TaskDone("3", {"values": (1, -2), "exact": [True, False]}),
    TaskRaised("3", "RuntimeError: boom"),
    TaskGivenBack("3"),
    WorkerAlive("host-1-abc", 2, 1, 118, 0, CacheCounts(4, 3, 0, 1)),
]


def test_every_message_comes_back_from_the_one_encoding_as_it_went_in() -> None:
    assert {type(m) for m in ONE_OF_EACH} == set(typing.get_args(Message))
    for message in ONE_OF_EACH:
        assert decode(encode(message), type(message)) == message


def test_the_pipe_and_the_streams_each_read_only_their_own_messages() -> None:
    assert set(TO_ENGINE) | set(FROM_ENGINE) | set(REPLIES) | {Posted, WorkerAlive} == set(
        typing.get_args(Message))
    for message in ONE_OF_EACH:
        for readers in (TO_ENGINE, FROM_ENGINE, REPLIES):
            if type(message) in readers:
                assert decode(encode(message), *readers) == message
            else:
                with pytest.raises(ValueError, match="was not expected"):
                    decode(encode(message), *readers)


unpickled: list[str] = []


def _explode() -> None:
    unpickled.append("boom")


class Explosive:
    """Runs ``_explode`` when unpickled: what a crafted entry in Redis could do."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return _explode, ()


def test_a_task_read_where_only_replies_are_expected_is_refused_before_unpickling() -> None:
    crafted = encode(TaskDone("1", Explosive()))
    with pytest.raises(ValueError):
        decode(crafted, *REPLIES)
    assert unpickled == []
    decode(crafted, *FROM_ENGINE)  # the pipe from a process of the server's own
    assert unpickled == ["boom"]


def test_a_malformed_message_is_a_value_error() -> None:
    for data in (b"", b"[1]", b'{"kind": "nope"}', b'{"kind": "answered", "job_id": "1"}',
                 b'{"kind": "think", "job_id": "1", "job": {"game": "othello", "moves": [],'
                 b' "level": {"name": "x"}, "seed": 1}}'):
        with pytest.raises(ValueError):
            decode(data, *FROM_ENGINE, *TO_ENGINE, *REPLIES)


PATIENT = Level("patient", 0, "", None, 5.0, 10.0, None, candidates=1, margin=0, rails=False)
"""Shows its first iteration at once; the scripted engine's next two come within 0.2 s."""


def _scripted_pool() -> AiPool:
    return AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")


@pytest.mark.slow
async def test_a_job_answered_through_redis_is_answered_as_through_the_pipe(
    redis_prefix: str,  # noqa: F811
) -> None:
    job = AiJob("connect4", (3, 3), PATIENT, 7)
    pool = _scripted_pool()
    node = QueuedPool(REDIS_URL, games=("connect4",), prefix=redis_prefix, queue_timeout=30.0)
    worker = Worker(REDIS_URL, prefix=redis_prefix, pool=_scripted_pool())
    ready = asyncio.Event()
    await pool.start(wait_ready=True, timeout=60)
    await node.start()
    running = asyncio.create_task(worker.run(ready))
    try:
        await asyncio.wait_for(ready.wait(), 60)
        piped: list[Progress] = []
        queued: list[Progress] = []
        by_pipe = await pool.think(job, piped.append)
        by_redis = await node.think(job, queued.append)
    finally:
        worker.stop()
        await asyncio.wait_for(running, 30)
        await node.close()
        await pool.close()
    assert not by_pipe.fallback and by_pipe.move == 6 and by_pipe.depth == 3
    # Everything but the time taken (wall clock and CPU) is the same answer, field for field.
    assert by_pipe.cpu > 0 and by_redis.cpu > 0
    assert (dataclasses.replace(by_redis, seconds=0.0, cpu=0.0)
            == dataclasses.replace(by_pipe, seconds=0.0, cpu=0.0))
    assert queued == piped == [Progress(1, 1, 10, 0.001, False)]


async def test_a_live_worker_key_nobody_understands_is_skipped_not_fatal(
    redis_prefix: str,  # noqa: F811
) -> None:
    alive = WorkerAlive("host-1-abc", 2, 1, 118, 0, CacheCounts(4, 3, 0, 1))
    client = async_redis(REDIS_URL)
    try:
        await client.set(keys.ai_worker(redis_prefix, alive.name), encode(alive), ex=10)
        await client.set(keys.ai_worker(redis_prefix, "old"), b'{"name": "old"}', ex=10)
        assert await live_workers(client, redis_prefix) == [alive]
    finally:
        await client.aclose()


def test_cache_counts_as_a_dict_name_every_counter_the_pools_sum() -> None:
    counts = CacheCounts(*range(1, len(COUNTED) + 1))
    assert counts.as_dict() == dataclasses.asdict(counts)
    assert tuple(counts.as_dict()) == COUNTED
