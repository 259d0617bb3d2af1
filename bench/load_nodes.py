"""``bench.load --nodes N``: the same load on one cluster node, then on N, through HAProxy.

Both runs go through Debian's ``haproxy`` with the repository's ``deploy/haproxy.cfg`` (extra
``server`` lines added for more than two nodes), on a scratch PostgreSQL database each and
a Redis key prefix of their own (deleted afterwards), so the only difference is the number
of nodes. HAProxy spreads connections by least connections, so with N nodes most games
have players on another node than the room's owner: their moves go through the owner's
inbox and its events through pub/sub, which is what the comparison measures.
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
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


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


async def _forget(prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(REDIS_URL)
    names = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    for start in range(0, len(names), 1000):
        await client.delete(*names[start:start + 1000])
    await client.aclose()


async def _after(drop: Callable[[], Any], prefix: str) -> None:
    await drop()
    await _forget(prefix)


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
        try:
            with tempfile.TemporaryDirectory() as folder:
                code = run(args, url, nodes=nodes, redis_url=REDIS_URL,
                           front=_haproxy(Path(folder)))
            if code:
                return code
            reports[nodes] = args.report
        finally:
            asyncio.run(_after(drop, prefix))
    one, many = reports[1], reports[args.nodes]
    print(f"\n== 1 node against {args.nodes}")
    for key in ("client_moves_per_s", "ack_p50_ms", "ack_p99_ms",
                "server_cpu_ms_per_client_move"):
        ratio = many[key] / one[key] if one[key] else float("nan")
        print(f"{key:<32} {one[key]:>10} {many[key]:>10}   x{ratio:.2f}")
    print(f"{'cpu ms per client move per node':<32} {one['node_cpu_ms_per_client_move']} "
          f"{many['node_cpu_ms_per_client_move']}")
    return 0
