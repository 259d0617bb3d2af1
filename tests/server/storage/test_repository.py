"""Repository functions the bot and admin issues build on: levels and hashed tokens."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy.exc import IntegrityError

from server.storage import SqlStore
from server.storage import repository as repo
from server.storage.store import PlayerRecord


async def test_levels_come_back_weakest_first_and_saving_again_edits_one(
    sql_store: SqlStore,
) -> None:
    async with sql_store.engine.begin() as conn:
        await repo.save_level(conn, "reversi", "strong", 2, {"depth": 12}, 1.0)
        await repo.save_level(conn, "reversi", "beginner", 0, {"depth": 1, "top": 4}, 1.0)
        await repo.save_level(conn, "connect4", "beginner", 0, {"depth": 2}, 1.0)
        await repo.save_level(conn, "reversi", "strong", 2, {"depth": 14}, 2.0)
    async with sql_store.engine.connect() as conn:
        levels = await repo.list_levels(conn, "reversi")
    assert [(lv["name"], lv["settings"]) for lv in levels] == [
        ("beginner", {"depth": 1, "top": 4}),
        ("strong", {"depth": 14}),
    ]


async def test_a_token_is_found_by_its_hash_until_it_is_revoked(sql_store: SqlStore) -> None:
    digest = hashlib.sha256(b"secret").hexdigest()
    await sql_store.save_player(PlayerRecord("b1", "randombot", "bot", 1.0))
    async with sql_store.engine.begin() as conn:
        await repo.insert_token(conn, "t1", "b1", "laptop", "bot", digest, 1.0)
        await repo.touch_token(conn, "t1", 5.0)
    async with sql_store.engine.connect() as conn:
        found = await repo.find_live_token(conn, digest)
    assert found is not None and (found["player_id"], found["last_used_at"]) == ("b1", 5.0)
    async with sql_store.engine.begin() as conn:
        assert await repo.revoke_token(conn, "t1", 9.0)
        assert not await repo.revoke_token(conn, "t1", 10.0)
        assert await repo.find_live_token(conn, digest) is None
        assert [t["revoked_at"] for t in await repo.list_tokens(conn, "bot")] == [9.0]


async def test_a_token_needs_an_existing_player_and_a_unique_hash(sql_store: SqlStore) -> None:
    with pytest.raises(IntegrityError):
        async with sql_store.engine.begin() as conn:
            await repo.insert_token(conn, "t1", "nobody", "x", "bot", "h", 1.0)
    await sql_store.save_player(PlayerRecord("b1", "bot", "bot", 1.0))
    async with sql_store.engine.begin() as conn:
        await repo.insert_token(conn, "t1", "b1", "x", "bot", "h", 1.0)
    with pytest.raises(IntegrityError):
        async with sql_store.engine.begin() as conn:
            await repo.insert_token(conn, "t2", "b1", "y", "bot", "h", 1.0)
