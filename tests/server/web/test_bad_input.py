"""Every kind of bad input gets a clear error, changes nothing, and the server stays up."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from websockets.exceptions import ConnectionClosed
from wsclient import Client, friends_game

from server.app import Running, Settings, running
from server.storage.memory import MemoryStore

SETTINGS = Settings(max_message_bytes=1024, messages_per_second=5.0, burst=10, flood_strikes=5)


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(port=0, store=MemoryStore(), settings=SETTINGS) as srv:
        yield srv


async def game(server: Running) -> tuple[Client, Client, str]:
    return await friends_game(server.url)


async def refused(client: Client, kind: str, **message: object) -> dict:
    """Send a request and return the error it gets (other traffic is skipped)."""
    await client.send(type=kind, **message)
    return await client.expect("error")


async def still_fine(client: Client) -> None:
    pong = await client.request("ping", id="still-there")
    assert pong == {"type": "pong", "id": "still-there"}


async def closed_with(client: Client) -> int | None:
    with pytest.raises(ConnectionClosed):
        for _ in range(50):
            await client.recv(timeout=5)
    return client.ws.close_code


async def test_malformed_json_is_refused_and_the_connection_stays(server: Running) -> None:
    client = await Client.open(server.url)
    await client.ws.send("{this is not json")
    error = await client.recv()
    assert error["type"] == "error" and error["code"] == "bad_json"
    await client.ws.send(b'{"type": "ping"}')
    assert (await client.recv())["code"] == "bad_json"
    await still_fine(client)


async def test_unknown_types_and_missing_fields_name_the_problem(server: Running) -> None:
    client = await Client.open(server.url)
    error = await client.request("fly", id=3)
    assert error["code"] == "unknown_type" and "fly" in error["message"]
    error = await client.request("move", id=4, room="abc", move="4")
    assert error["code"] == "bad_message" and error["detail"]["field"] == "ply"
    assert error["ref"] == 4
    error = await client.request("create_room", game="connect4", opponent={"kind": "robot"})
    assert error["code"] == "bad_message"
    await still_fine(client)


async def test_nothing_but_hello_before_hello(server: Running) -> None:
    client = await Client.open(server.url, hello=False)
    error = await client.request("list_rooms")
    assert error["code"] == "hello_required"
    await client.send(type="hello", version=1)
    assert (await client.recv())["type"] == "welcome"
    assert (await client.request("hello", version=1))["code"] == "hello_required"


async def test_a_connection_that_never_says_hello_is_closed_as_policy() -> None:
    settings = Settings(hello_seconds=0.3)
    async with running(port=0, store=MemoryStore(), settings=settings) as server:
        silent = await Client.open(server.url, hello=False)
        greeted = await Client.open(server.url)
        started = asyncio.get_running_loop().time()
        error = await silent.recv(timeout=5)
        assert error["code"] == "hello_required" and "no hello" in error["message"]
        assert await closed_with(silent) == 1008
        assert asyncio.get_running_loop().time() - started < 2
        await asyncio.sleep(0.3)
        await still_fine(greeted)


async def test_a_wrong_protocol_version_is_refused_and_closed_as_policy(server: Running) -> None:
    client = await Client.open(server.url, hello=False)
    error = await client.request("hello", version=99)
    assert error["code"] == "unsupported_version" and error["detail"]["supported"] == 1
    assert await closed_with(client) == 1008


async def test_an_unknown_resume_token_is_refused(server: Running) -> None:
    client = await Client.open(server.url, hello=False)
    error = await client.request("hello", version=1, resume="not-a-token")
    assert error["code"] == "bad_resume_token"


async def test_unknown_rooms_games_and_levels(server: Running) -> None:
    client = await Client.open(server.url)
    assert (await client.request("join_room", room="nowhere"))["code"] == "unknown_room"
    error = await client.request("move", room="nowhere", ply=0, move="4")
    assert error["code"] == "unknown_room" and error["room"] == "nowhere"
    error = await client.request("create_room", game="chess", opponent={"kind": "friend"})
    assert error["code"] == "unknown_game"
    error = await client.request("create_room", game="connect4",
                                 opponent={"kind": "ai", "level": "godlike"})
    assert error["code"] == "unknown_level"


async def test_illegal_out_of_turn_stale_and_garbled_moves_change_nothing(
    server: Running,
) -> None:
    ann, bob, room = await game(server)
    assert (await refused(bob, "move", room=room, ply=0, move="4"))["code"] == "not_your_turn"
    assert (await refused(ann, "move", room=room, ply=0, move="9"))["code"] == "invalid_notation"
    assert (await refused(ann, "move", room=room, ply=1, move="4"))["code"] == "stale_ply"
    for ply in range(6):
        await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move="1")
        await ann.expect("move_made", ply=ply)
    error = await refused(ann, "move", room=room, ply=6, move="1")
    assert error["code"] == "illegal_move"
    repeated = await refused(bob, "move", room=room, ply=5, move="1")
    assert repeated["code"] == "stale_ply" and repeated["detail"]["expected"] == 6
    stranger = await Client.open(server.url)
    assert (await refused(stranger, "move", room=room, ply=6, move="2"))["code"] == "not_seated"
    assert server.app.lobby.room(room).view().moves == ["1"] * 6


async def test_moves_in_a_finished_game_are_refused(server: Running) -> None:
    ann, bob, room = await game(server)
    await bob.send(type="resign", room=room)
    await ann.expect("game_over")
    assert (await refused(ann, "move", room=room, ply=0, move="4"))["code"] == "game_finished"
    assert (await refused(bob, "resign", room=room))["code"] == "game_finished"


async def test_an_oversized_message_gets_an_error_and_closes_with_1009(server: Running) -> None:
    client = await Client.open(server.url)
    await client.send(type="ping", id="x" * 2000)
    error = await client.recv()
    assert error["code"] == "message_too_big"
    assert await closed_with(client) == 1009
    await still_fine(await Client.open(server.url))


async def test_a_huge_frame_is_cut_off_by_the_websocket_layer_with_1009(server: Running) -> None:
    client = await Client.open(server.url)
    with pytest.raises(ConnectionClosed):
        await client.ws.send("x" * 1_000_000)
        await client.recv()
    assert client.ws.close_code == 1009
    await still_fine(await Client.open(server.url))


async def test_a_flood_is_rate_limited_then_closed_as_policy(server: Running) -> None:
    client = await Client.open(server.url)
    for i in range(SETTINGS.burst + SETTINGS.flood_strikes + 5):
        try:
            await client.send(type="ping", id=i)
        except ConnectionClosed:
            break
    codes = []
    with pytest.raises(ConnectionClosed):
        for _ in range(100):
            message = await client.recv()
            codes.append(message.get("code", message["type"]))
    assert codes.count("pong") == SETTINGS.burst - 1  # hello took the first token
    assert "rate_limited" in codes
    assert client.ws.close_code == 1008
    await still_fine(await Client.open(server.url))


@pytest.mark.slow
async def test_a_client_steadily_sending_twice_the_rate_is_closed_not_throttled_forever(
    server: Running,
) -> None:
    client = await Client.open(server.url)
    codes: list[str] = []

    async def read() -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                message = await client.recv(timeout=10)
                codes.append(message.get("code", message["type"]))

    reader = asyncio.create_task(read())
    for i in range(int(10 * SETTINGS.messages_per_second * 2)):  # ten seconds at twice the rate
        if reader.done():
            break
        with contextlib.suppress(ConnectionClosed):
            await client.send(type="ping", id=i)
        await asyncio.sleep(0.5 / SETTINGS.messages_per_second)
    await reader
    assert client.ws.close_code == 1008
    # Accepted and refused messages alternated before the close: accepting never forgave.
    refused_at = [i for i, code in enumerate(codes) if code == "rate_limited"]
    assert len(refused_at) == SETTINGS.flood_strikes
    assert "pong" in codes[refused_at[0]:refused_at[-1]]
    await still_fine(await Client.open(server.url))


async def test_a_client_that_slows_down_after_a_rate_limit_carries_on(server: Running) -> None:
    client = await Client.open(server.url)
    for i in range(SETTINGS.burst):
        await client.send(type="ping", id=i)
    replies = [await client.recv() for _ in range(SETTINGS.burst)]
    limited = replies[-1]
    assert limited["code"] == "rate_limited" and limited["detail"]["retry_after"] > 0
    await asyncio.sleep(limited["detail"]["retry_after"] + 0.05)
    await still_fine(client)


async def test_the_server_survives_garbage_from_many_clients_at_once(server: Running) -> None:
    async def abuse(i: int) -> None:
        client = await Client.open(server.url)
        for frame in ("{", "[]", json.dumps({"type": "move"}), "null", '"x"'):
            await client.ws.send(frame)
        await client.close()

    await asyncio.gather(*(abuse(i) for i in range(20)))
    await still_fine(await Client.open(server.url))


@pytest.mark.parametrize("message", [
    {"type": "ping", "id": "\ud800"},
    {"type": "hello", "version": 1, "name": "Ann\udfff"},
    {"type": "list_rooms", "id": 7, "\ud83d": 1},
    {"type": "chat", "game_id": None, "text": "hi \ud83d there"},
])
async def test_a_lone_surrogate_in_any_string_is_a_bad_message_and_the_connection_stays(
    server: Running, message: dict[str, object],
) -> None:
    client = await Client.open(server.url, hello=message["type"] != "hello")
    await client.ws.send(json.dumps(message))  # ensure_ascii: "\ud800" as its escape
    error = await client.expect("error")
    assert error["code"] == "bad_message" and "surrogate" in error["message"]
    assert error["ref"] == (7 if message.get("id") == 7 else None)  # a bad id is not echoed
    if message["type"] == "hello":
        await client.send(type="hello", version=1, name="Ann")
        await client.expect("welcome")
    await still_fine(client)


@pytest.mark.parametrize("number", [2**63, -(2**63) - 1, 10**30])
async def test_an_integer_past_64_bits_anywhere_is_a_bad_message(
    server: Running, number: int,
) -> None:
    client = await Client.open(server.url)
    error = await client.request("move", id=number, room="abc", move="4", ply=1)
    assert error["code"] == "bad_message" and error["detail"]["field"] == "id"
    assert error["ref"] is None
    error = await client.request("move", id=5, room="abc", move="4", ply=number)
    assert error["code"] == "bad_message" and error["detail"]["field"] == "ply"
    assert "64-bit" in error["message"] and error["ref"] == 5
    await still_fine(client)
