"""A book move is shown as one: the Othello expert's first moves come from its opening book,
and their ``move_made.thought`` says so (``book``, no nodes) rather than posing as a
search."""

from __future__ import annotations

import pytest
from wsclient import Client

from server.app import running
from server.engines import AiPool
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
