"""Tournaments on two server nodes in one process, sharing a real PostgreSQL database and a
real Redis: one node pairs an arena under a lease; players on the other join, play and hear
its standings through it; a node that lost the lease can write nothing more to it; a node
that stops hands it over.

(Eight bots in real processes, and a node killed, are in ``test_arena_bots``.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from people import CHEAP_HASHER, account, sign_up
from wsclient import Client

from clients.bot import BotCore, BotRunner, RandomEngine
from server.admin.tokens import Admins
from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.cluster.cluster import Cluster
from server.cluster.node import tournament_lease
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore, keys
from tests.server.cluster.conftest import FAST, SECRET
from tests.server.storage.conftest import REDIS_URL, create_database, drop_database

QUICK = TimeControl("ladder", 30_000, 500)
FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: the first player wins at its fourth move."""


async def _arena(server: Running, name: str = "Ann") -> tuple[Client, str]:
    """``name``, signed up on ``server``, makes a running arena and enters it."""
    server.app.accounts.hasher = CHEAP_HASHER
    maker = await Client.open(server.url, name)
    await sign_up(maker, name)
    await maker.send(type="create_tournament", game="connect4", name="Hourly", minutes=30,
                     time_control="3+2")
    tid = str((await maker.expect("tournament"))["tournament"]["id"])
    await maker.send(type="join_tournament", tournament=tid)
    await maker.expect("tournament")
    return maker, tid


async def _room_state(client: Client, room: str) -> dict[str, Any]:
    """The ``room_state`` of ``room`` the client was sent: it may come before or after the
    ``tournament`` message that announced the pairing."""
    for message in client.seen:
        if message["type"] == "room_state" and message["room"]["id"] == room:
            return message
    while True:
        message = await client.expect("room_state")
        if message["room"]["id"] == room:
            return message


def _row(message: dict[str, Any], player_id: str) -> dict[str, Any]:
    return next(r for r in message["standings"] if r["player"]["id"] == player_id)


def _without_countdown(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "rematch_in"} for row in message["standings"]]


async def test_an_arena_on_one_node_is_joined_played_and_pushed_on_the_other(
    nodes: tuple[Running, Running], prefix: str,  # noqa: F811
) -> None:
    one, two = nodes
    ann, tid = await _arena(one)
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    holder = await redis.get(keys.room_owner(prefix, tournament_lease(tid)))
    await redis.aclose()
    assert holder is not None and holder.split()[0] == one.app.cluster.node  # type: ignore[union-attr]
    assert tid not in two.app.tournaments.held.records
    # Bob, on node two, joins: node one runs it and answers him through node two.
    two.app.accounts.hasher = CHEAP_HASHER
    bob = await account(two.url, "Bob")
    await bob.send(type="join_tournament", tournament=tid, id="join")
    answer = await bob.expect("tournament")
    assert _row(answer, bob.player_id)["status"] == "active"
    (game,) = answer["games"]
    room = game["room"]
    assert room in one.app.lobby.rooms  # the arena's node runs its games
    clients = {ann.player_id: ann, bob.player_id: bob}
    first, second = clients[game["first"]["id"]], clients[game["second"]["id"]]
    for client in (first, second):
        await _room_state(client, room)
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (first, second)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        for client in (first, second):
            await client.expect("move_made", ply=ply)
    # The standings reach Bob on node two, pushed by node one through Redis.
    while True:
        pushed = await bob.expect("tournament")
        if _row(pushed, first.player_id)["score"] == 2:
            break
    assert _row(pushed, second.player_id)["sheet"] == [0]
    # Anyone on node two asks node one for the state.
    cy = await Client.open(two.url, "Cy")
    asked = await cy.request("get_tournament", tournament=tid)
    assert asked["type"] == "tournament"
    # The same standings, but for the time to a rematch, which counts down meanwhile.
    assert _without_countdown(asked) == _without_countdown(pushed)
    for row in asked["standings"]:
        if row["rematch_in"] is not None:
            assert row["rematch_in"] <= _row(pushed, row["player"]["id"])["rematch_in"]
    (listed,) = (await cy.request("list_tournaments"))["tournaments"]
    assert listed["id"] == tid and listed["players"] == 2  # counted from the store there
    assert tid not in two.app.tournaments.held.records  # node two never paired it
    # Cy, who asked on node two and never joined, is pushed Dee's join on node one.
    dee = await account(one.url, "Dee")
    await dee.send(type="join_tournament", tournament=tid)
    await dee.expect("tournament")
    while True:
        watched = await cy.expect("tournament", timeout=10)
        if watched["tournament"]["players"] == 3:
            break
    assert watched["you"] is None and cy.player_id not in [
        r["player"]["id"] for r in watched["standings"]]
    for client in (ann, bob, cy, dee):
        await client.close()


