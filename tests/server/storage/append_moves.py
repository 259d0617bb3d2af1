"""Helper process for the durability test: appends moves forever, printing each ply as soon
as ``append_move`` has returned, until it is killed."""

from __future__ import annotations

import asyncio
import sys
import time

from server.storage import SqlStore
from server.storage.store import GameRecord, MoveRecord


async def main(url: str, game_id: str) -> None:
    store = SqlStore(url)
    await store.open()
    now = time.time()
    await store.save_game(
        GameRecord(game_id, "connect4", ("p1", "p2"), None, None, "active", "", now)
    )
    ply = 0
    while True:
        await store.append_move(MoveRecord(game_id, ply, str(ply % 7 + 1), ply % 2, 0.1, now))
        print(ply, flush=True)
        ply += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
