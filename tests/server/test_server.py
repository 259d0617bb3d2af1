"""The server over real websockets on a loopback port: games, spectators, reconnects."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import re
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client, friends_game

from server.app import Running, Settings, running
from server.engines import AiPool
from server.storage.memory import MemoryStore

VERTICAL_WIN = ["1", "2", "1", "2", "1", "2", "1"]


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(port=0, store=MemoryStore(), settings=Settings(grace_seconds=0.5)) as srv:
        yield srv


async def two_players(server: Running) -> tuple[Client, Client, str]:
    return await friends_game(server.url)


async def move(client: Client, room: str, ply: int, text: str) -> dict:
    await client.send(type="move", room=room, ply=ply, move=text)
    return await client.expect("move_made", ply=ply)


def http_get(port: int, path: str) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path)
    response = conn.getresponse()
    return response.status, response.getheader("Content-Type") or "", response.read()


async def test_the_page_and_its_files_are_served_on_the_websocket_port(server: Running) -> None:
    status, kind, body = await asyncio.to_thread(http_get, server.port, "/")
    assert status == 200 and kind.startswith("text/html") and b"<html" in body.lower()
    status, kind, _ = await asyncio.to_thread(http_get, server.port, "/net.js")
    assert status == 200 and "javascript" in kind
    status, _, _ = await asyncio.to_thread(http_get, server.port, "/../server/app.py")
    assert status == 404
    status, _, _ = await asyncio.to_thread(http_get, server.port, "/nothing-here.txt")
    assert status == 404


async def test_the_favicon_and_the_admin_page_with_a_trailing_slash_are_found(
    server: Running,
) -> None:
    status, kind, body = await asyncio.to_thread(http_get, server.port, "/favicon.ico")
    assert status == 200 and kind.startswith("image/svg+xml") and b"<svg" in body
    status, _, _ = await asyncio.to_thread(http_get, server.port, "/favicon.svg")
    assert status == 200
    status, _, _ = await asyncio.to_thread(http_get, server.port, "/admin/")
    assert status == 301, "its files are relative to /admin, so it is sent there"

    def follow(url: str) -> tuple[int, str, bytes]:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.url, answer.read()

    status, url, body = await asyncio.to_thread(follow, f"http://127.0.0.1:{server.port}/admin/")
    assert status == 200 and url.endswith("/admin") and b"admin.js" in body


async def test_healthz_answers_ok_for_a_container_healthcheck(server: Running) -> None:
    status, kind, body = await asyncio.to_thread(http_get, server.port, "/healthz")
    assert (status, body) == (200, b"ok\n") and kind.startswith("text/plain")


async def test_hello_is_answered_with_limits_games_and_levels(server: Running) -> None:
    client = await Client.open(server.url, "Ann")
    welcome = client.welcome
    assert welcome["version"] == 1 and welcome["player"]["name"] == "Ann"
    assert welcome["limits"]["max_message_bytes"] == 4096
    assert {g["name"] for g in welcome["games"]} == {"connect4", "othello"}
    for game in welcome["games"]:
        assert len(game["levels"]) >= 5
    assert len(welcome["resume"]) >= 24


async def test_a_full_game_between_two_clients_with_a_spectator(server: Running) -> None:
    ann, bob, room = await two_players(server)
    watcher = await Client.open(server.url, "Cy")
    await watcher.send(type="spectate", room=room)
    assert (await watcher.expect("room_state"))["you"] is None
    players = [ann, bob]
    for ply, text in enumerate(VERTICAL_WIN):
        made = await move(players[ply % 2], room, ply, text)
        assert made["seat"] == ply % 2 and made["position"]["ply"] == ply + 1
        other = await players[1 - ply % 2].expect("move_made", ply=ply)
        assert other == made
    for client in (ann, bob, watcher):
        over = await client.expect("game_over")
        assert over["result"] == {"winner": 0, "score": 18, "reason": "end"}
    # The watcher saw every move, in order.
    assert [m["move"] for m in watcher.seen if m["type"] == "move_made"] == VERTICAL_WIN
    record = await server.app.store.load_game(server.app.lobby.room(room).game_id)
    assert record is not None
    assert [m.move for m in record[1]] == VERTICAL_WIN and record[0].status == "finished"


async def test_a_move_is_stored_before_anyone_hears_of_it(server: Running) -> None:
    ann, bob, room = await two_players(server)
    await ann.send(type="move", room=room, ply=0, move="4")
    await bob.expect("move_made", ply=0)
    stored = await server.app.store.load_game(server.app.lobby.room(room).game_id)
    assert stored is not None and [m.move for m in stored[1]] == ["4"]


async def test_a_game_against_the_ai_is_played_to_the_end(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="create_room", game="connect4",
                   opponent={"kind": "ai", "level": "beginner"}, seat=0)
    state = (await ann.expect("room_state"))["room"]
    room = state["id"]
    position = state["position"]
    while True:
        ply = position["ply"]
        await ann.send(type="move", room=room, ply=ply, move=position["legal_moves"][0])
        made = await ann.expect("move_made", ply=ply)
        if made["status"] == "finished":
            break
        reply = await ann.expect("move_made", ply=ply + 1)
        assert reply["seat"] == 1
        position = reply["position"]
        if reply["status"] == "finished":
            break
    over = await ann.expect("game_over")
    assert over["result"]["reason"] == "end"


async def test_a_player_who_drops_comes_back_with_the_resume_token(server: Running) -> None:
    ann, bob, room = await two_players(server)
    await move(ann, room, 0, "4")
    await bob.expect("move_made", ply=0)
    token = bob.welcome["resume"]
    await bob.close()
    away = await ann.expect("room_event", event="disconnected")
    assert away["seat"] == 1 and away["seats"][1]["connected"] is False
    back = await Client.open(server.url, resume=token)
    assert back.player_id == bob.player_id
    state = await back.expect("room_state")
    assert back.seen[0]["type"] == "welcome" and back.seen[1] is state  # full state first
    assert state["you"] == 1 and state["room"]["moves"] == ["4"]
    await ann.expect("room_event", event="reconnected")
    made = await move(back, room, 1, "4")
    assert made["seat"] == 1


async def test_hello_with_resume_and_a_new_name_renames_the_player_and_keeps_its_games(
    server: Running,
) -> None:
    ann, bob, room = await two_players(server)
    for ply, text in enumerate(VERTICAL_WIN):
        await move([ann, bob][ply % 2], room, ply, text)
    await ann.expect("game_over")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    waiting = (await ann.expect("room_state"))["room"]["id"]
    await ann.close()

    annie = await Client.open(server.url, "Annie", resume=ann.welcome["resume"])
    assert annie.welcome["player"] == {**ann.welcome["player"], "name": "Annie"}
    await annie.send(type="list_history")
    [past] = (await annie.expect("history"))["games"]
    assert past["seats"][0]["player"]["name"] == "Annie"
    cy = await Client.open(server.url, "Cy")
    await cy.send(type="join_room", room=waiting)
    seats = (await cy.expect("room_state"))["room"]["seats"]
    assert seats[0]["player"] == {"id": ann.player_id, "name": "Annie", "bot": False}
    again = await Client.open(server.url, "Annie", resume=ann.welcome["resume"])
    assert again.welcome["player"]["name"] == "Annie"


async def test_after_the_grace_period_the_opponent_may_claim_the_game(server: Running) -> None:
    ann, bob, room = await two_players(server)
    await move(ann, room, 0, "4")
    await move(bob, room, 1, "4")
    await bob.close()
    await ann.expect("room_event", event="disconnected")
    early = await ann.request("claim", room=room)
    assert early["code"] == "cannot_claim" and early["detail"]["retry_after"] > 0
    await asyncio.sleep(0.6)
    await ann.send(type="claim", room=room)
    over = await ann.expect("game_over")
    assert over["result"] == {"winner": 0, "score": None, "reason": "abandoned"}


async def test_open_rooms_are_listed_and_can_be_joined(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="create_room", game="othello", opponent={"kind": "open"}, seat=1)
    room = (await ann.expect("room_state"))["room"]["id"]
    bob = await Client.open(server.url, "Bob")
    rooms = await bob.request("list_rooms")
    assert [r["id"] for r in rooms["rooms"]] == [room]
    await bob.send(type="join_room", room=room)
    state = await bob.expect("room_state")
    assert state["you"] == 0 and state["room"]["status"] == "active"
    assert state["room"]["position"]["legal_moves"] == ["d3", "c4", "f5", "e6"]


async def test_room_codes_have_no_look_alikes_and_are_joined_in_any_case(server: Running
                                                                         ) -> None:
    ann = await Client.open(server.url, "Ann")
    codes = set()
    for _ in range(5):
        await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
        code = (await ann.expect("room_state"))["room"]["id"]
        assert re.fullmatch(r"[2-9A-HJKMNP-Z]{8}", code), code
        codes.add(code)
    assert len(codes) == 5
    bob = await Client.open(server.url, "Bob")
    await bob.send(type="join_room", room=f" {code.lower()} ")
    state = await bob.expect("room_state")
    assert state["room"]["id"] == code and state["you"] == 1


async def test_a_rematch_swaps_colours(server: Running) -> None:
    ann, bob, room = await two_players(server)
    await ann.send(type="resign", room=room)
    await bob.expect("game_over")
    await ann.send(type="offer_rematch", room=room)
    await bob.expect("room_event", event="rematch_offered")
    await bob.send(type="accept_rematch", room=room)
    assert (await ann.expect("room_state"))["you"] == 1
    state = await bob.expect("room_state")
    assert state["you"] == 0 and state["room"]["round"] == 2


@contextlib.asynccontextmanager
async def ai_opens(search: str, evaluation: bool = True, account: bool = False
                   ) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    """A server whose one AI worker runs ``scripted_engines.<search>``, and a person (a guest,
    or with ``account`` an account: its games are rated) in a Connect Four room against its
    easy level, the AI to open, the engine's ``evaluation`` asked for or not: the person, and
    the AI's first ``move_made``."""
    pool = AiPool(processes=1, games=("connect4",), search=f"scripted_engines:{search}",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as srv:
            srv.app.accounts.hasher = CHEAP_HASHER
            ann = await Client.open(srv.url, "Ann")
            if account:
                await sign_up(ann, "Ann")
            await ann.send(type="create_room", game="connect4", seat=1, opponent={
                "kind": "ai", "level": "easy", "evaluation": evaluation})
            yield ann, await ann.expect("move_made", ply=0, timeout=30)
    finally:
        await pool.close()


@pytest.mark.slow
async def test_a_quick_search_is_shown_by_its_last_iteration_with_its_move() -> None:
    """The scripted engine finishes three iterations in a few milliseconds: no ai_thinking,
    and the move's thought is the last iteration (depth 3) with the score of the move played."""
    async with ai_opens("steady") as (ann, made):
        assert not [m for m in ann.seen if m["type"] == "ai_thinking"]
        # The last column scores +3, each column to its left one less.
        assert made["thought"]["depth"] == 3
        assert made["thought"]["score"] == 3 - (7 - int(made["move"]))
        assert made["thought"]["win_in"] is None and made["thought"]["exact"] is False
        await ann.send(type="move", room=made["room"], ply=1, move="1")
        mine = await ann.expect("move_made", ply=1)
        assert mine["thought"] is None  # a person's move


@pytest.mark.slow
async def test_a_long_search_streams_its_thinking_before_its_move() -> None:
    async with ai_opens("unhurried") as (ann, made):
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["ply"] == 0 for m in thinking)
        assert max(m["depth"] for m in thinking) <= made["thought"]["depth"] == 8


