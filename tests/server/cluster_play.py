"""Players for the cluster tests, modelled on the page (``server/web/static/net.js``): a
connection that comes back with its resume token when it closes (at once on 1012, after a
short pause otherwise) and resyncs on ``stale_ply``, and a driver per room that keeps
sending the next move of whoever is to move, resending after an error or a silence.

Each page keeps everything it was told per room (``move_made``, ``room_state``,
``game_over``, errors), so a test can hold what players saw against what was stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake


@dataclass
class Seen:
    """What one page was told about one room, in order."""

    made: list[tuple[int, str, int]] = field(default_factory=list)
    """``move_made``: (ply, move, connection number)."""
    states: list[tuple[list[str], int]] = field(default_factory=list)
    """``room_state``: (the room's moves, connection number)."""
    over: bool = False
    errors: list[dict[str, Any]] = field(default_factory=list)


class Page:
    """One player's connection, reconnecting as the page does."""

    def __init__(self, name: str, where: Callable[[], str]) -> None:
        self.name = name
        self.where = where
        """The URL to (re)connect to."""
        self.token: str | None = None
        self.player_id = ""
        self.ws: ClientConnection | None = None
        self.url = ""
        """Where it is connected (or last tried to)."""
        self.connection = 0
        self.closes: list[int | None] = []
        self.gaps: list[tuple[float, float]] = []
        """(closed, welcomed again) in wall-clock seconds, for each time it was away."""
        self._closed_at: float | None = None
        self.seen: dict[str, Seen] = {}
        self.tables: dict[str, Table] = {}
        self.created: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.welcomed = asyncio.Event()
        self.lost = False
        """True if it could not come back within ``RECONNECT_SECONDS``."""
        self._closing = False
        self._reader: asyncio.Task[None] | None = None

    RECONNECT_SECONDS = 45.0

    def away(self, when: float, margin: float) -> bool:
        """Whether it was away (or within ``margin`` of it) at ``when`` (wall clock)."""
        ends = [*self.gaps, *([(self._closed_at, time.time())] if self._closed_at else [])]
        return any(closed - margin <= when <= back + margin for closed, back in ends)

    def view(self, room: str) -> Seen:
        return self.seen.setdefault(room, Seen())

    async def open(self, url: str | None = None) -> None:
        await self._connect(url or self.where())
        self._reader = asyncio.create_task(self._read())
        await asyncio.wait_for(self.welcomed.wait(), 30)

    def leaving(self, since: float) -> None:
        """Count it as away from ``since`` (wall clock) until it is welcomed again: its node
        was told to stop, so it is about to be closed and to come back elsewhere."""
        if self._closed_at is None:
            self._closed_at = since

    async def _connect(self, url: str) -> None:
        self.url = url
        self.welcomed.clear()
        self.ws = await connect(url, max_size=None, open_timeout=10)
        self.connection += 1
        await self.ws.send(json.dumps({"type": "hello", "version": 1, "name": self.name,
                                       "resume": self.token}))

    async def send(self, **message: Any) -> None:
        if self.ws is None:
            return
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(message))

    async def resync(self) -> None:
        """Drop the connection and come back at once (what the page does on ``stale_ply``)."""
        if self.ws is not None:
            self._closed_at = time.time()
            await self.ws.close()

    async def close(self) -> None:
        self._closing = True
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 10)

    async def _read(self) -> None:
        while True:
            assert self.ws is not None
            try:
                frame = await self.ws.recv()
            except ConnectionClosed as exc:
                if self._closing:
                    return
                code = exc.rcvd.code if exc.rcvd is not None else None
                if self._closed_at is None:
                    self._closed_at = time.time()
                self.closes.append(code)
                await asyncio.sleep(random.random() * 0.3 if code in (1012, 1000) else 0.5)
                if not await self._come_back():
                    self.lost = True
                    return
                continue
            self._note(json.loads(frame))

    async def _come_back(self) -> bool:
        deadline = time.monotonic() + self.RECONNECT_SECONDS
        while not self._closing:
            try:
                await self._connect(self.where())
                return True
            except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
                if time.monotonic() > deadline:
                    return False
                await asyncio.sleep(0.3)
        return False

    def _note(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "welcome":
            self.token = message["resume"]
            self.player_id = message["player"]["id"]
            if self._closed_at is not None:
                self.gaps.append((self._closed_at, time.time()))
                self._closed_at = None
            self.welcomed.set()
            return
        if kind == "room_state":
            room = message["room"]["id"]
            self.view(room).states.append((list(message["room"]["moves"]), self.connection))
            if room not in self.tables:
                self.created.put_nowait(message)
        elif kind == "move_made":
            room = message["room"]
            self.view(room).made.append((message["ply"], message["move"], self.connection))
        elif kind == "game_over":
            room = message["room"]
            self.view(room).over = True
        elif kind == "error":
            room = message.get("room") or ""
            self.view(room).errors.append(message)
        else:
            return
        table = self.tables.get(room)
        if table is not None:
            table.note(self, message)


@dataclass
class Table:
    """One room as the test drives it: its seats (None for the AI's), the furthest position
    any of its pages was told of, and every error they got for it."""

    room: str
    game: str
    seats: list[Page | None]
    position: dict[str, Any]
    status: str = "active"
    errors: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    chosen: dict[int, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        for page in self.seats:
            if page is not None:
                page.tables[self.room] = self

    @property
    def ai_seat(self) -> int | None:
        return self.seats.index(None) if None in self.seats else None

    @property
    def pages(self) -> list[Page]:
        return [p for p in self.seats if p is not None]

    @property
    def finished(self) -> bool:
        return self.status != "active" or self.position.get("to_move") is None

    @property
    def game_id(self) -> str:
        return f"{self.room}-1"

    def note(self, page: Page, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "room_state":
            position = message["room"]["position"]
            if position["ply"] >= self.position["ply"]:
                self.position = position
                self.status = message["room"]["status"]
        elif kind == "move_made":
            if message["position"]["ply"] > self.position["ply"]:
                self.position = message["position"]
                self.status = message["status"]
        elif kind == "game_over":
            self.status = "finished"
        elif kind == "error":
            self.errors.append((page.name, message))
        self.changed.set()


RefusedHook = Callable[[Table, int, dict[str, Any]], Awaitable[None]]


async def drive(table: Table, until: asyncio.Event, pause: float = 0.0,
                on_refused: RefusedHook | None = None, silence: float = 4.0,
                start_after: float = 0.0) -> None:
    """Play random legal moves (or those ``table.chosen`` holds for their ply) for the
    people of ``table``, from ``start_after`` seconds on, until its game ends or ``until``
    is set: the mover sends, then waits for the position to move on; an error or
    ``silence`` seconds without news sends the same move again (a ``stale_ply`` resyncs the
    mover's connection first, as the page does). ``on_refused`` sees each error the mover
    got for its move first."""
    await asyncio.sleep(start_after)
    while not until.is_set() and not table.finished:
        ply = table.position["ply"]
        seat = table.position["to_move"]
        if seat == table.ai_seat:
            await _changed(table, until, lambda p=ply: table.position["ply"] > p, silence)
            continue
        page = table.seats[seat]
        assert page is not None
        move = table.chosen.setdefault(ply, table.rng.choice(table.position["legal_moves"]))
        errors_before = len(table.errors)
        table.changed.clear()
        ref = f"{table.room}:{ply}"  # a late answer to an earlier move is not this one's
        await page.send(type="move", room=table.room, ply=ply, move=move, id=ref)
        await _changed(table, until, lambda p=ply, e=errors_before: table.position["ply"] > p
                       or len(table.errors) > e, silence)
        for who, error in table.errors[errors_before:]:
            if who != page.name or error.get("ref") not in (None, ref):
                continue
            if on_refused is not None:
                await on_refused(table, ply, error)
            if error.get("code") == "stale_ply":
                await page.resync()
                await asyncio.sleep(0.3)
        if len(table.errors) > errors_before and table.position["ply"] == ply:
            await asyncio.sleep(0.3)  # "send that again", after a breath
        elif pause:
            await asyncio.sleep(pause)


async def _changed(table: Table, until: asyncio.Event, done: Callable[[], bool],
                   silence: float) -> None:
    deadline = time.monotonic() + silence
    while not done() and not until.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        table.changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(table.changed.wait(), min(left, 0.5))
