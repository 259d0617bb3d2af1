"""Bots registering themselves (``register_bot``) on a real server, over SQLite and PostgreSQL:
off unless the server enables it, the same accounts and name rules as an admin's, bounded per
connection and server-wide."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from wsclient import Client

from server.app import Running, Settings, running
from server.bots.accounts import Accounts, hash_token
from server.bots.limits import LimitExceeded, RegistrationLimiter, RegistrationLimits
from server.cli import main
from server.storage import SqlStore
from server.storage import repository as repo
from server.storage.memory import MemoryStore
from tests.server.storage.conftest import pg_url, sql_url, sqlite_url  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[3]


@asynccontextmanager
async def server_on(url: str, **settings: Any) -> AsyncIterator[Running]:
    async with running(port=0, store=SqlStore(url), settings=Settings(**settings)) as srv:
        yield srv


def accounts_of(server: Running) -> Accounts:
    store = server.app.store
    assert isinstance(store, SqlStore)
    return Accounts(store.engine)


async def bot_names(server: Running) -> list[str]:
    return [bot.name for bot in await accounts_of(server).list_bots()]


async def register(client: Client, name: str, ref: str = "r") -> dict[str, Any]:
    return await client.request("register_bot", name=name, id=ref)


# --- off by default ------------------------------------------------------------------------------


async def test_registration_is_off_by_default_refused_with_its_own_code_and_makes_nothing(
    sql_url: str,  # noqa: F811
) -> None:
    async with server_on(sql_url) as server:
        guest = await Client.open(server.url, "Ann")
        assert guest.welcome["limits"]["bot_registration"] is None
        answer = await register(guest, "Selfie", ref="reg1")
        assert answer["type"] == "error" and answer["code"] == "registration_disabled"
        assert answer["ref"] == "reg1"
        assert "admin" in answer["message"]
        assert await bot_names(server) == []
        assert (await guest.request("ping", id=1))["type"] == "pong"  # the connection is kept


async def test_a_server_without_a_database_refuses_registration_even_when_enabled() -> None:
    async with running(port=0, store=MemoryStore(),
                       settings=Settings(bot_registration=True)) as server:
        guest = await Client.open(server.url, "Ann")
        assert guest.welcome["limits"]["bot_registration"] is None
        answer = await register(guest, "Selfie")
        assert answer["code"] == "registration_disabled"
        assert "no database" in answer["message"]


async def test_registering_before_hello_is_refused_with_hello_required(sqlite_url: str) -> None:  # noqa: F811
    async with server_on(sqlite_url, bot_registration=True) as server:
        client = await Client.open(server.url, hello=False)
        answer = await register(client, "Early")
        assert answer["code"] == "hello_required"
        assert await bot_names(server) == []


# --- enabled -------------------------------------------------------------------------------------


async def test_a_registered_bot_is_an_account_like_an_admins_and_its_token_says_hello(
    sql_url: str, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    async with server_on(sql_url, bot_registration=True) as server:
        guest = await Client.open(server.url, "Ann")
        assert guest.welcome["limits"]["bot_registration"] == {
            "registrations_per_connection": 3, "registrations_per_minute": 5}
        answer = await register(guest, "  Selfie  ")
        assert answer["type"] == "bot_registered"
        token = answer["token"]
        assert token.startswith("discus_bot_")
        assert answer["bot"]["name"] == "Selfie"  # trimmed, as ``discus bots create`` does
        assert answer["bot"]["revoked_at"] is None and answer["bot"]["connections"] == 0

        # Stored hashed only, exactly like an admin's bot.
        store = server.app.store
        assert isinstance(store, SqlStore)
        async with store.engine.connect() as conn:
            row = await repo.find_token(conn, hash_token(token))
        assert row is not None and row["name"] == "Selfie" and row["scope"] == "bot"
        assert token not in row.values()
        (listed,) = await accounts_of(server).list_bots()
        assert listed.token_id == answer["bot"]["token_id"]
        assert listed.player_id == answer["bot"]["player_id"]

        # The registering connection is still the guest it said hello as.
        assert (await guest.request("ping", id=2))["type"] == "pong"
        assert guest.welcome["player"]["name"] == "Ann"

        bot = await Client.open(server.url, hello=False)
        welcome = await bot.request("hello", version=1, token=token)
        assert welcome["type"] == "welcome"
        assert welcome["player"] == {"id": listed.player_id, "name": "Selfie", "bot": True}
        assert welcome["limits"]["bot"] is not None

        assert await asyncio.to_thread(main, ["bots", "list", "--database-url", sql_url]) == 0
        out = capsys.readouterr().out
        assert "Selfie" in out and listed.token_id in out and token not in out


async def test_taken_and_bad_names_are_refused_as_for_admins_and_count_for_nothing(
    sql_url: str,  # noqa: F811
) -> None:
    async with server_on(sql_url, bot_registration=True,
                         bot_registration_limits=RegistrationLimits(
                             registrations_per_connection=1)) as server:
        await accounts_of(server).create("Admins")
        guest = await Client.open(server.url, "Ann")
        for name, code in [
            ("Admins", "bad_bot_name"),  # an admin's live bot
            ("   ", "bad_bot_name"),
            ("x" * 41, "bad_bot_name"),  # over the 40 characters of a bot name
            ("bell\x07", "bad_bot_name"),
            ("", "bad_message"),
            ("x" * 65, "bad_message"),
        ]:
            answer = await register(guest, name)
            assert answer["type"] == "error" and answer["code"] == code, (name, answer)
        taken = await register(guest, "Admins")
        assert "already a bot called 'Admins'" in taken["message"]
        assert await bot_names(server) == ["Admins"]

        # None of the refusals used up the connection's one registration.
        assert (await register(guest, "Mine"))["type"] == "bot_registered"
        other = await Client.open(server.url, "Bob")
        again = await register(other, "Mine")
        assert again["code"] == "bad_bot_name"
        assert await bot_names(server) == ["Admins", "Mine"]


async def test_a_name_freed_by_revocation_can_be_registered_again(sqlite_url: str) -> None:  # noqa: F811
    async with server_on(sqlite_url, bot_registration=True) as server:
        guest = await Client.open(server.url, "Ann")
        first = await register(guest, "Phoenix")
        await accounts_of(server).revoke("Phoenix")
        second = await register(guest, "Phoenix")
        assert second["type"] == "bot_registered"
        assert second["token"] != first["token"]
        assert second["bot"]["player_id"] != first["bot"]["player_id"]


async def test_two_connections_asking_for_one_name_at_once_make_one_bot(
    sql_url: str,  # noqa: F811
) -> None:
    async with server_on(sql_url, bot_registration=True) as server:
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        answers = await asyncio.gather(register(ann, "Twin"), register(bob, "Twin"))
        assert sorted(a["type"] for a in answers) == ["bot_registered", "error"]
        assert {a.get("code") for a in answers} == {None, "bad_bot_name"}
        assert await bot_names(server) == ["Twin"]


async def test_the_bots_guides_registration_example_gets_a_token_on_an_enabled_server(
    sqlite_url: str,  # noqa: F811
) -> None:
    guide = (ROOT / "docs" / "BOTS.md").read_text(encoding="utf-8")
    section = guide.split("## Getting a token", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the section has no json example"
    example = json.loads(textwrap.dedent(match.group(1)))
    async with server_on(sqlite_url, bot_registration=True) as server:
        guest = await Client.open(server.url, "Ann")
        await guest.send(**example)
        answer = await guest.recv()
        assert answer["type"] == "bot_registered"
        assert await bot_names(server) == [example["name"]]


# --- abuse bounds --------------------------------------------------------------------------------


async def test_a_connection_past_its_registrations_is_refused_and_a_new_one_may_register(
    sql_url: str,  # noqa: F811
) -> None:
    limits = RegistrationLimits(registrations_per_connection=2, registrations_per_minute=50)
    async with server_on(sql_url, bot_registration=True,
                         bot_registration_limits=limits) as server:
        guest = await Client.open(server.url, "Ann")
        for name in ("One", "Two"):
            assert (await register(guest, name))["type"] == "bot_registered"
        refused = await register(guest, "Three")
        assert refused["code"] == "limit_exceeded"
        assert refused["detail"] == {"limit": "registrations_per_connection", "allowed": 2,
                                     "retry_after": None}
        assert await bot_names(server) == ["One", "Two"]
        other = await Client.open(server.url, "Bob")
        assert (await register(other, "Three"))["type"] == "bot_registered"


async def test_the_server_wide_rate_refuses_with_when_to_retry(sql_url: str) -> None:  # noqa: F811
    limits = RegistrationLimits(registrations_per_connection=5, registrations_per_minute=2)
    async with server_on(sql_url, bot_registration=True,
                         bot_registration_limits=limits) as server:
        ann = await Client.open(server.url, "Ann")
        bob = await Client.open(server.url, "Bob")
        assert (await register(ann, "First"))["type"] == "bot_registered"
        assert (await register(bob, "Second"))["type"] == "bot_registered"
        refused = await register(bob, "Third")
        assert refused["code"] == "limit_exceeded"
        detail = refused["detail"]
        assert detail["limit"] == "registrations_per_minute" and detail["allowed"] == 2
        assert 50 < detail["retry_after"] <= 60
        assert f"retry in {detail['retry_after']:g} s" in refused["message"]
        assert await bot_names(server) == ["First", "Second"]
        carol = await Client.open(server.url, "Carol")  # a fresh connection does not help
        assert (await register(carol, "Third"))["detail"]["limit"] == "registrations_per_minute"


# --- the limiter alone (its clock is the caller's) -----------------------------------------------


def test_the_rate_recovers_once_the_oldest_registration_is_a_minute_old() -> None:
    limiter = RegistrationLimiter(RegistrationLimits(registrations_per_connection=9,
                                                     registrations_per_minute=2))
    limiter.take("a", now=100.0)
    limiter.take("b", now=130.0)
    with pytest.raises(LimitExceeded) as refused:
        limiter.take("c", now=140.0)
    assert refused.value.detail() == {"limit": "registrations_per_minute", "allowed": 2,
                                      "retry_after": 20.0}
    with pytest.raises(LimitExceeded):  # a refusal is not counted, nor is it forgiven early
        limiter.take("c", now=159.9)
    limiter.take("c", now=160.0)
    with pytest.raises(LimitExceeded) as again:
        limiter.take("c", now=160.0)
    assert again.value.retry_after == 30.0  # until the registration at 130 is a minute old


def test_a_registration_given_back_counts_for_nothing() -> None:
    limiter = RegistrationLimiter(RegistrationLimits(registrations_per_connection=1,
                                                     registrations_per_minute=1))
    limiter.take("a", now=5.0)
    limiter.give_back("a", now=5.0)
    assert limiter.registered("a") == 0
    limiter.take("a", now=6.0)
    with pytest.raises(LimitExceeded) as refused:
        limiter.take("a", now=7.0)
    assert refused.value.limit == "registrations_per_connection"
    limiter.forget("a")
    with pytest.raises(LimitExceeded) as server_wide:
        limiter.take("a", now=7.0)
    assert server_wide.value.limit == "registrations_per_minute"


# --- ``discus serve --bot-registration`` ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _welcome(url: str, process: subprocess.Popen[bytes], log: Path) -> Client:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, f"the server exited: {log.read_text(errors='replace')}"
        try:
            return await Client.open(url, "Ann")
        except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
            assert time.monotonic() < deadline, "the server did not start in 60 s"
            await asyncio.sleep(0.2)


@pytest.mark.slow
async def test_discus_serve_enables_registration_only_with_its_flag(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'discus.sqlite3'}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DISCUS_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    for flags, published in (([], False), (["--bot-registration"], True)):
        port = _free_port()
        log = tmp_path / f"server-{port}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--port", str(port),
                 "--database-url", url, *flags],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        try:
            guest = await _welcome(f"ws://127.0.0.1:{port}/ws", process, log)
            assert (guest.welcome["limits"]["bot_registration"] is not None) is published
            answer = await register(guest, "FromTheCli")
            assert answer["type"] == ("bot_registered" if published else "error"), answer
            await guest.close()
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
