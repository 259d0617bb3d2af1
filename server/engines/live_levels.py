"""The difficulty levels this server plays now, kept current with the database's.

Why a part of its own: an admin's edit on any server must count from the next AI move
everywhere (asked a tenth of a second after it: ``server.storage.levels.FRESH_SECONDS``),
with no restart, and the lobby, ``welcome`` and the admin pages must follow it.
Levels are kept by a ``LevelBook`` on the store's database; ``refresh`` runs before every AI
move, a poller every ``POLL_SECONDS`` and the book's change listener (Redis) at once. Whoever
shows levels registers ``on_change``. A server without a database (``MemoryStore``) plays
``ai.levels.DEFAULT_LEVELS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

import games
from ai.levels import DEFAULT_LEVELS, Level, levels_of
from server import protocol as p
from server.storage.levels import LevelBook

log = logging.getLogger("discus.levels")

POLL_SECONDS = 5.0
"""How often a server checks the levels' version between AI moves, so the lobby's advertised
levels and admin pages follow another server's edit even when Redis (whose announcement
reloads at once) is absent or lost a message."""

Levels = Mapping[str, Sequence[Level]]


class LiveLevels:
    """The current levels of every game. Call ``open()`` before serving, ``close()`` after
    the server's ``stopping`` is set."""

    def __init__(self, engine: AsyncEngine | None, redis_url: str | None,
                 stopping: asyncio.Event, levels: Levels = DEFAULT_LEVELS) -> None:
        self.book = LevelBook(engine, redis_url) if engine is not None else None
        self.current: Levels = levels
        self._stopping = stopping
        self._listeners: list[Callable[[], None]] = []
        self._poller: asyncio.Task[None] | None = None

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each change of ``current``."""
        self._listeners.append(listener)

    def set(self, levels: Levels) -> None:
        """Play ``levels`` from the next AI move on (an admin edit, or a test's)."""
        self.current = levels
        for listener in self._listeners:
            listener()

    def names(self) -> dict[str, list[str]]:
        """Each game's level names, weakest first."""
        return {g: [lv.name for lv in levels_of(g, self.current)] for g in games.names()}

    def game_infos(self) -> list[p.GameInfo]:
        """The games as ``welcome`` describes them, with their levels."""
        infos = []
        for name in games.names():
            game = games.load(name)
            infos.append(p.GameInfo(
                name=name, title=game.title, players=list(game.colours),
                rows=game.rows, cols=game.cols,
                levels=[p.LevelInfo(name=lv.name, order=lv.order, description=lv.description)
                        for lv in levels_of(name, self.current)]))
        return infos

    @property
    def version(self) -> int:
        return self.book.version if self.book is not None else -1

    async def open(self) -> None:
        """Read the stored levels and play them from now on."""
        if self.book is None:
            return
        await self.book.open()
        self.book.on_change(self._book_changed)
        if self.book.snapshot():
            self.set(self.book.snapshot())
        self._poller = asyncio.create_task(self._poll())

    async def refresh(self) -> None:
        """Before each AI move: take up any server's edit since the last one. A database
        that fails now leaves the levels as they were (the move is still played)."""
        if self.book is None:
            return
        try:
            levels = await self.book.levels()
        except Exception:
            log.warning("could not check the levels; playing the ones held", exc_info=True)
            return
        if levels and levels is not self.current:
            self.set(levels)

    async def close(self) -> None:
        """After ``stopping`` is set: the poller ends by itself, then the book closes."""
        if self._poller is not None:
            with contextlib.suppress(Exception):
                await self._poller
        if self.book is not None:
            await self.book.close()

    def _book_changed(self, version: int) -> None:
        assert self.book is not None
        if self.book.snapshot():
            self.set(self.book.snapshot())

    async def _poll(self) -> None:
        """Refresh every ``POLL_SECONDS`` until the server is stopping (told, not cancelled:
        a cancelled database read can wedge the driver's connection)."""
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), POLL_SECONDS)
                return
            await self.refresh()
