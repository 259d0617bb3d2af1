"""Arenas over real websockets: made by an account, joined, paired at once into rooms,
scored when a game ends, standings pushed; bad requests refused; a restart keeps them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from people import CHEAP_HASHER, account, sign_up
from wsclient import Client

from server.app import Running, running
from server.storage import SqlStore

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: the first player wins at its fourth move."""


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running() as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def make_arena(client: Client, **extra: Any) -> str:
    await client.send(type="create_tournament", game="connect4", name="Hourly", minutes=30,
                      time_control="3+2", **extra)
    made = await client.expect("tournament")
    status = "upcoming" if extra.get("starts_in") else "running"
    assert made["tournament"]["status"] == status and made["standings"] == []
    return str(made["tournament"]["id"])


async def paired(clients: dict[str, Client], tournament_message: dict[str, Any]
                 ) -> tuple[Client, Client, str]:
    """The two clients of the arena's one game under way (first, second) and its room."""
    (game,) = tournament_message["games"]
    return clients[game["first"]["id"]], clients[game["second"]["id"]], game["room"]


async def play(first: Client, second: Client, room: str) -> None:
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (first, second)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        for client in (first, second):
            await client.expect("move_made", ply=ply)


async def room_state(client: Client, room: str) -> dict[str, Any]:
    """The ``room_state`` of ``room`` this client was sent (it may come before or after the
    ``tournament`` that announced the pairing)."""
    for message in client.seen:
        if message["type"] == "room_state" and message["room"]["id"] == room:
            return message
    while True:
        message = await client.expect("room_state")
        if message["room"]["id"] == room:
            return message


async def until_you(client: Client, status: str) -> dict[str, Any]:
    """The next ``tournament`` message whose own row has ``status`` (pushes of others'
    moves may come first)."""
    while True:
        message = await client.expect("tournament")
        if message["you"] is not None and message["you"]["status"] == status:
            return message


def row(message: dict[str, Any], player_id: str) -> dict[str, Any]:
    return next(r for r in message["standings"] if r["player"]["id"] == player_id)


async def test_an_arena_pairs_players_as_they_come_scores_the_game_and_pushes_standings(
        server: Running) -> None:
    ann, bob, cy = [await account(server.url, name) for name in ("Ann", "Bob", "Cyd")]
    clients = {c.player_id: c for c in (ann, bob, cy)}
    tid = await make_arena(ann)
    await ann.send(type="join_tournament", tournament=tid)
    alone = await ann.expect("tournament")
    assert alone["games"] == [] and alone["you"]["score"] == 0
    await bob.send(type="join_tournament", tournament=tid)
    joined = await bob.expect("tournament")
    first, second, room = await paired(clients, joined)
    for client in (first, second):
        state = await room_state(client, room)
        assert state["room"]["status"] == "active"
    await play(first, second, room)
    pushed = await first.expect("tournament")
    while row(pushed, first.player_id)["score"] != 2:
        pushed = await first.expect("tournament")
    assert row(pushed, first.player_id)["sheet"] == [2]
    assert row(pushed, second.player_id)["sheet"] == [0]
    assert pushed["you"]["player"]["id"] == first.player_id and pushed["games"] == []
    # Ann and Bob just met: both wait. Cy is paired the moment it joins, with the one
    # closest in score (the loser; the winner waits).
    await cy.send(type="join_tournament", tournament=tid)
    now = await cy.expect("tournament")
    (game,) = now["games"]
    assert {game["first"]["id"], game["second"]["id"]} == {cy.player_id, second.player_id}
    await room_state(cy, game["room"])
    for client in (ann, bob, cy):
        await client.close()


async def test_pausing_withdrawing_and_listing(server: Running) -> None:
    ann = await account(server.url, "Ann")
    bob = await account(server.url, "Bob")
    tid = await make_arena(ann, starts_in=3600)
    listed = await bob.request("list_tournaments")
    assert [t["id"] for t in listed["tournaments"]] == [tid]
    assert listed["tournaments"][0]["status"] == "upcoming"
    for client in (ann, bob):
        await client.send(type="join_tournament", tournament=tid)
        assert (await client.expect("tournament"))["games"] == []  # not started: no pairing
    await bob.send(type="pause_tournament", tournament=tid)
    await until_you(bob, "paused")
    await ann.send(type="withdraw_tournament", tournament=tid)
    await until_you(ann, "withdrawn")
    state = await until_you(bob, "paused")  # the push of Ann's withdrawal
    while {r["status"] for r in state["standings"]} != {"paused", "withdrawn"}:
        state = await until_you(bob, "paused")
    for client in (ann, bob):
        await client.close()


