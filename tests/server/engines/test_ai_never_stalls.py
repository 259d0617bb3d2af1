"""A game never stalls on the AI: real worker processes killed, a closed pool, and a real
PostgreSQL that refuses the AI's moves."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from wsclient import Client

from server import protocol as p
from server.app import Running, Settings, running
from server.engines import AiPool
from server.storage import SqlStore
from server.storage.memory import MemoryStore
from server.web.gateway import Gateway
from tests.server.storage.conftest import pg_url  # noqa: F401 - fixture

pytestmark = pytest.mark.slow

AI_SEAT = 1  # the person sits in seat 0 and moves first
RETRYING = Settings(store_retry_seconds=(0.05, 0.05, 0.05), sweep_seconds=0.3)
"""A server on PostgreSQL whose refused AI moves are retried, then asked again, quickly."""


def kill_and_wait(pids: list[int | None]) -> None:
    """SIGKILL each process and block (the event loop too) until the kernel has ended all its
    threads, and so closed its end of the pipe, while nothing in the server has noticed yet."""
    alive = [pid for pid in pids if pid is not None]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    for pid in alive:
        while not ended(pid):
            assert time.monotonic() < deadline, f"process {pid} outlived SIGKILL"
            time.sleep(0.005)


def ended(pid: int) -> bool:
    """A zombie whose last thread is gone (the main thread turns zombie before the others
    have let go of the open files they share)."""
    proc = Path(f"/proc/{pid}")
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        threads = os.listdir(proc / "task")
    except FileNotFoundError:
        return True
    return state == "Z" and threads == [str(pid)]


async def test_the_ai_still_moves_when_its_idle_worker_was_killed(pool: AiPool) -> None:
    async with running(port=0, store=MemoryStore(), pool=pool) as server:
        ann = await Client.open(server.url, "Ann")
        person = server.app.identity.get(ann.player_id)
        assert person is not None
        # The server's own steps for an AI room where the AI opens, run here so that nothing
        # reads the dead worker's pipe between the kill and the AI's turn: the pool first
        # learns of the death by writing the job to it (BrokenPipeError).
        room, out = server.app.lobby.create(person, "connect4", p.AiOpponent(level="easy"),
                                            1, server.app.runner.now())
        pids = pool.pids()
        assert pids and all(pids)
        kill_and_wait(pids)
        await server.app.runner.carry(room, out)
        await ann.expect("room_state")
        made = await ann.expect("move_made", ply=0)
        assert made["seat"] == 0
        stored = await server.app.store.load_game(room.game_id)
        assert stored is not None and [m.move for m in stored[1]] == [made["move"]]
        assert room.ai_thinking is False


async def test_the_ai_still_moves_when_the_pool_is_closed(pool: AiPool) -> None:
    async with running(port=0, store=MemoryStore(), pool=pool) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="connect4",
                       opponent={"kind": "ai", "level": "easy"}, seat=0)
        room = (await ann.expect("room_state"))["room"]["id"]
        await pool.close()  # think() now raises RuntimeError
        await ann.send(type="move", room=room, ply=0, move="4")
        await ann.expect("move_made", ply=0)
        made = await ann.expect("move_made", ply=1)
        assert made["seat"] == AI_SEAT
        assert server.app.lobby.room(room).ai_thinking is False


# --- a database that refuses the AI's moves ---------------------------------------------------


async def refuse_ai_moves(url: str, times: int | None) -> None:
    """Make PostgreSQL fail inserts of the AI seat's moves with ``disk_full``: the first
    ``times`` of them, or all while ``times`` is None (until ``accept_ai_moves``)."""
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    limit = "true" if times is None else f"nextval('refused_ai_moves') <= {times}"
    try:
        await conn.execute(f"""
            CREATE SEQUENCE refused_ai_moves;
            CREATE FUNCTION refuse_ai_move() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF {limit} THEN
                    RAISE EXCEPTION 'no space left for the AI''s move' USING ERRCODE = 'disk_full';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_ai_move BEFORE INSERT ON moves FOR EACH ROW
                WHEN (NEW.seat = {AI_SEAT}) EXECUTE FUNCTION refuse_ai_move();
        """)
    finally:
        await conn.close()


async def accept_ai_moves(url: str) -> None:
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute("DROP TRIGGER refuse_ai_move ON moves")
    finally:
        await conn.close()


@pytest.fixture
async def pg_server(pg_url: str) -> AsyncIterator[Running]:  # noqa: F811
    async with running(port=0, store=SqlStore(pg_url), settings=RETRYING) as server:
        yield server


async def ai_room(server: Running) -> tuple[Client, str]:
    """Ann in a new Connect Four room against the AI, having played her first move."""
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="create_room", game="connect4",
                   opponent={"kind": "ai", "level": "easy"}, seat=1 - AI_SEAT)
    room = (await ann.expect("room_state"))["room"]["id"]
    return ann, room


async def stored_moves(server: Running, room: str) -> list[tuple[int, str]]:
    loaded = await server.app.store.load_game(server.app.lobby.room(room).game_id)
    assert loaded is not None
    return [(m.seat, m.move) for m in loaded[1]]


async def test_an_ai_move_the_database_refuses_twice_is_stored_on_a_retry(
    pg_server: Running, pg_url: str  # noqa: F811
) -> None:
    ann, room = await ai_room(pg_server)
    await refuse_ai_moves(pg_url, times=2)
    await ann.send(type="move", room=room, ply=0, move="4")
    await ann.expect("move_made", ply=0)
    made = await ann.expect("move_made", ply=1)
    assert await stored_moves(pg_server, room) == [(0, "4"), (AI_SEAT, made["move"])]
    assert not [m for m in ann.seen if m["type"] == "error"]


async def test_an_ai_move_that_cannot_be_stored_is_not_played_and_the_room_is_told(
    pg_server: Running, pg_url: str  # noqa: F811
) -> None:
    ann, room = await ai_room(pg_server)
    await refuse_ai_moves(pg_url, times=None)
    await ann.send(type="move", room=room, ply=0, move="4")
    await ann.expect("move_made", ply=0)
    state = await ann.expect("room_state")
    assert state["room"]["ai_thinking"] is False and state["room"]["moves"] == ["4"]
    error = await ann.expect("error")
    assert error["code"] == "internal_error" and error["room"] == room
    assert "could not be saved" in error["message"]
    assert not [m for m in ann.seen if m["type"] == "move_made" and m["ply"] == 1]
    assert await stored_moves(pg_server, room) == [(0, "4")]
    # Once the database takes writes again, the sweeper asks the AI again and the game goes on.
    await accept_ai_moves(pg_url)
    made = await ann.expect("move_made", ply=1, timeout=10)
    assert made["seat"] == AI_SEAT
    assert await stored_moves(pg_server, room) == [(0, "4"), (AI_SEAT, made["move"])]
    await ann.send(type="move", room=room, ply=2, move="4")
    await ann.expect("move_made", ply=3)


async def test_the_sweeper_asks_the_ai_again_though_another_of_its_steps_keeps_failing(
    pg_url: str, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    async def broken(self: Gateway) -> None:
        raise RuntimeError("a bug in closing idle connections")

    monkeypatch.setattr(Gateway, "sweep", broken)
    async with running(port=0, store=SqlStore(pg_url), settings=RETRYING) as server:
        ann, room = await ai_room(server)
        await refuse_ai_moves(pg_url, times=None)
        await ann.send(type="move", room=room, ply=0, move="4")
        await ann.expect("move_made", ply=0)
        assert (await ann.expect("error"))["code"] == "internal_error"
        await asyncio.sleep(1.0)  # a few sweeps, each failing after the rooms' housekeeping
        await accept_ai_moves(pg_url)
        made = await ann.expect("move_made", ply=1, timeout=10)
        assert await stored_moves(server, room) == [(0, "4"), (AI_SEAT, made["move"])]
        await ann.close()
