"""One websocket connection: size, rate and hello checks, parse, one handler per message type.

Why a module of its own: every connection and frame from a client passes the same gate in the
same order — a node past its load or an address past its connections (``server.web.sources``) is
closed at once, too big closes (1009), too fast is refused and a flood closes (1008), nothing
but ``hello`` before ``hello``, an address's hellos and new rooms are counted per minute,
then the one handler the table names for the message's type; a guest in no room that only
pings is closed after ``SourceLimits.idle_guest_seconds``. A refusal is
an ``error`` naming the request and changes nothing. The table is handed in by the
composition root (``server.app``), which takes each desk's handlers; a test checks that every
client message type of the protocol has exactly one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from server import errors
from server import protocol as p
from server.connections.client import Client, TokenBucket
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.engines.overload import LoadGauge
from server.gc_policy import release_transport
from server.metrics import Metrics
from server.settings import Settings
from server.turns import in_turns
from server.web.sources import Sources, peer_address, source_key

log = logging.getLogger("discus.gateway")

Handler = Callable[[Client, Player, Any], Awaitable[None]]
"""Answers one message of a client that said hello (the player it is)."""

RATED_PER_SOURCE: dict[type[BaseModel], str] = {
    p.Hello: "hellos_per_minute",
    p.CreateRoom: "rooms_per_minute",
}
"""Messages counted per client address, and the ``SourceLimits`` field that bounds each."""


class Gateway:
    """Serves connections: ``handler`` is websockets' connection handler."""

    def __init__(self, settings: Settings, outbox: Outbox, gauge: LoadGauge,
                 handlers: Mapping[type[BaseModel], Handler],
                 hello: Callable[[Client, p.Hello], Awaitable[None]],
                 gone: Callable[[Client], Awaitable[None]],
                 now: Callable[[], float] = time.time,
                 metrics: Metrics | None = None,
                 in_room: Callable[[str], bool] = lambda player_id: False,
                 sources: Sources | None = None) -> None:
        self.settings = settings
        self.outbox = outbox
        self.gauge = gauge
        self.handlers = dict(handlers)
        self._hello = hello
        self._gone = gone
        self.now = now
        self.metrics = metrics or Metrics()
        self.sources = sources if sources is not None else Sources(settings.sources)
        """The counts per address; shared with identity's name lookups (``server.app``)."""
        self.clients: set[Client] = set()
        self._in_room = in_room
        self.metrics.read_connections(self.states)

    async def handler(self, ws: ServerConnection) -> None:
        """One connection: hello first, then commands until it closes. A saturated node
        (1013) or an address holding its most connections (1008) closes it at once, with the
        reason, instead."""
        busy = self.gauge.busy(time.monotonic())
        if busy is not None:
            self.metrics.refused("overload", "busy")
            await ws.close(CloseCode.TRY_AGAIN_LATER, f"{busy}; try again shortly")
            return
        source = source_key(peer_address(ws))
        if not self.sources.connect(source):
            self.metrics.refused("connections_per_source", "too_many_connections")
            await ws.close(CloseCode.POLICY_VIOLATION,
                           f"too many connections from your address (at most "
                           f"{self.settings.sources.connections})")
            return
        self.gauge.connections += 1
        try:
            await self._serve(ws, source)
        finally:
            self.gauge.connections -= 1
            self.sources.disconnect(source)
        await ws.wait_closed()
        release_transport(ws.transport)

    def states(self) -> dict[str, int]:
        """Open connections by state: before hello, guest, account, bot, admin."""
        counts = dict.fromkeys(("hello", "guest", "account", "bot", "admin"), 0)
        for client in self.clients:
            counts[_state(client)] += 1
        return counts

    async def sweep(self) -> None:
        """Close the guests idle past ``SourceLimits.idle_guest_seconds`` in no room (a
        chunk of connections per turn of the loop: ``server.turns``), and forget the rates
        of addresses back to their full allowance."""
        now = self.now()
        self.sources.prune(now)
        idle = self.settings.sources.idle_guest_seconds
        if idle <= 0:
            return
        async for clients in in_turns(list(self.clients)):
            for client in clients:
                player = client.player
                if (player is None or now - client.active < idle
                        or client.closing is not None or _state(client) != "guest"
                        or self._in_room(player.id)):
                    continue
                self.metrics.refused("idle_guest_seconds", "idle")
                client.close(1000, f"idle: in no room and silent for {idle:g} s")

    async def _serve(self, ws: ServerConnection, source: str) -> None:
        client = Client(ws, TokenBucket(self.settings.messages_per_second,
                                         self.settings.burst, self.now()), source)
        client.active = self.now()
        self.clients.add(client)
        timer = asyncio.get_running_loop().call_later(self.settings.hello_seconds,
                                                      self._hello_overdue, client)
        try:
            async for frame in ws:
                if client.closing is not None or not self._admit(client, frame):
                    continue
                message: BaseModel | None = None
                started = time.perf_counter()
                try:
                    message = p.parse_client(frame)
                    if not isinstance(message, p.Ping):
                        client.active = self.now()
                    self._count(client, message)
                    await self._dispatch(client, message)
                    if isinstance(message, p.Move):
                        self.metrics.move_ack.observe(time.perf_counter() - started)
                except errors.ProtocolError as exc:
                    self.metrics.refused(str(exc.detail.get("limit", "none")), exc.code)
                    self.outbox.refuse(client, exc, message)
                    if exc.close_code is not None:
                        client.close(exc.close_code, exc.code)
                except ConnectionClosed:
                    raise
                except Exception:
                    log.exception("failed to handle a message")
                    self.outbox.refuse(
                        client, errors.InternalError("the server failed; try again"), message)
        except ConnectionClosed:
            pass
        finally:
            timer.cancel()
            self.clients.discard(client)
            await self._gone(client)

    def _count(self, client: Client, message: BaseModel) -> None:
        """``rate_limited`` when ``client``'s address has sent its most of this kind of
        message this minute (``RATED_PER_SOURCE``), or has been told its most whether names
        are taken (``name_lookups_per_minute``: a ``challenge``, by name or id, is answered
        by an offer or ``unknown_player``; a ``hello``'s name is counted by identity). A bot's
        challenges are not counted: it answers for them by its token and has limits of its
        own (``server.bots.limits``)."""
        limits = [RATED_PER_SOURCE.get(type(message))]
        if isinstance(message, p.Challenge) and not (client.player and client.player.bot):
            limits.append("name_lookups_per_minute")
        for limit in limits:
            if limit is None:
                continue
            wait = self.sources.take(client.source, limit, self.now())
            if wait > 0:
                most = getattr(self.settings.sources, limit)
                raise errors.RateLimited(
                    f"too many from your address: at most {most} {limit.replace('_', ' ')}; "
                    f"{errors.try_again_in(wait)}", retry_after=round(wait, 3), limit=limit)

    async def _dispatch(self, client: Client, message: BaseModel) -> None:
        if isinstance(message, p.Hello):
            await self._hello(client, message)
            return
        player = client.player
        if player is None:
            raise errors.HelloRequired("send hello first")
        await self.handlers[type(message)](client, player, message)

    def _hello_overdue(self, client: Client) -> None:
        if client.player is None and client.closing is None:
            exc = errors.HelloRequired(
                f"no hello within {self.settings.hello_seconds:g} s; closing the connection")
            self.outbox.refuse(client, exc, None)
            client.close(1008, exc.code)

    def _admit(self, client: Client, frame: str | bytes) -> bool:
        """Size and rate checks before parsing: whether the frame is to be read."""
        size = len(frame) if isinstance(frame, bytes) else len(frame.encode("utf-8"))
        limit = self.settings.max_message_bytes
        if size > limit:
            self.metrics.refused("max_message_bytes", "message_too_big")
            self.outbox.refuse(client, errors.MessageTooBig(
                f"a message may be at most {limit} bytes; this one was {size}",
                limit=limit), None)
            client.close(1009, "message too big")
            return False
        now = self.now()
        wait = client.bucket.take(now)
        if wait <= 0:
            return True
        strikes = client.strikes
        strikes.append(now)
        while strikes[0] <= now - self.settings.flood_window_seconds:
            strikes.popleft()
        if len(strikes) > self.settings.flood_strikes:
            self.metrics.refused("flood_strikes", "flood")
            client.close(1008, "too many messages")
            return False
        self.metrics.refused("messages_per_second", "rate_limited")
        self.outbox.refuse(client, errors.RateLimited(
            f"too many messages: at most {self.settings.messages_per_second:g} a second "
            f"(bursts of {self.settings.burst})", retry_after=round(wait, 3)), None)
        return False


def _state(client: Client) -> str:
    if client.player is None:
        return "hello"
    if client.admin is not None:
        return "admin"
    if client.player.bot:
        return "bot"
    return "account" if client.account is not None else "guest"
