"""A book move is shown as one: the Othello expert's first moves come from its opening book,
and their ``move_made.thought`` says so (``book``, no nodes) rather than posing as a
search; a move the position cache answered says so too (``cached``)."""

from __future__ import annotations

import pytest
from wsclient import Client

from server.app import running
from server.engines import AiPool, CacheSettings
from server.storage.memory import MemoryStore

pytestmark = pytest.mark.timeout(240)


@pytest.mark.slow
async def test_the_experts_book_move_is_announced_as_a_book_move() -> None:
    pool = AiPool(processes=1, games=("othello",))
    await pool.start(wait_ready=True, timeout=180)
    async with running(store=MemoryStore(), pool=pool) as server:
        bob = await Client.open(server.url, "Bob", patience=30)
        await bob.send(type="create_room", game="othello",
                       opponent={"kind": "ai", "level": "expert", "evaluation": True}, seat=1)
        await bob.expect("room_state")
        first = await bob.expect("move_made", ply=0)
        thought = first["thought"]
        assert thought is not None and thought["book"] is True and thought["nodes"] == 0
        assert first["move"] in ("d3", "c4", "f5", "e6")


@pytest.mark.slow
async def test_a_move_the_position_cache_answers_says_so_rather_than_zero_nodes() -> None:
    pool = AiPool(processes=1, games=("connect4",), cache=CacheSettings(None, None))
    await pool.start(wait_ready=True, timeout=180)
    try:
        async with running(store=MemoryStore(), pool=pool) as server:
            thoughts = []
            for name in ("Ann", "Bob"):  # the same opening twice: the second is remembered
                person = await Client.open(server.url, name, patience=30)
                # medium: beginner's and easy's shallow searches skip the cache
                await person.send(type="create_room", game="connect4", seat=0, opponent={
                    "kind": "ai", "level": "medium", "evaluation": True})
                room = (await person.expect("room_state"))["room"]["id"]
                await person.send(type="move", room=room, ply=0, move="4")
                thoughts.append((await person.expect("move_made", ply=1))["thought"])
                await person.close()
        searched, remembered = thoughts
        assert searched["cached"] is False and searched["nodes"] > 0
        assert remembered["cached"] is True and remembered["nodes"] == 0
        assert remembered["book"] is False
    finally:
        await pool.close()
