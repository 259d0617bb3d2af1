"""Limits per source: one client address cannot hold or use up what everyone shares, while
another address is served as usual. Client addresses are loopback ones (127.0.0.2, 127.0.0.3,
...), directly or through HAProxy speaking the PROXY protocol v2 (``deploy/haproxy.cfg``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pages import free_port
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from wsclient import Client

from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.storage import SqlStore
from server.storage.memory import MemoryStore
from server.web.proxy import parse_header
from server.web.sources import SourceLimits

ROOT = Path(__file__).resolve().parents[3]
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"

A, B = ("127.0.0.2", 0), ("127.0.0.3", 0)


@contextlib.asynccontextmanager
async def served(**limits: float) -> AsyncIterator[Running]:
    settings = Settings(sources=SourceLimits(**limits),  # type: ignore[arg-type]
                        sweep_seconds=0.2, shed_lag_seconds=60.0)  # no shedding for a slow loop
    async with running(store=MemoryStore(), settings=settings) as server:
        yield server


async def welcomed(ws: ClientConnection) -> bool:
    """Whether ``ws`` is welcomed after its hello (False: the server closed it)."""
    try:
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": "x"}))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 20))
            if message["type"] == "welcome":
                return True
    except ConnectionClosed:
        return False


async def metrics(server: Running) -> str:
    def get() -> str:
        url = f"http://{server.host}:{server.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            return str(answer.read().decode())
    return await asyncio.to_thread(get)


async def test_300_connections_from_one_address_are_mostly_refused_and_another_gets_in() -> None:
    async with served() as server:  # the default: 64 connections an address
        started = time.monotonic()
        gate = asyncio.Semaphore(50)

        async def one() -> ClientConnection:
            async with gate:
                return await connect(server.url, local_addr=A, open_timeout=30)

        crowd = await asyncio.gather(*(one() for _ in range(300)))
        answers = await asyncio.gather(*(welcomed(ws) for ws in crowd))
        assert answers.count(True) == 64
        closed = [ws.close_code for ws, ok in zip(crowd, answers, strict=True) if not ok]
        assert closed == [1008] * 236
        assert "too many connections from your address" in str(
            next(ws.close_reason for ws, ok in zip(crowd, answers, strict=True) if not ok))
        other = await Client.open(server.url, "Other", local_addr=B)
        assert other.welcome["type"] == "welcome"
        text = await metrics(server)
        assert ('discus_refusals_total{limit="connections_per_source",'
                'reason="too_many_connections"} 236.0') in text
        assert 'discus_connections{state="guest"} 65.0' in text
        await asyncio.gather(*(ws.close() for ws in crowd), other.close())
        assert time.monotonic() - started < 60
        # the address's connections are counted down as they close: it may connect again
        again = await Client.open(server.url, "Again", local_addr=A)
        assert again.welcome["type"] == "welcome"


async def test_hellos_from_one_address_are_limited_per_minute_and_another_says_hello() -> None:
    async with served(hellos_per_minute=5) as server:
        for _ in range(5):
            await Client.open(server.url, local_addr=A)
        late = await Client.open(server.url, hello=False, local_addr=A)
        error = await late.request("hello", version=1, name="late")
        assert error["type"] == "error" and error["code"] == "rate_limited"
        assert error["detail"]["limit"] == "hellos_per_minute"
        assert 0 < error["detail"]["retry_after"] <= 12
        assert (await Client.open(server.url, local_addr=B)).welcome["type"] == "welcome"


async def test_answers_to_whether_a_name_exists_are_limited_per_address_per_minute() -> None:
    most = SourceLimits().name_lookups_per_minute
    async with served() as server:
        bob = await Client.open(server.url, "Bob", local_addr=B)
        prober = await Client.open(server.url, None, local_addr=A)  # no name: not counted
        for n in range(most - 1):
            probe = await Client.open(server.url, f"Probe{n}", local_addr=A)
            assert probe.welcome["player"]["name"] == f"Probe{n}"
        back = await Client.open(server.url, None, resume=probe.welcome["resume"], local_addr=A)
        assert back.welcome["player"]["name"] == f"Probe{most - 2}"  # no name: not counted
        await prober.send(type="challenge", player="Bob", game="connect4")
        await prober.expect("challenge_sent")
        await bob.expect("challenge")
        # Past the limit a hello's name is marked without looking: the mark tells nothing.
        late = await Client.open(server.url, "Nobody", local_addr=A)
        assert late.welcome["player"]["name"] == "Nobody (guest)"
        renamed = await Client.open(server.url, "Nobody else", resume=back.welcome["resume"],
                                    local_addr=A)
        assert renamed.welcome["player"]["name"] == "Nobody else (guest)"
        error = await prober.request("challenge", player="Bob", game="connect4")
        assert (error["code"], error["detail"]["limit"]) == ("rate_limited",
                                                             "name_lookups_per_minute")
        assert 0 < error["detail"]["retry_after"] <= 60 / most + 0.1
        other = await Client.open(server.url, "Nobody", local_addr=B)
        assert other.welcome["player"]["name"] == "Nobody"
        await other.send(type="challenge", player="Bob", game="connect4")
        await other.expect("challenge_sent")


async def test_a_bots_challenges_are_not_counted_as_name_lookups(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    settings = Settings(sources=SourceLimits(name_lookups_per_minute=2))
    async with running(store=store, settings=settings) as server:
        token = (await Accounts(store.engine).create("Probot")).token
        bot = await Client.open(server.url, hello=False, local_addr=A)
        await bot.send(type="hello", version=1, token=token)
        await bot.expect("welcome")
        guest = await Client.open(server.url, None, local_addr=A)
        for n in range(4):  # twice the address's allowance
            answer = await bot.request("challenge", player=f"nobody{n}", game="connect4")
            assert answer["code"] == "unknown_player"
        for n in range(2):
            answer = await guest.request("challenge", player=f"nobody{n}", game="connect4")
            assert answer["code"] == "unknown_player"
        answer = await guest.request("challenge", player="nobody2", game="connect4")
        assert (answer["code"], answer["detail"]["limit"]) == ("rate_limited",
                                                               "name_lookups_per_minute")


async def test_rooms_created_by_one_address_are_limited_per_minute() -> None:
    async with served(rooms_per_minute=2) as server:
        ann = await Client.open(server.url, "Ann", local_addr=A)
        bob = await Client.open(server.url, "Bob", local_addr=A)
        for client in (ann, bob):
            await client.send(type="create_room", game="connect4", opponent={"kind": "friend"},
                              seat=0)
            await client.expect("room_state")
        error = await ann.request("create_room", game="connect4", opponent={"kind": "friend"},
                                  seat=0, id=7)
        assert (error["type"], error["code"], error["ref"]) == ("error", "rate_limited", 7)
        assert error["detail"]["limit"] == "rooms_per_minute"
        assert len(server.app.lobby.rooms) == 2  # the refusal changed nothing
        cat = await Client.open(server.url, "Cat", local_addr=B)
        await cat.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
        await cat.expect("room_state")


async def test_an_idle_guest_in_no_room_is_closed_and_one_in_a_room_stays() -> None:
    async with served(idle_guest_seconds=1.0) as server:
        idle = await Client.open(server.url, "Idle")
        seated = await Client.open(server.url, "Seated")
        await seated.send(type="create_room", game="connect4", opponent={"kind": "friend"},
                          seat=0)
        await seated.expect("room_state")
        with pytest.raises(ConnectionClosed):
            for _ in range(10):  # pings do not count as activity
                await idle.request("ping", id=1)
                await asyncio.sleep(0.5)
        assert idle.ws.close_code == 1000 and "idle" in str(idle.ws.close_reason)
        assert (await seated.request("ping", id=2))["type"] == "pong"


def test_a_proxy_v2_header_names_the_client_and_the_bytes_it_takes() -> None:
    header = (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11, 0, 12])
              + bytes([127, 0, 0, 2, 127, 0, 0, 1]) + (4242).to_bytes(2, "big")
              + (80).to_bytes(2, "big"))
    assert parse_header(header + b"GET /") == ("127.0.0.2", 28)
    assert parse_header(header[:20]) is None
    local = b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x20, 0, 0, 0])
    assert parse_header(local) == (None, 16)
    with pytest.raises(ValueError):
        parse_header(b"GET / HTTP/1.1\r\n\r\n")


@pytest.mark.skipif(not Path(HAPROXY).exists(), reason="haproxy is not installed")
async def test_behind_haproxy_each_client_address_is_counted_as_its_own(tmp_path: Path) -> None:
    settings = Settings(sources=SourceLimits(connections=2), trusted_proxies=("127.0.0.1",))
    async with running(store=MemoryStore(), settings=settings) as server:
        lb = free_port()
        node = f"127.0.0.1:{server.port}"
        env = dict(os.environ, DISCUS_LB_BIND=f"127.0.0.1:{lb}", DISCUS_NODE1=node,
                   DISCUS_NODE2=node)
        with open(tmp_path / "haproxy.log", "wb") as log:
            proxy = subprocess.Popen([HAPROXY, "-db", "-f", str(ROOT / "deploy/haproxy.cfg")],
                                     env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"ws://127.0.0.1:{lb}/ws"
            deadline = time.monotonic() + 30
            while True:
                try:
                    first = await Client.open(url, "First", local_addr=A)
                    break
                except OSError:
                    assert time.monotonic() < deadline, (tmp_path / "haproxy.log").read_text()
                    await asyncio.sleep(0.2)
            second = await Client.open(url, "Second", local_addr=A)
            third = await connect(url, local_addr=A)
            assert not await welcomed(third)
            assert third.close_code == 1008
            other = await Client.open(url, "Other", local_addr=B)  # another client: let in
            assert other.welcome["type"] == "welcome"
            assert server.app.gateway.sources.open == {"127.0.0.2": 2, "127.0.0.3": 1}
            # /metrics is the node's own: the load balancer does not pass it through
            with pytest.raises(urllib.error.HTTPError) as refused:
                await asyncio.to_thread(urllib.request.urlopen,
                                        f"http://127.0.0.1:{lb}/metrics", timeout=10)
            assert refused.value.code == 403
            for client in (first, second, other):
                await client.close()
        finally:
            proxy.kill()
            proxy.wait(timeout=10)
