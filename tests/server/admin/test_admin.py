"""Admins over real websockets: refused without a token; level edits validated, audited and
played from the next AI move on another server sharing the database; a short calibration
over the protocol adds up and is stored.

Servers run on real databases (an SQLite file per test, and a PostgreSQL database of its
own) with real AI worker processes where moves are searched.
"""

from __future__ import annotations

from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from wsclient import Client

from server.admin.tokens import Admins
from server.app import Settings, running
from server.bots.accounts import Accounts, BadBotName
from server.engines import AiPool, live_levels
from server.play.rooms import game_id_of
from server.storage import SqlStore

ADMIN_REQUESTS: list[dict[str, Any]] = [
    {"type": "admin_list_levels"},
    {"type": "admin_edit_level", "game": "connect4", "level": "easy",
     "changes": {"max_depth": 1}},
    {"type": "admin_list_audit"},
    {"type": "admin_list_rooms"},
    {"type": "admin_get_stats"},
    {"type": "admin_start_calibration", "game": "connect4"},
    {"type": "admin_list_calibrations"},
    {"type": "admin_list_bots"},
    {"type": "admin_create_bot", "name": "Sneaky"},
    {"type": "admin_revoke_bot", "bot": "Robo"},
]


async def _make_admin(url: str, name: str = "Ann") -> tuple[str, str]:
    """A new admin on the database at ``url``: (player id, token)."""
    store = SqlStore(url)
    await store.open()
    try:
        account, token = await Admins(store.engine).create(name)
    finally:
        await store.close()
    return account.player_id, token


async def _admin(url: str, token: str) -> Client:
    client = await Client.open(url, name="admin page")
    answer = await client.request("admin_login", token=token)
    assert answer["type"] == "admin_welcome", answer
    return client


async def test_every_admin_message_is_refused_without_a_valid_admin_token(
    database_url: str,
) -> None:
    admin_id, token = await _make_admin(database_url)
    store = SqlStore(database_url)
    async with running(port=0, store=store) as server:
        bot_token = (await Accounts(store.engine).create("Robo")).token
        guest = await Client.open(server.url)
        for request in ADMIN_REQUESTS:
            answer = await guest.request(**{"kind": request["type"]},
                                         **{k: v for k, v in request.items() if k != "type"})
            assert (answer["type"], answer["code"]) == ("error", "forbidden"), request
        for wrong in (token + "x", bot_token, "discus_admin_" + "A" * 43):
            answer = await guest.request("admin_login", token=wrong)
            assert (answer["type"], answer["code"]) == ("error", "bad_admin_token")
        # Still refused after the failed logins, and nothing was edited.
        answer = await guest.request("admin_list_audit")
        assert answer["code"] == "forbidden"
        await Admins(store.engine).revoke("Ann")
        answer = await guest.request("admin_login", token=token)
        assert answer["code"] == "bad_admin_token"
        async with store.engine.connect() as conn:
            from server.storage import repository as repo

            assert await repo.list_level_audit(conn) == []
        await guest.close()
    assert admin_id


