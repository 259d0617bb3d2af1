"""A restarted server brings back unfinished games from its store; players resume them."""

from __future__ import annotations

import asyncio

import pytest
from wsclient import Client

from server.app import running
from server.storage.memory import MemoryStore
from server.storage.store import GameRecord, MoveRecord, PlayerRecord

SECRET = b"a test secret shared by both runs"


async def test_players_resume_an_unfinished_game_after_a_restart() -> None:
    store = MemoryStore()
    async with running(port=0, store=store, secret=SECRET) as first:
        ann = await Client.open(first.url, "Ann")
        bob = await Client.open(first.url, "Bob")
        await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
        room = (await ann.expect("room_state"))["room"]["id"]
        await bob.send(type="join_room", room=room)
        await bob.expect("room_state")
        for ply, text in enumerate(["4", "4", "3"]):
            await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move=text)
            await ann.expect("move_made", ply=ply)
        tokens = ann.welcome["resume"], bob.welcome["resume"]
    async with running(port=0, store=store, secret=SECRET) as second:
        ann = await Client.open(second.url, None, resume=tokens[0])
        state = await ann.expect("room_state")
        assert ann.welcome["player"]["name"] == "Ann"
        assert state["room"]["id"] == room and state["you"] == 0
        assert state["room"]["moves"] == ["4", "4", "3"]
        assert state["room"]["seats"][1]["connected"] is False
        bob = await Client.open(second.url, None, resume=tokens[1])
        assert (await bob.expect("room_state"))["you"] == 1
        await ann.expect("room_event", event="reconnected", seat=1)
        await bob.send(type="move", room=room, ply=3, move="3")
        assert (await ann.expect("move_made", ply=3))["seat"] == 1


async def test_an_ai_whose_turn_it_was_moves_as_soon_as_the_server_is_back() -> None:
    store = MemoryStore()
    await store.save_player(PlayerRecord("p1", "Ann", "guest", 0.0))
    await store.save_game(GameRecord(
        id="room1-1", game="connect4", players=("p1", None), ai_level="beginner", ai_seat=1,
        status="active", start_position="", created_at=0.0,
    ))
    await store.append_move(MoveRecord("room1-1", 0, "4", 0, 1.0, 0.0))
    async with running(port=0, store=store, secret=SECRET) as server:
        for _ in range(100):
            stored = await store.load_game("room1-1")
            assert stored is not None
            if len(stored[1]) == 2:
                break
            await asyncio.sleep(0.02)
        assert [m.seat for m in stored[1]] == [0, 1]
        token = server.app.identity.token_for("p1")
        ann = await Client.open(server.url, None, resume=token)
        state = await ann.expect("room_state")
        assert state["room"]["id"] == "room1" and state["room"]["position"]["ply"] == 2
        assert state["room"]["position"]["to_move"] == 0


async def test_a_token_signed_with_another_secret_is_refused() -> None:
    async with running(port=0, store=MemoryStore(), secret=b"one") as server:
        forged = server.app.identity.token_for("p1")
    async with running(port=0, store=MemoryStore(), secret=b"two") as server:
        client = await Client.open(server.url, hello=False)
        error = await client.request("hello", version=1, resume=forged)
        assert error["code"] == "bad_resume_token"


@pytest.mark.slow
async def test_a_casual_game_showing_the_evaluation_still_shows_it_after_a_restart() -> None:
    """The creator's wish to see the engine's evaluation is stored with the game: after a
    restart the AI's thinking still carries its score (the scripted engine scores 0)."""
    from server.engines import AiPool

    async def scripted() -> AiPool:
        pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:unhurried",
                      warm_up="scripted_engines:warm_up")
        await pool.start(wait_ready=True, timeout=60)
        return pool

    store = MemoryStore()
    async with running(port=0, store=store, secret=SECRET, pool=await scripted()) as first:
        ann = await Client.open(first.url, "Ann")
        await ann.send(type="create_room", game="connect4", seat=1, opponent={
            "kind": "ai", "level": "easy", "evaluation": True})
        made = await ann.expect("move_made", ply=0, timeout=30)
        assert made["thought"]["score"] == 0
        token = ann.welcome["resume"]
    async with running(port=0, store=store, secret=SECRET, pool=await scripted()) as second:
        ann = await Client.open(second.url, None, resume=token)
        await ann.expect("room_state")
        ann.seen.clear()
        await ann.send(type="move", room=made["room"], ply=1, move="1")
        reply = await ann.expect("move_made", ply=2, timeout=30)
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["score"] == 0 for m in thinking)
        assert reply["thought"]["score"] == 0
