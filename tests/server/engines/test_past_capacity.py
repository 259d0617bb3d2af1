"""Past capacity, players are told, not cheated: more games against the expert than the
server has engine processes, through the real server and a real engine.

Every AI move is searched at its level (none from the quick fallback) and comes within the
bound ``server.engines.local`` documents: with ``W`` workers, a move with ``n`` moves ahead of
it starts within ``(n // W + 1) * (hard time + margin)``; here every game asks at most one
move at a time, so ``n < GAMES`` and a move comes within ``GAMES // W + 1`` such turns. The
rooms whose moves wait are told so (``ai_waiting``), and so is anyone asking ``stats``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from wsclient import Client

from ai.levels import DEFAULT_LEVELS
from server.app import Running, running
from server.engines import AiPool
from server.storage.memory import MemoryStore

pytestmark = pytest.mark.slow

WORKERS = 1
GAMES = 4
AI_MOVES = 3
"""AI moves asked of each game (the AI opens each)."""
MARGIN = 1.0
EXPERT = dataclasses.replace(
    next(lv for lv in DEFAULT_LEVELS["connect4"] if lv.name == "expert"),
    soft_time=0.4, hard_time=0.6, candidates=2)
"""The expert with a short clock, so a queue of GAMES moves forms and drains in seconds; and
two candidates, so its searches deepen against the clock rather than play the opening book's
move at once (the real expert's book holds every position these games reach)."""
BOUND = (GAMES // WORKERS + 1) * (EXPERT.hard_time + MARGIN)
SLACK = 3.0
"""For the server's own steps on a loaded test machine (a bound, not a speed claim)."""


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    # A short queue timeout: it once sent every move that waited longer for a worker to the
    # quick fallback; now it counts only while no worker is alive.
    pool = AiPool(processes=WORKERS, games=("connect4",), margin=MARGIN, queue_timeout=1.0)
    await pool.start(wait_ready=True, timeout=120)
    async with running(port=0, store=MemoryStore(), pool=pool) as server:
        levels = tuple(EXPERT if lv.name == "expert" else lv
                       for lv in DEFAULT_LEVELS["connect4"])
        server.app.levels.set({**DEFAULT_LEVELS, "connect4": levels})
        yield server


async def _play(server: Running, name: str, started: asyncio.Event
                ) -> tuple[Client, list[float], list[dict[str, Any]]]:
    """One game against the expert, the AI opening: the seconds each AI move took from the
    moment it was asked, and its ``move_made``."""
    client = await Client.open(server.url, name, patience=BOUND + SLACK)
    loop = asyncio.get_running_loop()
    await client.send(type="create_room", game="connect4", seat=1,
                      opponent={"kind": "ai", "level": "expert"})
    room = (await client.expect("room_state"))["room"]["id"]
    started.set()
    asked = loop.time()
    waits, moves = [], []
    for k in range(AI_MOVES):
        made = await client.expect("move_made", ply=2 * k)
        waits.append(loop.time() - asked)
        moves.append(made)
        if made["status"] != "active":
            break
        legal = made["position"]["legal_moves"]
        await client.send(type="move", room=room, ply=2 * k + 1, move=legal[len(legal) // 2])
        await client.expect("move_made", ply=2 * k + 1)
        asked = loop.time()
    return client, waits, moves


async def test_more_expert_games_than_workers_get_searched_moves_in_bound_and_are_told(
    server: Running,
) -> None:
    starts = [asyncio.Event() for _ in range(GAMES)]
    games = [asyncio.create_task(_play(server, f"P{i}", starts[i])) for i in range(GAMES)]
    await asyncio.gather(*(s.wait() for s in starts))
    watcher = await Client.open(server.url, "Watcher")
    busy = await watcher.request("stats")  # every game's first move asked: a queue now
    played = await asyncio.gather(*games)

    waits = [w for _, ws, _ in played for w in ws]
    moves = [m for _, _, ms in played for m in ms]
    assert len(moves) == GAMES * AI_MOVES
    # Searched at the level, every one: a quick move carries no thought.
    assert all(m["thought"] is not None for m in moves)
    assert server.app.pool is not None and server.app.pool.snapshot().fallbacks == 0
    assert max(waits) <= BOUND + SLACK, (max(waits), BOUND)
    # The queue was real: some move waited longer than a whole search.
    assert max(waits) > EXPERT.hard_time
    # The busy state shown: in stats, and to each room whose move waited.
    assert busy["pool"]["queued"] >= 1 and busy["pool"]["wait_seconds"] > 0
    told = [[m for m in client.seen if m["type"] == "ai_waiting"] for client, _, _ in played]
    waited = [t for t in told if t]
    assert waited, "no room was told its AI move waits"
    for messages in waited:
        first, last = messages[0], messages[-1]
        assert first["position"] >= 1 and first["queued"] >= first["position"]
        assert first["wait_seconds"] >= 0
        assert last["position"] == 0  # then an engine took it
    for client, _, _ in played:
        await client.close()
    await watcher.close()
