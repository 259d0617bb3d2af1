"""Berserk over real websockets: a player in an arena game halves its own clock before its
first move, the room hears of it, the flag falls on the halved time, a restart keeps it, a
win scores the bonus point; refused outside an arena, after a move, twice, or where the
arena does not allow it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client, friends_game

from server.app import Running, Settings, running
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore
from tests.server.tournaments.test_tournament_desk import paired, room_state, row

INITIAL_MS = 180_000  # 3+2


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running() as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


def token_of(client: Client) -> str:
    """What ``hello`` takes to come back as this client's player: its session once it
    signed up, else its guest resume token."""
    sessions = [m["session"] for m in client.seen if m["type"] == "signed_in"]
    return str(sessions[-1] if sessions else client.welcome["resume"])


async def scored(client: Client, player_id: str) -> dict[str, Any]:
    """The first ``tournament`` push after ``player_id``'s first game was scored."""
    while True:
        state = await client.expect("tournament")
        if row(state, player_id)["games"] == 1:
            return state


async def arena_game(url: str, **extra: Any) -> tuple[Client, Client, str, str]:
    """Ann makes an arena, Ann and Bob (accounts both: guests may not enter) join and are
    paired: (first, second, room, arena)."""
    ann = await Client.open(url, "Ann")
    bob = await Client.open(url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await ann.send(type="create_tournament", **{
        "game": "connect4", "name": "Hourly", "minutes": 30, "time_control": "3+2", **extra})
    tid = str((await ann.expect("tournament"))["tournament"]["id"])
    await ann.send(type="join_tournament", tournament=tid)
    await ann.expect("tournament")
    await bob.send(type="join_tournament", tournament=tid)
    first, second, room = await paired({c.player_id: c for c in (ann, bob)},
                                       await bob.expect("tournament"))
    for client in (first, second):
        await room_state(client, room)
    return first, second, room, tid


async def refused(client: Client, **message: Any) -> dict[str, Any]:
    await client.send(**message)
    return await client.expect("error")


async def test_berserk_halves_the_clock_tells_the_room_and_a_win_scores_a_bonus_point(
        server: Running) -> None:
    first, second, room, tid = await arena_game(server.url)
    cy = await Client.open(server.url, "Cy")
    await cy.send(type="spectate", room=room)
    await room_state(cy, room)
    await first.send(type="berserk", room=room)
    for client in (first, second, cy):
        told = await client.expect("room_event", event="berserk")
        assert told["seat"] == 0
        left = told["clock"]["remaining_ms"]
        assert INITIAL_MS // 2 - 5_000 < left[0] <= INITIAL_MS // 2 and left[1] == INITIAL_MS
        assert told["clock"]["running"] == 0
    again = await refused(first, type="berserk", room=room)
    assert again["code"] == "cannot_berserk" and again["detail"]["reason"] == "already"
    await first.send(type="move", room=room, ply=0, move="1")
    await second.expect("move_made", ply=0)
    await second.send(type="move", room=room, ply=1, move="2")
    await first.expect("move_made", ply=1)
    late = await refused(second, type="berserk", room=room)
    assert late["code"] == "cannot_berserk" and late["detail"]["reason"] == "moved"
    watcher = await Client.open(server.url, "Dee")
    await watcher.send(type="spectate", room=room)
    seen = (await room_state(watcher, room))["room"]
    assert seen["berserk"] == [0] and seen["berserk_allowed"] is True
    moves = ["1", "2", "1", "2", "1"]  # first wins at its fourth move
    for ply, move in enumerate(moves, start=2):
        await (first, second)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        await first.expect("move_made", ply=ply)
    state = await scored(first, first.player_id)
    assert row(state, first.player_id)["sheet"] == [3]  # 2 for the win, 1 for berserk
    assert row(state, second.player_id)["sheet"] == [0]
    over = await refused(second, type="berserk", room=room)
    assert over["code"] == "game_finished"
    for client in (first, second, cy, watcher):
        await client.close()


async def test_berserk_is_refused_outside_an_arena_and_where_the_arena_forbids_it(
        server: Running) -> None:
    ann, bob, room = await friends_game(server.url)
    outside = await refused(ann, type="berserk", room=room)
    assert outside["code"] == "cannot_berserk" and outside["detail"]["reason"] == "not_arena"
    first, second, arena_room, _ = await arena_game(server.url, berserk=False)
    forbidden = await refused(first, type="berserk", room=arena_room)
    assert forbidden["code"] == "cannot_berserk"
    assert forbidden["detail"]["reason"] == "not_allowed"
    state = (await room_state(first, arena_room))["room"]
    assert state["berserk_allowed"] is False and state["berserk"] == []
    cy = await Client.open(server.url, "Cy")
    await cy.send(type="spectate", room=arena_room)  # the room as it stands now
    now = (await cy.expect("room_state"))["room"]
    assert now["berserk"] == [] and now["clock"]["remaining_ms"][0] > INITIAL_MS - 10_000
    unknown = await refused(cy, type="berserk", room="NOSUCHRM")
    assert unknown["code"] == "unknown_room"
    for client in (ann, bob, first, second, cy):
        await client.close()


@pytest.mark.slow
async def test_the_flag_falls_on_the_halved_clock() -> None:
    """Seat 1 berserks while its 6 s clock runs: its flag falls about 3 s later, not 6 (the
    game is aborted, as any game one side never moved in, and scores nothing)."""
    quick = TimeControl("0.1+0", 6_000, 0)
    settings = Settings(time_controls={**TIME_CONTROLS, quick.name: quick})
    async with running(settings=settings) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        first, second, room, tid = await arena_game(srv.url, time_control=quick.name)
        await first.send(type="move", room=room, ply=0, move="4")
        await second.expect("move_made", ply=0)
        loop = asyncio.get_running_loop()
        asked = loop.time()
        await second.send(type="berserk", room=room)
        told = await second.expect("room_event", event="berserk")
        assert told["clock"]["remaining_ms"][1] <= 3_000
        over = await first.expect("game_over", timeout=6.0)
        took = loop.time() - asked
        assert over["result"]["reason"] == "aborted" and over["clock"]["remaining_ms"][1] == 0
        assert 2.5 < took < 4.5, took
        while True:
            state = await first.expect("tournament")
            if not row(state, first.player_id)["playing"]:
                break
        assert row(state, first.player_id)["sheet"] == []
        assert row(state, second.player_id)["sheet"] == []
        for client in (first, second):
            await client.close()


async def test_a_berserk_clock_and_its_bonus_outlive_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        first, second, room, tid = await arena_game(srv.url)
        tokens = {c.player_id: token_of(c) for c in (first, second)}
        await first.send(type="berserk", room=room)
        await second.expect("room_event", event="berserk")
        await second.send(type="berserk", room=room)  # before the first's move
        await first.expect("room_event", event="berserk")
        await first.send(type="move", room=room, ply=0, move="1")  # stores both halved
        await second.expect("move_made", ply=0)
        winner, loser = first.player_id, second.player_id
        for client in (first, second):
            await client.close()
    async with running(store=SqlStore(url)) as srv:
        first = await Client.open(srv.url, None, resume=tokens[winner])
        second = await Client.open(srv.url, None, resume=tokens[loser])
        state = (await room_state(second, room))["room"]
        assert state["berserk"] == [0, 1] and state["berserk_allowed"] is True
        left = state["clock"]["remaining_ms"]
        assert left[0] <= INITIAL_MS // 2 + 2_000  # halved after its move's increment
        assert left[1] <= INITIAL_MS // 2  # halved once, not twice
        assert left[1] > INITIAL_MS // 2 - 10_000
        for ply, move in enumerate(["2", "1", "2", "1", "2", "1"], start=1):
            await (first, second)[ply % 2].send(type="move", room=room, ply=ply, move=move)
            await first.expect("move_made", ply=ply)
        state = await scored(first, winner)
        assert row(state, winner)["sheet"] == [3] and row(state, loser)["sheet"] == [0]
        for client in (first, second):
            await client.close()