async def test_a_level_edit_is_validated_field_by_field_then_audited_and_advertised(
    database_url: str,
) -> None:
    admin_id, token = await _make_admin(database_url)
    async with running(port=0, store=SqlStore(database_url)) as server:
        admin = await _admin(server.url, token)
        watcher = await _admin(server.url, token)
        levels = await admin.request("admin_list_levels", game="connect4")
        (c4,) = levels["games"]
        easy = next(lv for lv in c4["levels"] if lv["name"] == "easy")
        assert easy["max_depth"] == 4 and easy["hard_time"] == 0.3

        bad = await admin.request(
            "admin_edit_level", id=7, game="connect4", level="easy",
            changes={"soft_time": 2.0, "candidates": 0, "speed": 3, "rails": "yes"},
        )  # fmt: skip
        assert (bad["type"], bad["code"], bad["ref"]) == ("error", "invalid_level", 7)
        # Every field's problem at once; soft_time against hard_time only once the fields
        # themselves are sound.
        assert set(bad["detail"]) == {"speed", "rails", "candidates"}
        assert bad["detail"]["rails"] == "rails must be true or false"
        assert bad["detail"]["speed"] == "speed is not a level field"
        assert bad["detail"]["candidates"] == "candidates must be a whole number between 1 and 64"
        bad = await admin.request("admin_edit_level", game="connect4", level="easy",
                                  changes={"soft_time": 2.0})
        assert bad["code"] == "invalid_level"
        assert bad["detail"] == {"soft_time": "soft_time must not exceed hard_time",
                                 "hard_time": "soft_time must not exceed hard_time"}
        bad = await admin.request("admin_edit_level", game="connect4", level="easy",
                                  changes={"order": 0})
        assert bad["code"] == "invalid_level" and "taken by 'beginner'" in bad["detail"]["order"]
        for order in (1_000_000_000, 100):  # the rating of an uncalibrated level grows with it
            bad = await admin.request("admin_edit_level", game="connect4", level="easy",
                                      changes={"order": order})
            assert bad["code"] == "invalid_level"
            assert bad["detail"] == {"order": "order must be a whole number between 0 and 99"}
        unknown = await admin.request("admin_edit_level", game="connect4", level="grandmaster",
                                      changes={"max_depth": 3})
        assert unknown["code"] == "unknown_level"
        audit = await admin.request("admin_list_audit")
        assert audit["entries"] == []  # refused edits change nothing

        lobby = await Client.open(server.url)  # a person in the lobby meanwhile
        done = await admin.request(
            "admin_edit_level", game="connect4", level="easy",
            changes={"max_depth": 2, "description": "Retuned."},
        )  # fmt: skip
        assert done["type"] == "admin_level_edited"
        assert done["before"]["max_depth"] == 4 and done["after"]["max_depth"] == 2
        assert done["after"]["hard_time"] == 0.3  # untouched fields keep their values
        for client in (admin, watcher):  # every admin page hears of it, the editor too
            pushed = await client.expect("admin_levels")
            assert pushed["version"] == done["version"]
        pushed_easy = next(lv for g in pushed["games"] if g["game"] == "connect4"
                           for lv in g["levels"] if lv["name"] == "easy")
        assert pushed_easy["max_depth"] == 2

        await admin.send(type="admin_list_audit", game="connect4")
        audit = await admin.expect("admin_audit")  # past the lobby's games push, if not yet
        (entry,) = audit["entries"]
        assert (entry["game"], entry["level"], entry["action"]) == ("connect4", "easy", "update")
        assert (entry["actor"], entry["actor_name"]) == (admin_id, "Ann")
        assert sorted(entry["changed"]) == ["description", "max_depth"]
        assert entry["before"]["max_depth"] == 4 and entry["after"]["max_depth"] == 2
        assert (await admin.request("admin_list_audit", game="othello"))["entries"] == []

        # People see the new description in the lobby's levels at once: those there are told.
        games = (await lobby.expect("games"))["games"]
        c4_info = next(g for g in games if g["name"] == "connect4")
        assert next(lv for lv in c4_info["levels"] if lv["name"] == "easy")["description"] == (
            "Retuned.")
        await lobby.close()
        person = await Client.open(server.url)
        c4_info = next(g for g in person.welcome["games"] if g["name"] == "connect4")
        assert next(lv for lv in c4_info["levels"] if lv["name"] == "easy")["description"] == (
            "Retuned.")
        for client in (admin, watcher, person):
            await client.close()


async def _ai_reply(person: Client, room: str, ply: int, move: str) -> tuple[dict[str, Any],
                                                                             list[int]]:
    """Play ``move`` at ``ply``; the AI's ``move_made`` and the depths it reported."""
    start = len(person.seen)
    await person.send(type="move", room=room, ply=ply, move=move)
    answer = await person.expect("move_made", timeout=20, ply=ply + 1)
    depths = [m["depth"] for m in person.seen[start:] if m["type"] == "ai_thinking"]
    return answer, depths


