"""Past games over real websockets: history lists, replays with every board, exports by HTTP."""

from __future__ import annotations

import asyncio
import http.client
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from wsclient import Client, friends_game

import games
from games.othello.ggf import parse_ggf
from server.app import Running, Settings, running
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.views import changes
from server.protocol import board_text
from server.reviews import history as past
from server.storage import open_store
from server.storage.memory import MemoryStore
from server.storage.store import GameRecord, GameStatus, MoveRecord, Store

VERTICAL_WIN = ["1", "2", "1", "2", "1", "2", "1"]
"""Red stacks column 1 and wins on its fourth disc; Yellow stacks column 2."""

OTHELLO_OPENING = ["f5", "d6", "c3"]


@pytest.fixture(params=["memory", "sqlite"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Running]:
    store: Store = (MemoryStore() if request.param == "memory"
                    else open_store(f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}"))
    async with running(port=0, store=store, settings=Settings(grace_seconds=0.5)) as srv:
        yield srv


async def two_players(server: Running, game: str) -> tuple[Client, Client, str]:
    return await friends_game(server.url, game)


async def play(ann: Client, bob: Client, room: str, moves: list[str]) -> list[dict]:
    """Ann and Bob alternate ``moves``; returns each ``move_made`` as Ann saw it."""
    made = []
    for ply, text in enumerate(moves):
        mover = ann if ply % 2 == 0 else bob
        await mover.send(type="move", room=room, ply=ply, move=text)
        made.append(await ann.expect("move_made", ply=ply))
    return made


async def ask(client: Client, kind: str, answer: str, **message: object) -> dict:
    """Send a request and wait for its answer (room events may arrive in between)."""
    await client.send(type=kind, **message)
    return await client.expect(answer)


def history(client: Client, **message: object) -> Any:
    return ask(client, "list_history", "history", **message)


def http_get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path)
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


async def test_a_finished_game_is_listed_with_opponent_result_and_move_count(
    server: Running,
) -> None:
    ann, bob, room = await two_players(server, "connect4")
    await play(ann, bob, room, VERTICAL_WIN)
    await ann.expect("game_over")

    answer = await history(ann)
    assert answer["type"] == "history" and answer["player"] == ann.player_id
    [line] = answer["games"]
    assert line["game"] == "connect4" and line["status"] == "finished"
    names = [seat["player"]["name"] for seat in line["seats"]]
    assert names == ["Ann", "Bob"]
    assert line["result"]["winner"] == 0 and line["result"]["reason"] == "end"
    # Pons' score: 22 minus the winner's stones (Red won with its fourth).
    assert line["result"]["score"] == 18
    assert line["move_count"] == 7
    assert line["finished_at"] >= line["started_at"]
    assert abs(line["started_at"] - time.time()) < 60, "dates are Unix times, not a process clock"

    # Bob's history holds the same game; a game still being played is not history yet.
    await ann.send(type="offer_rematch", room=room)
    await bob.send(type="accept_rematch", room=room)
    await ann.expect("room_state")
    answer = await history(bob)
    assert [g["id"] for g in answer["games"]] == [line["id"]]
    # Anyone may ask for a player's games by id.
    assert (await history(bob, player=ann.player_id))["games"] == [line]


async def test_an_ai_game_left_before_any_move_is_in_history_as_aborted_with_no_winner(
    server: Running,
) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "ai", "level": "easy"},
                   seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await ann.send(type="leave", room=room)
    over = await ann.expect("game_over")
    assert over["result"] == {"winner": None, "score": None, "reason": "aborted"}
    [line] = (await history(ann))["games"]
    assert line["status"] == "aborted" and line["move_count"] == 0
    assert line["result"] == {"winner": None, "score": None, "reason": "aborted"}
    replay = await ask(ann, "get_game", "game_record", game_id=line["id"])
    assert replay["record"]["result"] == line["result"]


async def test_history_is_newest_first_and_obeys_its_limit(server: Running) -> None:
    ann, bob, room = await two_players(server, "connect4")
    ids = []
    for round_ in range(3):
        await ann.send(type="resign", room=room)
        await ann.expect("game_over")
        ids.append((await history(ann, limit=1))["games"][0]["id"])
        await ann.send(type="offer_rematch", room=room)
        await bob.send(type="accept_rematch", room=room)
        await ann.expect("room_state")
        await bob.expect("room_state")
        assert len(set(ids)) == round_ + 1
    games_ = (await history(ann))["games"]
    assert [g["id"] for g in games_] == ids[::-1]
    assert all(g["result"]["reason"] == "resigned" and g["result"]["score"] is None
               for g in games_)
    # Ann held seat 0, then seat 1 after the first rematch (colours alternate), then 0 again:
    # each time she resigned, so the other seat won.
    assert [g["result"]["winner"] for g in games_] == [1, 0, 1]


