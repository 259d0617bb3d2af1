"""Timed games through the server, on real databases: the server measures each move, stores
both clocks with it, ends a game on time when nobody sends anything, plays forced Othello
passes, refuses an unknown time control, and a restarted server or another node of a cluster
keeps the clocks."""

from __future__ import annotations

import asyncio
import math
import uuid
from contextlib import AbstractAsyncContextManager

import pytest
import redis.asyncio as aioredis
from wsclient import Client, friends_game

from server.app import Running, Settings, running
from server.cluster.cluster import Cluster
from server.cluster.leases import ClusterSettings
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore
from server.storage.memory import MemoryStore
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    REDIS_URL,
    create_database,
    drop_database,
    pg_url,
    sql_url,
    sqlite_url,
)

SECRET = b"the timed games test's secret"
QUICK = TimeControl("quick", 3000, 200)
"""3 s a side and 0.2 s a move: offered by these tests' servers only (``Settings``)."""
SETTINGS = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK})

# Othello: after these eight plies Black (seat 0) has no move but to pass.
BLACK_MUST_PASS = ["e6", "f6", "d3", "e7", "e8", "d8", "g6", "f8"]


async def timed_game(url: str, control: str, game: str = "connect4"
                     ) -> tuple[Client, Client, str]:
    """Ann (seat 0) and Bob (seat 1) in a new room with ``control``."""
    ann = await Client.open(url, "Ann")
    bob = await Client.open(url, "Bob")
    await ann.send(type="create_room", game=game, opponent={"kind": "friend"}, seat=0,
                   time_control=control)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await ann.expect("room_event", event="joined")
    return ann, bob, room


def spent_ms(seconds: float) -> int:
    """A move's time in whole milliseconds, rounded up, as the server charges it."""
    return math.ceil(round(seconds * 1000, 3))


@pytest.mark.slow
async def test_a_game_is_lost_on_time_when_the_player_to_move_sends_nothing(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    async with running(store=SqlStore(sql_url), settings=SETTINGS, secret=SECRET) as server:
        ann, bob, room = await timed_game(server.url, "quick")
        await asyncio.sleep(0.1)
        await ann.send(type="move", room=room, ply=0, move="4")
        await bob.expect("move_made", ply=0)
        await bob.send(type="move", room=room, ply=1, move="4")
        made = await ann.expect("move_made", ply=1)
        waited_from = asyncio.get_running_loop().time()

        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None
        first, second = stored[1]
        ann_left = QUICK.initial_ms - spent_ms(first.seconds) + QUICK.increment_ms
        bob_left = QUICK.initial_ms - spent_ms(second.seconds) + QUICK.increment_ms
        assert first.seconds >= 0.1  # the server measured the wait before Ann's move
        assert (first.clock0_ms, first.clock1_ms) == (ann_left, QUICK.initial_ms)
        assert (second.clock0_ms, second.clock1_ms) == (ann_left, bob_left)
        assert made["clock"]["remaining_ms"] == [ann_left, bob_left]
        assert made["clock"]["running"] == 0

        over = await bob.expect("game_over", timeout=10.0)  # nobody sends anything
        waited = asyncio.get_running_loop().time() - waited_from
        assert over["result"] == {"winner": 1, "score": None, "reason": "timeout"}
        assert over["clock"]["remaining_ms"] == [0, bob_left]
        assert over["clock"]["running"] is None
        assert ann_left / 1000 - 0.1 <= waited <= ann_left / 1000 + 2.0
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None
        assert (stored[0].status, stored[0].result, stored[0].reason) == (
            "finished", -1, "timeout")

        await ann.send(type="move", room=room, ply=2, move="3", id="late")
        assert (await ann.expect("error", ref="late"))["code"] == "game_finished"
        await ann.send(type="get_game", game_id=f"{room}-1")
        replay = (await ann.expect("game_record"))["record"]
        assert replay["time_control"] == {"name": "quick", "initial_ms": 3000,
                                          "increment_ms": 200}
        assert replay["clocks"] == [[ann_left, QUICK.initial_ms], [ann_left, bob_left]]


async def test_an_unknown_time_control_gets_a_clear_error_and_makes_no_room() -> None:
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann = await Client.open(server.url, "Ann")
        assert [c["name"] for c in ann.welcome["time_controls"]] == [
            "1+0", "3+2", "5+3", "10+5", "quick"]
        await ann.send(type="create_room", game="connect4", opponent={"kind": "open"},
                       time_control="2+1", id="c")
        error = await ann.expect("error", ref="c")
        assert error["code"] == "unknown_time_control"
        assert "2+1" in error["message"] and "3+2" in error["message"]
        assert server.app.lobby.rooms == {}
        assert await server.app.store.games_of_player(ann.player_id) == []


async def test_an_untimed_room_stays_as_before() -> None:
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann, bob, room = await friends_game(server.url)
        await ann.send(type="move", room=room, ply=0, move="4")
        made = await bob.expect("move_made", ply=0)
        assert made["clock"] is None
        assert server.app.runner.flag_timers == {}


async def test_a_restarted_server_keeps_the_clocks_stored_with_the_last_move(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    async with running(store=SqlStore(sql_url), settings=SETTINGS, secret=SECRET) as server:
        ann, bob, room = await timed_game(server.url, "3+2")
        for ply, text in enumerate(["4", "4", "3"]):
            await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=text)
            await ann.expect("move_made", ply=ply)
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None
        last = stored[1][-1]
        resume = bob.welcome["resume"]
    async with running(store=SqlStore(sql_url), settings=SETTINGS, secret=SECRET) as server:
        bob = await Client.open(server.url, None, resume=resume)
        clock = (await bob.expect("room_state"))["room"]["clock"]
        assert clock["control"]["name"] == "3+2" and clock["running"] == 1
        assert clock["remaining_ms"][0] == last.clock0_ms
        assert last.clock1_ms - 2000 < clock["remaining_ms"][1] <= last.clock1_ms
        await bob.send(type="move", room=room, ply=3, move="3")
        made = await bob.expect("move_made", ply=3)
        assert made["clock"]["remaining_ms"][0] == last.clock0_ms
        assert made["clock"]["remaining_ms"][1] > last.clock1_ms  # the increment is back


async def test_the_server_plays_a_forced_othello_pass_and_stores_it() -> None:
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann, bob, room = await timed_game(server.url, "5+3", game="othello")
        for ply, text in enumerate(BLACK_MUST_PASS):
            await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=text)
            await ann.expect("move_made", ply=ply)
        passed = await ann.expect("move_made", ply=8)
        assert (passed["move"], passed["seat"]) == ("pass", 0)
        assert passed["clock"]["running"] == 1
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None and [m.move for m in stored[1]][-1] == "pass"