@pytest.mark.slow
async def test_an_edit_on_one_server_limits_the_next_ai_move_on_another(
    database_url: str, pool: AiPool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_levels, "POLL_SECONDS", 0.2)
    _, token = await _make_admin(database_url)
    playing_store = SqlStore(database_url)
    async with (
        running(port=0, store=SqlStore(database_url)) as admin_server,
        running(port=0, store=playing_store, pool=pool) as game_server,
    ):
        person = await Client.open(game_server.url)
        await person.send(type="create_room", game="connect4",
                          opponent={"kind": "ai", "level": "medium"}, seat=0)
        room = (await person.expect("room_state"))["room"]["id"]
        await _ai_reply(person, room, 0, "4")

        admin = await _admin(admin_server.url, token)
        watcher = await _admin(game_server.url, token)
        edited = await admin.request("admin_edit_level", game="connect4", level="medium",
                                     changes={"max_depth": 1})
        assert edited["type"] == "admin_level_edited"
        # The other server notices by itself (no Redis here: it polls the version).
        pushed = await watcher.expect("admin_levels", timeout=5)
        assert pushed["version"] == edited["version"]
        assert game_server.app.levels.current["connect4"][2].max_depth == 1

        await _ai_reply(person, room, 2, "3")
        loaded = await playing_store.load_game(game_id_of(room, 1))
        assert loaded is not None
        _, moves = loaded
        before, after = moves[1], moves[3]
        assert before.seat == after.seat == 1
        assert before.ai_depth is not None and before.ai_depth > 1  # medium: up to 8 plies
        assert after.ai_depth == 1  # the very next AI move used the edited level
        await admin.close()
        await watcher.close()
        await person.close()


