"""The two duties ``bench.floor --duties`` adds to the websockets floor: what any server that
keeps this project's promises pays per move, whatever its own code does.

- **Durable before announced.** Each move is written to a SQLite file in WAL mode with
  ``synchronous=FULL`` (as ``server.storage.config`` opens it) by one thread of its own;
  moves that arrive while a commit is in flight share the next commit (as
  ``server.storage.sql_store``'s writer does). Plain ``sqlite3``, one INSERT with a row of
  values per move (as the server's, ``repository.games.write_moves``): the least a commit can
  cost, no ORM.
- **The AI's move found in another process.** Each AI turn is a job written to an engine
  process over a pipe and an answer read back with ``loop.add_reader`` (as
  ``server.engines.local`` does); the process answers at once, with no search, and its CPU
  is not the server's (``bench.load`` counts the server process's only).

Why measure them apart: the issue's target compares the server with a floor that does
neither, so the part of the gap these duties take is no room, rule or outbox code of ours,
and no change to that code can win it back. Of the server only the pipe's framing is used
(``server.engines.local.take_frames``), imported before the floor listens.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from server.engines.local import take_frames

_encode = json.JSONEncoder(separators=(",", ":")).encode

CHUNK = 1000
"""Most rows in one INSERT (3 parameters each, under SQLite's 32,766)."""

IN_FLIGHT = 32
"""Most jobs in the pipe at once; the rest wait their turn here. The server's pool writes a
job only to a free process, so it never fills the pipe; a burst of thousands at once would
(and the loop's reader makes the socket non-blocking: the write would fail, not wait)."""


def _engine(conn: multiprocessing.connection.Connection) -> None:
    """The engine process: answers each job with its id and a move, at once."""
    while True:
        try:
            job = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        conn.send_bytes(_encode({"kind": "answered", "id": job["id"], "move": "4",
                                 "depth": 1, "nodes": 1, "seconds": 0.0}).encode())


class Duties:
    """The store and the engine process of one floor server: ``await stored(row)`` returns
    once ``row`` is committed; ``await asked(job)`` returns the engine's answer."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS moves (room TEXT, ply INTEGER, "
                         "move TEXT, PRIMARY KEY (room, ply))")
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="floor-writer")
        self._waiting: list[tuple[tuple[str, int, str], asyncio.Future[None]]] = []
        self._committing = False
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe(duplex=True)
        self._process = context.Process(target=_engine, args=(child,), daemon=True)
        self._process.start()
        child.close()
        self._ids = itertools.count(1)
        self._asked: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._queued: collections.deque[bytes] = collections.deque()
        self._unread = bytearray()
        asyncio.get_running_loop().add_reader(self._conn.fileno(), self._on_readable)

    async def stored(self, row: tuple[str, int, str]) -> None:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((row, future))
        if not self._committing:
            self._committing = True
            asyncio.get_running_loop().create_task(self._commit_all())
        await future

    async def _commit_all(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                await loop.run_in_executor(self._writer, self._commit, [r for r, _ in batch])
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
        finally:
            self._committing = False

    def _commit(self, rows: list[tuple[str, int, str]]) -> None:
        self._db.execute("BEGIN")
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start:start + CHUNK]
            self._db.execute("INSERT OR REPLACE INTO moves VALUES "
                             + ", ".join(["(?, ?, ?)"] * len(chunk)),
                             [value for row in chunk for value in row])
        self._db.execute("COMMIT")

    async def asked(self, job: dict[str, Any]) -> dict[str, Any]:
        job["id"] = job_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._asked[job_id] = future
        self._queued.append(_encode(job).encode())
        self._send_some()
        return await future

    def _send_some(self) -> None:
        while self._queued and len(self._asked) - len(self._queued) < IN_FLIGHT:
            self._conn.send_bytes(self._queued.popleft())

    def _on_readable(self) -> None:
        data = os.read(self._conn.fileno(), 1 << 16)
        if not data:
            raise SystemExit("the floor's engine process died")
        self._unread += data
        for frame in take_frames(self._unread):
            answer = json.loads(frame)
            future = self._asked.pop(answer["id"], None)
            if future is not None and not future.done():
                future.set_result(answer)
        self._send_some()

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self._conn.fileno())
        self._conn.close()
        self._process.join(5)
        self._writer.shutdown()
        self._db.close()
