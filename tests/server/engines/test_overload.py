"""A saturated node sheds new connections with a reason, and tells its load balancer."""

from __future__ import annotations

import asyncio
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from wsclient import Client

from ai.jitcache import cache_ready
from server.app import Settings, running
from server.engines import AiPool
from server.engines.overload import LoadGauge, warming_text
from server.serve import tell_warm_up
from server.storage.memory import MemoryStore
from tests.server.test_server import http_get


def test_the_gauge_is_busy_for_a_window_after_the_loop_ran_late_and_at_its_connection_cap() -> None:
    gauge = LoadGauge(max_lag=0.5, max_connections=3, window=2.0)
    gauge.record_lag(0.4, now=10.0)
    assert gauge.busy(now=10.0) is None  # late, but within bounds
    gauge.record_lag(0.8, now=11.0)
    assert "0.80 s late" in (gauge.busy(now=12.5) or "")
    assert gauge.busy(now=13.1) is None  # the window passed
    gauge.connections = 3
    assert "maximum of 3 connections" in (gauge.busy(now=13.1) or "")


@pytest.mark.parametrize("compiling", [True, False])
async def test_the_start_says_the_engines_load_from_the_cache_unless_they_compile(
        compiling: bool, capsys: pytest.CaptureFixture[str]) -> None:
    gauge = LoadGauge(max_lag=0.5, max_connections=3)
    gauge.compiling = compiling
    gauge.warming = warming_text(0, 2, 3.0, compiling)
    telling = asyncio.create_task(tell_warm_up(gauge, every=0.5, quiet=0.0))
    await asyncio.sleep(0.1)
    gauge.warming = None
    await asyncio.wait_for(telling, 2.0)
    said = capsys.readouterr().out
    assert ("compiling: 0 of 2 AI workers ready after 3 s" in said) is compiling
    assert ("loading from numba's cache: 0 of 2" in said) is not compiling
    assert ("a first start only" in said) is compiling
    assert "the engines are ready" in said


async def _shed(url: str) -> tuple[int, str]:
    """Open a connection the server should refuse: its close code and reason."""
    async with connect(url) as ws:
        try:
            await asyncio.wait_for(ws.recv(), 5)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            return closed.rcvd.code, closed.rcvd.reason
    raise AssertionError("the connection was not shed")


async def test_past_its_connection_cap_a_node_sheds_newcomers_and_keeps_its_players() -> None:
    async with running(port=0, store=MemoryStore(), settings=Settings(max_connections=2)) as srv:
        ann = await Client.open(srv.url, "Ann")
        bob = await Client.open(srv.url, "Bob")
        code, reason = await _shed(srv.url)
        assert code == CloseCode.TRY_AGAIN_LATER and "maximum of 2 connections" in reason
        status, _, body = await asyncio.to_thread(http_get, srv.port, "/readyz")
        assert status == 503 and b"maximum of 2" in body
        # The players already there play on.
        await ann.send(type="create_room", game="connect4", opponent={"kind": "open"})
        assert (await ann.expect("room_state"))["room"]["game"] == "connect4"
        await bob.close()
        for _ in range(100):
            if srv.app.gauge.connections < 2:
                break
            await asyncio.sleep(0.02)
        carl = await Client.open(srv.url, "Carl")
        assert carl.welcome["player"]["name"] == "Carl"
        status, _, _ = await asyncio.to_thread(http_get, srv.port, "/readyz")
        assert status == 503  # Ann and Carl: at the cap again
        await ann.close()
        await carl.close()


@pytest.mark.slow
async def test_after_its_event_loop_ran_late_a_node_sheds_newcomers_until_it_recovers() -> None:
    settings = Settings(shed_lag_seconds=0.2)
    async with running(port=0, store=MemoryStore(), settings=settings) as srv:
        status, _, body = await asyncio.to_thread(http_get, srv.port, "/readyz")
        assert (status, body) == (200, b"ready\n")
        time.sleep(0.5)  # the whole event loop stalls, as under a load it cannot keep up with
        await asyncio.sleep(0.2)  # the gauge's timer fires late and says so
        code, reason = await _shed(srv.url)
        assert code == CloseCode.TRY_AGAIN_LATER and "overloaded" in reason
        status, _, _ = await asyncio.to_thread(http_get, srv.port, "/readyz")
        assert status == 503
        await asyncio.sleep(srv.app.gauge.window)
        ann = await Client.open(srv.url, "Ann")
        assert ann.welcome["player"]["name"] == "Ann"
        await ann.close()


@pytest.mark.slow
async def test_while_its_engines_warm_up_a_node_says_so_and_refuses_nobody_for_its_lag() -> None:
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:slow_warm_up")
    await pool.start()
    try:
        settings = Settings(shed_lag_seconds=0.2)
        async with running(port=0, store=MemoryStore(), settings=settings, pool=pool) as srv:
            for _ in range(100):
                if srv.app.gauge.warming is not None:
                    break
                await asyncio.sleep(0.02)
            status, _, body = await asyncio.to_thread(http_get, srv.port, "/readyz")
            # Compiling or loading, as numba's cache files here say a start will.
            doing = "compiling" if srv.app.gauge.compiling else "loading from numba's cache"
            assert srv.app.gauge.compiling is not cache_ready()
            assert status == 200 and f"the engines are {doing}: 0 of 1".encode() in body
            # ``stats`` says the same to the page.
            asker = await Client.open(srv.url, "Asker")
            await asker.send(type="stats")
            view = (await asker.expect("stats"))["pool"]
            assert view["ready"] < view["workers"] and view["compiling"] is srv.app.gauge.compiling
            await asker.close()
            time.sleep(0.5)  # the loop stalls, as a first start's compiling makes it
            await asyncio.sleep(0.2)
            ann = await Client.open(srv.url, "Ann")  # welcomed, not shed
            assert ann.welcome["player"]["name"] == "Ann"
            status, _, _ = await asyncio.to_thread(http_get, srv.port, "/readyz")
            assert status == 200
            for _ in range(300):
                if srv.app.gauge.warming is None:
                    break
                await asyncio.sleep(0.05)
            status, _, body = await asyncio.to_thread(http_get, srv.port, "/readyz")
            assert (status, body) == (200, b"ready\n")
            await ann.close()
    finally:
        await pool.close()
