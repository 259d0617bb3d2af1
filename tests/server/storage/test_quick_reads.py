"""The store's quick reads (a player's row, a name's holder, a session, ratings, a level
calibration) see every write whose call has returned, even when many run at once: on a SQLite
file they run in a reader thread with a connection of their own beside the writer's."""

from __future__ import annotations

import asyncio

from server.storage import SqlStore
from server.storage.store import AccountRecord, PlayerRecord, SessionRecord

T0 = 1_700_000_000.0


async def test_a_read_after_a_write_returned_sees_it_while_others_run(
        sql_store: SqlStore) -> None:
    async def write_then_read(n: int) -> PlayerRecord | None:
        await sql_store.save_player(PlayerRecord(f"p{n}", f"Guest {n}", "guest", T0))
        return await sql_store.load_player(f"p{n}")

    found = await asyncio.gather(*(write_then_read(n) for n in range(64)))
    assert found == [PlayerRecord(f"p{n}", f"Guest {n}", "guest", T0) for n in range(64)]
    assert await sql_store.load_player("nobody") is None


async def test_names_sessions_and_ratings_are_read_as_written(sql_store: SqlStore) -> None:
    assert not await sql_store.name_is_held("Ada")
    await sql_store.create_account(AccountRecord("p1", "Ada", "hash", T0))
    await sql_store.add_session(SessionRecord("s1", "p1", "token-hash", T0))
    held, session, ratings, calibrated = await asyncio.gather(
        sql_store.name_is_held("ada"), sql_store.find_session("token-hash"),
        sql_store.ratings_of("p1"), sql_store.calibrated_levels("connect4"))
    assert held
    assert session == SessionRecord("s1", "p1", "token-hash", T0)
    assert ratings == []
    assert calibrated == {}


async def test_a_closed_store_can_be_opened_again_and_reads_what_it_wrote(
        sql_url: str) -> None:
    store = SqlStore(sql_url)
    await store.open()
    await store.save_player(PlayerRecord("p1", "Guest 1", "guest", T0))
    await store.close()
    again = SqlStore(sql_url)
    await again.open()
    try:
        assert await again.load_player("p1") == PlayerRecord("p1", "Guest 1", "guest", T0)
    finally:
        await again.close()
