"""``bench.load --nodes N``: the same load on one cluster node, then on N, through HAProxy.

Both runs go through Debian's ``haproxy`` with the repository's ``deploy/haproxy.cfg`` (extra
``server`` lines added for more than two nodes), on a scratch PostgreSQL database each and
a Redis key prefix of their own (deleted afterwards), so the only difference is the number
of nodes. HAProxy spreads connections by least connections, so with N nodes most games
have players on another node than the room's owner: their moves go through the owner's
inbox and its events through pub/sub, which is what the comparison measures.

Redis's cost is counted per client move and per node: the commands and bytes of Redis's own
``INFO commandstats`` and ``INFO stats`` over the measured play, divided by the client moves
and the nodes, and, where a node has them (``Cluster.redis_counts()``), its own counts per
client move. Unless ``$REDIS_URL`` names one, the runs use a Redis of their own
(``redis-server`` on a free port, nothing saved), so that Redis's counts are the nodes'
alone; on a shared Redis they include every other client's commands.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOCAL_REDIS_URL = "redis://127.0.0.1:6379/0"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _haproxy(folder: Path) -> Callable[[list[int]], tuple[int, Callable[[], None]]]:
    """Start HAProxy in front of the nodes' ports: (its port, how to stop it)."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"

    def front(ports: list[int]) -> tuple[int, Callable[[], None]]:
        config = (ROOT / "deploy" / "haproxy.cfg").read_text()
        for index, port in enumerate(ports[2:], start=3):
            config += f"    server node{index} 127.0.0.1:{port} check\n"
        path = folder / "haproxy.cfg"
        path.write_text(config)
        port = _free_port()
        env = dict(os.environ, DISCUS_LB_BIND=f"127.0.0.1:{port}",
                   DISCUS_NODE1=f"127.0.0.1:{ports[0]}",
                   DISCUS_NODE2=f"127.0.0.1:{ports[min(1, len(ports) - 1)]}")
        proc = subprocess.Popen([binary, "-db", "-f", str(path)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not _ready(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("haproxy did not start")
            time.sleep(0.2)

        def stop() -> None:
            proc.terminate()
            proc.wait(timeout=10)

        return port, stop

    return front


def _ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return b" 200 " in sock.recv(64)
    except OSError:
        return False


def _redis(folder: Path) -> tuple[str, Callable[[], None]]:
    """``$REDIS_URL``, else a Redis of this run's own on a free port, else the local one:
    (its URL, how to stop it)."""
    binary = shutil.which("redis-server")
    if "REDIS_URL" in os.environ or binary is None:
        return os.environ.get("REDIS_URL", LOCAL_REDIS_URL), lambda: None
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not _pong(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("redis-server did not start")
        time.sleep(0.1)

    def stop() -> None:
        proc.terminate()
        proc.wait(timeout=10)

    return f"redis://127.0.0.1:{port}/0", stop


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


async def _forget(url: str, prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    names = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    for start in range(0, len(names), 1000):
        await client.delete(*names[start:start + 1000])
    await client.aclose()


async def _after(drop: Callable[[], Any], url: str, prefix: str) -> None:
    await drop()
    await _forget(url, prefix)


def compare(args: argparse.Namespace, run: Callable[..., int]) -> int:
    """Run the load on 1 node, then ``args.nodes``; print both and the ratios."""
    from bench.storage import scratch_postgres

    reports: dict[int, dict[str, Any]] = {}
    args.store = "postgres"
    for nodes in sorted({1, args.nodes}):
        prefix = f"discus-bench-{uuid.uuid4().hex[:10]}"
        os.environ["DISCUS_REDIS_PREFIX"] = prefix  # the nodes inherit it
        url, drop = asyncio.run(scratch_postgres())
        print(f"\n== {nodes} node(s)", flush=True)
        with tempfile.TemporaryDirectory() as folder:
            redis_url, stop_redis = _redis(Path(folder))
            try:
                code = run(args, url, nodes=nodes, redis_url=redis_url,
                           front=_haproxy(Path(folder)))
                if code:
                    return code
                reports[nodes] = args.report
            finally:
                asyncio.run(_after(drop, redis_url, prefix))
                stop_redis()
    one, many = reports[1], reports[args.nodes]
    print(f"\n== 1 node against {args.nodes}")
    for key in ("client_moves_per_s", "ack_p50_ms", "ack_p99_ms",
                "server_cpu_ms_per_client_move", "redis_commands_per_client_move_per_node",
                "redis_bytes_in_per_client_move_per_node",
                "redis_bytes_out_per_client_move_per_node"):
        ratio = many[key] / one[key] if one[key] else float("nan")
        print(f"{key:<42} {one[key]:>10} {many[key]:>10}   x{ratio:.2f}")
    for key in ("node_cpu_ms_per_client_move", "redis_commands_per_client_move_per_node_by_name"):
        print(f"{key}:\n  1 node:  {one[key]}\n  {args.nodes} nodes: {many[key]}")
    for key in sorted(k for k in many if k.startswith("node_redis_per_client_move")):
        print(f"{key} ({args.nodes} nodes, the node's own counts): {many[key]}")
    return 0
