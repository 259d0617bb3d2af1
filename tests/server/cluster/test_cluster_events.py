"""Room events between cluster nodes, on a real Redis: ``Cluster`` objects in one process,
each with a stand-in for the server it runs in that records what it is asked to deliver.

(Whole servers as nodes are in ``test_cluster``; real processes in
``test_cluster_processes``.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

import pytest
import redis.asyncio as aioredis

from server.cluster.cluster import Cluster
from server.cluster.inboxes import OwnerGone
from tests.server.cluster.conftest import FAST
from tests.server.storage.conftest import REDIS_URL


class Recorder:
    """A node's server reduced to what the cluster calls: it keeps what it is given."""

    def __init__(self) -> None:
        self.delivered: list[tuple[list[str], str]] = []
        self.revoked: list[tuple[str, str | None, str | None]] = []
        self.ran: list[str] = []

    async def run_forwarded(self, player: tuple[str, str, bool], message: str,
                            node: str) -> str | None:
        self.ran.append(message)
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


async def _room(owner: Cluster, room_id: str, people: list[str]) -> None:
    """``owner`` runs a room of these people, registered as the server does."""
    assert await owner.claim(room_id) is not None
    await owner.register(room_id, f"{room_id}-1", people, [], None)


async def test_events_of_a_room_whose_people_are_all_on_its_node_never_reach_redis(
    prefix: str,
) -> None:
    one, _ = await _node(prefix, "one")
    two, heard = await _node(prefix, "two")
    try:
        for player in ("ann", "bob"):
            await one.connected(player, online=True)
        await _room(one, "ROOM1", ["ann", "bob"])
        before = one.redis_counts()
        for n in range(1000):
            one.publish(["ann", "bob"], f'{{"type":"move_made","ply":{n},"pad":"{"x" * 80}"}}')
        await asyncio.sleep(0.3)
        after = one.redis_counts()
        assert after["events_local"] - before["events_local"] == 1000
        assert after["events_published"] == before["events_published"]
        assert after["lookups"] == before["lookups"]
        # Whatever else the node sent meanwhile (its inbox reads), not 100 KB of events.
        assert after["bytes_sent"] - before["bytes_sent"] < 2000
        assert heard.delivered == []
    finally:
        await one.close()
        await two.close()


async def test_an_event_for_a_player_on_another_node_reaches_that_node_and_no_other(
    prefix: str,
) -> None:
    one, on_one = await _node(prefix, "one")
    two, on_two = await _node(prefix, "two")
    three, on_three = await _node(prefix, "three")
    try:
        await one.connected("ann", online=True)
        await two.connected("bob", online=True)
        await three.connected("cat", online=True)
        await _room(one, "ROOM1", ["ann", "bob"])
        for n in range(5):
            one.publish(["ann", "bob"], f"move {n}")
        await _until(lambda: len(on_two.delivered) == 5)
        assert on_two.delivered == [(["ann", "bob"], f"move {n}") for n in range(5)]
        assert one.redis_counts()["events_published"] == 5  # once each, to node two
        assert one.redis_counts()["lookups"] == 0  # read when the room was registered
        # Bob opens a second connection, on node three: the room's owner hears of it, and
        # sends his events there too; he closes the one on node two: no longer there.
        await three.connected("bob", online=True)
        await _until(lambda: "three" in one.presence.where["bob"])
        one.publish(["ann", "bob"], "move 5")
        await _until(lambda: on_three.data() == ["move 5"] and len(on_two.delivered) == 6)
        assert await two.connected("bob", online=False)  # still connected on three
        await _until(lambda: "two" not in one.presence.where["bob"])
        one.publish(["ann", "bob"], "move 6")
        await _until(lambda: on_three.data() == ["move 5", "move 6"])
        # Cat is in none of node one's rooms: where she is is read for each event to her.
        one.publish(["cat"], "a challenge")
        one.publish(["cat"], "another")
        await _until(lambda: on_three.data()[2:] == ["a challenge", "another"])
        assert one.redis_counts()["lookups"] == 1  # both in one batch: one read
        await asyncio.sleep(0.2)
        assert on_two.data() == [f"move {n}" for n in range(6)]
        assert on_one.delivered == []
        assert three.redis_counts()["events_received"] == 4
    finally:
        for cluster in (one, two, three):
            await cluster.close()


async def test_a_room_given_up_no_longer_keeps_where_its_people_are(prefix: str) -> None:
    one, _ = await _node(prefix, "one")
    two, on_two = await _node(prefix, "two")
    try:
        await two.connected("bob", online=True)
        await _room(one, "ROOM1", ["ann", "bob"])
        assert one.presence.where["bob"] == {"two"}
        await one.forget("ROOM1")
        assert "bob" not in one.presence.where  # presence news of Bob no longer comes here
        one.publish(["bob"], "rating change")
        await _until(lambda: on_two.data() == ["rating change"])
        assert one.redis_counts()["lookups"] == 1
    finally:
        await one.close()
        await two.close()


async def test_after_redis_lost_every_key_events_find_the_players_nodes_again(
    prefix: str,
) -> None:
    one, _ = await _node(prefix, "one")
    two, on_two = await _node(prefix, "two")
    try:
        await two.connected("bob", online=True)
        await _room(one, "ROOM1", ["ann", "bob"])
        redis = aioredis.Redis.from_url(REDIS_URL)
        await redis.delete(*[k async for k in redis.scan_iter(match=f"{prefix}:*", count=500)])
        await redis.aclose()
        # Node one runs the room again at once: Bob's presence set is gone when it looks.
        await one.forget("ROOM1")
        await _room(one, "ROOM1", ["ann", "bob"])
        await _until(lambda: one.presence.where.get("bob") == {"two"})  # node two said he is there
        one.publish(["ann", "bob"], "move 1")
        await _until(lambda: on_two.data() == ["move 1"])
    finally:
        await one.close()
        await two.close()


async def test_a_draining_node_hands_its_rooms_over_and_runs_no_more_commands_for_them(
    prefix: str,
) -> None:
    one, on_one = await _node(prefix, "one")
    two, on_two = await _node(prefix, "two")
    try:
        await two.connected("bob", online=True)
        await _room(one, "ROOM1", ["ann", "bob"])
        await two.forward("one", "ROOM1", ("bob", "Bob", False), "before")
        assert on_one.ran == ["before"]
        await one.drain()
        assert await two.owner("ROOM1") is None and not one.owned
        assert await two.live_nodes() == ["two"]  # the others take its rooms at once
        assert await one.claim("ROOM2") is None
        with pytest.raises(OwnerGone):  # left for the next owner, which two finds
            await two.forward("one", "ROOM1", ("bob", "Bob", False), "after")
        one.publish(["ann", "bob"], "said before the clients close")
        await one.close()
        await _until(lambda: on_two.data() == ["said before the clients close"])
        assert on_one.ran == ["before"]
    finally:
        await one.close()
        await two.close()
