"""A game whose last stored move ended it, on real databases: the server was killed after it
stored the move and before it stored the finished game (the row still says ``active``).
At the restart the game is finished as that move would have finished it (result, reason,
time, rating), and its people come back to a game over, not to a room where nobody can
move."""

from __future__ import annotations

import time

import pytest
from endings import (
    CONNECT4_DRAW,
    FOUR_IN_COLUMN_ONE,
    OTHELLO_WIPEOUT,
    final_cells,
    random_game,
)
from people import CHEAP_HASHER, PASSWORD
from wsclient import Client

import games
from server.app import running
from server.storage import SqlStore
from server.storage.store import GameRecord, MoveRecord, PlayerRecord, Store
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    opened_sql_store,
    pg_url,
    sql_url,
    sqlite_url,
)

SECRET = b"the finished-restore test's secret"


async def _account(url: str, name: str) -> tuple[Client, str]:
    """A guest signed up as ``name``: its client and its session token (to resume with)."""
    client = await Client.open(url, name)
    await client.send(type="sign_up", name=name, password=PASSWORD)
    return client, (await client.expect("signed_in"))["session"]


async def test_a_game_won_by_its_last_stored_move_is_finished_and_rated_at_the_restart(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    async with running(store=SqlStore(sql_url), secret=SECRET) as server:
        server.app.accounts.hasher = CHEAP_HASHER
        ann, ann_session = await _account(server.url, "Ann")
        bob, bob_session = await _account(server.url, "Bob")
        await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"},
                       seat=0)
        room = (await ann.expect("room_state"))["room"]["id"]
        await bob.send(type="join_room", room=room)
        await bob.expect("room_state")
        for ply, move in enumerate(FOUR_IN_COLUMN_ONE[:-1]):
            await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=move)
            await ann.expect("move_made", ply=ply)
        players = ann.player_id, bob.player_id
        await ann.close()
        await bob.close()
    # Ann's winning move, stored as the server stores a move before anyone hears of it;
    # the server died there, before the finished game was stored.
    won_at = time.time()
    async with opened_sql_store(sql_url) as store:
        await store.append_move(MoveRecord(f"{room}-1", 6, FOUR_IN_COLUMN_ONE[-1], 0, 2.0,
                                           won_at))
        loaded = await store.load_game(f"{room}-1")
        assert loaded is not None and loaded[0].status == "active" and len(loaded[1]) == 7

    async with running(store=SqlStore(sql_url), secret=SECRET) as server:
        loaded = await server.app.store.load_game(f"{room}-1")
        assert loaded is not None
        record, moves = loaded
        assert (record.status, record.result, record.reason) == ("finished", 18, "end")
        assert record.finished_at == pytest.approx(won_at)
        assert [m.move for m in moves] == FOUR_IN_COLUMN_ONE
        # Rated as any finished game between accounts: the winner up, the loser down.
        (ann_rating,) = await server.app.store.ratings_of(players[0])
        (bob_rating,) = await server.app.store.ratings_of(players[1])
        assert (ann_rating.game, ann_rating.games, bob_rating.games) == ("connect4", 1, 1)
        assert ann_rating.rating > 1500 > bob_rating.rating

        ann = await Client.open(server.url, None, resume=ann_session)
        state = (await ann.expect("room_state"))["room"]
        assert state["id"] == room and state["status"] == "finished"
        assert state["result"] == {"winner": 0, "score": 18, "reason": "end"}
        assert state["position"]["to_move"] is None and state["position"]["legal_moves"] == []
        await ann.send(type="move", room=room, ply=7, move="3", id="late")
        assert (await ann.expect("error", ref="late"))["code"] == "game_finished"
        # A finished room, not a stuck one: a rematch can be offered and accepted.
        bob = await Client.open(server.url, None, resume=bob_session)
        await bob.expect("room_state")
        await ann.send(type="offer_rematch", room=room)
        await bob.expect("room_event", event="rematch_offered")
        await bob.send(type="accept_rematch", room=room)
        rematch = (await ann.expect("room_state"))["room"]
        assert (rematch["status"], rematch["round"], rematch["position"]["ply"]) == (
            "active", 2, 0)
        await ann.close()
        await bob.close()


