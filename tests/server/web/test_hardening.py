"""Hardening against a real server on loopback: deep JSON is a bad frame, pages of other sites
cannot open the websocket (in Chromium too), every page carries its security headers, the data
directory and the SQLite file are their owner's only, guests cost nothing until they play, and
/metrics tells an operator what happened."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pages import ONLINE, free_port
from playwright.async_api import Browser
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from wsclient import Client, friends_game

from server.app import Running, running
from server.storage import open_store
from server.storage.config import DATA_DIR_ENV, create_engine, data_dir
from server.storage.memory import MemoryStore


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(store=MemoryStore()) as srv:
        yield srv


async def get(url: str) -> tuple[int, dict[str, str], bytes]:
    def fetch() -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()
    return await asyncio.to_thread(fetch)


async def test_json_nested_a_thousand_deep_is_bad_json_not_a_failure(
        server: Running, caplog: pytest.LogCaptureFixture) -> None:
    client = await Client.open(server.url)
    deep = '{"type": "ping", "id": ' + "[" * 1000 + "]" * 1000 + "}"
    assert len(deep) < 4096
    with caplog.at_level(logging.ERROR):
        await client.ws.send(deep)
        error = await client.recv()
    assert error["type"] == "error" and error["code"] == "bad_json"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert (await client.request("ping", id="still"))["type"] == "pong"


async def test_every_answer_carries_the_security_headers(server: Running) -> None:
    base = f"http://{server.host}:{server.port}"
    for path in ("/", "/admin", "/app.js", "/nowhere", "/healthz"):
        status, headers, _ = await get(base + path)
        assert status in (200, 404), path
        policy = headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy, path
        assert "frame-ancestors 'none'" in policy, path
        assert headers["X-Frame-Options"] == "DENY", path
        assert headers["Referrer-Policy"] == "no-referrer", path


async def test_the_websocket_refuses_other_sites_pages_and_lets_bots_in(server: Running) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await connect(server.url, origin="http://evil.example")  # type: ignore[arg-type]
    assert refused.value.response.status_code == 403
    own = await connect(server.url, origin=f"http://{server.host}:{server.port}")  # type: ignore[arg-type]
    bot = await connect(server.url)  # no Origin at all
    await own.close()
    await bot.close()


@pytest.mark.browser
async def test_in_chromium_the_own_page_connects_and_a_foreign_page_cannot(
        browser: Browser) -> None:
    port = free_port()
    async with running(port=port, store=MemoryStore()):
        context = await browser.new_context(bypass_csp=False)  # the page under its policy
        page = await context.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        await page.goto(f"http://127.0.0.1:{port}/")
        for _ in range(200):  # page.evaluate, not wait_for_function: that one needs eval
            if await page.evaluate(f"() => {ONLINE}"):
                break
            await asyncio.sleep(0.1)
        assert await page.evaluate(f"() => {ONLINE}")  # the page works under its policy
        assert not problems, problems  # no script error, nothing the policy refused

        # localhost is another origin than 127.0.0.1 (the same server answers both)
        foreign = await context.new_page()
        await foreign.goto(f"http://localhost:{port}/healthz")
        outcome = await foreign.evaluate(f"""() => new Promise(done => {{
            const ws = new WebSocket("ws://127.0.0.1:{port}/ws");
            ws.onopen = () => done("open");
            ws.onerror = () => done("refused");
            setTimeout(() => done("nothing"), 10000);
        }})""")
        assert outcome == "refused"


def test_the_data_directory_and_the_sqlite_file_are_the_owners_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    folder = data_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    database = folder / "discus.sqlite3"
    create_engine(f"sqlite+aiosqlite:///{database}")
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    from server.serve import persistent_secret

    monkeypatch.delenv("DISCUS_SECRET", raising=False)
    persistent_secret()
    assert stat.S_IMODE((folder / "server-secret").stat().st_mode) == 0o600
    os.chmod(folder, 0o755)  # made by an older version: made private again
    data_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.slow
async def test_a_thousand_guests_that_never_play_leave_no_rows(tmp_path: Path) -> None:
    from sqlalchemy import text

    from server.app import Settings
    from server.web.sources import SourceLimits

    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    settings = Settings(sources=SourceLimits(hellos_per_minute=5000, connections=1000),
                        shed_lag_seconds=60.0)
    async with running(store=store, settings=settings) as server:
        async def hellos(count: int) -> str:
            token = ""
            for _ in range(count):
                client = await Client.open(server.url, None)
                token = client.welcome["resume"]
                await client.close()
            return token

        tokens = await asyncio.gather(*(hellos(25) for _ in range(40)))
        # a guest that never played comes back with its token (this process knows it)
        back = await Client.open(server.url, None, resume=tokens[0])
        assert back.welcome["player"]["id"] == tokens[0].split(".")[0]
        ann, bob, room = await friends_game(server.url)  # two guests sit down: two rows
        await ann.send(type="resign", room=room)
        await ann.expect("game_over")
        async with server.app.store.engine.connect() as conn:  # type: ignore[attr-defined]
            rows = (await conn.execute(text("SELECT id, name FROM players"))).all()
        assert sorted(name for _, name in rows) == ["Ann", "Bob"]
        stored = await server.app.history.replay(f"{room}-1")
        assert "Ann" in stored.model_dump_json() and "Bob" in stored.model_dump_json()


async def test_metrics_count_moves_acknowledged_and_connections_by_state(
        server: Running) -> None:
    ann, bob, room = await friends_game(server.url)
    await ann.send(type="move", room=room, ply=0, move="4")
    await bob.expect("move_made", ply=0)
    status, headers, body = await get(f"http://{server.host}:{server.port}/metrics")
    text = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert "discus_move_ack_seconds_count 1.0" in text
    assert 'discus_connections{state="guest"} 2.0' in text
    assert "discus_ai_fallbacks_total 0.0" in text
    assert "discus_cluster_takeovers_total 0.0" in text
    assert "discus_ai_move_seconds_bucket" in text


@pytest.mark.slow
async def test_a_guests_resume_token_expires_unused_and_slides_with_use() -> None:
    from server.app import Settings

    async with running(store=MemoryStore(), settings=Settings(guest_token_days=6 / 86400)) as srv:
        first = (await Client.open(srv.url, "Ann")).welcome["resume"]
        await asyncio.sleep(3.5)
        back = await Client.open(srv.url, None, resume=first)
        fresh = back.welcome["resume"]
        assert fresh != first and fresh.split(".")[0] == first.split(".")[0]
        await asyncio.sleep(3.5)  # the first is 7 s old or more, the fresh one under 5 s
        again = await Client.open(srv.url, None, resume=fresh)
        assert again.welcome["player"]["id"] == back.welcome["player"]["id"]
        late = await Client.open(srv.url, hello=False)
        error = await late.request("hello", version=1, resume=first)
        assert error["code"] == "bad_resume_token" and "expired" in error["message"]


@pytest.mark.slow
async def test_an_accounts_session_expires_unused_and_slides_with_use() -> None:
    from people import CHEAP_HASHER, PASSWORD

    from server.app import Settings

    async with running(store=MemoryStore(), settings=Settings(session_days=3 / 86400)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        guest = await Client.open(srv.url, "someone")
        await guest.send(type="sign_up", name="Ann_Lee", password=PASSWORD)
        session = (await guest.expect("signed_in"))["session"]
        for _ in range(2):  # used every 1.5 s: it lives on past its 3 s
            await asyncio.sleep(1.5)
            back = await Client.open(srv.url, None, resume=session)
            assert back.welcome["player"]["name"] == "Ann_Lee"
        await asyncio.sleep(3.5)
        late = await Client.open(srv.url, hello=False)
        error = await late.request("hello", version=1, resume=session)
        assert error["code"] == "bad_resume_token" and "expired" in error["message"]


async def test_a_guest_that_signs_up_before_it_plays_stays_an_account(server: Running) -> None:
    from people import CHEAP_HASHER, PASSWORD

    server.app.accounts.hasher = CHEAP_HASHER
    ann = await Client.open(server.url, "someone")
    await ann.send(type="sign_up", name="Ann_Lee", password=PASSWORD)
    await ann.expect("signed_in")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    bob = await Client.open(server.url, "Bob")
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    stored = await server.app.store.load_player(ann.player_id)
    assert stored is not None and (stored.name, stored.kind) == ("Ann_Lee", "account")
    bobs = await server.app.store.load_player(bob.player_id)
    assert bobs is not None and bobs.kind == "guest"


async def test_a_guest_renamed_before_it_plays_gets_its_row_under_the_new_name(
        server: Running) -> None:
    first = await Client.open(server.url, "Ann")
    ann = await Client.open(server.url, "Annie", resume=first.welcome["resume"])
    assert await server.app.store.load_player(ann.player_id) is None
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    await ann.expect("room_state")
    stored = await server.app.store.load_player(ann.player_id)
    assert stored is not None and (stored.name, stored.kind) == ("Annie", "guest")