@pytest.mark.slow
async def test_in_a_cluster_the_rooms_node_keeps_the_clocks_and_so_does_a_takeover() -> None:
    fast = ClusterSettings(lease_seconds=1.5, renew_seconds=0.3, forward_timeout=5.0)
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    control = TimeControl("quick", 6000, 0)
    settings = Settings(time_controls={control.name: control})
    url, name = await create_database()

    def node() -> AbstractAsyncContextManager[Running]:
        return running(store=SqlStore(url), secret=SECRET, settings=settings,
                       cluster=Cluster(REDIS_URL, prefix=prefix, settings=fast))

    try:
        async with node() as survivor:
            ann = await Client.open(survivor.url, "Ann")
            async with node() as doomed:
                bob = await Client.open(doomed.url, "Bob")
                await bob.send(type="create_room", game="connect4",
                               opponent={"kind": "friend"}, seat=0, time_control="quick")
                room = (await bob.expect("room_state"))["room"]["id"]
                await ann.send(type="join_room", room=room)
                await ann.expect("room_state")
                await bob.send(type="move", room=room, ply=0, move="4")
                await ann.expect("move_made", ply=0)
                await ann.send(type="move", room=room, ply=1, move="4")  # run on Bob's node
                made = await bob.expect("move_made", ply=1)
                assert made["clock"]["running"] == 0
                assert made["clock"]["remaining_ms"][1] < 6000
            stored = await survivor.app.store.load_game(f"{room}-1")
            assert stored is not None
            last = stored[1][-1]
            assert made["clock"]["remaining_ms"] == [last.clock0_ms, last.clock1_ms]

            # The node stopped: the survivor runs the room from its stored clocks, and its
            # flag falls there while nobody sends anything.
            bob = await Client.open(survivor.url, None, resume=bob.welcome["resume"])
            clock = (await bob.expect("room_state", timeout=10.0))["room"]["clock"]
            assert clock["remaining_ms"][1] == last.clock1_ms and clock["running"] == 0
            assert last.clock0_ms - 3000 < clock["remaining_ms"][0] <= last.clock0_ms
            over = await ann.expect("game_over", timeout=10.0)
            assert over["result"]["reason"] == "timeout" and over["result"]["winner"] == 1
            await ann.close()
            await bob.close()
    finally:
        await drop_database(name)
        client = aioredis.Redis.from_url(REDIS_URL)
        names = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
        if names:
            await client.delete(*names)
        await client.aclose()


