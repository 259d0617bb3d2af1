"""Bot accounts and tokens on both real databases: created once, verified, listed, revoked."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from server.bots.accounts import (
    Accounts,
    BadBotName,
    RevokedToken,
    UnknownBot,
    UnknownToken,
    hash_token,
)
from server.storage import SqlStore
from server.storage import repository as repo


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def accounts(sql_store: SqlStore, clock: Clock) -> Accounts:
    return Accounts(sql_store.engine, clock)


async def test_a_created_token_verifies_as_its_bot_player(accounts: Accounts,
                                                          sql_store: SqlStore) -> None:
    made = await accounts.create("Randy")
    player, account = await accounts.verify(made.token)
    assert player.id == made.account.player_id and player.kind == "bot"
    assert player.name == "Randy" and account.name == "Randy"
    assert await sql_store.load_player(player.id) == player


async def test_only_the_hash_of_the_token_is_stored(accounts: Accounts,
                                                    sql_store: SqlStore) -> None:
    made = await accounts.create("Randy")
    async with sql_store.engine.connect() as conn:
        rows = await repo.list_tokens(conn, "bot")
    assert len(rows) == 1
    assert rows[0]["token_hash"] == hash_token(made.token) != made.token
    assert all(made.token not in str(value) for value in rows[0].values())


async def test_two_tokens_are_never_alike_and_are_long(accounts: Accounts) -> None:
    first = await accounts.create("One")
    second = await accounts.create("Two")
    assert first.token != second.token
    assert len(first.token) >= 40


async def test_an_unknown_token_is_refused(accounts: Accounts) -> None:
    await accounts.create("Randy")
    with pytest.raises(UnknownToken):
        await accounts.verify("discus_bot_not-a-real-token")


async def test_a_revoked_token_is_refused_and_listed_as_revoked(accounts: Accounts,
                                                               clock: Clock) -> None:
    made = await accounts.create("Randy")
    clock.now += 60
    revoked = await accounts.revoke("Randy")
    assert [r.token_id for r in revoked] == [made.account.token_id]
    with pytest.raises(RevokedToken):
        await accounts.verify(made.token)
    (listed,) = await accounts.list_bots()
    assert listed.revoked and listed.revoked_at == clock.now


async def test_a_bot_can_be_revoked_by_token_id_or_player_id(accounts: Accounts) -> None:
    one = await accounts.create("One")
    two = await accounts.create("Two")
    await accounts.revoke(one.account.token_id)
    await accounts.revoke(two.account.player_id)
    assert all(bot.revoked for bot in await accounts.list_bots())


async def test_revoking_an_unknown_or_already_revoked_bot_is_an_error(accounts: Accounts) -> None:
    with pytest.raises(UnknownBot):
        await accounts.revoke("Nobody")
    await accounts.create("Randy")
    await accounts.revoke("Randy")
    with pytest.raises(UnknownBot):
        await accounts.revoke("Randy")


async def test_the_list_shows_created_and_last_used_times(accounts: Accounts,
                                                         clock: Clock) -> None:
    made = await accounts.create("Randy")
    created = clock.now
    (before,) = await accounts.list_bots()
    assert before.created_at == created and before.last_used_at is None and not before.revoked
    clock.now += 90
    await accounts.verify(made.token)
    (after,) = await accounts.list_bots()
    assert after.last_used_at == created + 90


async def test_a_live_bot_name_cannot_be_taken_twice_but_a_revoked_one_can(
    accounts: Accounts,
) -> None:
    await accounts.create("Randy")
    with pytest.raises(BadBotName):
        await accounts.create("Randy")
    await accounts.revoke("Randy")
    again = await accounts.create("Randy")
    assert [bot.revoked for bot in await accounts.list_bots()] == [True, False]
    player, _ = await accounts.verify(again.token)
    assert player.id == again.account.player_id


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "tab\there"])
async def test_a_bad_bot_name_writes_nothing(accounts: Accounts, name: str) -> None:
    with pytest.raises(BadBotName):
        await accounts.create(name)
    assert await accounts.list_bots() == []


async def test_the_database_itself_refuses_a_second_live_bot_of_one_name(
    accounts: Accounts, sql_store: SqlStore
) -> None:
    # What two servers racing past Accounts.create's check would do: insert the same live
    # name twice. The unique index on live names refuses the second; a revoked token of that
    # name, or an admin of that name, is no clash.
    made = await accounts.create("Randy")
    with pytest.raises(IntegrityError):
        async with sql_store.engine.begin() as conn:
            await repo.insert_token(conn, "t2", made.account.player_id, "Randy", "bot",
                                    hash_token("another"), 1.0)
    async with sql_store.engine.begin() as conn:
        await repo.insert_token(conn, "t3", made.account.player_id, "Randy", "admin",
                                hash_token("admin's"), 1.0)
    await accounts.revoke("Randy")
    again = await accounts.create("Randy")
    assert again.account.name == "Randy" and again.account.token_id != made.account.token_id


async def test_a_bot_may_not_take_the_name_of_a_persons_account(
    accounts: Accounts, sql_store: SqlStore
) -> None:
    from server.storage.store import AccountRecord

    await sql_store.create_account(AccountRecord("p1", "Ann_Lee", "$argon2id$x", 1.0))
    with pytest.raises(BadBotName):
        await accounts.create("ann_lee")
    assert await accounts.list_bots() == []
