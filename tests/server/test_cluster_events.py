"""Room events between cluster nodes, on a real Redis: ``Cluster`` objects in one process,
each with a stand-in for the server it runs in that records what it is asked to deliver.

(Whole servers as nodes are in ``test_cluster``; real processes in
``test_cluster_processes``.)
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterable

import pytest
import redis.asyncio as aioredis

from server.cluster import Cluster, ClusterSettings
from tests.storage.conftest import REDIS_URL

FAST = ClusterSettings(lease_seconds=1.5, renew_seconds=0.3, forward_timeout=5.0)


class Recorder:
    """A node's server reduced to what the cluster calls: it keeps what it is given."""

    def __init__(self) -> None:
        self.delivered: list[tuple[list[str], str]] = []
        self.revoked: list[tuple[str, str | None, str | None]] = []

    async def run_forwarded(self, player: tuple[str, str, bool], message: str) -> str | None:
        return None

    async def presence_changed(self, player_id: str, room_id: str, online: bool) -> None:
        return None

    async def answer(self, question: str) -> str:
        return "{}"

    async def take_over(self, room_id: str, game_id: str, epoch: int,
                        watchers: list[str]) -> bool:
        return False

    def let_go(self, room_id: str) -> str | None:
        return None

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None:
        self.delivered.append((list(player_ids), data))

    def close_revoked(self, player_id: str, session_id: str | None, keep: str | None) -> None:
        self.revoked.append((player_id, session_id, keep))

    def data(self) -> list[str]:
        return [data for _, data in self.delivered]


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    name = f"discus-test-events-{uuid.uuid4().hex[:12]}"
    yield name
    client = aioredis.Redis.from_url(REDIS_URL)
    names = [k async for k in client.scan_iter(match=f"{name}:*", count=500)]
    if names:
        await client.delete(*names)
    await client.aclose()


async def _node(prefix: str, name: str) -> tuple[Cluster, Recorder]:
    recorder = Recorder()
    cluster = Cluster(REDIS_URL, prefix=prefix, settings=FAST, node=name)
    await cluster.open(recorder)
    cluster.start()
    return cluster, recorder


async def _until(check: object, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("not within the time")
        await asyncio.sleep(0.02)


async def test_every_event_published_before_a_node_stops_reaches_the_other_nodes(
    prefix: str,
) -> None:
    one, _ = await _node(prefix, "one")
    two, heard = await _node(prefix, "two")
    try:
        await two.connected("bob", online=True)
        for n in range(20):
            one.publish(["bob"], f"early {n}")
        await asyncio.sleep(0)  # the publisher takes the first events
        for n in range(20):
            one.publish(["bob"], f"late {n}")
        one.publish_revoked("bob", "s1", None)
        await one.close()  # the stop marker lands behind the events
        expected = [f"early {n}" for n in range(20)] + [f"late {n}" for n in range(20)]
        await _until(lambda: len(heard.delivered) == len(expected) and heard.revoked)
        assert heard.data() == expected
        assert heard.revoked == [("bob", "s1", None)]
    finally:
        await two.close()
