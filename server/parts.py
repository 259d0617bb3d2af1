"""Every part of one server, as ``server.app.build`` wires them, and what the whole does over
its life: its housekeeping every few seconds, and the order in which it stops.

Why a module: the composition root (``server.app``) then reads as what it is, the wiring
(``build``) and the serving (``running``); the parts and their shutdown order are here, in one
place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from websockets.asyncio.server import Server as WsServer

from server.admin.desk import AdminDesk
from server.admin.stats import StatsDesk
from server.bots.desk import BotDesk
from server.challenges.desk import ChallengeDesk
from server.chat.desk import ChatDesk
from server.cluster.cluster import Cluster
from server.connections.outbox import Outbox
from server.engines import Pool
from server.engines.idle_proving import IdleProver
from server.engines.live_levels import LiveLevels
from server.engines.overload import LoadGauge
from server.ladder.desk import LadderDesk
from server.metrics import Metrics
from server.people.accounts import AccountDesk
from server.people.identity import Identity
from server.play.lobby import Lobby
from server.play.placement import Placement
from server.play.runner import RoomRunner
from server.ratings.desk import RatingDesk
from server.reviews.desk import ReviewDesk
from server.reviews.history_desk import HistoryDesk
from server.settings import RECONNECT_REASON, SHUTDOWN_SECONDS, Settings
from server.storage.store import Store
from server.tournaments.desk import TournamentDesk
from server.web.gateway import Gateway
from server.web.http import HttpSide

log = logging.getLogger("discus.server")


@dataclass
class Server:
    """Every part of one running server, built once by ``server.app.build``."""

    settings: Settings
    store: Store
    stopping: asyncio.Event
    """Set at shutdown: commands are refused, AI answers dropped, loops end."""
    levels: LiveLevels
    outbox: Outbox
    lobby: Lobby
    placement: Placement
    identity: Identity
    runner: RoomRunner
    bots: BotDesk
    challenges: ChallengeDesk
    accounts: AccountDesk
    ratings: RatingDesk
    reviews: ReviewDesk
    admin: AdminDesk
    history: HistoryDesk
    stats: StatsDesk
    gauge: LoadGauge
    gateway: Gateway
    http: HttpSide
    metrics: Metrics
    pool: Pool | None
    cluster: Cluster | None
    tournaments: TournamentDesk
    ladder: LadderDesk
    prover: IdleProver
    chat: ChatDesk

    async def sweep_forever(self) -> None:
        """Every few seconds until ``stopping``: the rooms' housekeeping, connections idle
        too long, tournament games ended elsewhere, chat lines past their time, then
        connections of bots and admins whose token was revoked elsewhere. The sweep is the
        safety net (it asks the AI again where a move was lost), so a step that fails is
        logged and the sweep goes on: one error must not end it for the server's life."""
        steps = (
            (self.runner.sweep, "sweep the rooms"),
            (self.gateway.sweep, "close idle connections"),
            (self.tournaments.sweep, "look for tournament games ended elsewhere"),
            (self.chat.sweep, "delete chat lines past their time"),
            (self.bots.cut_revoked, "check bot tokens for revocations"),
            (self.admin.cut_revoked, "check admin tokens for revocations"),
        )
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.settings.sweep_seconds)
                return
            for step, what in steps:
                try:
                    await step()
                except Exception:
                    log.exception("failed to %s", what)

    async def shut_down(self, ws_server: WsServer, sweeper: asyncio.Task[None]) -> None:
        """Stop taking work, finish what touches the store, hand the rooms over, then close
        the connections. Nothing is cancelled while it may use the store (a cancelled
        aiosqlite call was seen to hang the loop at exit); a task still running after
        ``SHUTDOWN_SECONDS`` is cancelled as a last resort."""
        self.stopping.set()
        self.runner.stop_timers()
        self.tournaments.close()
        await self.ladder.close(SHUTDOWN_SECONDS)
        await self.placement.drain()  # forwarded commands wait for the rooms' next owner
        await self.runner.quiesce()  # commands under way finish, and announce
        await self.placement.hand_over()  # other nodes take the rooms over from here
        await self.admin.close()  # before the pool: a calibration must not finish on quick moves
        if self.pool is not None:
            await self.pool.close()
        await self.reviews.close()
        await asyncio.wait([sweeper], timeout=SHUTDOWN_SECONDS)
        await self.runner.wait_tasks(SHUTDOWN_SECONDS)
        await self.levels.close()
        await self.placement.close()  # events published, leases given up
        ws_server.close(code=self.placement.close_code,
                        reason=RECONNECT_REASON if self.placement.close_code == 1012 else "")
        await ws_server.wait_closed()
