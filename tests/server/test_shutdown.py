"""``discus serve`` runs as its own process and stops cleanly on SIGTERM and SIGINT."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from wsclient import Client


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_the_server_closes_connections_as_going_away_and_exits_cleanly(
    signum: signal.Signals, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DISCUS_DATA_DIR"] = str(tmp_path)  # the embedded SQLite database lives here
    server = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    try:
        assert server.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(server.stdout.readline), 60)
        assert line.startswith("Discus serving http://127.0.0.1:"), line
        port = int(line.split(":")[2].split("/")[0])
        client = await Client.open(f"ws://127.0.0.1:{port}/ws")
        await client.send(type="create_room", game="connect4", opponent={"kind": "friend"})
        await client.expect("room_state")
        server.send_signal(signum)
        code = await asyncio.wait_for(asyncio.to_thread(server.wait), 20)
        assert code == 0
        await asyncio.wait_for(client.ws.wait_closed(), 5)
        assert client.ws.close_code == 1001
        assert (tmp_path / "discus.sqlite3").exists() and (tmp_path / "server-secret").exists()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
