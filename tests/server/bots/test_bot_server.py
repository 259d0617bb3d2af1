"""Bots on a real server over real websockets: tokens, published limits, challenges, and games
played to the end (against another bot, against the AI, across a dropped connection)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from wsclient import Client

from clients.bot import RETRY_CODES, Backoff, BotCore, BotRunner, CreateSpec, RandomEngine
from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.bots.limits import BotLimits
from server.storage import SqlStore
from server.storage.memory import MemoryStore


@asynccontextmanager
async def bot_server(tmp_path: Path, **settings: Any) -> AsyncIterator[Running]:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(port=0, store=store,
                       settings=Settings(grace_seconds=5.0, **settings)) as srv:
        yield srv


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    async with bot_server(tmp_path) as srv:
        yield srv


async def new_bot(server: Running, name: str) -> str:
    """A bot account on the server's database; its token."""
    store = server.app.store
    assert isinstance(store, SqlStore)
    return (await Accounts(store.engine).create(name)).token


async def connect(server: Running, token: str, **hello: Any) -> Client:
    """A connection that said hello with ``token``; ``welcome`` is read unless refused."""
    client = await Client.open(server.url, hello=False)
    await client.send(type="hello", version=1, token=token, **hello)
    first = await client.recv()
    if first["type"] == "welcome":
        client.welcome = first
    else:
        client.seen.append({"refused": first})
    return client


async def closed_with(client: Client) -> int | None:
    """Read until the server closes the connection; its close code."""
    with pytest.raises(ConnectionClosed):
        while True:
            await client.recv(timeout=5)
    assert client.ws.close_code is not None
    return client.ws.close_code