@pytest.mark.slow
async def test_a_rated_game_shows_the_engine_thinking_but_never_its_evaluation() -> None:
    async with ai_opens("unhurried", evaluation=False, account=True) as (ann, made):
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["depth"] >= 1 for m in thinking)
        for thought in [*thinking, made["thought"]]:
            assert (thought["score"], thought["win_in"], thought["exact"]) == (None, None, False)
        # An account's games against the computer are rated: it cannot ask for it.
        await ann.send(type="create_room", game="connect4", seat=1, id="e", opponent={
            "kind": "ai", "level": "easy", "evaluation": True})
        error = await ann.expect("error")
        assert (error["code"], error["ref"]) == ("forbidden", "e")


@pytest.mark.slow
async def test_a_casual_game_shows_the_evaluation_only_when_asked_for() -> None:
    async with ai_opens("unhurried", evaluation=False) as (ann, made):
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["score"] is None for m in thinking)
        assert made["thought"]["score"] is None
    async with ai_opens("unhurried", evaluation=True) as (ann, made):
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["score"] == 0 for m in thinking)
        assert made["thought"]["score"] == 0
        # Signing up while seated makes the game rated: no evaluation from then on.
        ann.seen.clear()
        await sign_up(ann, "Ann")
        await ann.send(type="move", room=made["room"], ply=1, move="1")
        reply = await ann.expect("move_made", ply=2, timeout=30)
        thinking = [m for m in ann.seen if m["type"] == "ai_thinking"]
        assert thinking and all(m["score"] is None for m in thinking)
        assert reply["thought"]["score"] is None


