"""Chat an admin can keep clean, over real websockets (SQLite and PostgreSQL where lines and
silences are stored): a rate per address as well as per player, a guest silenced by id and by
address, a finished game's chat closed to strangers and, after a while, to its players, old
lines deleted by the sweep, and invisible or stacked characters taken out of a line.
Distinct addresses are loopback ones (127.0.0.2, 127.0.0.3, ...)."""

from __future__ import annotations

import asyncio
import unicodedata
from typing import Any

import pytest
from wsclient import Client, friends_game

from server.admin.tokens import Admins
from server.app import Running, Settings, running
from server.chat.rules import MAX_MARKS
from server.storage import SqlStore
from tests.server.chat.test_chat import opened, refused, said

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: the first player wins at its fourth move."""


async def watcher(server: Running, room: str, name: str, source: str) -> Client:
    """A guest from ``source`` watching ``room``, its game's chat open."""
    client = await Client.open(server.url, name, source=source)
    await client.send(type="spectate", room=room)
    await client.expect("room_state")
    await opened(client, f"{room}-1")
    return client


async def spoke(client: Client, game_id: str | None, text: str) -> dict[str, Any]:
    """``client`` says ``text``; its own line as it came back (others' lines skipped)."""
    await client.send(type="chat", game_id=game_id, text=text)
    while True:
        line: dict[str, Any] = (await client.expect("chat_line"))["line"]
        if line["player"]["id"] == client.player_id and line["text"] == text:
            return line


async def admin_of(server: Running, store: SqlStore) -> Client:
    _, token = await Admins(store.engine).create("Root")
    admin = await Client.open(server.url, "admin page")
    assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"
    return admin


async def play_to_the_end(ann: Client, bob: Client, room: str) -> None:
    for ply, move in enumerate(FOUR_IN_COLUMN_ONE):
        await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=move)
        await ann.expect("move_made", ply=ply)
    await ann.expect("game_over")
    await bob.expect("game_over")