@pytest.mark.slow
async def test_a_short_calibration_over_the_protocol_adds_up_and_is_stored(
    tmp_path: Any, pool: AiPool,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    admin_id, token = await _make_admin(url)
    async with running(port=0, store=SqlStore(url), pool=pool) as server:
        admin = await _admin(server.url, token)
        await admin.send(type="admin_start_calibration", game="connect4",
                         levels=["easy", "beginner"], games_per_pair=4, seed=5, time_scale=0.1)
        started = await admin.expect("admin_calibration_started")
        assert (started["levels"], started["total"], started["by"]) == (
            ["beginner", "easy"], 4, admin_id)
        busy = await admin.request("admin_start_calibration", game="othello")
        assert busy["code"] == "calibration_running"
        finished = await admin.expect("admin_calibration_finished", timeout=120)
        progress = [m for m in admin.seen if m["type"] == "admin_calibration_progress"]
        assert [m["done"] for m in progress] == [1, 2, 3, 4]
        assert {(m["first"], m["second"]) for m in progress} == {("beginner", "easy"),
                                                                  ("easy", "beginner")}
        run = finished["run"]
        assert (run["status"], run["games_per_pair"], run["pair_mode"]) == (
            "finished", 4, "adjacent")
        assert [lv["name"] for lv in run["levels"]] == ["beginner", "easy"]
        assert run["levels"][0]["hard_time"] == pytest.approx(0.02)  # scaled by 0.1
        (pair,) = run["pairs"]
        assert (pair["a"], pair["b"]) == ("beginner", "easy")
        assert pair["wins"] + pair["draws"] + pair["losses"] == 4
        # The progress results add up to the table (from the weaker level's side).
        beginner_points = sum(
            0.5 if m["result"] == 0 else float((m["result"] > 0) == (m["first"] == "beginner"))
            for m in progress
        )
        assert pair["wins"] + 0.5 * pair["draws"] == beginner_points
        beginner, easy = run["ratings"]
        assert (beginner["level"], beginner["elo"], easy["level"]) == ("beginner", 0.0, "easy")
        assert beginner["games"] == easy["games"] == 4
        assert beginner["score"] + easy["score"] == 4
        if easy["score"] != beginner["score"]:
            assert (easy["elo"] > 0) == (easy["score"] > beginner["score"])

        listed = await admin.request("admin_list_calibrations", game="connect4")
        assert [r["id"] for r in listed["runs"]] == [run["id"]]
        assert listed["runs"][0]["pairs"] == run["pairs"]
        assert listed["runs"][0]["ratings"] == run["ratings"]
        await admin.close()


async def test_an_admin_sees_live_rooms_and_the_pool_figures(tmp_path: Any) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    _, token = await _make_admin(url)
    async with running(port=0, store=SqlStore(url)) as server:
        person = await Client.open(server.url, name="Bea")
        await person.send(type="create_room", game="othello", opponent={"kind": "open"})
        room = (await person.expect("room_state"))["room"]["id"]
        admin = await _admin(server.url, token)
        rooms = await admin.request("admin_list_rooms")
        (seen,) = rooms["rooms"]
        assert (seen["id"], seen["game"], seen["status"], seen["ply"]) == (
            room, "othello", "waiting", 0)
        assert seen["seats"][0]["player"]["name"] == "Bea"
        assert rooms["players_online"] == 2
        stats = await admin.request("admin_get_stats")
        assert stats["type"] == "admin_stats"
        assert (stats["rooms"], stats["stats"]["pool"]) == (1, None)  # no AI workers here
        assert stats["levels_version"] >= 0
        await admin.close()
        await person.close()


def test_discus_admins_prints_a_token_once_stores_only_its_hash_and_revokes_it(
    tmp_path: Any, capsys: pytest.CaptureFixture[str],
) -> None:
    import hashlib
    import sqlite3

    from server.cli import main

    path = tmp_path / "discus.sqlite3"
    url = f"sqlite+aiosqlite:///{path}"
    assert main(["admins", "create", "Ann", "--database-url", url]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert token.startswith("discus_admin_")
    assert main(["admins", "list", "--database-url", url]) == 0
    listed = capsys.readouterr().out
    assert "Ann" in listed and token not in listed
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT scope, token_hash FROM tokens").fetchall()
        kind = db.execute("SELECT kind FROM players WHERE name = 'Ann'").fetchone()
    assert rows == [("admin", hashlib.sha256(token.encode()).hexdigest())]
    assert kind == ("admin",)
    assert main(["admins", "create", "Ann", "--database-url", url]) == 2  # a live name
    assert main(["admins", "revoke", "Ann", "--database-url", url]) == 0
    assert main(["admins", "revoke", "Ann", "--database-url", url]) == 2  # none live now
    assert "no live admin" in capsys.readouterr().err


async def _bot(url: str, token: str) -> tuple[Client, dict[str, Any]]:
    """A connection that said hello with a bot token: (client, its first answer)."""
    client = await Client.open(url, hello=False)
    await client.send(type="hello", version=1, token=token)
    return client, await client.recv()


async def _closed_with(client: Client) -> tuple[list[str], int | None]:
    """Read until the server closes: the error codes seen on the way, and the close code."""
    codes = []
    with pytest.raises(ConnectionClosed):
        while True:
            message = await client.recv(timeout=10)
            if message["type"] == "error":
                codes.append(message["code"])
    return codes, client.ws.close_code


async def test_an_admin_makes_a_bot_lists_it_and_revoking_it_cuts_its_connection(
    database_url: str,
) -> None:
    _, token = await _make_admin(database_url)
    async with running(port=0, store=SqlStore(database_url)) as server:
        admin = await _admin(server.url, token)
        made = await admin.request("admin_create_bot", name="Randy")
        assert made["type"] == "admin_bot_created" and made["bot"]["name"] == "Randy"
        assert made["token"].startswith("discus_bot_") and made["bot"]["connections"] == 0
        taken = await admin.request("admin_create_bot", name="Randy")
        assert (taken["type"], taken["code"]) == ("error", "bad_bot_name")

        bot, welcome = await _bot(server.url, made["token"])
        assert welcome["type"] == "welcome" and welcome["player"]["name"] == "Randy"
        (listed,) = (await admin.request("admin_list_bots"))["bots"]
        assert listed["token_id"] == made["bot"]["token_id"] and listed["connections"] == 1
        assert listed["last_used_at"] is not None and listed["revoked_at"] is None
        assert "token" not in listed

        revoked = await admin.request("admin_revoke_bot", bot="Randy")
        assert revoked["type"] == "admin_bot_revoked" and revoked["closed"] == 1
        assert revoked["bots"][0]["revoked_at"] is not None
        assert await _closed_with(bot) == (["revoked_token"], 1008)
        again, refused = await _bot(server.url, made["token"])
        assert (refused["type"], refused["code"]) == ("error", "revoked_token")
        unknown = await admin.request("admin_revoke_bot", bot="Randy")
        assert (unknown["type"], unknown["code"]) == ("error", "unknown_bot")
        (listed,) = (await admin.request("admin_list_bots"))["bots"]
        assert listed["connections"] == 0 and listed["revoked_at"] is not None
        await admin.close()


async def test_a_token_revoked_from_the_command_line_loses_its_connection_at_the_sweep(
    database_url: str,
) -> None:
    store = SqlStore(database_url)
    async with running(port=0, store=store, settings=Settings(sweep_seconds=0.2)) as server:
        accounts = Accounts(store.engine)
        kept, cut = (await accounts.create("Keeper")).token, (await accounts.create("Goner")).token
        keeper, _ = await _bot(server.url, kept)
        goner, _ = await _bot(server.url, cut)
        await accounts.revoke("Goner")  # as ``discus bots revoke`` does, from another process
        assert await _closed_with(goner) == (["revoked_token"], 1008)
        assert (await keeper.request("ping"))["type"] == "pong"
        await keeper.close()


async def test_a_revoked_admin_loses_admin_rights_at_the_sweep_but_keeps_the_connection(
    database_url: str,
) -> None:
    _, token = await _make_admin(database_url)
    _, other_token = await _make_admin(database_url, "Bea")
    store = SqlStore(database_url)
    async with running(port=0, store=store, settings=Settings(sweep_seconds=0.2)) as server:
        ann = await _admin(server.url, token)
        bea = await _admin(server.url, other_token)
        await Admins(store.engine).revoke("Ann")  # as ``discus admins revoke`` does
        cut = await ann.expect("error", timeout=5)
        assert cut["code"] == "bad_admin_token" and "revoked" in cut["message"]
        answer = await ann.request("admin_list_levels")
        assert (answer["type"], answer["code"]) == ("error", "forbidden")
        assert (await ann.request("ping"))["type"] == "pong"
        assert (await bea.request("admin_list_audit"))["type"] == "admin_audit"
        await ann.close()
        await bea.close()


async def test_a_revoked_admin_cannot_change_anything_even_before_the_sweep(
    database_url: str,
) -> None:
    _, token = await _make_admin(database_url)
    store = SqlStore(database_url)
    async with running(port=0, store=store, settings=Settings(sweep_seconds=600)) as server:
        ann = await _admin(server.url, token)
        await Admins(store.engine).revoke("Ann")
        answer = await ann.request("admin_edit_level", id=3, game="connect4", level="easy",
                                   changes={"max_depth": 1})
        assert (answer["type"], answer["code"], answer["ref"]) == ("error", "bad_admin_token", 3)
        made = await ann.request("admin_create_bot", name="Sneaky")
        assert (made["type"], made["code"]) == ("error", "forbidden")
        async with store.engine.connect() as conn:
            from server.storage import repository as repo

            assert await repo.list_level_audit(conn) == []
        assert (await Accounts(store.engine).list_bots()) == []
        await ann.close()


async def test_admin_logins_are_throttled_per_address(tmp_path: Any) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    _, token = await _make_admin(url)
    async with running(port=0, store=SqlStore(url)) as server:
        guesser = await Client.open(server.url, "guesser", source="127.0.0.2")
        for n in range(10):
            answer = await guesser.request("admin_login", token=f"discus_admin_{n:043d}")
            assert answer["code"] == "bad_admin_token"
        answer = await guesser.request("admin_login", token=token)
        assert (answer["code"], answer["detail"]["limit"]) == ("rate_limited", "admin_login")
        assert answer["detail"]["retry_after"] > 0
        again = await Client.open(server.url, "again", source="127.0.0.2")
        assert (await again.request("admin_login", token=token))["code"] == "rate_limited"
        admin = await Client.open(server.url, "admin page", source="127.0.0.3")
        assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"


async def test_bots_and_admins_names_and_their_look_alikes_are_not_a_guests(
    tmp_path: Any,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    await _make_admin(url, "Ann")
    store = SqlStore(url)
    async with running(port=0, store=store) as server:
        await Accounts(store.engine).create("Robo")
        for name, shown in (("robo", "robo (guest)"), ("R\u043ebo", "R\u043ebo (guest)"),
                            ("ANN", "ANN (guest)"), ("\u0410nn", "\u0410nn (guest)"),
                            ("Rob", "Rob")):
            guest = await Client.open(server.url, name)
            assert guest.welcome["player"]["name"] == shown, name
        for bad in ("R\u043ebo", "\u0410nn", "Evil\u202ebot", "Zero\u200dwidth"):
            with pytest.raises(BadBotName):
                await Accounts(store.engine).create(bad)
