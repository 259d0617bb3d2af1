"""The engine helps nobody in a live rated game on any node of a cluster: two nodes in one
process over a real PostgreSQL and Redis; the room runs on one, and a guest on the other asks
for its positions (``server.cluster.live_positions``)."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from wsclient import Client, friends_game

import games
from server.app import Running
from server.cluster.live_positions import (
    LIVE_POSITION_SECONDS,
    RENEW_AFTER,
    SharedLivePositions,
)
from server.storage import keys
from tests.server.reviews.test_live_positions import (
    DEEP,
    LIVE,
    mirrored,
    play,
    rated_game,
    refused,
)
from tests.server.storage.conftest import REDIS_URL


def live_keys(prefix: str) -> str:
    return f"{prefix}:live-position:*"


@pytest.mark.slow
async def test_a_guest_on_another_node_is_refused_a_live_rated_games_positions(
    nodes: tuple[Running, Running], prefix: str,
) -> None:
    one, two = nodes
    ann, bob, room = await rated_game(one, LIVE)
    assert room in one.app.lobby.rooms and room not in two.app.lobby.rooms

    # On the other node: the position, mirrored, before both last moves, one move on.
    guest = await Client.open(two.url, "Helper", source="127.0.0.7")
    await refused(guest, DEEP[:LIVE], "now")
    await refused(guest, mirrored(DEEP[:LIVE]), "mirror")
    await refused(guest, DEEP[:LIVE - 4], "stood")
    await refused(guest, DEEP[:LIVE + 1], "ahead")
    assert not two.app.reviews._held and not two.app.reviews.tasks, "nothing was started"

    # A review asked there of a casual game through the position is refused too.
    carl, dora, casual = await friends_game(two.url)
    await play(carl, dora, casual, DEEP[:LIVE + 2])
    await carl.send(type="resign", room=casual)
    await carl.expect("game_over")
    await carl.send(type="request_review", game_id=f"{casual}-1", id="r")
    answer = await carl.recv(timeout=10.0)
    while answer.get("ref") != "r" and answer["type"] != "review":
        answer = await carl.recv(timeout=10.0)
    assert (answer["type"], answer.get("code")) == ("error", "engine_help_refused"), answer
    assert answer["detail"]["ply"] == LIVE - 4

    # Each position carries a TTL, so a dead node's lapse.
    redis = aioredis.Redis.from_url(REDIS_URL)
    try:
        names = [k async for k in redis.scan_iter(match=live_keys(prefix), count=500)]
        assert names
        for name in names:
            assert 0 < await redis.ttl(name) <= LIVE_POSITION_SECONDS
            assert await redis.smembers(name) == {room.encode()}

        # The game ends on its node: the other node frees its positions at once.
        await ann.send(type="resign", room=room)
        await ann.expect("game_over")
        c4 = games.load("connect4")
        state = c4.parse_moves("".join(DEEP[:LIVE]))
        assert await two.app.reviews.live.elsewhere(c4, [state]) is None
        assert [k async for k in redis.scan_iter(match=live_keys(prefix), count=500)] == []
    finally:
        await redis.aclose()
    for client in (ann, bob, guest, carl, dora):
        await client.close()


async def test_a_rooms_positions_are_renewed_while_its_game_stands_still_and_freed_after(
    prefix: str,
) -> None:
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    clock = [0.0]
    shared = SharedLivePositions(redis, prefix, now=lambda: clock[0])
    try:
        here, there = ("connect4", 1, 2), ("connect4", 4, 8)
        await shared.publish("ROOM1", {here, there})
        name = keys.live_position(prefix, *here)
        assert await redis.smembers(name) == {"ROOM1"}
        assert await shared.first_standing([{("connect4", 9, 9)}, {there}]) == 1
        await redis.expire(name, 5)
        clock[0] = RENEW_AFTER - 1
        await shared.renew()  # written recently: left alone
        assert await redis.ttl(name) <= 5
        clock[0] = RENEW_AFTER + 1
        await shared.renew()
        assert await redis.ttl(name) > LIVE_POSITION_SECONDS - 10
        await shared.publish("ROOM1", {there})  # the game moved on
        assert not await redis.exists(name)
        await shared.publish("ROOM1", ())  # it ended
        assert await shared.first_standing([{here}, {there}]) is None
    finally:
        await redis.aclose()