async def test_a_replay_has_the_board_after_every_ply_as_the_rules_give_it(
    server: Running,
) -> None:
    ann, bob, room = await two_players(server, "connect4")
    made = await play(ann, bob, room, VERTICAL_WIN)
    game_id = (await history(ann))["games"][0]["id"]

    answer = await ask(bob, "get_game", "game_record", game_id=game_id)
    assert answer["type"] == "game_record"
    record = answer["record"]
    assert record["moves"] == VERTICAL_WIN
    assert (record["rows"], record["cols"]) == (6, 7)
    boards = record["boards"]
    assert len(boards) == len(VERTICAL_WIN) + 1
    assert boards[0] == "-" * 42
    # Each ply adds exactly one disc of the mover's colour, in the column played, and the
    # last board is the position the players were shown.
    for ply, (before, after) in enumerate(zip(boards, boards[1:], strict=False)):
        new = [i for i in range(42) if before[i] != after[i]]
        assert len(new) == 1 and before[new[0]] == "-"
        assert after[new[0]] == "XO"[ply % 2]
        assert new[0] % 7 + 1 == int(VERTICAL_WIN[ply])
        assert made[ply]["position"]["placed"] == new[0]
        assert board_text(made[ply]["position"]["cells"]) == after
    c4 = games.load("connect4")
    final = c4.parse_moves(record["exports"]["columns"])
    assert board_text(c4.cells(final)) == boards[-1]
    assert record["exports"] == {"columns": "1212121"}
    # Column 1's four, from the third row from the top down, as the players were shown it.
    assert record["winning"] == made[-1]["position"]["winning"] == [14, 21, 28, 35]
    assert all(made[ply]["position"]["winning"] == [] for ply in range(len(made) - 1))
    assert record["downloads"] == {"txt": f"/games/{game_id}.txt"}


async def test_room_state_carries_every_board_so_far_and_move_made_what_flipped(
    server: Running,
) -> None:
    ann, bob, room = await two_players(server, "othello")
    made = await play(ann, bob, room, OTHELLO_OPENING)
    # f5 (black) flips e5, the white disc between it and d5.
    e5, f5 = 4 * 8 + 4, 4 * 8 + 5
    assert made[0]["position"]["placed"] == f5
    assert made[0]["position"]["flipped"] == [e5]

    watcher = await Client.open(server.url, "Eve")
    await watcher.send(type="spectate", room=room)
    view = (await watcher.expect("room_state"))["room"]
    assert len(view["boards"]) == len(OTHELLO_OPENING) + 1
    start = view["boards"][0]
    assert start[3 * 8 + 3] == "O" and start[3 * 8 + 4] == "X"  # d4 white, e4 black
    assert start[4 * 8 + 3] == "X" and start[4 * 8 + 4] == "O"  # d5 black, e5 white
    assert [board.count("-") for board in view["boards"]] == [60, 59, 58, 57]
    assert view["boards"][-1] == board_text(view["position"]["cells"])
    assert view["position"]["placed"] == made[-1]["position"]["placed"]


