"""The rooms' housekeeping (``RoomRunner.sweep``) on a node with many rooms: it looks at them
a chunk at a time, so moves arriving meanwhile are not held up behind all of them."""

from __future__ import annotations

import asyncio

import pytest
from wsclient import Client

from server import turns
from server.app import Settings, running
from server.storage.memory import MemoryStore

ROOMS = 5


async def test_the_sweep_closes_abandoned_rooms_a_chunk_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turns, "CHUNK", 2)
    settings = Settings(sweep_seconds=600.0, grace_seconds=0.1)  # swept by the test alone
    async with running(port=0, store=MemoryStore(), settings=settings) as server:
        lobby = server.app.lobby
        for n in range(ROOMS):
            person = await Client.open(server.url, f"player{n}")
            await person.send(type="create_room", game="connect4", seat=0,
                              opponent={"kind": "ai", "level": "beginner"})
            await person.expect("room_state")
            await person.close()
        while any(room.abandoned_since() is None for room in lobby.rooms.values()):
            await asyncio.sleep(0.02)  # each person seen gone
        await asyncio.sleep(0.2)  # and away past the grace period
        assert len(lobby.rooms) == ROOMS

        seen: list[int] = []  # the open rooms, at each turn of the loop during the sweep
        loop = asyncio.get_running_loop()

        def look() -> None:
            seen.append(len(lobby.rooms))
            turn[0] = loop.call_soon(look)

        turn = [loop.call_soon(look)]
        try:
            await server.app.runner.sweep()
        finally:
            turn[0].cancel()
        assert lobby.rooms == {}
        # Other work ran after the first chunk of two rooms and after the second.
        assert 3 in seen and 1 in seen
