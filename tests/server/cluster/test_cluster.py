"""Two server nodes in one process, sharing a real PostgreSQL database and a real Redis:
rooms, commands and events cross nodes, and a node that lost a room can never write to it.

(Real processes behind HAProxy, killed and frozen, are in ``test_cluster_processes``.)
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack

import pytest
import redis.asyncio as aioredis
from people import CHEAP_HASHER, PASSWORD
from websockets.exceptions import ConnectionClosed
from wsclient import Client

from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.bots.limits import BotLimits
from server.cluster.cluster import Cluster
from server.storage import SqlStore, keys
from server.storage.store import MoveRecord
from tests.server.cluster.conftest import FAST, SECRET
from tests.server.storage.conftest import REDIS_URL, create_database, drop_database


async def _across(one: Running, two: Running) -> tuple[Client, Client, str]:
    """Ann, on node one, makes a Connect Four room for a friend; Bob, on node two, joins it."""
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    return ann, bob, str(room)


async def _next_error(client: Client, within: float = 1.0) -> str | None:
    """The code of the next error the client gets within ``within`` seconds, or None."""
    try:
        return str((await client.expect("error", timeout=within))["code"])
    except TimeoutError:
        return None


async def _play(client: Client, room: str, ply: int, move: str) -> dict:
    await client.send(type="move", room=room, ply=ply, move=move)
    return await client.expect("move_made", ply=ply)


async def test_people_on_two_nodes_play_a_game_to_its_end_watched_from_a_third_connection(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    eve = await Client.open(two.url, "Eve")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    assert one.app.cluster is not None and one.app.cluster.holds(room)
    await bob.send(type="join_room", room=room.lower())  # codes are typed by people
    assert (await bob.expect("room_state"))["room"]["seats"][1]["player"]["name"] == "Bob"
    await ann.expect("room_event", event="joined")
    await eve.send(type="spectate", room=room)
    await eve.expect("room_state")
    moves = "4455667"  # Ann wins along the bottom row on her fourth move
    for ply, move in enumerate(moves):
        mover = (ann, bob)[ply % 2]
        made = await _play(mover, room, ply, move)
        assert made["move"] == move
        for other in (ann, bob, eve):
            if other is not mover:
                await other.expect("move_made", ply=ply)
    for client in (ann, bob, eve):
        over = await client.expect("game_over")
        assert over["result"]["winner"] == 0
    loaded = await one.app.store.load_game(f"{room}-1")
    assert loaded is not None
    record, stored = loaded
    assert record.status == "finished"
    assert [m.move for m in stored] == list(moves)
    assert [m.ply for m in stored] == list(range(len(moves)))
    assert {m.epoch for m in stored} == {one.app.cluster.owned[room]}
    assert not two.app.cluster.holds(room) and room not in two.app.lobby.rooms
    for client in (ann, bob, eve):
        await client.close()


async def test_a_game_between_people_on_the_rooms_node_sends_no_event_through_redis(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    assert one.app.cluster is not None and two.app.cluster is not None
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(one.url, "Bob")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    for ply, move in enumerate("4455667"):
        await _play((ann, bob)[ply % 2], room, ply, move)
    for client in (ann, bob):
        assert (await client.expect("game_over"))["result"]["winner"] == 0
    assert one.app.cluster.redis_counts()["events_published"] == 0
    assert one.app.cluster.redis_counts()["events_local"] > 7
    assert two.app.cluster.redis_counts()["events_received"] == 0
    await ann.close()
    await bob.close()


async def test_an_error_from_the_rooms_node_reaches_the_client_on_another_node(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann, bob, room = await _across(one, two)
    await bob.send(type="move", room=room, ply=0, move="4", id="b1")
    error = await bob.expect("error")
    assert (error["code"], error["ref"], error["room"]) == ("not_your_turn", "b1", room)
    await bob.send(type="move", room="NOSUCHRM", ply=0, move="4")
    assert (await bob.expect("error"))["code"] == "unknown_room"
    await ann.close()
    await bob.close()


async def test_open_rooms_of_every_node_are_listed_on_each(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    await ann.send(type="create_room", game="othello", opponent={"kind": "open"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    listed = await bob.request("list_rooms")
    assert [r["id"] for r in listed["rooms"]] == [room]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await ann.send(type="list_rooms")
    assert (await ann.expect("rooms"))["rooms"] == []
    await ann.close()
    await bob.close()


async def test_a_node_that_lost_its_lease_cannot_store_a_move_and_lets_the_room_go(
    nodes: tuple[Running, Running], prefix: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    one, two = nodes
    assert one.app.cluster is not None and two.app.cluster is not None
    ann, bob, room = await _across(one, two)
    await _play(ann, room, 0, "4")
    await bob.expect("move_made", ply=0)
    # Node one stalls past its lease (as if paused): its lease runs out without it knowing,
    # and node two takes the room over. Its renewals stay paused until its stale write, so
    # a slow machine cannot let it notice the loss first.
    async def paused() -> None:
        return None

    monkeypatch.setattr(one.app.cluster, "_renew", paused)
    old_epoch = one.app.cluster.owned[room]
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.delete(keys.room_owner(prefix, room))
    await redis.aclose()
    assert await two.app.cluster.scan() == 1
    assert two.app.cluster.owned[room] > old_epoch
    assert one.app.cluster.holds(room)  # it has not noticed yet
    # Bob, on a second connection to the old owner, moves there: that node still believes
    # it runs the room, but the store refuses its write. It lets the room go and sends the
    # move on to the new owner, which plays it: Bob never has to send it again.
    bob_there = await Client.open(one.url, "Bob", resume=bob.welcome["resume"])
    await bob_there.send(type="move", room=room, ply=1, move="4", id="stale")
    await bob_there.expect("move_made", ply=1)
    assert not any(m["type"] == "error" for m in bob_there.seen)
    assert not one.app.cluster.holds(room) and room not in one.app.lobby.rooms
    await ann.expect("move_made", ply=1)
    await bob.expect("move_made", ply=1)
    monkeypatch.undo()
    loaded = await two.app.store.load_game(f"{room}-1")
    assert loaded is not None and [m.move for m in loaded[1]] == ["4", "4"]
    assert loaded[1][1].epoch == two.app.cluster.owned[room]
    for client in (ann, bob, bob_there):
        await client.close()


async def test_a_room_whose_node_stopped_is_taken_over_and_its_people_play_on(
    prefix: str,
) -> None:
    url, name = await create_database()
    try:
        async with running(store=SqlStore(url), secret=SECRET, cluster=Cluster(
                REDIS_URL, prefix=prefix, settings=FAST)) as survivor:
            ann = await Client.open(survivor.url, "Ann")
            async with running(store=SqlStore(url), secret=SECRET, cluster=Cluster(
                    REDIS_URL, prefix=prefix, settings=FAST)) as doomed:
                bob = await Client.open(doomed.url, "Bob")
                await bob.send(type="create_room", game="connect4",
                               opponent={"kind": "friend"}, seat=0)
                room = (await bob.expect("room_state"))["room"]["id"]
                await ann.send(type="join_room", room=room)
                await ann.expect("room_state")
                await _play(bob, room, 0, "4")
                await ann.expect("move_made", ply=0)
            # The node stopped and gave its rooms up: the survivor runs the room.
            deadline = asyncio.get_running_loop().time() + 5
            while not survivor.app.cluster.holds(room):  # type: ignore[union-attr]
                assert asyncio.get_running_loop().time() < deadline, "no takeover in 5 s"
                await asyncio.sleep(0.1)
            bob = await Client.open(survivor.url, "Bob", resume=bob.welcome["resume"])
            state = await bob.expect("room_state")
            assert state["room"]["position"]["ply"] == 1
            await _play(ann, room, 1, "4")
            await bob.expect("move_made", ply=1)
            await ann.close()
            await bob.close()
    finally:
        await drop_database(name)


async def test_a_game_won_by_its_last_stored_move_is_finished_by_the_node_taking_it_over(
    nodes: tuple[Running, Running], prefix: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    one, two = nodes
    assert one.app.cluster is not None and two.app.cluster is not None
    ann, bob, room = await _across(one, two)
    moves = "4455667"  # Ann wins along the bottom row on her fourth move
    for ply, move in enumerate(moves[:-1]):
        await _play((ann, bob)[ply % 2], room, ply, move)
        await (bob, ann)[ply % 2].expect("move_made", ply=ply)
    # Node one stores Ann's winning move under its lease and dies before it stores the
    # finished game or tells anyone: it renews its lease no more, which runs out.
    async def dead() -> None:
        return None

    monkeypatch.setattr(one.app.cluster, "_renew", dead)
    await one.app.store.append_move(MoveRecord(
        f"{room}-1", 6, moves[-1], 0, 1.0, time.time(), epoch=one.app.cluster.owned[room]))
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.delete(keys.room_owner(prefix, room))
    await redis.aclose()
    assert await two.app.cluster.scan() == 1
    for client in (ann, bob):  # each on its own node
        over = await client.expect("game_over")
        assert over["result"] == {"winner": 0, "score": 18, "reason": "end"}
    loaded = await two.app.store.load_game(f"{room}-1")
    assert loaded is not None
    record, stored = loaded
    assert (record.status, record.result, record.reason) == ("finished", 18, "end")
    assert record.epoch == two.app.cluster.owned[room]
    assert [m.move for m in stored] == list(moves)
    # Bob comes back on the node that runs the room now: the game is over, not stuck.
    again = await Client.open(two.url, "Bob", resume=bob.welcome["resume"])
    state = (await again.expect("room_state"))["room"]
    assert (state["status"], state["result"]["winner"]) == ("finished", 0)
    assert state["position"]["legal_moves"] == [] and state["position"]["to_move"] is None
    monkeypatch.undo()
    for client in (ann, bob, again):
        await client.close()


async def test_after_redis_lost_every_key_the_rooms_are_run_again_from_the_store(
    nodes: tuple[Running, Running], prefix: str,
) -> None:
    one, two = nodes
    ann, bob, room = await _across(one, two)
    await _play(ann, room, 0, "4")
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.delete(keys.room_owner(prefix, room))  # a takeover first: the game's epoch
    assert await two.app.cluster.scan() == 1  # type: ignore[union-attr]
    taken_at = two.app.cluster.owned[room]  # type: ignore[union-attr]
    # Redis restarts without persistence: the epoch counters start again from nothing.
    await redis.delete(*[k async for k in redis.scan_iter(match=f"{prefix}:*", count=500)])
    # A bound on the wait, not a timing claim: a few renewals and claims, slow on a busy machine.
    deadline = asyncio.get_running_loop().time() + 20
    while not await redis.exists(keys.room_owner(prefix, room)):  # the owner notices...
        # (the first claim after the loss is refused by the store; the next one is newer)
        assert asyncio.get_running_loop().time() < deadline, "nobody runs the room again"
        await asyncio.sleep(0.1)
    await redis.aclose()
    # The node that held the lease before the loss notices it at its next renewal; until
    # then its writes are fenced off. Then exactly one node runs the room.
    while sum(n.app.cluster.holds(room) for n in nodes) != 1:  # type: ignore[union-attr]
        assert asyncio.get_running_loop().time() < deadline, "two nodes still hold the room"
        await asyncio.sleep(0.1)
    # ...and runs it again from the store. (While a takeover is under way the node says
    # so, and asks for the move again.)
    while True:
        await bob.send(type="move", room=room, ply=1, move="3")
        while (answer := await bob.recv())["type"] not in ("move_made", "error") or (
                answer["type"] == "move_made" and answer["ply"] != 1):
            pass
        if answer["type"] == "move_made":
            break
        assert answer["code"] == "internal_error" and "again" in answer["message"], answer
        assert asyncio.get_running_loop().time() < deadline, "the move is never taken"
        await asyncio.sleep(0.2)
    # Ann hears the move; or, if her node had not yet told Redis again where she is when
    # the room was run again (so it counted her away), the room's state holding it once
    # her node does.
    while (heard := await ann.recv())["type"] not in ("move_made", "room_state") or (
            len(heard["room"]["moves"]) < 2 if heard["type"] == "room_state"
            else heard["ply"] != 1):
        pass
    loaded = await one.app.store.load_game(f"{room}-1")
    assert loaded is not None and [m.move for m in loaded[1]] == ["4", "3"]
    assert loaded[1][1].epoch > taken_at
    await ann.close()
    await bob.close()


async def _run_again_counting_bob_away(one: Running, two: Running,
                                       prefix: str) -> tuple[Client, Client, str]:
    """Ann (node one) and Bob (node two) in node one's room, after one move; then Redis
    forgets where Bob is and node one's lease, so node one runs the room again from the
    store believing Bob away, though he is still connected to node two (as when Redis
    restarts empty and the nodes re-announce their players in turn)."""
    ann, bob, room = await _across(one, two)
    await _play(ann, room, 0, "4")
    await bob.expect("move_made", ply=0)
    taken = one.app.cluster.takeovers  # type: ignore[union-attr]
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.delete(keys.player_nodes(prefix, bob.player_id), keys.room_owner(prefix, room))
    await redis.aclose()
    deadline = asyncio.get_running_loop().time() + 20  # a bound: a few renewals
    while one.app.cluster.takeovers == taken:  # type: ignore[union-attr]
        assert asyncio.get_running_loop().time() < deadline, "node one never ran it again"
        await asyncio.sleep(0.05)
    assert one.app.cluster.holds(room)  # type: ignore[union-attr]
    state = await ann.expect("room_state")
    assert state["room"]["seats"][1]["connected"] is False
    return ann, bob, room


async def test_a_move_sent_through_another_node_reaches_its_player_counted_away(
    nodes: tuple[Running, Running], prefix: str,
) -> None:
    one, two = nodes
    ann, bob, room = await _run_again_counting_bob_away(one, two, prefix)
    # Bob's move, forwarded from node two, says where he is: he is back in the room, and
    # hears his own move, on the node he is connected to.
    await _play(bob, room, 1, "3")
    assert (await ann.expect("room_event", event="reconnected"))["seat"] == 1
    await ann.expect("move_made", ply=1)
    await ann.close()
    await bob.close()


async def test_a_node_announcing_its_players_again_brings_them_back_in_rooms_run_elsewhere(
    nodes: tuple[Running, Running], prefix: str,
) -> None:
    one, two = nodes
    ann, bob, room = await _run_again_counting_bob_away(one, two, prefix)
    # Redis forgets node two too: at its next beat it announces its players again, and the
    # room counting Bob away takes him back and sends him its state, which he may have missed.
    redis = aioredis.Redis.from_url(REDIS_URL)
    await redis.hdel(keys.cluster_nodes(prefix), two.app.cluster.node)  # type: ignore[union-attr]
    await redis.aclose()
    assert (await ann.expect("room_event", event="reconnected"))["seat"] == 1
    assert (await bob.expect("room_state"))["room"]["seats"][1]["connected"] is True
    await _play(bob, room, 1, "3")
    await ann.expect("move_made", ply=1)
    await ann.close()
    await bob.close()


async def test_a_bots_limits_hold_across_two_nodes(prefix: str) -> None:
    limits = BotLimits(concurrent_games=2, connections_per_token=2, moves_per_minute=6,
                       move_burst=2)
    url, name = await create_database()
    try:
        async with AsyncExitStack() as stack:
            one, two = [await stack.enter_async_context(running(
                store=SqlStore(url), secret=SECRET, settings=Settings(bots=limits),
                cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST))) for _ in range(2)]
            token = (await Accounts(one.app.store.engine).create("Robo")).token  # type: ignore[attr-defined]
            bots = [await Client.open(url_, None, hello=False) for url_ in (one.url, two.url)]
            for bot in bots:
                await bot.send(type="hello", version=1, token=token)
                await bot.expect("welcome")
            third = await Client.open(one.url, None, hello=False)
            await third.send(type="hello", version=1, token=token)
            refused = await third.expect("error")
            assert (refused["code"], refused["detail"]["limit"]) == (
                "limit_exceeded", "connections_per_token")
            # Two games at a time: one run by each node, then a third is refused.
            rooms = []
            for bot in bots:  # (one player: each connection hears of both rooms)
                await bot.send(type="create_room", game="connect4", seat=0,
                               opponent={"kind": "friend"})
                while (state := await bot.expect("room_state"))["room"]["id"] in rooms:
                    pass
                rooms.append(state["room"]["id"])
            assert one.app.cluster.holds(rooms[0]) and two.app.cluster.holds(rooms[1])  # type: ignore[union-attr]
            await bots[0].send(type="create_room", game="connect4", seat=0,
                               opponent={"kind": "friend"})
            refused = await bots[0].expect("error")
            assert refused["detail"]["limit"] == "concurrent_games"
            ann = await Client.open(two.url, "Ann")
            for room in rooms:
                await ann.send(type="join_room", room=room)
                await ann.expect("room_state")
            # Moves: a burst of two, one in each node's room, then a wait, on either node.
            await _play(bots[0], rooms[0], 0, "4")
            await _play(ann, rooms[0], 1, "4")
            await _play(bots[0], rooms[1], 0, "4")
            await bots[1].send(type="move", room=rooms[0], ply=2, move="5")
            refused = await bots[1].expect("error")
            assert refused["detail"]["limit"] == "moves_per_minute"
            assert 0 < refused["detail"]["retry_after"] <= 10
            # A connection closed on one node frees its place for the token everywhere.
            await bots[1].close()
            await asyncio.sleep(0.2)
            again = await Client.open(two.url, None, hello=False)
            await again.send(type="hello", version=1, token=token)
            await again.expect("welcome")
            for client in (bots[0], third, ann, again):
                await client.close()
    finally:
        await drop_database(name)


async def test_a_challenge_made_on_one_node_is_answered_on_another_once(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    bob_too = await Client.open(one.url, "Bob", resume=bob.welcome["resume"])
    await ann.send(type="challenge", player=bob.player_id, game="othello", seat=0)
    sent = await ann.expect("challenge_sent")
    offer = await bob.expect("challenge", challenge=sent["challenge"])
    assert offer["challenger"]["name"] == "Ann"
    await bob_too.expect("challenge", challenge=sent["challenge"])
    # Bob accepts on both of his connections, one on each node: one game starts.
    await bob.send(type="accept_challenge", challenge=sent["challenge"])
    await bob_too.send(type="accept_challenge", challenge=sent["challenge"])
    state = await ann.expect("room_state")
    seats = state["room"]["seats"]
    assert [s["player"]["name"] for s in seats] == ["Ann", "Bob"]
    assert seats[0]["connected"] is True  # Ann is online, on the other node
    answers = await asyncio.gather(*(_next_error(c) for c in (bob, bob_too)))
    assert sorted(str(a) for a in answers) == ["None", "unknown_challenge"]
    await ann.close()
    await bob.close()
    await bob_too.close()


async def test_a_timed_challenge_made_on_one_node_keeps_its_clock_when_answered_on_another(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    await ann.send(type="challenge", player=bob.player_id, game="connect4", seat=1,
                   time_control="5+3")
    sent = await ann.expect("challenge_sent")
    shown = {"name": "5+3", "initial_ms": 300_000, "increment_ms": 3000}
    # Bob's new connection on node two is offered it from the shared challenges in Redis.
    again = await Client.open(two.url, None, resume=bob.welcome["resume"])
    offer = await again.expect("challenge", challenge=sent["challenge"])
    assert offer["time_control"] == shown and offer["seat"] == 0
    await again.send(type="accept_challenge", challenge=sent["challenge"])
    clock = (await again.expect("room_state"))["room"]["clock"]
    assert clock["control"] == shown and clock["running"] == 0
    assert clock["remaining_ms"][1] == 300_000
    assert 299_000 < clock["remaining_ms"][0] <= 300_000
    assert (await ann.expect("room_state"))["room"]["clock"]["control"] == shown
    for client in (ann, bob, again):
        await client.close()


async def test_the_admins_room_list_shows_every_nodes_rooms(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann = await Client.open(one.url, "Ann")
    bob = await Client.open(two.url, "Bob")
    made = []
    for client in (ann, bob):
        await client.send(type="create_room", game="connect4", opponent={"kind": "friend"})
        made.append((await client.expect("room_state"))["room"]["id"])
    listed = await two.app.admin._rooms()
    assert {(r.id, r.node) for r in listed.rooms} == {
        (made[0], one.app.cluster.node), (made[1], two.app.cluster.node)}  # type: ignore[union-attr]
    assert listed.players_online == 2
    await ann.close()
    await bob.close()


async def test_a_player_on_two_nodes_is_away_only_once_both_connections_closed(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    ann, bob, room = await _across(one, two)
    bob_here = await Client.open(one.url, "Bob", resume=bob.welcome["resume"])
    await bob_here.expect("room_state")
    await bob.close()  # his connection to node two closes; the one to node one stays
    await ann.send(type="ping", id="after")
    await ann.expect("pong")
    await asyncio.sleep(0.3)
    assert not any(m.get("event") == "disconnected" for m in ann.seen)
    await bob_here.close()
    gone = await ann.expect("room_event", event="disconnected")
    assert gone["seat"] == 1
    await ann.close()


async def test_the_limit_of_unfinished_rooms_counts_every_nodes_rooms(prefix: str) -> None:
    url, name = await create_database()
    try:
        async with AsyncExitStack() as stack:
            one, two = [await stack.enter_async_context(running(
                store=SqlStore(url), secret=SECRET, settings=Settings(max_rooms=2),
                cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST))) for _ in range(2)]
            ann = await Client.open(one.url, "Ann")
            ann_too = await Client.open(two.url, "Ann", resume=ann.welcome["resume"])
            for client in (ann, ann_too):  # one room run by each node
                await client.send(type="create_room", game="connect4",
                                  opponent={"kind": "open"})
                await client.expect("room_state")
            await ann_too.send(type="create_room", game="othello", opponent={"kind": "open"},
                               id="third")
            refused = await ann_too.expect("error", ref="third")
            assert refused["code"] == "too_many_rooms"
            await ann.close()
            await ann_too.close()
    finally:
        await drop_database(name)


async def test_failed_passwords_count_on_every_node_yet_the_owner_still_gets_in(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    for node in nodes:
        node.app.accounts.hasher = CHEAP_HASHER
    ann = await Client.open(one.url, "Ann")
    await ann.send(type="sign_up", name="Ann_Lee", password=PASSWORD)
    await ann.expect("signed_in")
    guessers = [await Client.open(one.url, "G1", source="127.0.0.2"),
                await Client.open(two.url, "G2", source="127.0.0.2")]
    for attempt in range(3):  # two on node one, one on node two: the address's free three
        guesser = guessers[attempt % 2]
        await guesser.send(type="sign_in", name="ann_lee", password=f"guess {attempt}")
        assert (await guesser.expect("error"))["code"] == "wrong_name_or_password"
    for guesser in guessers:  # now held up on both, even with the right password
        await guesser.send(type="sign_in", name="Ann_Lee", password=PASSWORD)
        refused = await guesser.expect("error")
        assert (refused["code"], refused["detail"]["limit"]) == ("rate_limited", "sign_in")
        assert 0 < refused["detail"]["retry_after"] <= 300
    for node in nodes:  # the owner, from another address, on either node
        owner = await Client.open(node.url, "Ann's phone", source="127.0.0.3")
        await owner.send(type="sign_in", name="Ann_Lee", password=PASSWORD)
        assert (await owner.expect("signed_in"))["player"]["name"] == "Ann_Lee"
        await owner.close()
    for client in (ann, *guessers):
        await client.close()


async def test_signing_out_everywhere_closes_the_accounts_connections_on_other_nodes(
    nodes: tuple[Running, Running],
) -> None:
    one, two = nodes
    for node in nodes:
        node.app.accounts.hasher = CHEAP_HASHER
    guest = await Client.open(one.url, "Ann")
    await guest.send(type="sign_up", name="Ann_Lee", password=PASSWORD)
    here_session = (await guest.expect("signed_in"))["session"]
    await guest.send(type="sign_in", name="Ann_Lee", password=PASSWORD)
    there_session = (await guest.expect("signed_in"))["session"]
    here = await Client.open(one.url, name=None, resume=here_session)
    there = await Client.open(two.url, name=None, resume=there_session)

    await here.send(type="sign_out", everywhere=True)
    assert (await here.expect("signed_out"))["revoked"] == 2
    with pytest.raises(ConnectionClosed):
        await there.expect("never", timeout=5)
    assert (there.ws.close_code, there.ws.close_reason) == (1000, "signed_out")
    await guest.close()
