"""Real cluster processes for the cluster tests: ``discus serve`` nodes on one PostgreSQL
database and a Redis (the shared one under a key prefix of the test's own, or a
``redis-server`` the test starts and stops itself), and what the tests read back from the
database.

Every process runs in a session of its own, so a node and what it spawned are ended
together, and only the processes a test started are ever signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parents[2]
SECRET = "the cluster tests' fixed secret"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_ready(port: int, what: str, proc: subprocess.Popen[bytes] | None = None,
                     log: Path | None = None, timeout: float = 90.0) -> None:
    """Until ``GET /readyz`` on ``port`` answers 200 (``proc`` must stay alive meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            told = log.read_text(errors="replace")[-3000:] if log is not None else ""
            raise AssertionError(f"{what} exited: {told}")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = await reader.read()
            writer.close()
            if b" 200 " in answer.split(b"\r\n", 1)[0]:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{what} not ready in {timeout:.0f} s"
        await asyncio.sleep(0.2)


class RedisServer:
    """A ``redis-server`` of the test's own on a free port, without persistence: stopped, it
    comes back empty, as a Redis that lost its memory does. Never the shared one."""

    def __init__(self, logs: Path) -> None:
        self.port = free_port()
        self.logs = logs
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self, timeout: float = 20.0) -> None:
        with open(self.logs / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", str(self.logs)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, (self.logs / "redis.log").read_text()
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.write(b"PING\r\n")
                answer = await asyncio.wait_for(reader.readline(), 2)
                writer.close()
                if answer.startswith(b"+PONG"):
                    return
            except (OSError, TimeoutError):
                pass
            assert time.monotonic() < deadline, f"redis-server not up in {timeout:.0f} s"
            await asyncio.sleep(0.1)

    def kill(self) -> None:
        """Stop it at once (SIGKILL): every key is lost, every connection drops."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


@dataclass
class Nodes:
    """The server processes of one test and where to reach them."""

    database_url: str
    redis_url: str
    logs: Path
    prefix: str = field(default_factory=lambda: f"discus-test-{uuid.uuid4().hex[:12]}")
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DISCUS_")}
        env.update(DATABASE_URL=self.database_url, REDIS_URL=self.redis_url,
                   DISCUS_REDIS_PREFIX=self.prefix, DISCUS_SECRET=SECRET,
                   DISCUS_DATA_DIR=str(self.logs), PYTHONPATH=str(ROOT))
        return env

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{name}.log", "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "server.cli", *args], cwd=ROOT,
                                    env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.procs[name] = proc
        return proc

    async def migrate(self) -> None:
        proc = self.spawn("migrate", "migrate")
        assert await asyncio.to_thread(proc.wait, 120) == 0, self.log("migrate")

    async def serve(self, name: str, *args: str, lease: float = 2.0) -> str:
        """Start ``discus serve`` as node ``name`` and wait until it is ready; its ws URL."""
        port = self.ports[name] = free_port()
        proc = self.spawn(name, "serve", "--port", str(port), "--lease", str(lease), *args)
        await wait_ready(port, name, proc, self.logs / f"{name}.log")
        return self.url(name)

    async def balance(self, *names: str) -> str:
        """Start HAProxy (the repository's ``deploy/haproxy.cfg``) in front of the two nodes
        ``names`` (started with ``--trusted-proxy 127.0.0.1``); its ws URL."""
        port = self.ports["haproxy"] = free_port()
        env = dict(os.environ, DISCUS_LB_BIND=f"127.0.0.1:{port}",
                   DISCUS_NODE1=f"127.0.0.1:{self.ports[names[0]]}",
                   DISCUS_NODE2=f"127.0.0.1:{self.ports[names[1]]}")
        with open(self.logs / "haproxy.log", "ab") as log:
            self.procs["haproxy"] = subprocess.Popen(
                [HAPROXY, "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")], env=env,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        await wait_ready(port, "haproxy", self.procs["haproxy"], self.logs / "haproxy.log")
        return self.url("haproxy")

    def url(self, name: str) -> str:
        return f"ws://127.0.0.1:{self.ports[name]}/ws"

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def terminate(self, name: str) -> None:
        """SIGTERM the node alone, as an orchestrator stopping it does."""
        self.procs[name].send_signal(signal.SIGTERM)

    async def wait_exit(self, name: str, timeout: float = 60.0) -> int | None:
        try:
            return await asyncio.to_thread(self.procs[name].wait, timeout)
        except subprocess.TimeoutExpired:
            return None

    def end_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what it spawned, if it outlived it


StoredMove = tuple[int, str, int, float]
"""(ply, move, epoch, created_at)."""


async def stored_games(database_url: str) -> dict[str, tuple[str, list[StoredMove]]]:
    """Every game in the database: id -> (status, its moves by ply)."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        found: dict[str, tuple[str, list[StoredMove]]] = {
            row["id"]: (row["status"], [])
            for row in await conn.fetch("SELECT id, status FROM games")}
        for row in await conn.fetch("SELECT game_id, ply, move, epoch, created_at FROM moves "
                                    "ORDER BY game_id, ply"):
            found[row["game_id"]][1].append((row["ply"], row["move"], row["epoch"],
                                             row["created_at"]))
    finally:
        await conn.close()
    return found


async def stored_plies(database_url: str, game_id: str) -> tuple[int, str]:
    """How many moves of ``game_id`` are stored now, and the game's stored status."""
    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(dsn)
    try:
        count = await conn.fetchval("SELECT count(*) FROM moves WHERE game_id = $1", game_id)
        status = await conn.fetchval("SELECT status FROM games WHERE id = $1", game_id)
        return int(count), str(status)
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def fresh_nodes(tmp_path: Path) -> AsyncIterator[Nodes]:
    """Nodes over a database of their own (dropped after) and the shared Redis, whose keys
    under the nodes' prefix are deleted after."""
    from tests.server.storage.conftest import REDIS_URL, create_database, drop_database, drop_keys

    url, name = await create_database()
    made = Nodes(url, REDIS_URL, tmp_path)
    try:
        await made.migrate()
        yield made
    finally:
        made.end_all()
        await drop_database(name)
        await drop_keys(made.prefix)
