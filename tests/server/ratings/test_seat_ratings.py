"""Ratings beside the names in a game, over real websockets on SQLite: each seat view
carries the seated account's or bot's rating in the room's game (guests none), an AI seat
its level's, and a rematch after a rated game the ratings that game left."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from people import CHEAP_HASHER, PASSWORD, sign_up
from wsclient import Client

from server.app import Running, running
from server.storage import SqlStore
from server.storage import repository as repo
from server.storage.repository import tables
from tests.server.storage.conftest import sqlite_url  # noqa: F401 - fixture

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: seat 0 wins at its fourth move."""


@pytest.fixture
async def server(sqlite_url: str) -> AsyncIterator[Running]:  # noqa: F811 - fixture
    async with running(store=SqlStore(sqlite_url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def account(server: Running, name: str) -> Client:
    client = await Client.open(server.url, name)
    await sign_up(client, name)
    return client


async def store_rating(server: Running, player_id: str, game: str, rating: float,
                       rd: float, games: int) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    async with store.engine.begin() as conn:
        await conn.execute(tables.ratings.insert().values(
            player_id=player_id, game=game, rating=rating, rd=rd, volatility=0.06,
            games=games, updated_at=time.time()))


async def create(client: Client, opponent: dict[str, Any], game: str = "connect4"
                 ) -> dict[str, Any]:
    await client.send(type="create_room", game=game, opponent=opponent, seat=0)
    return (await client.expect("room_state"))["room"]


def ratings(seats: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    return [seat["rating"] for seat in seats]


async def test_two_accounts_see_each_others_stored_rating_in_the_rooms_game(
    server: Running,
) -> None:
    ann = await account(server, "Ann")
    bob = await account(server, "Bob")
    await store_rating(server, ann.player_id, "connect4", 1662.4, 80.0, 30)
    await store_rating(server, ann.player_id, "othello", 1910.0, 60.0, 40)
    await store_rating(server, bob.player_id, "connect4", 1487.6, 200.0, 3)

    room = await create(ann, {"kind": "friend"})
    assert ratings(room["seats"]) == [{"rating": 1662, "provisional": False}, None]
    await bob.send(type="join_room", room=room["id"])
    seen_by_bob = (await bob.expect("room_state"))["room"]["seats"]
    seen_by_ann = (await ann.expect("room_event", event="joined"))["seats"]

    both = [{"rating": 1662, "provisional": False}, {"rating": 1488, "provisional": True}]
    assert ratings(seen_by_bob) == ratings(seen_by_ann) == both


async def test_a_guest_shows_no_rating_and_an_account_never_rated_shows_1500_provisional(
    server: Running,
) -> None:
    ann = await account(server, "Ann")
    guest = await Client.open(server.url, "Gus")
    room = await create(ann, {"kind": "friend"})
    await guest.send(type="join_room", room=room["id"])
    seats = (await guest.expect("room_state"))["room"]["seats"]
    assert seats[1]["player"]["id"] == guest.player_id
    assert ratings(seats) == [{"rating": 1500, "provisional": True}, None]


async def test_a_guest_who_signs_up_while_seated_shows_the_starting_rating_from_then_on(
    server: Running,
) -> None:
    ann = await account(server, "Ann")
    gus = await Client.open(server.url, "Gus")
    room = await create(ann, {"kind": "friend"})
    await gus.send(type="join_room", room=room["id"])
    await gus.expect("room_state")
    await gus.send(type="sign_up", name="Gus", password=PASSWORD)
    await gus.expect("signed_in")

    watcher = await Client.open(server.url, "Wat")
    await watcher.send(type="spectate", room=room["id"])
    seats = (await watcher.expect("room_state"))["room"]["seats"]
    assert ratings(seats)[1] == {"rating": 1500, "provisional": True}


async def test_an_ai_seat_shows_its_levels_rating_calibrated_or_guessed(server: Running) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    async with store.engine.begin() as conn:
        await repo.insert_calibration_run(conn, "run1", "connect4", "test", 2, 1, "adjacent",
                                          [], time.time())
        await repo.finish_calibration_run(conn, "run1", "finished", [], [
            {"level": "beginner", "elo": 0.0, "error": 0.0, "games": 2, "score": 1.0},
            {"level": "easy", "elo": 150.4, "error": 80.0, "games": 2, "score": 1.0},
        ], 1.0, time.time())
    guest = await Client.open(server.url, "Gus")

    room = await create(guest, {"kind": "ai", "level": "easy"})
    assert room["seats"][1]["kind"] == "ai"
    assert ratings(room["seats"]) == [None, {"rating": 1150, "provisional": False}]

    desk_guess = (await server.app.ratings.level_ratings("connect4"))["medium"]
    assert desk_guess[1] is False
    room = await create(guest, {"kind": "ai", "level": "medium"})
    assert ratings(room["seats"])[1] == {"rating": round(desk_guess[0].rating),
                                         "provisional": True}, "a guessed level shows a ?"


async def test_after_a_rated_game_the_rematch_shows_the_new_ratings_and_moves_read_none(
    server: Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    ann = await account(server, "Ann")
    bob = await account(server, "Bob")
    room = (await create(ann, {"kind": "friend"}))["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await ann.expect("room_event", event="joined")

    store = server.app.store
    lookups: list[str] = []
    real_ratings_of = store.ratings_of

    async def counted(player_id: str) -> Any:
        lookups.append(player_id)
        return await real_ratings_of(player_id)

    monkeypatch.setattr(store, "ratings_of", counted)
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        for client in (ann, bob):
            await client.expect("move_made", ply=ply)
    assert lookups == [], "a move must not look a rating up"

    after = {}
    for client in (ann, bob):
        change = await client.expect("rating_change", room=room)
        after[client.player_id] = {"rating": round(change["after"]["rating"]),
                                   "provisional": change["after"]["provisional"]}
    assert after[ann.player_id]["rating"] > 1500 > after[bob.player_id]["rating"]

    await ann.send(type="offer_rematch", room=room)
    await ann.expect("room_event", event="rematch_offered")
    await bob.send(type="accept_rematch", room=room)
    for client in (ann, bob):
        state = (await client.expect("room_state"))["room"]
        assert state["round"] == 2
        shown = {s["player"]["id"]: s["rating"] for s in state["seats"]}
        assert shown == after


async def test_a_newcomers_first_room_against_the_ai_reads_no_player_and_levels_once(
    server: Running, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A guest before its first game has no row, and the levels' calibrated ratings were
    read a moment ago: the rooms a crowd of newcomers opens read neither again."""
    store = server.app.store
    reads: list[str] = []
    real_player, real_levels = store.load_player, store.calibrated_levels

    async def load_player(player_id: str) -> Any:
        reads.append(f"player {player_id}")
        return await real_player(player_id)

    async def calibrated_levels(game: str) -> Any:
        reads.append(f"levels {game}")
        return await real_levels(game)

    monkeypatch.setattr(store, "load_player", load_player)
    monkeypatch.setattr(store, "calibrated_levels", calibrated_levels)
    shown = []
    for name in ("Gus", "Gil", "Gay"):
        guest = await Client.open(server.url, name)
        seats = (await create(guest, {"kind": "ai", "level": "easy"}))["seats"]
        shown.append(ratings(seats))
        await guest.close()
    assert reads == ["levels connect4"]
    assert shown[0] == shown[1] == shown[2] and shown[0][0] is None and shown[0][1] is not None

    account_ann = await account(server, "Ann")
    await create(account_ann, {"kind": "ai", "level": "easy"})
    assert reads[1:] == [f"player {account_ann.player_id}"], "an account's rating is read"
