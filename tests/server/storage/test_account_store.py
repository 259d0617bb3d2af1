"""The ``Store`` contract for people's accounts and sessions, run against MemoryStore and
SqlStore on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from server.storage.store import (
    AccountRecord,
    GameRecord,
    NameTaken,
    NotAGuest,
    PlayerRecord,
    SessionRecord,
    Store,
)

T0 = 1_763_700_000.5


def an_account(player_id: str, name: str) -> AccountRecord:
    return AccountRecord(player_id, name, f"$argon2id$hash-of-{name}", T0 + 10)


async def test_a_guest_becomes_an_account_with_its_id_and_games(store: Store) -> None:
    await store.save_player(PlayerRecord("g1", "Guest 1234", "guest", T0))
    game = GameRecord("ROOM0001-1", "connect4", ("g1", None), "easy", 1, "finished", "", T0,
                      result=0, reason="end", finished_at=T0 + 5)
    await store.save_game(game)

    player = await store.create_account(an_account("g1", "Ann"))

    assert player == PlayerRecord("g1", "Ann", "account", T0)
    assert await store.load_player("g1") == player
    assert [g.id for g in await store.games_of_player("g1")] == ["ROOM0001-1"]
    assert await store.find_account("Ann") == an_account("g1", "Ann")


async def test_an_account_is_found_by_its_name_in_any_letter_case(store: Store) -> None:
    await store.create_account(an_account("p1", "Ann_Lee"))
    for spelling in ("Ann_Lee", "ann_lee", "ANN_LEE"):
        found = await store.find_account(spelling)
        assert found is not None and found.player_id == "p1" and found.name == "Ann_Lee"
    assert await store.find_account("Ann-Lee") is None


async def test_a_name_taken_in_another_letter_case_is_refused(store: Store) -> None:
    await store.create_account(an_account("p1", "Ann"))
    await store.save_player(PlayerRecord("p2", "Guest 5", "guest", T0))
    with pytest.raises(NameTaken):
        await store.create_account(an_account("p2", "aNN"))
    assert await store.load_player("p2") == PlayerRecord("p2", "Guest 5", "guest", T0)


async def test_two_sign_ups_racing_for_one_name_make_one_account(store: Store) -> None:
    results = await asyncio.gather(store.create_account(an_account("p1", "Zed")),
                                   store.create_account(an_account("p2", "zed")),
                                   return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["NameTaken", "PlayerRecord"]


@pytest.mark.parametrize("kind", ["bot", "admin"])
async def test_a_bots_or_admins_name_is_refused_in_any_case(store: Store, kind: str) -> None:
    await store.save_player(PlayerRecord("b1", "RoboCop", kind, T0))  # type: ignore[arg-type]
    with pytest.raises(NameTaken):
        await store.create_account(an_account("p1", "robocop"))
    assert await store.find_account("robocop") is None


async def test_only_a_guest_becomes_an_account(store: Store) -> None:
    await store.save_player(PlayerRecord("b1", "Bender", "bot", T0))
    with pytest.raises(NotAGuest):
        await store.create_account(an_account("b1", "Bender2"))
    await store.create_account(an_account("p1", "Ann"))
    with pytest.raises(NotAGuest):
        await store.create_account(an_account("p1", "Ann2"))
    assert await store.find_account("Ann2") is None


async def test_sessions_are_found_by_hash_and_revoked_one_or_all(store: Store) -> None:
    await store.create_account(an_account("p1", "Ann"))
    await store.create_account(an_account("p2", "Bob"))
    for n, player in enumerate(("p1", "p1", "p1", "p2")):
        await store.add_session(SessionRecord(f"s{n}", player, f"hash{n}", T0 + n))
    assert await store.find_session("hash0") == SessionRecord("s0", "p1", "hash0", T0)
    assert await store.find_session("nope") is None

    assert await store.revoke_sessions("p1", T0 + 50, "s1") == 1
    assert (await store.find_session("hash1")).revoked_at == T0 + 50  # type: ignore[union-attr]
    assert (await store.find_session("hash0")).revoked_at is None  # type: ignore[union-attr]

    assert await store.revoke_sessions("p1", T0 + 60) == 2  # s0 and s2: s1 was already
    for n in (0, 1, 2):
        assert (await store.find_session(f"hash{n}")).revoked_at is not None  # type: ignore[union-attr]
    assert (await store.find_session("hash3")).revoked_at is None  # type: ignore[union-attr]
    assert await store.revoke_sessions("p1", T0 + 70) == 0


async def test_a_session_and_its_players_row_are_found_together(store: Store) -> None:
    await store.create_account(an_account("p1", "Ann"))
    await store.add_session(SessionRecord("s1", "p1", "hash1", T0 + 1))
    found = await store.find_session_player("hash1")
    assert found is not None
    session, player = found
    assert session == SessionRecord("s1", "p1", "hash1", T0 + 1)
    assert player is not None and (player.id, player.name, player.kind) == ("p1", "Ann",
                                                                            "account")
    assert player == await store.load_player("p1")
    assert await store.find_session_player("nope") is None
    await store.revoke_sessions("p1", T0 + 50)
    revoked = await store.find_session_player("hash1")
    assert revoked is not None and revoked[0].revoked_at == T0 + 50


async def test_a_password_change_sets_the_hash_and_revokes_every_other_session(
    store: Store,
) -> None:
    await store.create_account(an_account("p1", "Ann"))
    await store.create_account(an_account("p2", "Bob"))
    for n, player in enumerate(("p1", "p1", "p1", "p2")):
        await store.add_session(SessionRecord(f"s{n}", player, f"hash{n}", T0 + n))
    await store.revoke_sessions("p1", T0 + 5, "s2")

    assert await store.change_password("p1", "$argon2id$new", T0 + 50, keep_session="s1") == 1
    account = await store.find_account("ann")
    assert account is not None and account.password_hash == "$argon2id$new"
    assert (await store.find_account("Bob")) == an_account("p2", "Bob")
    revoked = {n: (await store.find_session(f"hash{n}")).revoked_at  # type: ignore[union-attr]
               for n in range(4)}
    assert revoked == {0: T0 + 50, 1: None, 2: T0 + 5, 3: None}