async def test_joining_a_second_arena_pauses_the_player_in_the_first(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    await sign_up(ann, "Ann")
    one = await make_arena(ann, starts_in=3600)
    two = await make_arena(ann, starts_in=3600)
    await ann.send(type="join_tournament", tournament=one)
    await until_you(ann, "active")
    await ann.send(type="join_tournament", tournament=two)
    while True:
        message = await until_you(ann, "paused")
        if message["tournament"]["id"] == one:
            break
    state = await ann.request("get_tournament", tournament=two)
    while state["type"] != "tournament" or state["tournament"]["id"] != two:
        state = await ann.expect("tournament")
    assert state["you"]["status"] == "active"
    await ann.close()


async def test_bad_tournament_requests_are_refused(server: Running) -> None:
    guest = await Client.open(server.url, "Guest")
    ann = await Client.open(server.url, "Ann")
    await sign_up(ann, "Ann")
    refused = await guest.request("create_tournament", game="connect4", name="Mine",
                                  minutes=30, time_control="3+2")
    assert refused["type"] == "error" and refused["code"] == "forbidden"
    unknown = await guest.request("join_tournament", tournament="nope")
    assert unknown["code"] == "unknown_tournament"
    bad = await ann.request("create_tournament", game="chess", name="X", minutes=30,
                            time_control="3+2")
    assert bad["code"] == "unknown_game"
    clock = await ann.request("create_tournament", game="connect4", name="X", minutes=30,
                              time_control="2+1")
    assert clock["code"] == "unknown_time_control"
    tid = await make_arena(ann)
    outsider = await guest.request("pause_tournament", tournament=tid)
    assert outsider["code"] == "not_entered"
    assert (await guest.request("list_tournaments"))["tournaments"][0]["players"] == 0
    for client in (guest, ann):
        await client.close()


async def test_an_arena_and_its_scores_outlive_a_restart(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(srv.url, "Ann")
        bob = await Client.open(srv.url, "Bob")
        clients = {c.player_id: c for c in (ann, bob)}
        await sign_up(ann, "Ann")
        await sign_up(bob, "Bob")
        tid = await make_arena(ann)
        await ann.send(type="join_tournament", tournament=tid)
        await ann.expect("tournament")
        await bob.send(type="join_tournament", tournament=tid)
        first, second, room = await paired(clients, await bob.expect("tournament"))
        await play(first, second, room)
        winner = first.player_id
        for client in (ann, bob):
            await client.close()
    async with running(store=SqlStore(url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        cy = await account(srv.url, "Cyd")
        state = await cy.request("get_tournament", tournament=tid)
        assert row(state, winner)["score"] == 2 and row(state, winner)["sheet"] == [2]
        # Each rating as the game left it, not the 1500 both joined with.
        assert row(state, winner)["rating"] > 1500 > row(state, second.player_id)["rating"]
        assert state["tournament"]["players"] == 2 and state["games"] == []
        await cy.send(type="join_tournament", tournament=tid)
        (game,) = (await cy.expect("tournament"))["games"]
        loser = second.player_id
        assert {game["first"]["id"], game["second"]["id"]} == {cy.player_id, loser}
        await cy.close()


@pytest.mark.slow
async def test_standings_pushes_are_coalesced_per_interval() -> None:
    """Three joins within the interval after a push reach a player as one push, with all
    three in it, not three."""
    from server.app import Settings

    async with running(settings=Settings(standings_push_seconds=2.0)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(srv.url, "Ann")
        await sign_up(ann, "Ann")
        tid = await make_arena(ann)
        await ann.send(type="join_tournament", tournament=tid)
        await ann.expect("tournament")  # the answer
        first = await ann.expect("tournament")  # the push of her join: at once
        assert first["tournament"]["players"] == 1
        others = [await account(srv.url, name) for name in ("Bob", "Cyd", "Dan")]
        for other in others:
            await other.send(type="join_tournament", tournament=tid)
            await other.expect("tournament")
        pushes = []
        while True:
            try:
                pushes.append(await ann.expect("tournament", timeout=3.5))
            except TimeoutError:
                break
        assert [m["tournament"]["players"] for m in pushes] == [4]
        for client in (ann, *others):
            await client.close()


async def test_a_private_arena_is_not_listed_but_joined_by_its_link(server: Running) -> None:
    ann = await account(server.url, "Ann")
    bob = await account(server.url, "Bob")
    public = await make_arena(ann, starts_in=3600)
    hidden = await make_arena(ann, starts_in=3600, private=True)
    listed = await bob.request("list_tournaments")
    assert [t["id"] for t in listed["tournaments"]] == [public]
    await bob.send(type="join_tournament", tournament=hidden)
    joined = await bob.expect("tournament")
    assert joined["tournament"]["id"] == hidden and joined["you"]["status"] == "active"
    for client in (ann, bob):
        await client.close()


async def pushes_so_far(client: Client) -> list[dict[str, Any]]:
    """The ``tournament`` messages that reached ``client`` before the pong to a ping now."""
    mark = len(client.seen)
    await client.send(type="ping", id=99)
    await client.expect("pong")
    return [m for m in client.seen[mark:] if m["type"] == "tournament"]


async def test_watchers_are_pushed_the_standings_within_a_cap_until_they_unwatch() -> None:
    """A connection that asks for an arena it has not joined is pushed its changes; past the
    cap (one here) another is only answered; ``unwatch_tournament``, asking for another
    arena or closing frees the place."""
    from server.app import Settings

    async with running(settings=Settings(tournament_watchers=1, standings_push_seconds=0.0)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(srv.url, "Ann")
        await sign_up(ann, "Ann")
        tid = await make_arena(ann, starts_in=3600)
        other = await make_arena(ann, starts_in=3600)
        wes = await Client.open(srv.url, "Wes")
        xi = await Client.open(srv.url, "Xi")
        for watcher in (wes, xi):
            answer = await watcher.request("get_tournament", tournament=tid)
            assert answer["type"] == "tournament" and answer["you"] is None

        async def join(name: str) -> None:
            one = await account(srv.url, name)
            await one.send(type="join_tournament", tournament=tid)
            await one.expect("tournament")  # pushes are written before the answer

        await join("Bob")
        (pushed,) = await pushes_so_far(wes)
        assert pushed["tournament"]["players"] == 1 and pushed["you"] is None
        assert pushed["standings"][0]["player"]["name"] == "Bob"
        assert await pushes_so_far(xi) == []  # over the cap: answered, not pushed

        await wes.send(type="unwatch_tournament")
        assert await pushes_so_far(wes) == []  # (its unwatch is done by the pong)
        assert (await xi.request("get_tournament", tournament=tid))["type"] == "tournament"
        await join("Cyd")
        assert await pushes_so_far(wes) == []
        assert [m["tournament"]["players"] for m in await pushes_so_far(xi)] == [2]

        # Asking for another arena moves the one watch a connection has; closing ends it.
        await xi.request("get_tournament", tournament=other)
        assert (await wes.request("get_tournament", tournament=tid))["type"] == "tournament"
        await join("Dan")
        assert await pushes_so_far(xi) == []
        assert len(await pushes_so_far(wes)) == 1
        await wes.close()
        zed = await Client.open(srv.url, "Zed")
        while srv.app.tournaments.watchers.counts.get(tid):
            await asyncio.sleep(0.01)  # the server notices the close
        await zed.request("get_tournament", tournament=tid)
        await join("Eve")
        assert [m["tournament"]["players"] for m in await pushes_so_far(zed)] == [4]
        # Bad input changes nothing: an unwatch with nothing watched is not an error.
        await zed.send(type="unwatch_tournament")
        await zed.send(type="unwatch_tournament")
        assert await pushes_so_far(zed) == []
        for client in (ann, xi, zed):
            await client.close()
