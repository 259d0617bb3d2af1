"""Arena entry conditions over real websockets: a minimum and maximum rating in the arena's
game and a minimum of rated games played, each refused with the condition named; kept with
the arena over a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from people import CHEAP_HASHER, account, sign_up
from wsclient import Client

from server.app import Running, running
from server.storage import SqlStore
from tests.server.tournaments.test_tournament_desk import paired, play, room_state


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running() as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def make(client: Client, **conditions: Any) -> dict[str, Any]:
    await client.send(type="create_tournament", game="connect4", name="Club", minutes=30,
                      time_control="3+2", starts_in=3600, **conditions)
    return await client.expect("tournament")


async def join(client: Client, tid: str) -> dict[str, Any]:
    """The answer to joining: ``tournament`` or ``error``."""
    await client.send(type="join_tournament", tournament=tid)
    while True:
        message = await client.recv()
        if message["type"] in ("tournament", "error"):
            return message


async def rated_game(url: str) -> tuple[Client, Client]:
    """Ann and Bob, both accounts, after one rated arena game Ann's client won or lost:
    (winner, loser)."""
    ann = await Client.open(url, "Ann")
    bob = await Client.open(url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await ann.send(type="create_tournament", game="connect4", name="Warm-up", minutes=30,
                   time_control="3+2")
    tid = (await ann.expect("tournament"))["tournament"]["id"]
    await join(ann, tid)
    await bob.send(type="join_tournament", tournament=tid)
    first, second, room = await paired({c.player_id: c for c in (ann, bob)},
                                       await bob.expect("tournament"))
    for client in (first, second):
        await room_state(client, room)
    await play(first, second, room)
    await first.expect("rating_change")
    await second.expect("rating_change")
    return first, second


async def test_each_condition_refuses_whom_it_keeps_out_and_names_itself(
        server: Running) -> None:
    winner, loser = await rated_game(server.url)
    cy = await account(server.url, "Cyd")  # new: 1500, no rated game
    made = await make(winner, min_rating=1510, max_rating=2000, min_games=1)
    view = made["tournament"]
    assert (view["min_rating"], view["max_rating"], view["min_games"]) == (1510, 2000, 1)
    tid = view["id"]
    assert (await join(winner, tid))["type"] == "tournament"
    low = await join(loser, tid)
    assert low["code"] == "entry_refused" and low["detail"]["condition"] == "min_rating"
    assert low["detail"]["required"] == 1510 and low["detail"]["yours"] < 1500
    assert "1510" in low["message"]
    ceiling = (await make(winner, max_rating=1510))["tournament"]["id"]
    high = await join(winner, ceiling)
    assert high["code"] == "entry_refused" and high["detail"]["condition"] == "max_rating"
    assert (await join(loser, ceiling))["type"] == "tournament"
    seasoned = (await make(winner, min_games=1))["tournament"]["id"]
    new = await join(cy, seasoned)
    assert new["code"] == "entry_refused" and new["detail"]["condition"] == "min_games"
    assert (new["detail"]["required"], new["detail"]["yours"]) == (1, 0)
    assert (await join(loser, seasoned))["type"] == "tournament"
    state = await winner.request("get_tournament", tournament=seasoned)
    assert state["tournament"]["players"] == 1  # the refused changed nothing
    for client in (winner, loser, cy):
        await client.close()


async def test_conditions_that_cannot_be_met_are_refused(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    await sign_up(ann, "Ann")
    await ann.send(type="create_tournament", game="connect4", name="Club", minutes=30,
                   time_control="3+2", min_rating=1800, max_rating=1600)
    refused = await ann.expect("error")
    assert refused["code"] == "bad_message" and refused["detail"]["field"] == "min_rating"
    assert (await ann.request("list_tournaments"))["tournaments"] == []
    await ann.close()


async def test_conditions_are_kept_with_the_arena_over_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(srv.url, "Ann")
        await sign_up(ann, "Ann")
        tid = (await make(ann, min_rating=1600))["tournament"]["id"]
        await ann.close()
    async with running(store=SqlStore(url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        cy = await account(srv.url, "Cyd")
        listed = (await cy.request("list_tournaments"))["tournaments"]
        assert [(t["id"], t["min_rating"]) for t in listed] == [(tid, 1600)]
        refused = await join(cy, tid)
        assert refused["code"] == "entry_refused"
        assert refused["detail"]["condition"] == "min_rating"
        await cy.close()
