"""Arena conduct over real websockets, on SQLite and PostgreSQL: guests watch but do not
enter (and leave no rows), and an entrant who never moves is paused at its first aborted
game, withdrawn at its second, and told why."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from people import CHEAP_HASHER, account
from wsclient import Client

from server.app import Running, Settings, running
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore
from tests.server.tournaments.test_tournament_desk import make_arena

QUICK = TimeControl("0.05+0", 3_000, 0)
"""A 3-second clock: an idle player's flag falls (and its game is aborted) at once."""


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[Running]:
    settings = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK})
    async with running(store=SqlStore(database_url), settings=settings) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def test_guests_may_watch_an_arena_but_not_enter_it_and_leave_no_rows(
        server: Running) -> None:
    ann = await account(server.url, "Ann")
    tid = await make_arena(ann)  # running: a guest let in would be paired with Ann at once
    await ann.send(type="join_tournament", tournament=tid)
    await ann.expect("tournament")
    guests = [await Client.open(server.url, f"Guest {k}") for k in range(3)]
    for guest in guests:
        refused = await guest.request("join_tournament", tournament=tid)
        assert refused["type"] == "error" and refused["code"] == "forbidden", refused
        assert refused["detail"] == {"reason": "guest"} and "sign up" in refused["message"]
        watched = await guest.request("get_tournament", tournament=tid)
        assert watched["type"] == "tournament" and watched["you"] is None
        assert watched["tournament"]["players"] == 1 and watched["games"] == []
    for guest in guests:
        assert await server.app.store.load_player(guest.player_id) is None
    assert (await ann.request("get_tournament", tournament=tid))["you"]["playing"] is False
    for client in (ann, *guests):
        await client.close()


async def mine(client: Client, tid: str, **fields: Any) -> dict[str, Any]:
    """The next ``tournament`` message of ``tid`` whose own row has ``fields``."""
    while True:
        message = await client.expect("tournament", timeout=10)
        you = message["you"]
        if message["tournament"]["id"] == tid and you is not None and all(
                you[k] == v for k, v in fields.items()):
            return message


async def now_state(client: Client, tid: str) -> dict[str, Any]:
    """The tournament as it stands now (the answer to asking, after every push before)."""
    await client.send(type="get_tournament", tournament=tid)
    await client.send(type="ping", id=7)
    await client.expect("pong")
    return next(m for m in reversed(client.seen) if m["type"] == "tournament")


async def idle_game(idle: Client, others: list[Client], since: int) -> tuple[Client, str]:
    """The game ``idle`` is paired in after its ``since``-th message (its ``room_state``
    may come before the answer to its join), where it never moves: its opponent (who moves
    at once if it moves first) and the room."""
    def fresh(message: dict[str, Any]) -> bool:
        room = message["room"]
        return bool(room["status"] == "active" and not room["moves"])

    found = [m for m in idle.seen[since:] if m["type"] == "room_state" and fresh(m)]
    message = found[0] if found else await idle.expect("room_state", timeout=10)
    while not fresh(message):
        message = await idle.expect("room_state", timeout=10)
    room = message["room"]
    seats = [seat["player"]["id"] for seat in room["seats"]]
    opponent = next(c for c in others if c.player_id in seats)
    if seats[0] == opponent.player_id:
        await opponent.send(type="move", room=room["id"], ply=0, move="4")
    return opponent, room["id"]


@pytest.mark.slow
async def test_an_entrant_who_never_moves_is_paused_then_withdrawn_and_told_why(
        server: Running) -> None:
    ann = await account(server.url, "Ann")
    idle = await account(server.url, "Idler")
    await ann.send(type="create_tournament", game="connect4", name="Quick", minutes=30,
                   time_control=QUICK.name)
    tid = (await ann.expect("tournament"))["tournament"]["id"]
    for client in (ann, idle):
        await client.send(type="join_tournament", tournament=tid)
    await idle_game(idle, [ann], 0)  # Idler never moves: its flag falls, the game is aborted
    paused = await mine(idle, tid, status="paused")
    assert paused["you"]["status_reason"] == "no_show" and paused["you"]["no_shows"] == 1
    ann_row = (await now_state(ann, tid))["you"]
    assert ann_row["status"] == "active" and ann_row["status_reason"] is None
    assert ann_row["no_shows"] == 0 and ann_row["sheet"] == [] and not ann_row["playing"]
    # Cyd comes: Ann is paired with Cyd, not with Idler; nor is Idler paired after it.
    cyd = await account(server.url, "Cyd")
    await cyd.send(type="join_tournament", tournament=tid)
    while True:
        room = (await cyd.expect("room_state", timeout=10))["room"]
        if room["status"] == "active":
            break
    assert {s["player"]["id"] for s in room["seats"]} == {ann.player_id, cyd.player_id}
    await ann.send(type="resign", room=room["id"])
    await mine(cyd, tid, playing=False, games=1)
    standings = (await now_state(cyd, tid))["standings"]
    idler = next(r for r in standings if r["player"]["id"] == idle.player_id)
    assert idler["status"] == "paused" and not idler["playing"] and idler["games"] == 0
    # Idler comes back and is paired at once (Ann and Cyd just met); it never moves again.
    since = len(idle.seen)
    await idle.send(type="join_tournament", tournament=tid)
    back = await mine(idle, tid, status="active")
    assert back["you"]["status_reason"] is None and back["you"]["no_shows"] == 1
    await idle_game(idle, [ann, cyd], since)
    gone = await mine(idle, tid, status="withdrawn")
    assert gone["you"]["status_reason"] == "no_show" and gone["you"]["no_shows"] == 2
    for client in (ann, idle, cyd):
        await client.close()
