"""The composition root: builds each part of one server once, wires them, runs them.

Nothing here decides anything about games, players or rooms; it only says which part gets
which other parts (docs/ARCHITECTURE.md draws them). The single-node or cluster side of
``server.play.placement`` is chosen here, once. ``build`` returns the parts as a ``Server``
(``server.parts``, with their housekeeping and shutdown order); ``running`` serves until its
block ends; ``server.serve`` runs it as ``discus serve``.

Ordering guarantees, kept by the parts: every command on a room runs under that room's lock
(``server.play.runner``); a move is stored before anybody hears of it; every frame leaves through
``server.connections.outbox``, so each client sees a room's messages in the order they were
produced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import serve

from server.admin.desk import AdminDesk
from server.admin.stats import StatsDesk
from server.bots.desk import BotDesk
from server.challenges.desk import ChallengeDesk
from server.chat.desk import ChatDesk
from server.cluster.cluster import Cluster
from server.cluster.node import ClusterInbox, ClusterPlacement, shared_state
from server.connections.outbox import Outbox, publish_nowhere
from server.engines import Pool, overload
from server.engines.idle_proving import IdleProver
from server.engines.live_levels import LiveLevels
from server.engines.overload import LoadGauge
from server.ladder.desk import LadderDesk
from server.metrics import Metrics
from server.parts import Server
from server.people.accounts import AccountDesk
from server.people.identity import Identity
from server.play.lobby import ROOM_CODE_ALPHABET, ROOM_CODE_LENGTH, Lobby
from server.play.locks import RoomLocks
from server.play.placement import Placement, SingleNode
from server.play.runner import RoomRunner
from server.ratings.desk import RatingDesk
from server.reviews.desk import ReviewDesk
from server.reviews.history_desk import HistoryDesk
from server.reviews.live_positions import LivePositions
from server.routes import Desks, handlers
from server.settings import STATIC_DIR, Settings
from server.storage.memory import MemoryStore
from server.storage.store import Store
from server.tournaments.desk import TournamentDesk
from server.tournaments.watchers import Watchers
from server.web import proxy
from server.web.arrivals import Arrivals
from server.web.gateway import Gateway
from server.web.http import HttpSide
from server.web.sources import Sources

__all__ = ["Running", "Server", "Settings", "build", "running"]

log = logging.getLogger("discus.server")


def new_room_code() -> str:
    """A fresh room code (also the invite code people type): see ``ROOM_CODE_ALPHABET``."""
    number = secrets.randbelow(len(ROOM_CODE_ALPHABET) ** ROOM_CODE_LENGTH)  # one draw, not 8
    code = []
    for _ in range(ROOM_CODE_LENGTH):
        number, digit = divmod(number, len(ROOM_CODE_ALPHABET))
        code.append(ROOM_CODE_ALPHABET[digit])
    return "".join(code)


async def build(store: Store, pool: Pool | None, settings: Settings, secret: bytes,
                cache: Any = None, redis_url: str | None = None,
                cluster: Cluster | None = None, static_dir: Path = STATIC_DIR) -> Server:
    """Every part, once, wired; the store is open. With ``cluster`` this is one node of
    several (its side of each interface is the cluster's); ``redis_url`` keeps the levels
    current across servers."""
    from server.storage import SqlStore

    engine = store.engine if isinstance(store, SqlStore) else None
    stopping = asyncio.Event()
    now = time.time
    levels = LiveLevels(engine, redis_url, stopping)
    outbox = Outbox(settings.max_buffered_bytes,
                    cluster.publish if cluster is not None else publish_nowhere)
    lobby = Lobby(levels=levels.names(), ids=new_room_code, grace=settings.grace_seconds,
                  max_rooms=settings.max_rooms, time_controls=settings.time_controls,
                  first_move_seconds=settings.first_move_seconds)
    levels.on_change(lambda: setattr(lobby, "levels", levels.names()))
    locks = RoomLocks()
    placement: Placement
    if cluster is None:
        placement = SingleNode(outbox, store, settings.max_rooms)
        shared_bots = shared_names = shared_challenges = None
    else:
        placement = ClusterPlacement(cluster, outbox, store, lobby, locks, settings.max_rooms)
        shared_bots, shared_names, shared_challenges = shared_state(cluster, settings)
    bots = BotDesk(store, outbox, lobby, settings, engine, shared_bots)
    sources = Sources(settings.sources)
    identity = Identity(store, outbox, secret, bots, lobby, settings.guest_token_days * 86400,
                        settings.session_days * 86400, now, lazy_guests=cluster is None,
                        may_look_up=lambda source: sources.take(
                            source, "name_lookups_per_minute", now()) <= 0)
    ratings = RatingDesk(store, outbox, identity, levels, lobby, settings.max_rooms, now)
    runner = RoomRunner(store, lobby, outbox, placement, identity, ratings, bots, levels, pool,
                        settings, stopping, locks, now)
    challenges = ChallengeDesk(store, outbox, identity, lobby, bots, runner,
                               placement.is_online, settings, now, shared_challenges)
    accounts = AccountDesk(store, outbox, identity, ratings.signed_up,
                           placement.revoked_elsewhere, shared_names, settings.sign_in)
    gauge = LoadGauge(settings.shed_lag_seconds, settings.max_connections)
    stats = StatsDesk(outbox, pool, cache, gauge)
    prover = IdleProver(store, pool, settings.idle_proving, stopping)
    admin = AdminDesk(engine, levels, store, outbox, pool, bots, lobby, stats.stats,
                      placement.elsewhere, placement.node, accounts.guard)
    history = HistoryDesk(store, outbox, identity, settings.max_rooms)
    watchers = Watchers(outbox, placement.present, settings.tournament_watchers)
    tournaments = TournamentDesk(store, outbox, identity, lobby, runner, ratings,
                                 placement.is_online, now, leases=placement, watchers=watchers,
                                 push_seconds=settings.standings_push_seconds,
                                 schedule_lead=settings.schedule_lead_seconds,
                                 rematch_after=settings.arena_rematch_seconds)
    runner.on_finish.append(tournaments.game_finished)
    ladder = LadderDesk(store, outbox, identity, lobby, runner, ratings, bots,
                        placement.is_online, now, settings.ladder_time_control,
                        settings.ladder_pace_seconds, stopping, leases=placement,
                        default_levels=settings.ladder_levels)
    runner.on_finish.append(ladder.game_finished)
    live = LivePositions(lambda: lobby.rooms.values(),
                         lambda game_id: tournaments.plays(game_id) or ladder.plays(game_id),
                         placement.positions if isinstance(placement, ClusterPlacement) else None)
    reviews = ReviewDesk(store, outbox, pool, settings.analysis_seconds, stopping,
                         settings.analyses, live)
    chat = ChatDesk(store, outbox, identity, placement.present, settings, stopping, now)
    arrivals = Arrivals(identity, outbox, runner, placement, levels, bots, challenges,
                        settings, stopping,
                        forget=[admin.gone, accounts.forget, chat.gone, reviews.forget,
                                watchers.unwatch])
    desks = Desks(bots, challenges, accounts, ratings, reviews, admin, history, stats,
                  tournaments, chat, ladder)
    metrics = _metrics(runner, pool, cluster)
    gateway = Gateway(settings, outbox, gauge, handlers(outbox, runner, placement, lobby, desks),
                      arrivals.hello, arrivals.gone, now, metrics, lobby.holds, sources)
    http = HttpSide(static_dir, history.replay, gauge, stopping, settings.allowed_origins,
                    metrics.render, history.tournament_games)
    await levels.open()
    if isinstance(placement, ClusterPlacement):
        placement.live = live
        await placement.open(ClusterInbox(placement, runner, identity, outbox, store, locks,
                                          accounts.close_revoked, admin.local_rooms, lobby,
                                          [ladder, tournaments]))
    return Server(settings, store, stopping, levels, outbox, lobby, placement, identity, runner,
                  bots, challenges, accounts, ratings, reviews, admin, history, stats, gauge,
                  gateway, http, metrics, pool, cluster, tournaments, ladder, prover, chat)


def _metrics(runner: RoomRunner, pool: Pool | None, cluster: Cluster | None) -> Metrics:
    """The metrics, with the counts the runner, the pool and the cluster keep."""
    metrics = Metrics()
    runner.ai_turns.observe = metrics.ai_move.observe
    metrics.read("ai_fallbacks", "AI moves made by the quick fallback instead of a search",
                 lambda: runner.ai_turns.fallbacks + (pool.snapshot().fallbacks if pool else 0))
    metrics.read("cluster_takeovers", "Rooms this node took over from another node",
                 lambda: cluster.takeovers if cluster is not None else 0)
    return metrics


@dataclass
class Running:
    """A started server: its parts, its address, and how to stop it."""

    app: Server
    ws_server: WsServer
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"


@contextlib.asynccontextmanager
async def running(
    host: str = "127.0.0.1",
    port: int = 0,
    store: Store | None = None,
    pool: Pool | None = None,
    settings: Settings | None = None,
    secret: bytes | None = None,
    cache: Any = None,
    redis_url: str | None = None,
    cluster: Cluster | None = None,
    **server_options: Any,
) -> AsyncIterator[Running]:
    """Serve until the block ends, then shut down and close the pool, the position cache and
    the store. ``port=0`` picks a free port (``Running.port`` says which). The caller starts
    ``pool`` (and opens ``cache``, a ``PositionCache``); this closes them. ``secret`` signs
    resume tokens (default ``$DISCUS_SECRET``, else random: tokens then die with the
    process)."""
    import os

    store = store if store is not None else MemoryStore()
    await store.open()
    settings = settings or Settings()
    secret = secret or os.environb.get(b"DISCUS_SECRET") or secrets.token_bytes(32)
    server = await build(store, pool, settings, secret, cache, redis_url, cluster)
    restored = await server.placement.start(server.runner)
    if restored:
        log.info("restored %d unfinished games", restored)
    await server.tournaments.restore()  # on a cluster: those no node pairs
    await server.ladder.restore()
    ws_server = await serve(
        server.gateway.handler, host, port,
        process_request=server.http.respond,
        max_size=settings.max_message_bytes * 4,
        max_queue=4,
        compression=None,  # messages are small; per-connection zlib state costs ~100 KB
        server_header="discus",
        create_connection=proxy.factory(proxy.networks(settings.trusted_proxies)),
        **server_options,
    )
    sweeper = asyncio.create_task(server.sweep_forever())
    proving = asyncio.create_task(server.prover.run())
    gauging = asyncio.create_task(overload.watch(server.gauge))
    warming = None if pool is None else asyncio.create_task(
        overload.watch_warm_up(server.gauge, pool))
    port = next(iter(ws_server.sockets)).getsockname()[1]
    try:
        yield Running(server, ws_server, host, port)
    finally:
        gauging.cancel()
        if warming is not None:
            warming.cancel()
        await server.shut_down(ws_server, sweeper)
        proving.cancel()  # by now it has seen ``stopping``, or waits for a pool that closed
        await asyncio.gather(proving, return_exceptions=True)
        if cache is not None:
            await cache.close()
        await store.close()