async def play_out(client: Client, room: str, seat: int, seed: int = 0,
                   state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play random legal moves in ``room`` whenever ``seat`` is to move, starting from
    ``state`` (a ``room_state`` already read) if given; the ``game_over``. Like any bot
    (``clients.bot``), a move refused for the bots' move rate is sent again after the
    ``retry_after`` it names (``RETRY_CODES``): a whole game played at a loop's speed can pass
    the burst."""
    rng = random.Random(seed)
    sent: dict[str, Any] = {}
    while True:
        message = state or await client.recv(timeout=20)
        state = None
        about = message.get("room")
        if (about["id"] if isinstance(about, dict) else about) != room:
            continue
        if message["type"] == "game_over":
            return message
        if message["type"] == "room_state":
            position = message["room"]["position"]
        elif message["type"] == "move_made":
            position = message["position"]
        elif message["type"] == "error" and message["code"] in RETRY_CODES and sent:
            await asyncio.sleep(message["detail"]["retry_after"])
            await client.send(**sent)
            continue
        elif message["type"] == "error":
            raise AssertionError(f"refused: {message}")
        else:
            continue
        if position["to_move"] == seat and position["legal_moves"]:
            sent = dict(type="move", room=room, ply=position["ply"],
                        move=rng.choice(position["legal_moves"]))
            await client.send(**sent)


async def stored(server: Running, room: str) -> tuple[str, str | None, tuple[str | None, ...]]:
    loaded = await server.app.store.load_game(f"{room}-1")
    assert loaded is not None
    record = loaded[0]
    return record.status, record.reason, record.players


# --- tokens ------------------------------------------------------------------------------------


async def test_a_bot_token_makes_the_connection_that_bot_with_its_limits(server: Running) -> None:
    token = await new_bot(server, "Tokyo")
    bot = await connect(server, token, name="ignored")
    assert bot.welcome["player"]["name"] == "Tokyo"
    assert bot.welcome["limits"]["bot"] == BotLimits().published()
    guest = await Client.open(server.url, "Ann")
    assert guest.welcome["limits"]["bot"] is None


async def test_an_unknown_token_is_refused_with_bad_token_and_closed(server: Running) -> None:
    client = await connect(server, "discus_bot_not-a-token")
    assert client.seen[-1]["refused"]["code"] == "bad_token"
    assert await closed_with(client) == 1008


async def test_a_revoked_token_is_refused_with_revoked_token_and_closed(server: Running) -> None:
    token = await new_bot(server, "Gone")
    store = server.app.store
    assert isinstance(store, SqlStore)
    await Accounts(store.engine).revoke("Gone")
    client = await connect(server, token)
    assert client.seen[-1]["refused"]["code"] == "revoked_token"
    assert await closed_with(client) == 1008


async def test_a_server_without_a_database_refuses_every_token() -> None:
    async with running(port=0, store=MemoryStore()) as server:
        client = await connect(server, "discus_bot_anything")
        assert client.seen[-1]["refused"]["code"] == "bad_token"
        assert "no bot accounts" in client.seen[-1]["refused"]["message"]


async def test_a_bot_cannot_slip_past_its_token_with_a_resume_token(server: Running) -> None:
    token = await new_bot(server, "Sly")
    bot = await connect(server, token)
    sly = await Client.open(server.url, hello=False)
    answer = await sly.request("hello", version=1, resume=bot.welcome["resume"])
    assert answer["type"] == "error" and answer["code"] == "bad_resume_token"


async def test_connections_past_the_published_limit_are_refused_and_earlier_ones_kept(
    server: Running,
) -> None:
    token = await new_bot(server, "Twin")
    allowed = BotLimits().connections_per_token
    kept = [await connect(server, token) for _ in range(allowed)]
    assert all(c.welcome for c in kept)
    extra = await connect(server, token)
    refused = extra.seen[-1]["refused"]
    assert refused["code"] == "limit_exceeded"
    assert refused["detail"] == {"limit": "connections_per_token", "allowed": allowed,
                                 "retry_after": None}
    assert await closed_with(extra) == 1008
    for client in kept:  # never kicked
        assert await client.request("ping", id="still") == {"type": "pong", "id": "still"}
    await kept[0].close()
    await asyncio.sleep(0.05)
    again = await connect(server, token)  # a place is free again
    assert again.welcome["player"]["id"] == kept[1].player_id


async def test_people_see_which_player_is_a_bot_live_and_in_the_history(
    server: Running,
) -> None:
    bot = await connect(server, await new_bot(server, "Botty"))
    assert bot.welcome["player"]["bot"] is True
    await bot.send(type="create_room", game="connect4", opponent={"kind": "open"}, seat=0)
    room = (await bot.expect("room_state"))["room"]["id"]
    ann = await Client.open(server.url, "Ann")
    assert ann.welcome["player"]["bot"] is False
    await ann.send(type="join_room", room=room)
    seats = (await ann.expect("room_state"))["room"]["seats"]
    assert [(s["player"]["name"], s["player"]["bot"]) for s in seats] == [
        ("Botty", True), ("Ann", False)]
    await bot.send(type="resign", room=room)
    await ann.expect("game_over", room=room)
    await ann.send(type="list_history")
    (past,) = (await ann.expect("history"))["games"]
    assert [s["player"]["bot"] for s in past["seats"]] == [True, False]
    # Once the bot is forgotten here (as after a restart), the stored account still says so.
    await bot.close()
    server.app.identity.forget(bot.welcome["player"]["id"])
    await ann.send(type="list_history")
    (past,) = (await ann.expect("history"))["games"]
    assert [(s["player"]["name"], s["player"]["bot"]) for s in past["seats"]] == [
        ("Botty", True), ("Ann", False)]


# --- limits ------------------------------------------------------------------------------------


async def test_moves_past_the_burst_are_refused_with_retry_after_and_pass_after_it(
    tmp_path: Path,
) -> None:
    limits = BotLimits(moves_per_minute=120, move_burst=2)
    async with bot_server(tmp_path, bots=limits) as server:
        bot = await connect(server, await new_bot(server, "Hasty"))
        await bot.send(type="create_room", game="connect4",
                       opponent={"kind": "ai", "level": "beginner"}, seat=0)
        room = (await bot.expect("room_state"))["room"]["id"]
        for ply in (0, 2):  # the burst; the AI answers each at once (no worker pool)
            await bot.send(type="move", room=room, ply=ply, move="1")
            await bot.expect("move_made", ply=ply + 1)
        await bot.send(type="move", room=room, ply=4, move="1", id="third")
        refused = await bot.expect("error")
        assert refused["code"] == "limit_exceeded" and refused["ref"] == "third"
        detail = refused["detail"]
        assert detail["limit"] == "moves_per_minute" and detail["allowed"] == 120
        assert 0 < detail["retry_after"] <= 0.5  # 2 moves a second
        await asyncio.sleep(detail["retry_after"])
        await bot.send(type="move", room=room, ply=4, move="1")
        made = await bot.expect("move_made", ply=4)
        assert made["seat"] == 0


async def test_games_past_the_concurrent_limit_are_refused_until_one_ends(
    tmp_path: Path,
) -> None:
    async with bot_server(tmp_path, bots=BotLimits(concurrent_games=2)) as server:
        bot = await connect(server, await new_bot(server, "Busy"))
        rooms = []
        for _ in range(2):
            await bot.send(type="create_room", game="othello",
                           opponent={"kind": "ai", "level": "beginner"}, seat=0)
            rooms.append((await bot.expect("room_state"))["room"]["id"])
        await bot.send(type="create_room", game="othello", opponent={"kind": "open"})
        refused = await bot.expect("error")
        assert refused["code"] == "limit_exceeded"
        assert refused["detail"] == {"limit": "concurrent_games", "allowed": 2,
                                     "retry_after": None}
        guest = await Client.open(server.url, "Ann")
        await guest.send(type="create_room", game="othello", opponent={"kind": "open"})
        waiting = (await guest.expect("room_state"))["room"]["id"]
        await bot.send(type="join_room", room=waiting)
        assert (await bot.expect("error"))["detail"]["limit"] == "concurrent_games"
        await bot.send(type="resign", room=rooms[0])
        await bot.expect("game_over", room=rooms[0])
        await bot.send(type="join_room", room=waiting)
        joined = await bot.expect("room_state")
        assert joined["room"]["id"] == waiting and joined["room"]["status"] == "active"
        await bot.send(type="offer_rematch", room=rooms[0])  # a new game, one too many
        assert (await bot.expect("error"))["detail"]["limit"] == "concurrent_games"


async def test_a_bot_plays_a_whole_game_against_the_ai_as_its_account(server: Running) -> None:
    core = BotCore(token=await new_bot(server, "Solo"),
                   create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    (game,) = await asyncio.wait_for(BotRunner(server.url, core, RandomEngine()).run(), 60)
    assert game.result is not None and game.result.reason == "end"
    status, reason, players = await stored(server, game.room)
    assert status == "finished" and reason == "end"
    assert core.player_id in players and None in players  # the bot's account and the AI


# --- challenges --------------------------------------------------------------------------------


async def test_two_bots_play_a_whole_game_through_a_challenge(server: Running) -> None:
    challenger = await connect(server, await new_bot(server, "Alpha"))
    accepter = BotCore(token=await new_bot(server, "Beta"), stop_after=1)
    runner = asyncio.create_task(BotRunner(server.url, accepter, RandomEngine()).run())
    while not accepter.synced:
        await asyncio.sleep(0.01)
    await challenger.send(type="challenge", player="Beta", game="connect4", seat=0)
    sent = await challenger.expect("challenge_sent")
    assert sent["to"]["name"] == "Beta" and sent["seat"] == 0 and sent["game"] == "connect4"
    state = await challenger.expect("room_state")
    room = state["room"]["id"]
    assert state["you"] == 0 and state["room"]["status"] == "active"
    assert state["room"]["seats"][1]["player"]["name"] == "Beta"
    over = await play_out(challenger, room, 0, state=state)
    (theirs,) = await asyncio.wait_for(runner, 30)
    assert theirs.room == room and theirs.seat == 1
    assert theirs.result is not None and theirs.result.model_dump() == over["result"]
    assert over["result"]["reason"] == "end"
    status, reason, players = await stored(server, room)
    assert status == "finished" and reason == "end"
    assert players == (challenger.player_id, accepter.player_id)


async def test_a_challenge_waits_for_an_offline_bot_and_comes_after_its_room_states(
    server: Running,
) -> None:
    token = await new_bot(server, "Sleepy")
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="challenge", player="Sleepy", game="othello", seat=None)
    sent = await ann.expect("challenge_sent")
    bot = await connect(server, token)
    offer = await bot.expect("challenge")
    assert offer["challenge"] == sent["challenge"] and offer["seat"] == 1 - sent["seat"]
    assert offer["challenger"] == {"id": ann.player_id, "name": "Ann", "bot": False}
    await bot.send(type="create_room", game="connect4",
                   opponent={"kind": "ai", "level": "beginner"}, seat=0)
    room = (await bot.expect("room_state"))["room"]["id"]
    await bot.close()
    again = await connect(server, token)  # the token alone brings both back, in order
    kinds = [(await again.recv())["type"] for _ in range(2)]
    assert kinds == ["room_state", "challenge"]
    assert again.seen[-2]["room"]["id"] == room
    await again.send(type="decline_challenge", challenge=offer["challenge"], reason="busy")
    declined = await ann.expect("challenge_declined")
    assert declined["by"]["name"] == "Sleepy" and declined["reason"] == "busy"
    await again.send(type="accept_challenge", challenge=offer["challenge"])
    assert (await again.expect("error"))["code"] == "unknown_challenge"


async def test_challenging_nobody_is_refused_with_unknown_player(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    answer = await ann.request("challenge", player="Nobody", game="connect4")
    assert answer["code"] == "unknown_player"


async def test_the_reference_bot_accepts_a_challenge_only_while_it_wants_games(
    server: Running,
) -> None:
    core = BotCore(token=await new_bot(server, "Choosy"), games=1,
                   create=CreateSpec.parse("connect4/beginner"))
    runner = BotRunner(server.url, core, RandomEngine())
    task = asyncio.create_task(runner.run())
    while not core.rooms:  # busy with its one game against the AI
        await asyncio.sleep(0.01)
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="challenge", player="Choosy", game="connect4")
    declined = await ann.expect("challenge_declined")
    assert declined["reason"] == "busy"
    runner.stop()
    await asyncio.wait_for(task, 10)


# --- a dropped connection ------------------------------------------------------------------------


async def test_a_bot_dropped_mid_game_comes_back_by_token_alone_and_finishes(
    server: Running,
) -> None:
    token = await new_bot(server, "Phoenix")
    bot = await connect(server, token)
    await bot.send(type="create_room", game="connect4",
                   opponent={"kind": "ai", "level": "beginner"}, seat=0)
    room = (await bot.expect("room_state"))["room"]["id"]
    for ply in (0, 2):
        await bot.send(type="move", room=room, ply=ply, move="4")
        await bot.expect("move_made", ply=ply + 1)
    transport = bot.ws.transport
    assert transport is not None
    (seen_by_server,) = server.app.outbox.connections(bot.player_id)
    transport.abort()
    await seen_by_server.ws.wait_closed()  # the server knows it dropped
    back = await connect(server, token)  # no resume: the token is enough
    state = await back.expect("room_state")
    assert state["room"]["id"] == room and state["you"] == 0
    assert len(state["room"]["moves"]) == 4
    over = await play_out(back, room, 0, seed=1, state=state)
    assert over["result"]["reason"] == "end"
    status, reason, players = await stored(server, room)
    assert status == "finished" and reason == "end" and players[0] == back.player_id


class SlowRandom(RandomEngine):
    """Random moves with a pause, so the test can cut the connection mid-game."""

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        time.sleep(0.03)
        return super().choose(game, moves, legal, seed)


async def test_the_reference_bot_dropped_mid_game_finishes_it_as_its_account(
    server: Running,
) -> None:
    core = BotCore(token=await new_bot(server, "Lazarus"),
                   create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    task = asyncio.create_task(
        BotRunner(server.url, core, SlowRandom(), backoff=Backoff(first=0.05)).run())
    while not core.rooms or next(iter(core.rooms.values())).ply < 4:
        assert not task.done()
        await asyncio.sleep(0.01)
    first_id = core.player_id
    assert first_id is not None
    for client in list(server.app.outbox.connections(first_id)):
        transport = client.ws.transport
        assert transport is not None
        transport.abort()
    (game,) = await asyncio.wait_for(task, 60)
    assert core.connections >= 2 and core.player_id == first_id
    assert game.result is not None and game.result.reason == "end"
    status, reason, _ = await stored(server, game.room)
    assert status == "finished" and reason == "end"


async def test_the_reference_bot_outlives_a_server_restart_and_finishes_its_game(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(port=0, store=SqlStore(url)) as first:
        token = await new_bot(first, "Durable")
        port = first.port
        core = BotCore(token=token, create=CreateSpec.parse("connect4/beginner"), stop_after=1)
        task = asyncio.create_task(
            BotRunner(first.url, core, SlowRandom(), backoff=Backoff(first=0.05)).run())
        while not core.rooms or next(iter(core.rooms.values())).ply < 4:
            assert not task.done()
            await asyncio.sleep(0.01)
        room = next(iter(core.rooms))
    # The server is down (the bot's connection closed with 1001); the bot keeps trying.
    await asyncio.sleep(0.2)
    assert not task.done()
    async with running(port=port, store=SqlStore(url)) as second:
        (game,) = await asyncio.wait_for(task, 60)
        assert game.room == room and game.result is not None
        assert game.result.reason == "end"
        status, reason, _ = await stored(second, room)
        assert status == "finished" and reason == "end"
