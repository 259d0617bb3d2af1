"""A tournament's games in one download (``/tournaments/<id>/games.txt``) over a real
server: one line per finished game, in the order they were paired, with the right moves;
a game under way is left out; an unknown tournament is not found."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from people import CHEAP_HASHER, account

from games.othello.ggf import parse_ggf
from server.app import Running, running
from server.connections.player import Player
from server.reviews import history
from server.storage.store import GameRecord, MoveRecord
from tests.server.reviews.test_history import http_get
from tests.server.tournaments.test_tournament_desk import make_arena, paired, play, room_state


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running() as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def games_file(server: Running, tid: str) -> list[str]:
    status, headers, body = await asyncio.to_thread(
        http_get, server.port, f"/tournaments/{tid}/games.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert f"discus-{tid}-games.txt" in headers["Content-Disposition"]
    return body.decode().splitlines()


async def test_the_finished_games_of_an_arena_download_one_line_each(server: Running) -> None:
    ann, bob, cy = [await account(server.url, name) for name in ("Ann", "Bob", "Cyd")]
    clients = {c.player_id: c for c in (ann, bob, cy)}
    tid = await make_arena(ann)
    assert await games_file(server, tid) == []
    await ann.send(type="join_tournament", tournament=tid)
    await ann.expect("tournament")
    await bob.send(type="join_tournament", tournament=tid)
    first, second, room = await paired(clients, await bob.expect("tournament"))
    for client in (first, second):
        await room_state(client, room)
    await play(first, second, room)
    for client in (first, second):
        await client.expect("game_over", room=room)
    names = {ann.player_id: "Ann", bob.player_id: "Bob", cy.player_id: "Cyd"}
    won = [names[first.player_id], names[second.player_id], "1-0", "1212121"]
    for _ in range(100):  # the finished game is stored just after game_over
        lines = await games_file(server, tid)
        if lines:
            break
        await asyncio.sleep(0.05)
    assert [line.split("\t") for line in lines] == [won]
    # Cy is paired with the loser: its game under way is not in the file until it ends.
    await cy.send(type="join_tournament", tournament=tid)
    third, fourth, room = await paired(clients, await cy.expect("tournament"))
    for client in (third, fourth):
        await room_state(client, room)
    assert await games_file(server, tid) == lines
    await play(third, fourth, room)
    await third.expect("game_over", room=room)
    again = [names[third.player_id], names[fourth.player_id], "1-0", "1212121"]
    for _ in range(100):
        lines = await games_file(server, tid)
        if len(lines) == 2:
            break
        await asyncio.sleep(0.05)
    assert [line.split("\t") for line in lines] == [won, again]
    for client in (ann, bob, cy):
        await client.close()


async def test_an_unknown_tournament_has_no_games_file(server: Running) -> None:
    for path in ("/tournaments/tnosuch/games.txt", "/tournaments//games.txt",
                 "/tournaments/a/b/games.txt"):
        status, _, _ = await asyncio.to_thread(http_get, server.port, path)
        assert status == 404, path


def test_an_othello_game_is_its_ggf_record_on_one_line() -> None:
    moves = ["f5", "d6", "c3", "d3"]
    record = GameRecord("g1", "othello", ("ann", "bob"), None, None, "finished", "", 10.0,
                        result=-2, reason="resigned", finished_at=20.0)
    stored = [MoveRecord("g1", ply, move, ply % 2, 1.0, 11.0 + ply)
              for ply, move in enumerate(moves)]
    people = {"ann": Player("ann", "Ann"), "bob": Player("bob", "Bob")}
    replayed = history.replay(record, stored, people)
    line = history.game_line(replayed, record.result)
    assert "\n" not in line and line == replayed.exports["ggf"].replace("\n", " ")
    parsed = parse_ggf(line)
    assert (parsed.black, parsed.white, parsed.moves) == ("Ann", "Bob", moves)
