"""A cluster node stopped with SIGTERM while its rooms are played through the other node
loses no announcement (issue 27, bug 2).

Two real ``discus serve`` nodes on one PostgreSQL database and the shared Redis (under a
prefix of the test's own). In each round a fresh node A runs several rooms whose people
play through node B (each move a command forwarded to A); in some rooms one person stays
connected to A itself and comes back through B when A closes with 1012, as the page does.
Moves go on all the time, A gets SIGTERM in the middle (in some rooms just as their winning
move comes), and play goes on through B, which takes the rooms over. Three rounds, each with
a fresh A.

What must hold, per room, against the moves table: every stored move reached every player
as ``move_made`` with the stored move (and ``game_over`` if the stored game is finished),
but for a player that was away when it was stored (from the SIGTERM of its node until it
was welcomed back through B, or while it resynced), which gets it in the ``room_state`` it
comes back to; everything anyone was told agrees with the store; nobody got
``unknown_room`` for a room of theirs.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cluster_nodes import Nodes, StoredMove, fresh_nodes, stored_games
from cluster_play import Page, Table, drive
from wsclient import Client

pytestmark = pytest.mark.slow

ROUNDS = 3
ROOMS = 16
"""Rooms per round played at random; every other one keeps a person on A."""
ENDING_ROOMS = 8
"""Connect Four rooms per round whose game ends as A is stopped: the winning move's
announcement must not be lost either."""
WON_AT_PLY_6 = "4545454"
ENDING_FROM = 0.25
ENDING_STEP = 0.1
"""When the ending rooms start playing, seconds after the others (seven moves take about a
second and a half)."""
PLAY_BEFORE = 1.5
"""Seconds of play before the SIGTERM."""
PLAY_AFTER = 6.0
"""Seconds of play through B after A has exited."""
AWAY_MARGIN = 1.0
"""Seconds around a page's time away within which a stored move may miss it."""
SETTLE_SECONDS = 10.0
"""How long announcements still on their way may take once play stopped."""
PAUSE = 0.15
"""Between a person's moves: games must still be going when the SIGTERM comes."""


@pytest.fixture
async def nodes(tmp_path: Path) -> AsyncIterator[Nodes]:
    async with fresh_nodes(tmp_path) as made:
        yield made