@pytest.mark.slow
async def test_games_against_the_real_engines_in_a_worker_show_what_they_saw() -> None:
    pool = AiPool(processes=1, games=("connect4", "othello"))
    await pool.start(wait_ready=True, timeout=120)
    async with running(port=0, store=MemoryStore(), pool=pool) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="connect4",
                       opponent={"kind": "ai", "level": "easy"}, seat=1)
        state = await ann.expect("room_state")
        assert state["you"] == 1 and state["room"]["ai_thinking"] is True
        opening = await ann.expect("move_made", ply=0)
        assert opening["thought"]["depth"] >= 1
        position = opening["position"]
        while True:
            ply = position["ply"]
            await ann.send(type="move", room=state["room"]["id"], ply=ply,
                           move=position["legal_moves"][-1])
            made = await ann.expect("move_made", ply=ply)
            if made["status"] == "finished":
                break
            reply = await ann.expect("move_made", ply=ply + 1, timeout=10)
            position = reply["position"]
            if reply["status"] == "finished":
                break
        over = await ann.expect("game_over")
        # Always dropping in the last column loses to an AI that sees simple threats.
        assert over["result"]["winner"] == 0 and over["result"]["reason"] == "end"
        game_id = server.app.lobby.room(state["room"]["id"]).game_id
        stored = await server.app.store.load_game(game_id)
        assert stored is not None
        ai_moves = [m for m in stored[1] if m.seat == 0]
        assert ai_moves and all(m.ai_depth is not None and m.ai_depth >= 1 for m in ai_moves)
        # The Othello engine opens as Black with one of the four legal first moves.
        await ann.send(type="create_room", game="othello",
                       opponent={"kind": "ai", "level": "beginner"}, seat=1)
        opening = await ann.expect("move_made", ply=0, timeout=10)
        assert opening["seat"] == 0 and opening["move"] in {"d3", "c4", "f5", "e6"}
        assert pool.snapshot().fallbacks == 0


