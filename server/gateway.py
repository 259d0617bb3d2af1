"""One websocket connection: size, rate and hello checks, parse, one handler per message type.

Why a module of its own: every frame from a client passes the same gate in the same order —
too big closes (1009), too fast is refused and a flood closes (1008), nothing but ``hello``
before ``hello``, then the one handler the table names for the message's type. A refusal is
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
from server.connection import Client, TokenBucket
from server.gc_policy import release_transport
from server.outbox import Outbox
from server.overload import LoadGauge
from server.rooms import Player
from server.settings import Settings

log = logging.getLogger("discus.gateway")

Handler = Callable[[Client, Player, Any], Awaitable[None]]
"""Answers one message of a client that said hello (the player it is)."""


class Gateway:
    """Serves connections: ``handler`` is websockets' connection handler."""

    def __init__(self, settings: Settings, outbox: Outbox, gauge: LoadGauge,
                 handlers: Mapping[type[BaseModel], Handler],
                 hello: Callable[[Client, p.Hello], Awaitable[None]],
                 gone: Callable[[Client], Awaitable[None]],
                 now: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.outbox = outbox
        self.gauge = gauge
        self.handlers = dict(handlers)
        self._hello = hello
        self._gone = gone
        self.now = now

    async def handler(self, ws: ServerConnection) -> None:
        """One connection: hello first, then commands until it closes. A saturated node
        closes it at once (1013, with the reason) instead."""
        busy = self.gauge.busy(time.monotonic())
        if busy is not None:
            await ws.close(CloseCode.TRY_AGAIN_LATER, f"{busy}; try again shortly")
            return
        self.gauge.connections += 1
        try:
            await self._serve(ws)
        finally:
            self.gauge.connections -= 1
        await ws.wait_closed()
        release_transport(ws.transport)

    async def _serve(self, ws: ServerConnection) -> None:
        client = Client(ws, TokenBucket(self.settings.messages_per_second,
                                         self.settings.burst, self.now()))
        timer = asyncio.get_running_loop().call_later(self.settings.hello_seconds,
                                                      self._hello_overdue, client)
        try:
            async for frame in ws:
                if client.closing is not None or not self._admit(client, frame):
                    continue
                message: BaseModel | None = None
                try:
                    message = p.parse_client(frame)
                    await self._dispatch(client, message)
                except errors.ProtocolError as exc:
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
            await self._gone(client)

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
            client.close(1008, "too many messages")
            return False
        self.outbox.refuse(client, errors.RateLimited(
            f"too many messages: at most {self.settings.messages_per_second:g} a second "
            f"(bursts of {self.settings.burst})", retry_after=round(wait, 3)), None)
        return False
