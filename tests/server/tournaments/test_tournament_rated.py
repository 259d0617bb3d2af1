"""Rated and casual tournaments over real websockets: the maker of an arena chooses whether
its games move ratings; an unrated arena's finished game changes nobody's, a rated one's
does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client

from server.app import Running, running
from server.storage.store import ScheduleRecord
from server.tournaments.schedules import arena_of
from tests.server.tournaments.test_tournament_desk import paired, play, room_state


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running() as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def profile(client: Client) -> dict[str, Any]:
    await client.send(type="get_profile")
    return await client.expect("profile")


async def about(client: Client, tid: str) -> dict[str, Any]:
    """The next ``tournament`` message about ``tid`` (an earlier arena's pushes skipped)."""
    while True:
        message = await client.expect("tournament")
        if message["tournament"]["id"] == tid:
            return message


async def arena_game(ann: Client, bob: Client, **settings: Any) -> dict[str, Any]:
    """Ann makes an arena with ``settings``, both join, and the pair plays one game out:
    the arena's view as made."""
    await ann.send(type="create_tournament", game="connect4", name="Club", minutes=30,
                   time_control="3+2", **settings)
    view = (await ann.expect("tournament"))["tournament"]
    await ann.send(type="join_tournament", tournament=view["id"])
    await about(ann, view["id"])
    await bob.send(type="join_tournament", tournament=view["id"])
    first, second, room = await paired({c.player_id: c for c in (ann, bob)},
                                       await about(bob, view["id"]))
    for client in (first, second):
        await room_state(client, room)
    await play(first, second, room)
    for client in (first, second):
        await client.expect("game_over", room=room)
    return dict(view)


async def test_an_unrated_arena_moves_no_rating_and_a_rated_one_does(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    bob = await Client.open(server.url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    casual = await arena_game(ann, bob, rated=False)
    assert casual["rated"] is False
    for _ in range(100):  # the finished game is stored (and would be rated) after game_over
        mine = await profile(ann)
        if mine["recent"]:
            break
        await asyncio.sleep(0.05)
    for client in (ann, bob):
        mine = await profile(client)
        assert len(mine["recent"]) == 1 and mine["ratings"] == [] and mine["history"] == []
    assert not any(m["type"] == "rating_change" for c in (ann, bob) for m in c.seen)
    cy = await Client.open(server.url, "Cy")
    dan = await Client.open(server.url, "Dan")
    await sign_up(cy, "Cyril")
    await sign_up(dan, "Daniel")
    rated = await arena_game(cy, dan)
    assert rated["rated"] is True
    for client in (cy, dan):
        change = await client.expect("rating_change")
        assert change["delta"] != 0
        assert len((await profile(client))["ratings"]) == 1
    for client in (ann, bob, cy, dan):
        await client.close()


def test_a_schedules_arenas_are_rated_as_the_schedule_says() -> None:
    for rated in (True, False):
        schedule = ScheduleRecord("s1", "connect4", "Hourly", "3+2", 30, 60, 0.0, "Root", 0.0,
                                  rated=rated)
        assert arena_of(schedule, 2, 10.0).rated is rated


async def test_an_arenas_standings_show_each_players_rating_after_its_rated_games(
        server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    bob = await Client.open(server.url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    view = await arena_game(ann, bob)
    now = {}
    for client in (ann, bob):
        change = await client.expect("rating_change")
        now[client.player_id] = round(change["after"]["rating"])
    assert sorted(now.values())[0] < 1500 < sorted(now.values())[1]
    for _ in range(100):  # the arena scores the game once it is rated
        await ann.send(type="get_tournament", tournament=view["id"])
        rows = (await about(ann, view["id"]))["standings"]
        if all(row["games"] == 1 for row in rows):
            break
        await asyncio.sleep(0.05)
    assert {row["player"]["id"]: row["rating"] for row in rows} == now
    for client in (ann, bob):
        await client.close()