async def test_replaced_levels_are_offered_and_used_without_a_restart(server: Running) -> None:
    import dataclasses

    from ai.levels import DEFAULT_LEVELS

    novice = dataclasses.replace(DEFAULT_LEVELS["connect4"][0], name="novice")
    server.app.levels.set({**DEFAULT_LEVELS, "connect4": (novice,)})
    client = await Client.open(server.url)
    connect4 = next(g for g in client.welcome["games"] if g["name"] == "connect4")
    assert [lv["name"] for lv in connect4["levels"]] == ["novice"]
    await client.send(type="create_room", game="connect4",
                      opponent={"kind": "ai", "level": "beginner"})
    assert (await client.expect("error"))["code"] == "unknown_level"
    await client.send(type="create_room", game="connect4",
                      opponent={"kind": "ai", "level": "novice"}, seat=1)
    assert (await client.expect("move_made", ply=0))["seat"] == 0


async def test_a_quick_ai_reply_is_shown_no_sooner_than_the_minimum_after_the_persons_move(
) -> None:
    delay = 0.3
    async with running(settings=Settings(min_ai_move_seconds=delay)) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="connect4", seat=0,
                       opponent={"kind": "ai", "level": "beginner"})
        room = (await ann.expect("room_state"))["room"]["id"]
        loop = asyncio.get_running_loop()
        for ply, column in ((0, "4"), (2, "3")):
            await ann.send(type="move", room=room, ply=ply, move=column)
            await ann.expect("move_made", ply=ply)
            mine = loop.time()
            await ann.expect("move_made", ply=ply + 1)  # the quick move: milliseconds
            assert loop.time() - mine >= delay - 0.02
        await ann.close()