async def test_an_othello_game_exports_a_move_list_and_ggf_that_read_back(
    server: Running,
) -> None:
    ann, bob, room = await two_players(server, "othello")
    await play(ann, bob, room, OTHELLO_OPENING)
    await bob.send(type="resign", room=room)
    await ann.expect("game_over")
    game_id = (await history(ann))["games"][0]["id"]
    record = (await ask(ann, "get_game", "game_record", game_id=game_id))["record"]
    assert record["exports"]["moves"] == "f5d6c3"
    ggf = parse_ggf(record["exports"]["ggf"])
    assert ggf.moves == OTHELLO_OPENING
    assert (ggf.black, ggf.white) == ("Ann", "Bob")
    assert ggf.result is not None and ggf.result > 0 and ggf.result_flag == "r"

    status, headers, body = await asyncio.to_thread(http_get, server.port,
                                                    f"/games/{game_id}.ggf")
    assert status == 200 and headers["Content-Type"].startswith("application/x-ggf")
    assert f'filename="discus-{game_id}.ggf"' in headers["Content-Disposition"]
    assert body.decode() == record["exports"]["ggf"] + "\n"
    status, headers, body = await asyncio.to_thread(http_get, server.port,
                                                    f"/games/{game_id}.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    othello = games.load("othello")
    replayed = othello.parse_moves(body.decode().strip())
    assert board_text(othello.cells(replayed)) == record["boards"][-1]


async def test_a_connect_four_game_downloads_as_its_column_string(server: Running) -> None:
    ann, bob, room = await two_players(server, "connect4")
    await play(ann, bob, room, VERTICAL_WIN)
    game_id = (await history(ann))["games"][0]["id"]
    status, headers, body = await asyncio.to_thread(http_get, server.port,
                                                    f"/games/{game_id}.txt")
    assert (status, body) == (200, b"1212121\n")
    assert headers["Content-Disposition"] == f'attachment; filename="discus-{game_id}.txt"'
    # Connect Four has no GGF.
    status, _, _ = await asyncio.to_thread(http_get, server.port, f"/games/{game_id}.ggf")
    assert status == 404


async def test_an_unknown_game_id_is_refused_with_its_own_code_and_a_404(
    server: Running,
) -> None:
    client = await Client.open(server.url, "Ann")
    answer = await ask(client, "get_game", "error", game_id="nosuchgame-1", id=7)
    assert answer["type"] == "error" and answer["code"] == "unknown_game_id"
    assert answer["ref"] == 7 and "nosuchgame-1" in answer["message"]
    for path in ("/games/nosuchgame-1.txt", "/games/nosuchgame-1.ggf", "/games/x.pdf",
                 "/games/.txt"):
        status, _, _ = await asyncio.to_thread(http_get, server.port, path)
        assert status == 404, path
    # The connection is still good, and a player with no games has an empty history.
    assert (await history(client))["games"] == []


async def test_a_game_against_the_ai_names_the_ai_level_in_history_and_exports(
    server: Running,
) -> None:
    client = await Client.open(server.url, "Ann")
    level = client.welcome["games"][0]["levels"][0]["name"]
    await client.send(type="create_room", game="connect4",
                      opponent={"kind": "ai", "level": level}, seat=1)
    room = (await client.expect("room_state"))["room"]["id"]
    await client.expect("move_made", ply=0, timeout=20)
    await client.send(type="resign", room=room)
    await client.expect("game_over")
    [line] = (await history(client))["games"]
    assert line["seats"][0] == {"seat": 0, "colour": "Red", "kind": "ai", "player": None,
                                "level": level}
    assert line["seats"][1]["player"]["name"] == "Ann"
    assert line["result"]["winner"] == 0 and line["move_count"] == 1
    record = (await ask(client, "get_game", "game_record", game_id=line["id"]))["record"]
    assert len(record["exports"]["columns"]) == 1 and len(record["boards"]) == 2


# --- without sockets: replays of stored records, and rooms restored from them ----------------


def random_othello_game_with_a_pass() -> list[str]:
    othello = games.load("othello")
    for seed in range(500):
        rng = random.Random(seed)
        state, moves = othello.initial(), []
        while not state.is_over():
            move = rng.choice(state.legal_moves())
            moves.append(othello.format_move(move))
            state = state.play(move)
        if "pass" in moves:
            return moves
    raise AssertionError("no random game with a pass in 500 tries")


def stored(game: str, moves: list[str], status: GameStatus = "finished"
           ) -> tuple[GameRecord, list[MoveRecord]]:
    start = games.load(game).format_position(games.load(game).initial())
    record = GameRecord("r00m-1", game, ("ann", "bob"), None, None, status, start,
                        1_763_769_600.0, result=None if status != "finished" else 2,
                        reason=None if status != "finished" else "end")
    return record, [MoveRecord("r00m-1", i, m, i % 2, 1.0, 0.0) for i, m in enumerate(moves)]


def test_a_pass_is_a_ply_whose_board_is_unchanged_and_the_move_list_leaves_it_out() -> None:
    moves = random_othello_game_with_a_pass()
    record, rows = stored("othello", moves)
    replayed = past.replay(record, rows, {"ann": Player("ann", "Ann"),
                                          "bob": Player("bob", "Bob")})
    assert len(replayed.boards) == len(moves) + 1
    for ply, move in enumerate(moves):
        placed, flipped = changes(replayed.boards[ply], replayed.boards[ply + 1])
        if move == "pass":
            assert (placed, flipped) == (None, [])
        else:
            assert placed == (int(move[1]) - 1) * 8 + "abcdefgh".index(move[0])
            assert flipped, "an Othello move turns at least one disc"
        before, after = replayed.boards[ply], replayed.boards[ply + 1]
        assert flipped == [cell for cell in range(64)
                           if before[cell] != "-" and before[cell] != after[cell]]
    assert replayed.exports["moves"] == "".join(m for m in moves if m != "pass")
    assert "[PA//" in replayed.exports["ggf"]
    assert parse_ggf(replayed.exports["ggf"]).moves == moves
    assert past.download(replayed, "ggf") == replayed.exports["ggf"] + "\n"


def test_a_room_restored_from_storage_has_the_same_boards_as_the_replay() -> None:
    moves = random_othello_game_with_a_pass()[:-1]  # one short of the end: still active
    record, rows = stored("othello", moves, status="active")
    lobby = Lobby(levels={}, ids=lambda: "unused")
    people = {"ann": Player("ann", "Ann"), "bob": Player("bob", "Bob")}
    room, _ = lobby.restore(record, rows, people, now=0.0)
    view = room.view()
    assert view.boards == past.replay(record, rows, {}).boards
    assert view.boards[-1] == board_text(view.position.cells)
    assert (view.position.placed, view.position.flipped) == changes(*view.boards[-2:])