async def test_guests_from_one_address_share_its_allowance_and_another_address_talks_on(
    tmp_path: Any,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    settings = Settings(chat_window_seconds=600.0)  # no line forgotten on a slow machine
    async with running(port=0, store=SqlStore(url), settings=settings) as server:
        _, _, room = await friends_game(server.url)
        game = f"{room}-1"
        per_player = server.app.settings.chat_lines
        per_source = server.app.settings.chat_lines_per_source
        crowd = [await watcher(server, room, f"Crowd{n}", "127.0.0.2")
                 for n in range(per_source // per_player + 1)]
        for n in range(per_source):  # each within its own allowance, the address at its most
            await spoke(crowd[n // per_player], game, f"line {n}")
        fresh = crowd[-1]
        error = await refused(fresh, type="chat", game_id=game, text="one too many")
        assert (error["code"], error["detail"]["limit"]) == ("rate_limited",
                                                             "chat_lines_per_source")
        assert 0 < error["detail"]["retry_after"] <= server.app.settings.chat_window_seconds
        elsewhere = await watcher(server, room, "Elsewhere", "127.0.0.3")
        await said(elsewhere, game, "a line from another address")
        lines = (await opened(elsewhere, game))["lines"]
        assert len(lines) == per_source + 1


async def test_an_admin_silences_a_guest_by_id_and_address_until_lifted(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    async with running(port=0, store=store) as server:
        _, _, room = await friends_game(server.url)
        game = f"{room}-1"
        troll = await watcher(server, room, "Troll", "127.0.0.4")  # never played: no row
        other = await watcher(server, room, "Other", "127.0.0.5")
        admin = await admin_of(server, store)
        await admin.send(type="admin_silence_chat", player=troll.player_id, seconds=600)
        silenced = await admin.expect("chat_silenced")
        assert silenced["player"] == troll.player_id and silenced["until"] is not None
        quiet = await refused(troll, type="chat", game_id=game, text="still here")
        assert quiet["code"] == "silenced" and quiet["detail"]["until"] == silenced["until"]
        await troll.close()
        await admin.send(type="admin_silence_chat", player=troll.player_id, seconds=900)
        longer = await admin.expect("chat_silenced")  # gone, yet its address stays silenced
        again = await watcher(server, room, "Troll again", "127.0.0.4")  # a fresh guest
        assert again.player_id != troll.player_id
        quiet = await refused(again, type="chat", game_id=game, text="a new me")
        assert quiet["code"] == "silenced" and quiet["detail"]["until"] == longer["until"]
        await said(other, game, "others at other addresses talk on")
        assert [line["text"] for line in (await opened(other, game))["lines"]] == [
            "others at other addresses talk on"]
        await admin.send(type="admin_silence_chat", player=troll.player_id, seconds=0)
        assert (await admin.expect("chat_silenced"))["until"] is None
        await said(again, game, "sorry")  # lifting the silence lifts its address's


@pytest.mark.slow
async def test_a_finished_games_chat_takes_lines_from_its_players_for_a_while_only(
    database_url: str,
) -> None:
    settings = Settings(chat_after_game_seconds=3.0)
    async with running(port=0, store=SqlStore(database_url), settings=settings) as server:
        ann, bob, room = await friends_game(server.url)
        game = f"{room}-1"
        eve = await watcher(server, room, "Eve", "127.0.0.2")
        await opened(ann, game)
        await said(eve, game, "good luck both")  # while it is played: anyone
        await play_to_the_end(ann, bob, room)
        late = await refused(eve, type="chat", game_id=game, text="gg")
        assert late["code"] == "chat_closed"
        stranger = await Client.open(server.url, "Stranger", source="127.0.0.3")
        await opened(stranger, game)  # never saw the game: reads its replay's chat
        spam = await refused(stranger, type="chat", game_id=game, text="visit my site")
        assert spam["code"] == "chat_closed"
        await said(ann, game, "gg")  # its players, just after the end
        await asyncio.sleep(3.2)
        closed = await refused(ann, type="chat", game_id=game, text="one more thing")
        assert closed["code"] == "chat_closed"
        lines = (await opened(stranger, game))["lines"]
        assert [line["text"] for line in lines] == ["good luck both"]
        players = [line["text"] for line in (await opened(bob, game))["lines"]]
        assert players == ["gg"]


@pytest.mark.slow
async def test_the_sweep_deletes_lines_past_their_time_and_keeps_newer_ones(
    database_url: str,
) -> None:
    settings = Settings(sweep_seconds=0.2, lobby_chat_days=2 / 86400,
                        game_chat_days=6 / 86400, chat_guests_in_lobby=True)
    async with running(port=0, store=SqlStore(database_url), settings=settings) as server:
        ann, _, room = await friends_game(server.url)
        game = f"{room}-1"
        await opened(ann, None)
        await opened(ann, game)
        await said(ann, None, "old in the lobby")
        await said(ann, game, "old in the game")
        await asyncio.sleep(2.8)  # the lobby's line is past its 2 s, the game's not its 6 s
        await said(ann, None, "new in the lobby")
        reader = await Client.open(server.url, "Reader")
        assert [line["text"] for line in (await opened(reader, None))["lines"]] == [
            "new in the lobby"]
        assert [line["text"] for line in (await opened(ann, game))["lines"]] == [
            "old in the game"]
        await asyncio.sleep(3.6)  # now the game's is past its time too
        assert (await opened(ann, game))["lines"] == []
        assert [line["text"] for line in (await opened(reader, None))["lines"]] == []


async def test_a_line_loses_invisible_characters_and_marks_stacked_past_a_languages_need(
    tmp_path: Any,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(port=0, store=SqlStore(url), settings=Settings(chat_lines=10)) as server:
        ann, bob, room = await friends_game(server.url)
        game = f"{room}-1"
        await opened(ann, game)
        await opened(bob, game)
        hidden = await said(ann, game, "g\u200bg\u200c \u2060w\ufeffp\u200d!")
        assert hidden["text"] == "gg wp!"
        zalgo = await said(ann, game, "he" + "\u0301" * 299 + "llo")
        text = zalgo["text"]
        assert text.startswith("h") and text.endswith("llo")
        marks = [c for c in text if unicodedata.category(c) == "Mn"]
        assert len(text) == len("hello") + len(marks) and 0 < len(marks) <= MAX_MARKS
        for kept in ("Tiếng Việt", "שָׁלוֹם", "नमस्ते", "e\u0301\u0302 stays composed"):
            line = await said(ann, game, kept)
            assert line["text"] == unicodedata.normalize("NFC", kept)
        history = await opened(bob, game)
        assert history["lines"][0]["text"] == "gg wp!"
        assert history["lines"][1]["text"] == text
