"""A first start as a new player meets it: a fresh ``discus serve`` on a copy of the tree with
no numba cache and an empty data directory.

``python -m bench.first_start [--keep]``: copies the tree (sources, books, shipped tables;
no ``.git``, no ``__pycache__`` and so no numba cache) to a temporary directory, starts
``discus serve`` from it on a free port with an empty ``DISCUS_DATA_DIR``, and measures from
the moment the process is started:

- **first page**: ``GET /`` answers 200;
- **first AI move**, for each game at its weakest level: a guest sits down, plays a first
  move, and the AI's ``move_made`` arrives (the time of the reply itself too);
- **warm workers**: ``stats`` says every AI worker process is warmed up (its engines
  compiled) — and what ``/readyz`` and the server's own output said meanwhile.

Prints one line per figure and, last, one JSON line with all of them. ``--keep`` leaves the
copy and its data directory for a look (their path is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = shutil.ignore_patterns(
    ".git", ".venv", "data", "__pycache__", "*.nbi", "*.nbc", ".pytest_cache", ".mypy_cache",
    ".ruff_cache", "node_modules", "*.egg-info", "build", "dist")
"""What a fresh clone does not have: numba's cache lives in ``__pycache__``."""
FIRST_MOVES = {"connect4": "4", "othello": "f5"}
"""A first move for the person in each game (seat 0 moves first)."""
GIVE_UP = 600.0
"""Seconds after which a figure not reached yet is reported as missing."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fresh_copy(into: Path, source: Path = ROOT) -> Path:
    """The tree without what a clone lacks; asserts no numba cache came along."""
    tree = into / "discus"
    shutil.copytree(source, tree, ignore=SKIPPED)
    left = [p for p in tree.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert not left, f"numba cache files were copied: {left[:3]}"
    return tree


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def http_text(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return str(answer.read().decode())
    except urllib.error.HTTPError as exc:
        return str(exc.read().decode())
    except OSError as exc:
        return f"({exc})"


class Output:
    """The server's output lines, each with the seconds since the start when it came."""

    def __init__(self, stream: Any, started: float) -> None:
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(stream, started), daemon=True)
        self._thread.start()

    def _read(self, stream: Any, started: float) -> None:
        for raw in stream:
            self.lines.append((time.monotonic() - started, raw.rstrip("\n")))


REFUSED: list[float] = []
"""When (seconds from the start) a connection was refused with 1013."""
TIMED_OUT: list[float] = []
"""When (seconds from the start) an opening handshake went unanswered for 10 s."""


async def opened(url: str, started: float) -> Any:
    """A websocket connection, asked for again after each refusal (counted in ``REFUSED``)."""
    while True:
        try:
            ws = await connect(url, max_size=None)
        except TimeoutError:  # the server's loop did not answer the handshake in 10 s
            TIMED_OUT.append(round(time.monotonic() - started, 2))
            continue
        try:
            await asyncio.wait_for(ws.recv(), 0.3)
        except TimeoutError:
            return ws  # nothing said before hello: not refused
        except ConnectionClosed as exc:
            if exc.rcvd is None or exc.rcvd.code != 1013:
                raise
            REFUSED.append(round(time.monotonic() - started, 2))
            await asyncio.sleep(0.5)


async def first_ai_move(url: str, game: str, started: float) -> dict[str, Any]:
    """A guest's first game against the game's weakest level: the seconds (from the server's
    start) when the AI's reply came, and how long the reply took."""
    async with await opened(url, started) as ws:
        async def expect(kind: str, **fields: Any) -> dict[str, Any]:
            while True:
                message: dict[str, Any] = json.loads(await ws.recv())
                if message["type"] == "error":
                    raise RuntimeError(f"the server refused: {message}")
                if message["type"] == kind and all(message.get(k) == v
                                                   for k, v in fields.items()):
                    return message

        await ws.send(json.dumps({"type": "hello", "version": 1, "name": f"bench-{game}"}))
        welcome = await expect("welcome")
        info = next(g for g in welcome["games"] if g["name"] == game)
        level = info["levels"][0]["name"]
        await ws.send(json.dumps({"type": "create_room", "game": game, "seat": 0,
                                  "opponent": {"kind": "ai", "level": level}}))
        room = (await expect("room_state"))["room"]["id"]
        await ws.send(json.dumps({"type": "move", "room": room, "ply": 0,
                                  "move": FIRST_MOVES[game]}))
        asked = time.monotonic()
        await expect("move_made", ply=0)
        await expect("move_made", ply=1)
        now = time.monotonic()
        return {"game": game, "level": level, "at": round(now - started, 2),
                "reply_seconds": round(now - asked, 2)}


