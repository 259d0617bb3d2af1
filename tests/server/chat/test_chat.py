"""Chat over real websockets: a game's players and spectators each in their own channel,
stored with the game (SQLite and PostgreSQL), the lobby for accounts, the limits, and an
admin deleting a line and silencing a player."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
import redis.asyncio as aioredis
from people import CHEAP_HASHER, sign_up
from wsclient import Client, friends_game

from server.admin.tokens import Admins
from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.cluster.cluster import Cluster
from server.storage import SqlStore
from tests.server.cluster.conftest import FAST, SECRET
from tests.server.storage.conftest import REDIS_URL, create_database, drop_database

HTML = '<img src=x onerror="alert(1)">'


@pytest.fixture
async def sqlite_server(tmp_path: Any) -> AsyncIterator[Running]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(port=0, store=SqlStore(url)) as server:
        server.app.accounts.hasher = CHEAP_HASHER
        yield server


async def opened(client: Client, game_id: str | None) -> dict[str, Any]:
    await client.send(type="get_chat", game_id=game_id)
    return await client.expect("chat_history", game_id=game_id)


async def said(client: Client, game_id: str | None, text: str) -> dict[str, Any]:
    """``client`` says ``text``; the line as it came back to it."""
    await client.send(type="chat", game_id=game_id, text=text)
    return (await client.expect("chat_line"))["line"]


async def refused(client: Client, **message: Any) -> dict[str, Any]:
    await client.send(**message)
    return await client.expect("error")


async def nothing_more(client: Client, kind: str, within: float = 0.3) -> None:
    with pytest.raises(TimeoutError):
        await client.expect(kind, timeout=within)


async def test_players_and_spectators_each_talk_in_their_own_channel_kept_with_the_game(
    database_url: str,
) -> None:
    async with running(port=0, store=SqlStore(database_url)) as server:
        ann, bob, room = await friends_game(server.url)
        eve = await Client.open(server.url, "Eve")
        await eve.send(type="spectate", room=room)
        await eve.expect("room_state")
        game = f"{room}-1"
        assert (await opened(ann, game))["channel"] == "players"
        assert (await opened(bob, game))["channel"] == "players"
        assert (await opened(eve, game))["channel"] == "spectators"

        line = await said(ann, game, "good luck " + HTML)
        assert line["channel"] == "players" and line["text"] == "good luck " + HTML
        assert (await bob.expect("chat_line"))["line"] == line
        await said(eve, game, "Ann is winning")
        await nothing_more(eve, "chat_line")  # Ann's line is not for spectators
        await nothing_more(ann, "chat_line")  # nor Eve's for the players
        await nothing_more(bob, "chat_line")

        await ann.send(type="resign", room=room)
        await ann.expect("game_over")
        # Afterwards the replay shows a player both chats, anyone else the spectators'.
        await ann.send(type="get_game", game_id=game)
        mine = (await ann.expect("game_record"))["record"]["chat"]
        assert [(c["player"]["name"], c["text"]) for c in mine] == [
            ("Ann", "good luck " + HTML), ("Eve", "Ann is winning")]
        await eve.send(type="get_game", game_id=game)
        theirs = (await eve.expect("game_record"))["record"]["chat"]
        assert [c["text"] for c in theirs] == ["Ann is winning"]
        for client in (ann, bob, eve):
            await client.close()
    async with running(port=0, store=SqlStore(database_url)) as server:  # stored for good
        late = await Client.open(server.url, "Late")
        history = await opened(late, game)
        assert [c["text"] for c in history["lines"]] == ["Ann is winning"]
        await late.close()


async def test_a_spectator_who_takes_the_seat_talks_with_the_players_once_it_opens_again(
    sqlite_server: Running,
) -> None:
    ann = await Client.open(sqlite_server.url, "Ann")
    bob = await Client.open(sqlite_server.url, "Bob")
    eve = await Client.open(sqlite_server.url, "Eve")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "open"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    game = f"{room}-1"
    for watcher in (bob, eve):
        await watcher.send(type="spectate", room=room)
        await watcher.expect("room_state")
        assert (await opened(watcher, game))["channel"] == "spectators"
    await opened(ann, game)
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    assert (await opened(bob, game))["channel"] == "players"
    await said(eve, game, "only spectators hear this")
    await said(ann, game, "welcome, Bob")
    assert (await bob.expect("chat_line"))["line"]["text"] == "welcome, Bob"
    await nothing_more(eve, "chat_line")
    for client in (ann, bob, eve):
        await client.close()


async def test_a_line_too_long_empty_or_too_fast_is_refused_and_not_stored(
    sqlite_server: Running,
) -> None:
    ann, bob, room = await friends_game(sqlite_server.url)
    game = f"{room}-1"
    assert (await refused(ann, type="chat", game_id=game, text="hi"))["code"] == "not_in_room"
    limits = ann.welcome["limits"]["chat"]
    assert limits == {"max_chars": 300, "lines": 5, "window_seconds": 10.0,
                      "guests_in_lobby": False, "lines_per_source": 15,
                      "after_game_seconds": 120.0}
    await opened(ann, game)
    await opened(bob, game)
    long = await refused(ann, type="chat", game_id=game, text="x" * 301)
    assert (long["code"], long["detail"]["field"]) == ("bad_message", "text")
    empty = await refused(ann, type="chat", game_id=game, text=" \n\t ")
    assert empty["code"] == "bad_message"
    await said(ann, game, "  " + "y" * 300 + "\n")  # trimmed to the limit: fine
    for n in range(4):
        await said(ann, game, f"line {n}")
    fast = await refused(ann, type="chat", game_id=game, text="one too many")
    assert fast["code"] == "rate_limited" and 0 < fast["detail"]["retry_after"] <= 10
    history = await opened(bob, game)
    assert [c["text"] for c in history["lines"]] == ["y" * 300] + [f"line {n}" for n in range(4)]
    await said(bob, game, "Bob has his own allowance")
    await ann.close()
    await bob.close()


async def test_guests_read_the_lobby_chat_and_only_accounts_write_in_it(
    sqlite_server: Running,
) -> None:
    guest = await Client.open(sqlite_server.url, "Guest")
    member = await Client.open(sqlite_server.url, "someone")
    await sign_up(member, "Mia")
    await opened(guest, None)
    await opened(member, None)
    denied = await refused(guest, type="chat", game_id=None, text="hello all")
    assert denied["code"] == "not_signed_in"
    line = await said(member, None, "hello lobby")
    assert (line["channel"], line["game_id"], line["player"]["name"]) == ("lobby", None, "Mia")
    assert (await guest.expect("chat_line"))["line"]["text"] == "hello lobby"
    assert [c["text"] for c in (await opened(guest, None))["lines"]] == ["hello lobby"]
    engine = sqlite_server.app.admin.engine
    assert engine is not None
    robo = await Client.open(sqlite_server.url, hello=False)  # bots write in the lobby too
    await robo.send(type="hello", version=1, token=(await Accounts(engine).create("Robo")).token)
    await robo.expect("welcome")
    await opened(robo, None)
    assert (await said(robo, None, "beep"))["player"]["bot"] is True
    history = (await opened(guest, None))["lines"]
    assert [(c["player"]["name"], c["player"]["bot"]) for c in history] == [
        ("Mia", False), ("Robo", True)]
    for client in (guest, member, robo):
        await client.close()


async def test_the_admin_switch_lets_guests_write_in_the_lobby() -> None:
    async with running(port=0, settings=Settings(chat_guests_in_lobby=True)) as server:
        guest = await Client.open(server.url, "Guest")
        await opened(guest, None)
        assert (await said(guest, None, "hi"))["player"]["name"] == "Guest"
        await guest.close()


async def test_the_lobby_keeps_only_its_newest_lines(database_url: str) -> None:
    settings = Settings(lobby_chat_kept=3, chat_lines=10, chat_guests_in_lobby=True)
    async with running(port=0, store=SqlStore(database_url), settings=settings) as server:
        ann, bob, room = await friends_game(server.url)
        await opened(ann, f"{room}-1")
        await said(ann, f"{room}-1", "a game's line stays")
        await opened(ann, None)
        for n in range(6):
            await said(ann, None, f"lobby {n}")
        assert [c["text"] for c in (await opened(bob, None))["lines"]] == [
            "lobby 3", "lobby 4", "lobby 5"]
        assert [c["text"] for c in (await opened(bob, f"{room}-1"))["lines"]] == [
            "a game's line stays"]
        await ann.close()
        await bob.close()


async def test_an_admin_deletes_a_line_for_everyone_and_silences_a_player_for_a_time(
    tmp_path: Any,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    store = SqlStore(url)
    async with running(port=0, store=store) as server:
        _, token = await Admins(store.engine).create("Root")
        ann, bob, room = await friends_game(server.url)
        eve = await Client.open(server.url, "Eve")
        game = f"{room}-1"
        for client in (ann, bob, eve):
            await opened(client, game)
        line = await said(ann, game, "something rude")
        await bob.expect("chat_line")
        kept = await said(eve, game, "a fair remark")
        forbidden = await refused(bob, type="admin_delete_chat", line=line["id"])
        assert forbidden["code"] == "forbidden"
        admin = await Client.open(server.url, "admin page")
        assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"
        both = await opened(admin, game)  # an admin reads both channels
        assert [c["id"] for c in both["lines"]] == [line["id"], kept["id"]]

        await admin.send(type="admin_delete_chat", line=line["id"])
        for client in (ann, bob, admin):
            gone = await client.expect("chat_deleted")
            assert gone == {"type": "chat_deleted", "line": line["id"], "game_id": game}
        await nothing_more(eve, "chat_deleted")  # a spectator never had it
        assert (await opened(bob, game))["lines"] == []
        again = await refused(admin, type="admin_delete_chat", line=line["id"])
        assert again["code"] == "unknown_chat_line"

        await admin.send(type="admin_silence_chat", player=ann.player_id, seconds=600)
        silenced = await admin.expect("chat_silenced")
        assert silenced["until"] > server.app.runner.now() + 590
        quiet = await refused(ann, type="chat", game_id=game, text="why?")
        assert quiet["code"] == "silenced" and quiet["detail"]["until"] == silenced["until"]
        await nothing_more(bob, "chat_line")
        assert (await opened(bob, game))["lines"] == []
        unknown = await refused(admin, type="admin_silence_chat", player="nobody", seconds=5)
        assert unknown["code"] == "unknown_player"
        await admin.send(type="admin_silence_chat", player=ann.player_id, seconds=0)
        assert (await admin.expect("chat_silenced"))["until"] is None
        await said(ann, game, "sorry")
        for client in (ann, bob, eve, admin):
            await client.close()


@pytest.fixture
async def two_nodes() -> AsyncIterator[tuple[Running, Running]]:
    """Two nodes of a cluster in this process, on one PostgreSQL database and one Redis."""
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    url, name = await create_database()
    try:
        async with AsyncExitStack() as stack:
            started = [await stack.enter_async_context(running(
                store=SqlStore(url), secret=SECRET,
                cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST))) for _ in range(2)]
            yield started[0], started[1]
    finally:
        await drop_database(name)
        redis = aioredis.Redis.from_url(REDIS_URL)
        names = [k async for k in redis.scan_iter(match=f"{prefix}:*", count=500)]
        if names:
            await redis.delete(*names)
        await redis.aclose()


async def test_a_games_chat_and_the_lobby_reach_people_on_both_nodes_of_a_cluster(
    two_nodes: tuple[Running, Running],
) -> None:
    one, two = two_nodes
    for node in two_nodes:
        node.app.accounts.hasher = CHEAP_HASHER
    ann = await Client.open(one.url, "Ann")  # the room runs on node one
    bob = await Client.open(two.url, "Bob")
    eve = await Client.open(two.url, "Eve")
    sam = await Client.open(one.url, "Sam")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    game = f"{room}-1"
    for client in (ann, bob, eve, sam):
        await opened(client, game)
    line = await said(bob, game, "hello from node two")
    assert (await ann.expect("chat_line"))["line"] == line
    watching = await said(sam, game, "hello from node one")
    assert (await eve.expect("chat_line"))["line"] == watching
    await nothing_more(ann, "chat_line")
    await nothing_more(bob, "chat_line")

    await sign_up(bob, "Bobby")
    for client in (ann, bob):
        await opened(client, None)
    lobby = await said(bob, None, "anyone for a game?")
    assert (await ann.expect("chat_line"))["line"] == lobby
    await ann.close()  # node one listens to the lobby no more; node two still does
    await eve.close()
    assert one.app.admin.engine is not None
    admin_token = (await Admins(one.app.admin.engine).create("Root"))[1]
    admin = await Client.open(one.url, "admin page")
    assert (await admin.request("admin_login", token=admin_token))["type"] == "admin_welcome"
    await admin.send(type="admin_delete_chat", line=lobby["id"])
    assert (await bob.expect("chat_deleted"))["line"] == lobby["id"]
    assert (await admin.expect("chat_deleted"))["line"] == lobby["id"]
    for client in (bob, sam, admin):
        await client.close()


async def test_an_admin_deleting_a_line_id_past_64_bits_gets_bad_message_not_a_failure(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    async with running(port=0, store=store) as server:
        _, token = await Admins(store.engine).create("Root")
        admin = await Client.open(server.url, "admin page")
        assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"
        for line in (2**63, 2**64 + 1):
            error = await refused(admin, type="admin_delete_chat", line=line)
            assert error["code"] == "bad_message" and error["detail"]["field"] == "line"
        largest = await refused(admin, type="admin_delete_chat", line=2**63 - 1)
        assert largest["code"] == "unknown_chat_line"
        await admin.close()
