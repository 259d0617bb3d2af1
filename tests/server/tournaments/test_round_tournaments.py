"""Swiss and round-robin events over real websockets: made by an account, joined until the
start, each round paired by the rules and started as rooms, the next round paired when the
last game of a round ends, standings and the crosstable sent; a restart keeps them."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from people import CHEAP_HASHER, MANY_SIGN_UPS, account, sign_up
from wsclient import Client

from server.app import Running, Settings, running
from server.storage import SqlStore

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: the first player wins at its fourth move."""
SECRET = b"round tournaments test secret.."


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(settings=Settings(sign_in=MANY_SIGN_UPS)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def make(maker: Client, kind: str = "swiss", **extra: Any) -> str:
    await maker.send(type="create_round_tournament", kind=kind, game="connect4",
                     name="Thursday Swiss", time_control="3+2", **extra)
    made = await maker.expect("round_tournament")
    assert made["tournament"]["status"] == "upcoming" and made["round"] == 0
    return str(made["tournament"]["id"])


async def state(observer: Client, tid: str) -> dict[str, Any]:
    await observer.send(type="get_tournament", tournament=tid)
    return await observer.expect("round_tournament")


async def round_paired(observer: Client, tid: str, number: int) -> dict[str, Any]:
    """The event's state once round ``number`` is paired (the observer is not entered:
    it gets only its answers)."""
    for _ in range(100):
        now = await state(observer, tid)
        if now["round"] >= number or now["tournament"]["status"] == "finished":
            return now
        await asyncio.sleep(0.1)
    raise AssertionError(f"round {number} was never paired")


async def play(first: Client, second: Client, room: str) -> None:
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (first, second)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        for client in (first, second):
            await client.expect("move_made", ply=ply, room=room)


@pytest.mark.slow
async def test_a_swiss_of_nine_plays_three_rounds_with_a_bye_each_and_no_pairing_twice(
        server: Running) -> None:
    maker = await Client.open(server.url, "Zed")
    await sign_up(maker, "Zed")
    tid = await make(maker, rounds=3)
    players = [await account(server.url, f"Player{k}") for k in range(9)]
    clients = {c.player_id: c for c in players}
    for client in players:
        await client.send(type="join_tournament", tournament=tid)
        joined = await client.expect("round_tournament")
        assert joined["round"] == 0
    assert (await state(maker, tid))["tournament"]["players"] == 9
    await maker.send(type="start_tournament", tournament=tid)
    started = await maker.expect("round_tournament")
    assert started["round"] == 1 and started["tournament"]["status"] == "running"
    late = await account(server.url, "Late")
    await late.send(type="join_tournament", tournament=tid)
    refused = await late.expect("error")
    assert refused["code"] == "tournament_closed"

    met: set[frozenset[str]] = set()
    byes: list[str] = []
    for number in (1, 2, 3):
        now = await round_paired(maker, tid, number)
        assert now["round"] == number
        boards = now["boards"]
        assert sum(1 for b in boards if b["second"] is None) == 1
        seated = [pid for b in boards for pid in (b["first"]["id"],
                                                  (b["second"] or {}).get("id")) if pid]
        assert sorted(seated) == sorted(clients)
        for board in boards:
            if board["second"] is None:
                byes.append(board["first"]["id"])
                assert board["result"] == 1
                continue
            pair = frozenset((board["first"]["id"], board["second"]["id"]))
            assert pair not in met
            met.add(pair)
            assert board["room"] is not None and board["result"] is None
            await play(clients[board["first"]["id"]], clients[board["second"]["id"]],
                       board["room"])
    assert len(set(byes)) == 3
    await asyncio.sleep(0.5)
    for client in players:  # every round was pushed to every entrant, unasked
        while True:
            try:
                await client.recv(timeout=0.2)
            except TimeoutError:
                break
        pushed = [m for m in client.seen if m["type"] == "round_tournament"]
        assert {m["round"] for m in pushed} >= {1, 2, 3}
        assert pushed[-1]["tournament"]["status"] == "finished"
    final = await round_paired(maker, tid, 4)
    for _ in range(50):
        if final["tournament"]["status"] == "finished":
            break
        final = await state(maker, tid)
    assert final["tournament"]["status"] == "finished" and final["round"] == 3
    # Every game was won by the player moving first: each score counts those and the bye.
    scores = {row["player"]["id"]: row["score"] for row in final["standings"]}
    expected = dict.fromkeys(clients, 0.0)
    rows = list(csv.reader(io.StringIO(final["crosstable"])))
    assert rows[0][:3] == ["rank", "name", "rating"] and len(rows) == 10
    assert [row[1] for row in rows[1:]] == [row["player"]["name"]
                                            for row in final["standings"]]
    assert sum(r.count("bye") for r in rows[1:]) == 3
    for row in rows[1:]:
        wins = sum(1 for cell in row[3:6] if cell.endswith("1") or cell == "bye")
        expected[next(pid for pid, c in clients.items()
                      if c.welcome["player"]["name"] == row[1])] = float(wins)
    assert scores == expected
    assert sorted(scores.values(), reverse=True) == [r["score"] for r in final["standings"]]
    for client in [maker, late, *players]:
        await client.close()


async def test_bad_round_tournament_requests_are_refused(server: Running) -> None:
    guest = await Client.open(server.url, "Guest")
    await guest.send(type="create_round_tournament", kind="swiss", game="connect4",
                     name="x", time_control="3+2", rounds=3)
    assert (await guest.expect("error"))["code"] == "forbidden"
    maker = await Client.open(server.url, "Zed")
    await sign_up(maker, "Zed")
    await maker.send(type="create_round_tournament", kind="swiss", game="connect4",
                     name="x", time_control="3+2")
    assert (await maker.expect("error"))["code"] == "bad_message"
    tid = await make(maker, kind="roundrobin")
    await maker.send(type="start_tournament", tournament=tid)
    assert (await maker.expect("error"))["code"] == "bad_message"  # nobody entered
    await guest.send(type="join_tournament", tournament=tid)
    refused = await guest.expect("error")
    assert refused["code"] == "forbidden" and refused["detail"]["reason"] == "guest"
    amy = await account(server.url, "Amy")
    await amy.send(type="join_tournament", tournament=tid)
    await amy.expect("round_tournament")
    await amy.send(type="start_tournament", tournament=tid)
    assert (await amy.expect("error"))["code"] == "forbidden"
    await amy.send(type="pause_tournament", tournament=tid)
    assert (await amy.expect("error"))["code"] == "bad_message"
    assert (await state(maker, tid))["tournament"]["status"] == "upcoming"
    await guest.close()
    await amy.close()
    await maker.close()


async def test_a_round_robin_outlives_a_restart_and_pairs_on(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url), secret=SECRET) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        maker = await Client.open(srv.url, "Zed")
        await sign_up(maker, "Zed")
        tid = await make(maker, kind="roundrobin")
        players = [await account(srv.url, f"Player{k}") for k in range(4)]
        clients = {c.player_id: c for c in players}
        resume = {c.player_id: next(m["session"] for m in c.seen if m["type"] == "signed_in")
                  for c in players}
        for client in players:
            await client.send(type="join_tournament", tournament=tid)
            await client.expect("round_tournament")
        await maker.send(type="start_tournament", tournament=tid)
        one = await maker.expect("round_tournament")
        assert one["tournament"]["rounds"] == 3 and len(one["boards"]) == 2
        done, waiting = one["boards"]
        await play(clients[done["first"]["id"]], clients[done["second"]["id"]], done["room"])
        for client in [maker, *players]:
            await client.close()
    async with running(store=SqlStore(url), secret=SECRET) as srv:
        watcher = await Client.open(srv.url, "Watcher")
        again = await state(watcher, tid)
        assert again["round"] == 1 and again["tournament"]["status"] == "running"
        boards = {b["first"]["id"]: b for b in again["boards"]}
        assert boards[done["first"]["id"]]["result"] == 1
        assert boards[waiting["first"]["id"]]["result"] is None
        assert boards[waiting["first"]["id"]]["room"] == waiting["room"]
        first = await Client.open(srv.url, None, resume=resume[waiting["first"]["id"]])
        second = await Client.open(srv.url, None, resume=resume[waiting["second"]["id"]])
        await play(first, second, waiting["room"])
        two = await round_paired(watcher, tid, 2)
        assert two["round"] == 2 and len(two["boards"]) == 2
        scores = {r["player"]["id"]: r["score"] for r in two["standings"]}
        assert scores[done["first"]["id"]] == scores[waiting["first"]["id"]] == 1
        for client in (watcher, first, second):
            await client.close()