async def pool_ready(url: str, started: float) -> tuple[int, int] | None:
    async with await opened(url, started) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": "bench-stats"}))
        await ws.send(json.dumps({"type": "stats"}))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if message["type"] == "stats":
                pool = message["pool"]
                return None if pool is None else (pool["ready"], pool["workers"])


async def measure(tree: Path, data: Path) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    ws_url = f"ws://127.0.0.1:{port}/ws"
    env = {**os.environ, "PYTHONPATH": str(tree), "DISCUS_DATA_DIR": str(data),
           "PYTHONUNBUFFERED": "1"}
    env.pop("NUMBA_CACHE_DIR", None)  # the cache goes where a clone's would: __pycache__
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    started = time.monotonic()
    server = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1", "--port",
         str(port)], cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    output = Output(server.stdout, started)
    figures: dict[str, Any] = {"first_page": None, "first_ai_move": [], "warm_workers": None,
                               "readyz": []}
    try:
        while time.monotonic() - started < GIVE_UP and server.poll() is None:
            if http_status(base + "/") == 200:
                figures["first_page"] = round(time.monotonic() - started, 2)
                break
            await asyncio.sleep(0.05)
        if figures["first_page"] is None:
            raise RuntimeError("the page never answered")
        figures["readyz"].append((figures["first_page"], http_status(base + "/readyz"),
                                  http_text(base + "/readyz").strip()))
        moves = asyncio.gather(*(first_ai_move(ws_url, game, started)
                                 for game in FIRST_MOVES))
        while time.monotonic() - started < GIVE_UP:
            ready = await pool_ready(ws_url, started)
            at = round(time.monotonic() - started, 2)
            readyz = (at, http_status(base + "/readyz"), http_text(base + "/readyz").strip())
            said = figures["readyz"][-1]
            if (readyz[1], re.sub(r"\d+", "N", readyz[2])) != (said[1], re.sub(r"\d+", "N",
                                                                             said[2])):
                figures["readyz"].append(readyz)
            if ready is None or ready[0] == ready[1]:
                figures["warm_workers"] = at
                figures["workers"] = None if ready is None else ready[1]
                break
            await asyncio.sleep(0.5)
        figures["first_ai_move"] = await asyncio.wait_for(moves, GIVE_UP)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    figures["refused_1013"] = REFUSED
    figures["handshake_timeouts"] = TIMED_OUT
    # What the server says, without the websockets library's line per connection.
    figures["output"] = [(at, line) for at, line in output.lines
                         if "websockets.server" not in line][:60]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.first_start", description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the copy and its data")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="the tree to copy and start (default: this one)")
    args = parser.parse_args(argv)
    where = Path(tempfile.mkdtemp(prefix="discus-first-start-"))
    try:
        tree = fresh_copy(where, args.tree)
        data = where / "data"
        data.mkdir()
        figures = asyncio.run(measure(tree, data))
    finally:
        if args.keep:
            print(f"kept in {where}")
        else:
            shutil.rmtree(where, ignore_errors=True)
    print(f"first page           {figures['first_page']} s")
    for move in figures["first_ai_move"]:
        print(f"first AI move        {move['at']} s ({move['game']} {move['level']}: reply "
              f"in {move['reply_seconds']} s)")
    print(f"warm workers         {figures['warm_workers']} s ({figures.get('workers')} "
          "workers)")
    print(f"refused with 1013    {len(figures['refused_1013'])} times")
    print(f"handshake timed out  {len(figures['handshake_timeouts'])} times")
    for at, status, text in figures["readyz"]:
        print(f"/readyz at {at:7.2f} s  {status} {text[:100]}")
    for at, line in figures["output"]:
        print(f"output  at {at:7.2f} s  {line[:110]}")
    print(json.dumps({k: v for k, v in figures.items() if k != "output"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
