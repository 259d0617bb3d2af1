"""What one address can do to everybody else's challenges and open list, over real websockets
on loopback (127.0.0.2, 127.0.0.3, ... are distinct clients' addresses), on one server and
on two nodes of a cluster over real Redis."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
import redis.asyncio as aioredis
from wsclient import Client

from server import protocol as p
from server.app import Running, Settings, running
from server.cluster.cluster import Cluster
from server.cluster.leases import ClusterSettings
from server.play.lobby import OPEN_LIST_AGE, OPEN_LIST_PER_SOURCE, pick_open
from server.storage import SqlStore
from server.web.sources import SourceLimits
from tests.server.storage.conftest import REDIS_URL, create_database, drop_database

FAST = ClusterSettings(lease_seconds=1.5, renew_seconds=0.3, forward_timeout=5.0)
FLOODABLE = Settings(grace_seconds=0.5, sources=SourceLimits(rooms_per_minute=1000),
                     shed_lag_seconds=60.0)
"""The rooms one address may create a minute raised: the open list must hold even when an
address makes rooms faster than the default lets it (``test_sources.py`` holds that limit).
No shedding for a slow loop: two nodes in one process on a busy machine run late, and
shedding has tests of its own (``test_overload.py``)."""


@pytest.fixture
async def one() -> AsyncIterator[Running]:
    async with running(port=0, settings=FLOODABLE) as server:
        yield server


@pytest.fixture
async def two() -> AsyncIterator[tuple[Running, Running]]:
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    url, name = await create_database()
    try:
        async with AsyncExitStack() as stack:
            nodes = [await stack.enter_async_context(running(
                store=SqlStore(url), secret=b"floods", settings=FLOODABLE,
                cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST))) for _ in range(2)]
            yield nodes[0], nodes[1]
    finally:
        await drop_database(name)
        client = aioredis.Redis.from_url(REDIS_URL)
        found = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
        if found:
            await client.delete(*found)
        await client.aclose()


async def _challenge_flood(first: Running, second: Running) -> None:
    bob = await Client.open(second.url, "Bob", source="127.0.0.5")
    spammers = [await Client.open(first.url, f"Spam {n}", source="127.0.0.2") for n in range(6)]
    answers = []
    for spammer in spammers:
        await spammer.send(type="challenge", player=bob.player_id, game="connect4")
        answer = await spammer.recv()
        answers.append((answer["type"], answer.get("detail", {}).get("limit")))
    assert answers[:3] == [("challenge_sent", None)] * 3
    assert answers[3:] == [("error", "challenges_per_target")] * 3
    friend = await Client.open(first.url, "Cat", source="127.0.0.3")
    await friend.send(type="challenge", player=bob.player_id, game="othello")
    await friend.expect("challenge_sent")
    # The spammers leave; Bob comes back and is offered only the challenge of who is still
    # here: those of players who have gone are dropped, not replayed.
    for spammer in spammers:
        await spammer.close()
    resume = bob.welcome["resume"]
    await bob.close()
    back = await Client.open(second.url, None, resume=resume, source="127.0.0.5")
    offer = await back.expect("challenge")
    assert offer["challenger"]["name"] == "Cat"
    await back.send(type="ping", id=1)
    await back.expect("pong")
    assert [m for m in back.seen if m["type"] == "challenge"] == [offer]


async def test_challenges_from_one_address_are_capped_per_target_and_dropped_once_gone(
    one: Running,
) -> None:
    await _challenge_flood(one, one)


async def test_challenges_across_a_cluster_are_capped_per_target_and_dropped_once_gone(
    two: tuple[Running, Running],
) -> None:
    await _challenge_flood(*two)


async def _lobby_flood(first: Running, second: Running) -> None:
    real = await Client.open(second.url, "Real", source="127.0.0.3")
    await real.send(type="create_room", game="connect4", opponent={"kind": "open"}, seat=0)
    mine = (await real.expect("room_state"))["room"]["id"]
    flooders = [await Client.open(first.url, f"Guest {n}", source="127.0.0.2")
                for n in range(20)]
    for flooder in flooders:  # 120 rooms in all, every one newer than the real one
        for _ in range(6):
            await flooder.send(type="create_room", game="othello", opponent={"kind": "open"},
                               seat=0)
            await flooder.expect("room_state")
    for node in (first, second):
        looker = await Client.open(node.url, "Looker", source="127.0.0.4")
        listed = (await looker.request("list_rooms"))["rooms"]
        ids = [r["id"] for r in listed]
        assert mine in ids
        assert len(ids) == 1 + OPEN_LIST_PER_SOURCE, ids


async def test_one_address_cannot_push_real_rooms_off_the_open_list(one: Running) -> None:
    await _lobby_flood(one, one)


async def test_one_address_cannot_push_real_rooms_off_a_clusters_open_list(
    two: tuple[Running, Running],
) -> None:
    await _lobby_flood(*two)


def test_the_open_list_leaves_off_old_rooms_and_keeps_each_sources_newest() -> None:
    def summary(room_id: str) -> p.RoomSummary:
        return p.RoomSummary(id=room_id, game="connect4", seats=[], status="waiting", ply=0,
                             spectators=0)

    now = 10_000.0
    waiting = [(now - OPEN_LIST_AGE - 1, "a", summary("old")),
               *((now - n, "b", summary(f"b{n}")) for n in range(5)),
               (now - 100, "c", summary("c"))]
    shown = [r.id for r in pick_open(waiting, now).rooms]
    assert OPEN_LIST_PER_SOURCE == 3
    assert shown == ["b0", "b1", "b2", "c"]