async def _casual_pair(srv: Running) -> tuple[dict[str, Any], Client, Client]:
    """Ann and Bob, signed up, paired in round 1 of a casual round-robin: its board, and
    the two as (first, second) player."""
    srv.app.accounts.hasher = CHEAP_HASHER
    ann, bob = await Client.open(srv.url, "Ann"), await Client.open(srv.url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    tid = await make(ann, kind="roundrobin", rated=False)
    for client in (ann, bob):
        await client.send(type="join_tournament", tournament=tid)
        await client.expect("round_tournament")
    await ann.send(type="start_tournament", tournament=tid)
    (board,) = (await round_paired(ann, tid, 1))["boards"]
    first, second = (ann, bob) if board["first"]["name"] == "Ann" else (bob, ann)
    return board, first, second


async def _finish_unrated_after_restart(url: str, sessions: list[str], room: str) -> None:
    """On a server restarted over ``url``: the two players (``sessions``, the game's opener
    first) resume, finish the game in ``room`` from ply 1 with FOUR_IN_COLUMN_ONE's moves,
    and nobody's rating moves."""
    async with running(store=SqlStore(url), secret=SECRET) as srv:
        opener, other = [await Client.open(srv.url, None, resume=s) for s in sessions]
        for client in (opener, other):  # back in their seats
            assert (await client.expect("room_state"))["room"]["id"] == room
        for ply, move in enumerate(FOUR_IN_COLUMN_ONE[1:], start=1):
            await (opener, other)[ply % 2].send(type="move", room=room, ply=ply, move=move)
            for client in (opener, other):
                await client.expect("move_made", ply=ply, room=room)
        for client in (opener, other):
            await client.expect("game_over", room=room)
        await opener.send(type="get_profile")
        assert (await opener.expect("profile"))["ratings"] == []
        assert not any(m["type"] == "rating_change" for c in (opener, other) for m in c.seen)
        for client in (opener, other):
            await client.close()


async def test_an_unrated_events_game_stays_unrated_over_a_restart(tmp_path: Path) -> None:
    """A casual round-robin's game under way when the server restarts is still casual after
    it: finishing it moves nobody's rating."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url), secret=SECRET) as srv:
        board, first, second = await _casual_pair(srv)
        await first.send(type="move", room=board["room"], ply=0, move="1")
        for client in (first, second):
            await client.expect("move_made", ply=0, room=board["room"])
        sessions = [next(m["session"] for m in c.seen if m["type"] == "signed_in")
                    for c in (first, second)]
        for client in (first, second):
            await client.close()
    await _finish_unrated_after_restart(url, sessions, board["room"])


async def test_a_rematch_in_an_unrated_events_room_stays_unrated_over_a_restart(
        tmp_path: Path) -> None:
    """A rematch in a casual event's room belongs to no tournament, so only the stored game
    can say it is casual: finished after a restart, it still moves nobody's rating."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(store=SqlStore(url), secret=SECRET) as srv:
        board, first, second = await _casual_pair(srv)
        room = board["room"]
        await play(first, second, room)
        await first.send(type="offer_rematch", room=room)
        await second.expect("room_event", event="rematch_offered")
        await second.send(type="accept_rematch", room=room)
        for client in (first, second):
            rematch = (await client.expect("room_state"))["room"]
            assert (rematch["id"], rematch["round"]) == (room, 2)
        # Colours swap: the event's second player opens the rematch.
        await second.send(type="move", room=room, ply=0, move="1")
        for client in (first, second):
            await client.expect("move_made", ply=0, room=room)
        sessions = [next(m["session"] for m in c.seen if m["type"] == "signed_in")
                    for c in (second, first)]
        for client in (first, second):
            await client.close()
    await _finish_unrated_after_restart(url, sessions, room)
