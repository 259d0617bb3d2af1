"""A SQLite store's commits never copy the write-ahead log into the file (a checkpoint, which
SQLite otherwise runs inside a commit every 1,000 pages, and which held a commit of the moves
for 100-400 ms now and then); a thread of the store's own does, every
``CHECKPOINT_SECONDS``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from server.storage import SqlStore, sql_store
from server.storage.store import GameRecord, MoveRecord

MOVES = 600
"""Commits of one move each: well past 1,000 pages of log, where SQLite's own checkpoint
would have run inside one of them."""


async def test_the_commits_leave_the_log_to_the_stores_checkpoint_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "discus.sqlite3"
    url = f"sqlite+aiosqlite:///{path}"
    monkeypatch.setattr(sql_store, "CHECKPOINT_SECONDS", 3600.0)
    store = SqlStore(url)
    await store.open()
    try:
        before = path.stat().st_size
        now = time.time()
        for game in range(MOVES // 42 + 1):
            game_id = f"g{game}-1"
            await store.save_game(GameRecord(game_id, "connect4", ("p1", "p2"), None, None,
                                             "active", "", now))
            for ply in range(min(42, MOVES - 42 * game)):
                await store.append_move(MoveRecord(game_id, ply, str(ply % 7 + 1), ply % 2,
                                                   0.1, now))
        wal = Path(f"{path}-wal").stat().st_size
        assert wal > 1000 * 4096  # SQLite's own checkpoint would have run by now
        assert path.stat().st_size == before  # and no commit copied the log in

        monkeypatch.setattr(sql_store, "CHECKPOINT_SECONDS", 0.05)
        other = SqlStore(url, migrate=False)  # a store that checkpoints often, beside it
        await other.open()
        try:
            deadline = time.monotonic() + 5.0
            while path.stat().st_size == before:
                assert time.monotonic() < deadline, "nothing checkpointed the log"
                await asyncio.sleep(0.05)
        finally:
            await other.close()
        loaded = await store.load_game("g0-1")
        assert loaded is not None and len(loaded[1]) == 42
    finally:
        await store.close()
