"""The engine helps nobody in a live rated game: the positions on its board (now, a few plies
ago, one move ahead) are refused to ``analyse`` and ``request_review`` from anybody, mirrored
too, while the book's positions stay open and the game's end frees them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client, friends_game

import games
from ai import review
from server.app import Running, Settings, running
from server.reviews.live_positions import AHEAD_PLIES, BACK_PLIES
from server.storage import open_store
from tests.server.storage.conftest import create_database, drop_database

DEEP = list("4444443215155617537")
"""Off the book from ply 9 (``test_reviews``): a worker proves its positions from ply 14."""
LIVE = 14
"""The ply the rated game stands at in these tests: Ann (seat 0) is to move."""
SLOW = 60.0


@pytest.fixture(params=["sqlite", "postgres"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Running]:
    url, name = f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}", None
    if request.param == "postgres":
        url, name = await create_database()
    try:
        async with running(port=0, store=open_store(url), settings=Settings()) as srv:
            srv.app.accounts.hasher = CHEAP_HASHER
            yield srv
    finally:
        if name is not None:
            await drop_database(name)


async def rated_game(server: Running, plies: int) -> tuple[Client, Client, str]:
    """Ann and Bob, two accounts, in a rated 5+3 Connect Four game along ``DEEP``."""
    ann = await Client.open(server.url, "Ann")
    bob = await Client.open(server.url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0,
                   time_control="5+3")
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await play(ann, bob, room, DEEP[:plies])
    return ann, bob, room


async def play(ann: Client, bob: Client, room: str, moves: list[str]) -> None:
    for ply, text in enumerate(moves):
        await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move=text)
        await ann.expect("move_made", ply=ply)


def mirrored(moves: list[str]) -> list[str]:
    return [str(8 - int(m)) for m in moves]


async def refused(client: Client, moves: list[str], ref: str) -> dict[str, object]:
    await client.send(type="analyse", game="connect4", moves=moves, id=ref)
    answer = await client.recv(timeout=SLOW)
    while answer.get("ref") != ref and answer["type"] != "analysis":
        answer = await client.recv(timeout=SLOW)  # the game's own messages
    assert answer["type"] == "error", f"{moves} was answered: {answer}"
    assert (answer["code"], answer["ref"]) == ("engine_help_refused", ref)
    return answer


def test_the_positions_refused_here_are_off_the_book_and_the_opening_is_on_it() -> None:
    c4 = games.load("connect4")
    for plies in range(LIVE - BACK_PLIES, LIVE + AHEAD_PLIES + 1):
        assert review.analyse_known(c4.parse_moves("".join(DEEP[:plies]))) is None
    assert review.analyse_known(c4.parse_moves("".join(DEEP[:4]))) is not None


@pytest.mark.slow
async def test_a_live_rated_games_positions_are_analysed_for_nobody_until_it_ends(
    server: Running,
) -> None:
    ann, bob, room = await rated_game(server, LIVE)
    error = await refused(ann, DEEP[:LIVE], "mine")  # the player to move, as in issue 43
    assert "rated" in str(error["message"]) and float(error["detail"]["retry_after"]) > 0  # type: ignore[index]
    guest = await Client.open(server.url, "Helper", source="127.0.0.5")
    await refused(guest, mirrored(DEEP[:LIVE]), "mirror")  # a fresh guest, the board mirrored
    await refused(guest, DEEP[:LIVE - BACK_PLIES], "stood")  # before both players' last moves
    await refused(bob, DEEP[:LIVE + 1], "ahead")  # one move on: it would value that move
    assert not server.app.reviews._held and not server.app.reviews.tasks, "nothing was started"
    # The book's positions stay open to all, the players included.
    await ann.send(type="analyse", game="connect4", moves=DEEP[:4], id="book")
    assert (await ann.expect("analysis", timeout=5))["moves"] == DEEP[:4]
    # The game ends: its positions are everybody's again.
    await ann.send(type="resign", room=room)
    await ann.expect("game_over")
    await guest.send(type="analyse", game="connect4", moves=DEEP[:LIVE], id="after")
    answer = await guest.expect("analysis", timeout=SLOW)
    assert answer["moves"] == DEEP[:LIVE] and answer["values"]


@pytest.mark.slow
async def test_a_review_of_a_game_through_a_live_rated_position_is_refused(
    server: Running,
) -> None:
    await rated_game(server, LIVE)
    ann, bob, room = await friends_game(server.url)  # two guests, casual: nothing is rated
    await play(ann, bob, room, DEEP[:LIVE + 2])
    await ann.send(type="resign", room=room)
    await ann.expect("game_over")
    await ann.send(type="request_review", game_id=f"{room}-1", id="r")
    answer = await ann.recv(timeout=SLOW)
    while answer.get("ref") != "r" and answer["type"] != "review":
        answer = await ann.recv(timeout=SLOW)  # the rooms' own messages
    assert (answer["type"], answer.get("code")) == ("error", "engine_help_refused"), answer
    assert answer["detail"]["ply"] == LIVE - BACK_PLIES  # the first position off the book
    assert await server.app.store.load_review(f"{room}-1") is None


async def test_an_unrated_tournaments_game_is_guarded_too(server: Running) -> None:
    """Nobody's rating moves in a casual round robin, but it is a tournament: its game's
    positions are refused all the same (``TournamentDesk.plays``)."""
    ann, bob = await Client.open(server.url, "Ann"), await Client.open(server.url, "Bob")
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await ann.send(type="create_round_tournament", kind="roundrobin", game="connect4",
                   name="Casual", time_control="5+3", rated=False)
    tid = (await ann.expect("round_tournament"))["tournament"]["id"]
    for client in (ann, bob):
        await client.send(type="join_tournament", tournament=tid)
        await client.expect("round_tournament")
    await ann.send(type="start_tournament", tournament=tid)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.expect("room_state")
    assert not server.app.lobby.room(room).rated
    first, second = ((ann, bob) if server.app.lobby.room(room).seat_of(ann.player_id) == 0
                     else (bob, ann))
    for ply, text in enumerate(DEEP[:LIVE]):
        await (first if ply % 2 == 0 else second).send(type="move", room=room, ply=ply,
                                                       move=text)
        await first.expect("move_made", ply=ply)
    guest = await Client.open(server.url, "Helper", source="127.0.0.6")
    await refused(guest, DEEP[:LIVE], "event")