async def test_a_node_that_lost_an_arena_cannot_write_it_and_lets_it_go(
    nodes: tuple[Running, Running], prefix: str, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    one, two = nodes
    assert one.app.cluster is not None and two.app.cluster is not None
    ann, tid = await _arena(one)
    lease = tournament_lease(tid)
    # Node one stalls past its lease without noticing; node two takes the arena over.
    async def paused() -> None:
        return None

    monkeypatch.setattr(one.app.cluster, "_renew", paused)
    old_epoch = one.app.cluster.owned[lease]
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.delete(keys.room_owner(prefix, lease))
    await redis.aclose()
    assert await two.app.cluster.scan() == 1
    assert two.app.cluster.owned[lease] > old_epoch
    assert [r.id for r in two.app.tournaments.arenas.arenas[tid].standings()] == [ann.player_id]
    assert tid in one.app.tournaments.arenas.arenas  # it has not noticed yet
    # Bob joins on node one, which still pairs the arena as it believes: the store refuses
    # its write, and it lets the arena go.
    bob = await account(one.url, "Bob")
    await bob.send(type="join_tournament", tournament=tid, id="stale")
    refused = await bob.expect("error", ref="stale")
    assert refused["code"] == "internal_error"
    assert tid not in one.app.tournaments.arenas.arenas and not one.app.cluster.holds(lease)
    entrants = await two.app.store.tournament_entrants(tid)
    assert [e.player_id for e in entrants] == [ann.player_id]
    monkeypatch.undo()
    # Sent again, the join goes to node two, which pairs Ann and Bob.
    await bob.send(type="join_tournament", tournament=tid, id="again")
    answer = await bob.expect("tournament")
    assert {r["player"]["id"] for r in answer["standings"]} == {ann.player_id, bob.player_id}
    (game,) = answer["games"]
    assert game["room"] in two.app.lobby.rooms
    entrants = await two.app.store.tournament_entrants(tid)
    assert {e.player_id for e in entrants} == {ann.player_id, bob.player_id}
    for client in (ann, bob):
        await client.close()


async def test_an_arena_whose_node_stopped_is_paired_on_by_another(
    prefix: str,  # noqa: F811
) -> None:
    url, name = await create_database()
    try:
        async with running(store=SqlStore(url), secret=SECRET, cluster=Cluster(
                REDIS_URL, prefix=prefix, settings=FAST)) as survivor:
            async with running(store=SqlStore(url), secret=SECRET, cluster=Cluster(
                    REDIS_URL, prefix=prefix, settings=FAST)) as doomed:
                ann, tid = await _arena(doomed)
                await ann.close()
            # The node stopped and gave its leases up: the survivor pairs the arena.
            lease = tournament_lease(tid)
            deadline = asyncio.get_running_loop().time() + 5
            while not survivor.app.cluster.holds(lease):  # type: ignore[union-attr]
                assert asyncio.get_running_loop().time() < deadline, "no takeover in 5 s"
                await asyncio.sleep(0.1)
            survivor.app.accounts.hasher = CHEAP_HASHER
            bob = await account(survivor.url, "Bob")
            await bob.send(type="join_tournament", tournament=tid)
            answer = await bob.expect("tournament")
            assert len(answer["standings"]) == 2 and len(answer["games"]) == 1
            await bob.close()
    finally:
        await drop_database(name)


async def test_a_round_robin_made_on_one_node_is_entered_started_and_played_from_the_other(
    nodes: tuple[Running, Running],  # noqa: F811
) -> None:
    """A Swiss or round-robin takes the arena's road: entries, the start and the results
    from another node reach the node that pairs it; the next round follows the last
    result."""
    one, two = nodes
    one.app.accounts.hasher = two.app.accounts.hasher = CHEAP_HASHER
    zed = await Client.open(two.url, "Zed")
    await sign_up(zed, "Zed")
    await zed.send(type="create_round_tournament", kind="roundrobin", game="connect4",
                   name="Thursday", time_control="3+2")
    tid = str((await zed.expect("round_tournament"))["tournament"]["id"])
    assert tid in two.app.tournaments.rounds.events
    ann, bob = await account(one.url, "Ann"), await account(one.url, "Bob")
    for client in (ann, bob):
        await client.send(type="join_tournament", tournament=tid)
        assert (await client.expect("round_tournament"))["round"] == 0
    assert tid not in one.app.tournaments.rounds.events  # node one never pairs it
    # Zed starts it: one board, Ann against Bob, in a room of node two.
    await zed.send(type="start_tournament", tournament=tid)
    started = await zed.expect("round_tournament")
    (board,) = started["boards"]
    assert started["round"] == 1 and board["room"] in two.app.lobby.rooms
    clients = {ann.player_id: ann, bob.player_id: bob}
    first, second = clients[board["first"]["id"]], clients[board["second"]["id"]]
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (first, second)[ply % 2].send(type="move", room=board["room"], ply=ply, move=move)
        for client in (first, second):
            await client.expect("move_made", ply=ply, room=board["room"])
    while True:  # pushed to the entrants on node one by node two
        pushed = await first.expect("round_tournament")
        if pushed["standings"][0]["score"] == 1.0:
            break
    assert pushed["standings"][0]["player"]["id"] == first.player_id
    assert pushed["tournament"]["status"] == "finished"  # two players: one round
    for client in (zed, ann, bob):
        await client.close()


@pytest.mark.slow
async def test_the_ladder_runs_on_one_node_and_on_another_once_that_one_stops(
    prefix: str,  # noqa: F811
) -> None:
    """Bots on both nodes and an admin's AI level enter one ladder, run by the node it was
    made on; when that node stops, the other runs it on from the store."""
    url, name = await create_database()
    settings = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK},
                        ladder_time_control=QUICK.name, ladder_pace_seconds=0.3)

    def node() -> Any:
        return running(store=SqlStore(url), secret=SECRET, settings=settings,
                       cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST))

    runners: list[BotRunner] = []
    try:
        async with node() as survivor:
            store = survivor.app.store
            assert isinstance(store, SqlStore)
            accounts = Accounts(store.engine)
            _, admin_token = await Admins(store.engine).create("Ann")
            async with node() as first:
                for k, at in enumerate((first, survivor, survivor)):
                    token = (await accounts.create(f"Bot{k}")).token
                    runners.append(BotRunner(at.url, BotCore(token=token, ladder="connect4",
                                                             seed=k), RandomEngine()))
                tasks = [asyncio.create_task(runners[0].run())]
                while "connect4" not in first.app.ladder.ladders:
                    await asyncio.sleep(0.05)
                tasks += [asyncio.create_task(r.run()) for r in runners[1:]]
                boss = await Client.open(survivor.url, "admin")
                await boss.request("admin_login", token=admin_token)
                await boss.send(type="enter_ladder", game="connect4", entrant="beginner")
                entered = await boss.expect("ladder")  # run on the first node, answered here
                assert len(entered["entrants"]) >= 2
                assert "connect4" not in survivor.app.ladder.ladders
                now = await _ladder_after(boss, played=3)
                assert {e["id"] for e in now["entrants"]} >= {"level:beginner"}
                before = now["played"]
            # The first node stopped: the survivor runs the ladder on.
            now = await _ladder_after(boss, played=before + 3)
            assert "connect4" in survivor.app.ladder.ladders
            assert len(now["entrants"]) == 4
            for runner in runners:
                runner.stop()
            await asyncio.gather(*tasks)
            await boss.close()
    finally:
        await drop_database(name)


async def _ladder_after(client: Client, played: int, within: float = 60.0) -> dict[str, Any]:
    """The ladder once ``played`` games are over (asked every half second)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        await client.send(type="get_ladder", game="connect4")
        now = await client.expect("ladder")
        if now["played"] >= played:
            return now
        assert asyncio.get_running_loop().time() < deadline, now
        await asyncio.sleep(0.5)
