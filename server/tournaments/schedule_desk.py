"""Admins' recurring arenas: the schedule messages, and the arenas made from each schedule
ahead of time (``server.tournaments.schedules``), as the tournament desk's part.

Each tick (at start-up, when a schedule is made, and every ``CHECK_SECONDS``) makes the
occurrences due, each as an arena with a fixed id, then stores how many it dealt with. A
crash between the two finds the arena already stored and does not make it again; a restart
goes on from the first occurrence not dealt with, so none is skipped either.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import games
from server import errors
from server import protocol as p
from server.connections.client import Client
from server.play.lobby import Lobby
from server.storage.store import ScheduleRecord, Store, TournamentRecord
from server.tournaments import check_conditions
from server.tournaments.schedules import arena_of, due, first_start

log = logging.getLogger("discus.schedules")

CHECK_SECONDS = 30.0
"""How often schedules are looked at for arenas due (well within any lead)."""

ScheduleMessage = p.AdminCreateSchedule | p.AdminListSchedules | p.AdminDeleteSchedule


class ArenaSchedules:
    """Schedules, and the arenas made from them through ``open_arena`` (``Arenas.open``, in
    ``server.tournaments.arena_desk``: it stores the arena and runs it)."""

    def __init__(self, store: Store, lobby: Lobby,
                 open_arena: Callable[[TournamentRecord], Awaitable[None]],
                 now: Callable[[], float], lead: float) -> None:
        self.store = store
        self.lobby = lobby
        self.open_arena = open_arena
        self.now = now
        self.lead = lead
        self.lock = asyncio.Lock()
        """One tick or admin change at a time: an occurrence is never made twice at once."""
        self.timer: asyncio.TimerHandle | None = None
        self.closed = False

    async def handle(self, client: Client, message: ScheduleMessage) -> p.Schedules:
        account: Any = client.admin
        if account is None:
            raise errors.Forbidden(f"{message.type} is for admins: log in with admin_login "
                                   "and an admin token first")
        if isinstance(message, p.AdminCreateSchedule):
            await self._create(account.name, message)
        elif isinstance(message, p.AdminDeleteSchedule):
            async with self.lock:
                if not await self.store.delete_schedule(message.schedule):
                    raise errors.UnknownSchedule(f"there is no schedule {message.schedule!r}")
            log.info("admin %s deleted arena schedule %s", account.name, message.schedule)
        return p.Schedules(schedules=[_view(s) for s in await self.store.list_schedules()])

    async def start(self) -> None:
        """Make what is due now, then look again every ``CHECK_SECONDS``."""
        await self.tick()
        self._arm()

    def close(self) -> None:
        self.closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    async def tick(self) -> None:
        """Make every arena due from every schedule; a schedule that fails is logged and
        tried again next tick."""
        async with self.lock:
            for schedule in await self.store.list_schedules():
                try:
                    await self._make_due(schedule)
                except Exception:
                    log.exception("arena schedule %s: could not make its arenas", schedule.id)

    # --- inside ----------------------------------------------------------------------------

    async def _create(self, admin: str, message: p.AdminCreateSchedule) -> None:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        control = self.lobby.time_control(message.time_control)
        assert control is not None
        check_conditions(message.min_rating, message.max_rating)
        now = self.now()
        start = message.first_start if message.first_start is not None else first_start(
            message.every_minutes, now)
        schedule = ScheduleRecord(
            "s" + secrets.token_hex(4), message.game, message.name, control.name,
            message.minutes, message.every_minutes, start, admin, now, message.berserk,
            message.private, message.min_rating, message.max_rating, message.min_games,
            rated=message.rated)
        async with self.lock:
            await self.store.save_schedule(schedule)
            await self._make_due(schedule)
        log.info("admin %s made arena schedule %s (%s every %d min)", admin, schedule.id,
                 schedule.name, schedule.every_minutes)

    async def _make_due(self, schedule: ScheduleRecord) -> None:
        now = self.now()
        make, made = due(schedule, now, self.lead)
        for k in make:
            if await self.store.load_tournament(schedule.arena_id(k)) is None:
                await self.open_arena(arena_of(schedule, k, now))
        if made != schedule.made:
            await self.store.save_schedule(replace(schedule, made=made))

    def _arm(self) -> None:
        if self.closed:
            return
        self.timer = asyncio.get_running_loop().call_later(CHECK_SECONDS, self._due)

    def _due(self) -> None:
        async def run() -> None:
            try:
                await self.tick()
            finally:
                self._arm()
        asyncio.ensure_future(run())


def _view(schedule: ScheduleRecord) -> p.ScheduleView:
    return p.ScheduleView(
        id=schedule.id, game=schedule.game, name=schedule.name,
        time_control=schedule.time_control, minutes=schedule.minutes,
        every_minutes=schedule.every_minutes, first_start=schedule.first_start,
        next_start=schedule.start_of(schedule.made), berserk=schedule.berserk,
        private=schedule.private, min_rating=schedule.min_rating,
        max_rating=schedule.max_rating, min_games=schedule.min_games, rated=schedule.rated)