async def _open_table(nodes: Nodes, a: str, b: str, index: int) -> Table:
    """A room made on A; Bob on B joins it. Ann is on A (odd ``index``) or comes to B."""
    game = "othello" if index < ROOMS and (index // 2) % 2 else "connect4"
    stays_on_a = index % 2 == 1
    ann = Page(f"Ann{index}", lambda: nodes.url(b))
    if stays_on_a:
        await ann.open(nodes.url(a))
        await ann.send(type="create_room", game=game, opponent={"kind": "friend"}, seat=0)
        state = await asyncio.wait_for(ann.created.get(), 20)
    else:
        maker = await Client.open(nodes.url(a), f"Ann{index}")
        await maker.send(type="create_room", game=game, opponent={"kind": "friend"}, seat=0)
        state = await maker.expect("room_state", timeout=20)
        ann.token = maker.welcome["resume"]
        await maker.close()
    room = state["room"]["id"]
    bob = Page(f"Bob{index}", lambda: nodes.url(b))
    await bob.open()
    table = Table(room, game, [ann, bob], state["room"]["position"], state["room"]["status"])
    table.rng.seed(index)
    await bob.send(type="join_room", room=room)
    if not stays_on_a:
        await ann.open()
    deadline = time.monotonic() + 20
    while table.status != "active" or table.position["to_move"] is None:
        assert time.monotonic() < deadline, f"room {room} did not start: {table.errors}"
        await asyncio.sleep(0.05)
    return table


def _check(table: Table, stored: tuple[str, list[StoredMove]] | None,
           term: float) -> list[str]:
    """What went wrong in ``table`` against its stored game (nothing: [])."""
    wrong: list[str] = []
    assert stored is not None, f"game {table.game_id} is not stored"
    status, moves = stored
    by_ply = {ply: move for ply, move, _, _ in moves}
    if sorted(by_ply) != list(range(len(by_ply))):
        wrong.append(f"{table.room}: stored plies are not contiguous: {sorted(by_ply)}")
    unknown = Counter(who for who, error in table.errors if error.get("code") == "unknown_room")
    for who, count in unknown.items():
        wrong.append(f"{table.room}: {who} got unknown_room {count} times "
                     f"(its stored game is {status})")
    for page in table.pages:
        seen = page.view(table.room)
        for ply, move, _ in seen.made:
            if by_ply.get(ply) != move:
                wrong.append(f"{table.room}: {page.name} was told ply {ply} is {move}, "
                             f"stored: {by_ply.get(ply)}")
        for known, _ in seen.states:
            if known != [by_ply.get(i) for i in range(len(known))]:
                wrong.append(f"{table.room}: {page.name} got a room_state that is not the "
                             f"stored game: {known}")
        made = {ply for ply, _, _ in seen.made}
        # A move stored while the page was away (1012, a resync) comes in the room_state it
        # gets back; any other must have come as move_made.
        missing = [f"{ply} (epoch {epoch}, stored {at - term:+.2f} s after the SIGTERM)"
                   for ply, _, epoch, at in moves
                   if ply not in made and not page.away(at, AWAY_MARGIN)]
        if missing:
            wrong.append(f"{table.room}: {page.name} never got move_made for ply "
                         f"{', '.join(missing)}; {len(moves)} stored, game {status}; "
                         f"its reconnections: {[round(c - term, 2) for c, _ in page.gaps]}; "
                         f"errors: {dict(Counter((w, e.get('code')) for w, e in table.errors))}")
        if (status == "finished" and not seen.over
                and not page.away(moves[-1][3], AWAY_MARGIN)):
            wrong.append(f"{table.room}: {page.name} never got game_over; the stored game "
                         "is finished")
    return wrong


async def _settled(nodes: Nodes, tables: list[Table], term: float,
                   timeout: float = SETTLE_SECONDS) -> dict[str, tuple[str, list[StoredMove]]]:
    """The stored games, once every page was told all it must be (announcements still on
    their way arrive), or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        stored = await stored_games(nodes.database_url)
        if time.monotonic() > deadline or not any(
                _check(t, stored.get(t.game_id), term) for t in tables):
            return stored
        await asyncio.sleep(0.5)


@pytest.mark.timeout(240)
async def test_a_node_stopped_with_sigterm_announces_every_move_it_stored(
    nodes: Nodes,
) -> None:
    started = time.monotonic()
    await nodes.serve("B", "--workers", "0")
    wrong: list[str] = []
    report: list[str] = []
    for round_ in range(ROUNDS):
        a = f"A{round_}"
        await nodes.serve(a, "--workers", "0")
        tables = [await _open_table(nodes, a, "B", i) for i in range(ROOMS + ENDING_ROOMS)]
        stop = asyncio.Event()
        drivers = [asyncio.create_task(drive(t, stop, pause=PAUSE)) for t in tables[:ROOMS]]
        for i, table in enumerate(tables[ROOMS:]):
            # Connect Four won by seat 0 at ply 6, the last moves spread around the SIGTERM.
            table.chosen.update(enumerate(WON_AT_PLY_6))
            drivers.append(asyncio.create_task(
                drive(table, stop, pause=PAUSE, start_after=ENDING_FROM + ENDING_STEP * i)))
        await asyncio.sleep(PLAY_BEFORE)
        plies_at_term = sum(t.position["ply"] for t in tables)
        term = time.time()
        for table in tables:
            for page in table.pages:
                if page.url == nodes.url(a):
                    page.leaving(term)
        nodes.terminate(a)
        code = await nodes.wait_exit(a, 60)
        assert code == 0, f"{a} did not stop cleanly within 60 s of SIGTERM ({code})"
        await asyncio.sleep(PLAY_AFTER)
        stop.set()
        await asyncio.gather(*drivers)
        stored = await _settled(nodes, tables, term)
        for table in tables:
            for page in table.pages:
                await page.close()
        for table in tables:
            wrong.extend(_check(table, stored.get(table.game_id), term))
        errors = [e.get("code") for t in tables for _, e in t.errors]
        report.append(f"round {round_}: A exited {code}; {plies_at_term} plies at SIGTERM, "
                      f"{sum(len(stored[t.game_id][1]) for t in tables)} stored; "
                      f"{sum(t.finished for t in tables)} of {len(tables)} games over; "
                      f"errors: {sorted(set(map(str, errors)))} x{len(errors)}")
        ends = sorted(round(stored[t.game_id][1][-1][3] - term, 2) for t in tables[ROOMS:]
                      if len(stored[t.game_id][1]) == len(WON_AT_PLY_6))
        report[-1] += f"; the ending rooms' last moves stored at {ends} s from the SIGTERM"
        print(report[-1])
        if wrong:
            break
    print(f"{time.monotonic() - started:.1f} s")
    if wrong:
        print(nodes.log(a)[-4000:])
    assert not wrong, "\n".join(report + wrong[:40])
