"""One websocket connection as the server sees it: who said hello on it, its rate bucket and
flood strikes, and how to close it without losing the peer's close frame."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from websockets.asyncio.server import ServerConnection

from server.connections.player import Player


class TokenBucket:
    """``burst`` messages at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: float) -> float:
        """0 if a message may pass now (and it is counted), else the seconds to wait."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class Client:
    """One websocket connection and what the server knows about it."""

    __slots__ = ("ws", "player", "bucket", "strikes", "closing", "admin", "account", "source",
                 "active")

    def __init__(self, ws: ServerConnection, bucket: TokenBucket, source: str = "") -> None:
        self.ws = ws
        self.source = source
        """The client's address as the limits per source count it (``server.web.sources``)."""
        self.active = 0.0
        """When the client last sent a message other than ``ping``."""
        self.player: Player | None = None
        self.bucket = bucket
        self.strikes: collections.deque[float] = collections.deque()
        """When recent messages were refused for the rate (``Settings.flood_strikes``)."""
        self.closing: asyncio.Task[None] | None = None
        self.admin: Any = None
        """The ``AdminAccount`` once ``admin_login`` succeeded (``server.admin.desk``)."""
        self.account: Any = None
        """The ``SessionRecord`` this connection said hello with (``server.people.accounts``)."""

    def close(self, code: int, reason: str) -> None:
        """Start the closing handshake; the handler keeps reading (and ignoring) frames so
        the peer's close frame is not stuck behind unread messages."""
        if self.closing is None:
            self.closing = asyncio.create_task(self.ws.close(code, reason))


def source_of(client: Client) -> str:
    """The address a connection comes from, the key of every per-source limit: the one the
    gateway counts it by (``Client.source``: the peer's IP address, or behind a trusted
    proxy the client's from the PROXY protocol, ``server.web.sources.source_key``), else the
    peer's IP address."""
    if client.source:
        return client.source
    address = client.ws.remote_address
    return str(address[0]) if address else "unknown"