async def test_a_timed_challenge_once_accepted_starts_a_game_with_those_clocks() -> None:
    control = TIME_CONTROLS["3+2"]
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        await ann.send(type="challenge", player=bob.player_id, game="connect4", seat=0,
                       time_control="3+2")
        shown = {"name": "3+2", "initial_ms": control.initial_ms,
                 "increment_ms": control.increment_ms}
        sent = await ann.expect("challenge_sent")
        assert sent["time_control"] == shown
        offer = await bob.expect("challenge", challenge=sent["challenge"])
        assert offer["time_control"] == shown  # Bob knows the clock before he accepts

        await bob.send(type="accept_challenge", challenge=offer["challenge"])
        state = (await bob.expect("room_state"))["room"]
        clock = state["clock"]
        assert clock["control"] == shown and clock["running"] == 0
        assert clock["remaining_ms"][1] == control.initial_ms
        assert control.initial_ms - 1000 < clock["remaining_ms"][0] <= control.initial_ms
        assert (await ann.expect("room_state"))["room"]["clock"]["control"] == shown

        await ann.send(type="move", room=state["id"], ply=0, move="4")
        made = await bob.expect("move_made", ply=0)
        assert made["clock"]["running"] == 1
        assert made["clock"]["remaining_ms"][0] > control.initial_ms - 1000  # increment added
        stored = await server.app.store.load_game(f"{state['id']}-1")
        assert stored is not None
        assert (stored[0].time_control, stored[0].clock_initial_ms) == ("3+2", 180_000)


async def test_an_untimed_challenge_starts_an_untimed_game() -> None:
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        await ann.send(type="challenge", player=bob.player_id, game="connect4", seat=0)
        offer = await bob.expect("challenge")
        assert offer["time_control"] is None
        await bob.send(type="accept_challenge", challenge=offer["challenge"])
        assert (await bob.expect("room_state"))["room"]["clock"] is None


async def test_a_challenge_with_an_unknown_time_control_is_refused_and_none_stands() -> None:
    async with running(store=MemoryStore(), settings=SETTINGS) as server:
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        error = await ann.request("challenge", player=bob.player_id, game="connect4",
                                  time_control="2+1", id="c")
        assert (error["type"], error["code"], error["ref"]) == (
            "error", "unknown_time_control", "c")
        assert "2+1" in error["message"] and "3+2" in error["message"]
        assert len(server.app.challenges.challenges) == 0
        again = await Client.open(server.url, None, resume=bob.welcome["resume"])
        for client in (bob, again):  # whatever came before the pong was read
            await client.send(type="ping", id="p")
            await client.expect("pong")
        assert [m for m in again.seen + bob.seen if m["type"] == "challenge"] == []


async def test_a_player_who_never_makes_a_first_move_gets_the_game_aborted_for_both(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    settings = Settings(time_controls=SETTINGS.time_controls, first_move_seconds=0.5)
    async with running(store=SqlStore(sql_url), settings=settings, secret=SECRET) as server:
        ann, bob, room = await timed_game(server.url, "3+2")  # three minutes of clock
        await ann.send(type="move", room=room, ply=0, move="4")
        await bob.expect("move_made", ply=0)
        # Bob never moves: both hear, within his first-move time, that the game is aborted.
        for client in (ann, bob):
            over = await client.expect("game_over", timeout=5.0)
            assert over["result"] == {"winner": None, "score": None, "reason": "aborted"}
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None
        assert (stored[0].status, stored[0].result, stored[0].reason) == (
            "aborted", None, "aborted")
        assert server.app.runner.flag_timers == {}
        await bob.send(type="move", room=room, ply=1, move="4", id="late")
        assert (await bob.expect("error", ref="late"))["code"] == "game_finished"


@pytest.mark.slow
async def test_a_restarted_server_still_aborts_a_game_whose_player_never_moves(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    settings = Settings(time_controls=SETTINGS.time_controls, first_move_seconds=1.0)
    async with running(store=SqlStore(sql_url), settings=settings, secret=SECRET) as server:
        ann, bob, room = await timed_game(server.url, "3+2")
        await ann.send(type="move", room=room, ply=0, move="4")
        await bob.expect("move_made", ply=0)
        resume = ann.welcome["resume"]
    async with running(store=SqlStore(sql_url), settings=settings, secret=SECRET) as server:
        restored_at = asyncio.get_running_loop().time()
        ann = await Client.open(server.url, None, resume=resume)
        await ann.expect("room_state")
        over = await ann.expect("game_over", timeout=5.0)  # nobody sends anything
        assert over["result"]["reason"] == "aborted"
        assert asyncio.get_running_loop().time() - restored_at < 4.0
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None and stored[0].status == "aborted"
