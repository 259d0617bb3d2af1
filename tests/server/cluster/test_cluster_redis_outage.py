"""Ten seconds without Redis under play: when the nodes take their rooms back, no ply is
announced twice, no correct move is refused, and nothing the lost room instances still had
in flight is written (issue 27, bug 3).

Two real ``discus serve`` nodes (each with one local AI process) on a fresh PostgreSQL
database and on a ``redis-server`` of the test's own, on its own port (never the shared
one). People play each other (on one node, and across the two) and the AI (whose searches
are the work in flight). The Redis process is killed, so every lease, epoch counter and
registry entry is lost, and started again empty on the same port ten seconds later; play
goes on until every room has moved on.

What must hold: no page got two ``move_made`` for one ply of a room (nobody takes back);
no move was refused with ``stale_ply`` when the database held exactly the plies before it;
the moves table is contiguous, replays as a legal game, its epochs never go down, and every
move announced or shown in a ``room_state`` is the stored one.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cluster_nodes import Nodes, RedisServer, StoredMove, stored_games, stored_plies
from cluster_play import Page, Table, drive

import games
from tests.server.storage.conftest import create_database, drop_database

pytestmark = pytest.mark.slow

OUTAGE = 10.0
"""Seconds Redis is away, as in the issue."""
PLAY_BEFORE = 4.0
PLAY_AFTER = 25.0
"""At most this long after Redis is back; play stops earlier once every room moved on."""
REFUSALS = ("stale_ply", "unknown_room", "not_your_turn", "game_finished", "game_not_started")
"""Errors that say a move is wrong, not that the server cannot take it now."""
MOVED_ON = 6
"""Plies every unfinished room must play after Redis is back."""
PAUSE = 0.35
"""Between a person's moves: the people's Othello games (60 plies) are still going when
Redis comes back."""
AI_ROOMS = 4
LOCAL_ROOMS = 3
CROSS_ROOMS = 1
"""Per node: rooms against the AI, rooms of two people on the node, and rooms of a person
on it with one on the other node."""


@pytest.fixture
async def redis_server(tmp_path: Path) -> AsyncIterator[RedisServer]:
    server = RedisServer(tmp_path)
    await server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
async def nodes(tmp_path: Path, redis_server: RedisServer) -> AsyncIterator[Nodes]:
    url, name = await create_database()
    made = Nodes(url, redis_server.url, tmp_path)
    try:
        await made.migrate()
        yield made
    finally:
        made.end_all()
        await drop_database(name)


async def _table(maker: Page, game: str, opponent: dict[str, Any],
                 joiner: Page | None, seed: int) -> Table:
    await maker.send(type="create_room", game=game, opponent=opponent, seat=0)
    state = await asyncio.wait_for(maker.created.get(), 20)
    room = state["room"]["id"]
    table = Table(room, game, [maker, joiner], state["room"]["position"],
                  state["room"]["status"])
    table.rng.seed(seed)
    if joiner is not None:
        await joiner.send(type="join_room", room=room)
    deadline = time.monotonic() + 20
    while table.status != "active":
        assert time.monotonic() < deadline, f"room {room} did not start: {table.errors}"
        await asyncio.sleep(0.05)
    return table


def _check(table: Table, stored: tuple[str, list[StoredMove]] | None) -> list[str]:
    wrong: list[str] = []
    assert stored is not None, f"game {table.game_id} is not stored"
    status, moves = stored
    plies = [ply for ply, _, _, _ in moves]
    if plies != list(range(len(plies))):
        wrong.append(f"{table.room}: stored plies are not contiguous: {plies}")
    epochs = [epoch for _, _, epoch, _ in moves]
    if epochs != sorted(epochs):
        wrong.append(f"{table.room}: stored epochs go down: {epochs}")
    rules = games.load(table.game)
    state = rules.initial()
    for ply, move, _, _ in moves:
        try:
            state = state.play(rules.parse_move(state, move))
        except ValueError:
            wrong.append(f"{table.room}: stored ply {ply} ({move}) is illegal: {moves}")
            break
    by_ply = {ply: move for ply, move, _, _ in moves}
    for page in table.pages:
        seen = page.view(table.room)
        for ply, count in Counter(ply for ply, _, _ in seen.made).items():
            if count > 1:
                told = [(m, c) for p, m, c in seen.made if p == ply]
                wrong.append(f"{table.room}: {page.name} got move_made for ply {ply} "
                             f"{count} times (move, connection): {told}")
        for ply, move, _ in seen.made:
            if by_ply.get(ply) != move:
                wrong.append(f"{table.room}: {page.name} was told ply {ply} is {move}, "
                             f"stored: {by_ply.get(ply)}")
        for known, _ in seen.states:
            if known != [by_ply.get(i) for i in range(len(known))]:
                wrong.append(f"{table.room}: {page.name} got a room_state that is not the "
                             f"stored game: {known}")
    return wrong


@pytest.mark.timeout(300)
async def test_after_a_redis_outage_the_nodes_take_their_rooms_back_cleanly(
    nodes: Nodes, redis_server: RedisServer
) -> None:
    started = time.monotonic()
    urls = {name: await nodes.serve(name, "--workers", "1") for name in ("N1", "N2")}
    tables: list[Table] = []
    pages: list[Page] = []
    seed = 0

    home: dict[str, str] = {}
    """Page name -> its node."""

    def page(name: str, node: str) -> Page:
        made = Page(name, lambda: urls[node])
        home[name] = node
        pages.append(made)
        return made

    for node, other in (("N1", "N2"), ("N2", "N1")):
        for i in range(AI_ROOMS):
            dan = page(f"Dan{node}{i}", node)
            await dan.open()
            game = ("connect4", "othello")[i % 2]
            seed += 1
            tables.append(await _table(dan, game, {"kind": "ai", "level": "hard"}, None, seed))
        for i in range(LOCAL_ROOMS + CROSS_ROOMS):
            ann, bob = page(f"Ann{node}{i}", node), page(f"Bob{node}{i}",
                                                          node if i < LOCAL_ROOMS else other)
            await ann.open()
            await bob.open()
            seed += 1
            tables.append(await _table(ann, "othello", {"kind": "friend"}, bob, seed))

    refused: dict[tuple[str, int, Any], str] = {}

    back_at = 0.0

    async def on_refused(table: Table, ply: int, error: dict[str, Any]) -> None:
        """A move refused as out of date or out of place is wrong if the database holds
        exactly the plies before it and the game is on (it is the person's turn: nothing
        else can be stored meanwhile). "Send that again" is no refusal."""
        if error.get("code") not in REFUSALS:
            return
        held, status = await stored_plies(nodes.database_url, table.game_id)
        if held == ply and status == "active":
            when = (f"{time.monotonic() - back_at:.1f} s after Redis was back" if back_at
                    else "before Redis was back")
            if (table.room, ply, error.get("code")) in refused:
                return  # a page sends a refused move again: once each
            kind = ("against the AI" if table.ai_seat is not None
                    else "people on " + " and ".join(home[p.name] for p in table.pages))
            refused[table.room, ply, error.get("code")] = (
                f"{table.room} ({kind}): the move for ply {ply} was refused with "
                f"{error.get('code')} ({error.get('message')}) though the database holds "
                f"plies 0..{held - 1} of the active game; {when}")

    stop = asyncio.Event()
    drivers = [asyncio.create_task(drive(t, stop, pause=PAUSE, on_refused=on_refused))
               for t in tables]
    await asyncio.sleep(PLAY_BEFORE)
    redis_server.kill()
    down_at = time.monotonic()
    plies_at_kill = [t.position["ply"] for t in tables]
    await asyncio.sleep(OUTAGE)
    await redis_server.start()
    back_at = time.monotonic()
    plies_at_back = [t.position["ply"] for t in tables]
    while time.monotonic() - back_at < PLAY_AFTER:
        if all(t.finished or t.position["ply"] >= ply + MOVED_ON
               for t, ply in zip(tables, plies_at_back, strict=True)):
            break
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*drivers)
    await asyncio.sleep(1.5)  # announcements still on their way
    for each in pages:
        await each.close()

    stored = await stored_games(nodes.database_url)
    wrong = list(refused.values())
    for table in tables:
        wrong.extend(_check(table, stored.get(table.game_id)))
    stuck = [t.room for t, ply in zip(tables, plies_at_back, strict=True)
             if not t.finished and t.position["ply"] < ply + MOVED_ON]
    errors = Counter(str(e.get("code")) for t in tables for _, e in t.errors)
    print(f"Redis down {back_at - down_at:.1f} s; plies at the kill {sum(plies_at_kill)}, "
          f"at the restart {sum(plies_at_back)}, at the end "
          f"{sum(len(stored[t.game_id][1]) for t in tables)}; "
          f"{sum(t.finished for t in tables)} of {len(tables)} games over; "
          f"errors {dict(errors)}; rooms that did not move on: {stuck}; "
          f"{time.monotonic() - started:.1f} s in all")
    if wrong:
        for node in ("N1", "N2"):
            print(f"--- {node}:\n" + "\n".join(
                line for line in nodes.log(node).splitlines()
                if line.startswith("20") and " room " in line)[-3000:])
    assert not wrong, "\n".join(wrong[:40])
    assert not stuck, f"rooms that did not move on {PLAY_AFTER:.0f} s after Redis was back"