async def _crashed(store: Store, room: str, game: str, moves: list[str],
                   players: tuple[str | None, str | None], ai_seat: int | None = None
                   ) -> None:
    """Store ``moves`` of a game in ``room`` as a server killed right after storing the last
    of them leaves it: every move, and the row as it was before that move (``active``)."""
    rules = games.load(game)
    start = time.time() - len(moves)
    await store.save_game(GameRecord(
        id=f"{room}-1", game=game, players=players, ai_seat=ai_seat,
        ai_level=None if ai_seat is None else "beginner", status="active",
        start_position=rules.format_position(rules.initial()), created_at=start,
    ))
    for ply, move in enumerate(moves):
        await store.append_move(MoveRecord(f"{room}-1", ply, move, ply % 2, 1.0,
                                           start + ply + 1))


def _disc_difference(moves: list[str]) -> int:
    """Othello's final score from Black's side, counted on the board: discs, with the empty
    squares to the winner."""
    cells = final_cells("othello", moves)
    black, white = cells.count(0), cells.count(1)
    empty = cells.count(None)
    return black - white + (empty if black > white else -empty if white > black else 0)


async def test_every_kind_of_end_stored_as_the_last_move_is_finished_at_the_restart(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    full_board = random_game("othello", 0)
    assert None not in final_cells("othello", full_board)
    assert None not in final_cells("connect4", CONNECT4_DRAW)
    ann, bob = "p-ann", "p-bob"
    expected = {  # room: (winner, stored result)
        "DRAWNC4X": (None, 0),  # the board full, nobody has four
        "OTHFULLB": (1, _disc_difference(full_board)),  # White's last disc fills the board
        "OTHWIPED": (0, 64),  # neither side can move, 51 squares empty
        "AIWONC4X": (0, 18),  # the AI's stored move made its four
    }
    async with opened_sql_store(sql_url) as store:
        for player, name in ((ann, "Ann"), (bob, "Bob")):
            await store.save_player(PlayerRecord(player, name, "guest", time.time()))
        await _crashed(store, "DRAWNC4X", "connect4", CONNECT4_DRAW, (ann, bob))
        await _crashed(store, "OTHFULLB", "othello", full_board, (ann, bob))
        await _crashed(store, "OTHWIPED", "othello", OTHELLO_WIPEOUT, (ann, bob))
        await _crashed(store, "AIWONC4X", "connect4", FOUR_IN_COLUMN_ONE, (None, ann),
                       ai_seat=0)
        await _crashed(store, "GOINGON1", "connect4", ["4", "4", "3"], (ann, bob))
        assert len(await store.unfinished_games()) == 5

    async with running(store=SqlStore(sql_url), secret=SECRET) as server:
        for room, (_, result) in expected.items():
            loaded = await server.app.store.load_game(f"{room}-1")
            assert loaded is not None
            record, moves = loaded
            assert (record.status, record.result, record.reason) == ("finished", result, "end")
            assert record.finished_at == pytest.approx(moves[-1].created_at)
        [(going, _)] = await server.app.store.unfinished_games()
        assert going.id == "GOINGON1-1"

        client = await Client.open(server.url, None, resume=server.app.identity.token_for(ann))
        states = {}
        for _ in range(len(expected) + 1):
            state = (await client.expect("room_state"))["room"]
            states[state["id"]] = state
        assert states["GOINGON1"]["status"] == "active"
        assert states["GOINGON1"]["position"]["legal_moves"]
        for room, (winner, _) in expected.items():
            assert states[room]["status"] == "finished", room
            assert states[room]["result"]["winner"] == winner, room
            assert states[room]["result"]["reason"] == "end", room
            assert states[room]["position"]["legal_moves"] == [], room
        await client.close()
