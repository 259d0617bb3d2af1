"""Limits per source: what one client address may hold and do, so one careless or hostile
client cannot use up what everyone shares.

Why a module of its own: the gateway (``server.web.gateway``) is the one gate every connection and
frame passes, and asks here only "may this address do this now?"; the counting — open
connections per address, and sliding rates (hellos, rooms created) per address — is kept here,
in memory, per node. A source is the client's IP address as the node sees it: the peer of the
TCP connection, or, behind a load balancer speaking the PROXY protocol (``server.web.proxy``), the
address it reports. IPv6 addresses count by their /64 network (one household, one source).

The defaults are ones a household behind one NAT never meets; ``Settings.sources`` raises or
lowers them (``bench.load`` raises them for its own server: its clients all come from one
address). docs/SECURITY.md lists them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SourceLimits:
    """What one client address may hold and do (``Settings.sources``)."""

    connections: int = 64
    """Open websocket connections from one address; the next is closed at once (1008)."""
    hellos_per_minute: int = 120
    """``hello`` messages one address may send in any minute; past it ``rate_limited``."""
    rooms_per_minute: int = 30
    """``create_room`` one address may send in any minute; past it ``rate_limited``."""
    name_lookups_per_minute: int = 30
    """Answers to "is this name someone's?" one address may get in any minute: a guest's new
    name at ``hello`` (its ``(guest)`` mark says an account holds it; past the limit the mark
    is given without looking, ``server.people.identity``) and a ``challenge`` (by name or id:
    ``unknown_player`` or not; past the limit ``rate_limited``). A page resuming under its
    name is not asked; an address probing for names is."""
    idle_guest_seconds: float = 900.0
    """A guest's connection sitting in no room that sends nothing but ``ping`` this long is
    closed (1000, "idle"); 0 never."""


DEFAULT_SOURCE_LIMITS = SourceLimits()


def source_key(address: str) -> str:
    """The address one source is counted by: an IPv4 address itself, an IPv6 address's /64
    (``::ffff:a.b.c.d`` as ``a.b.c.d``); anything else (a Unix socket) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def peer_address(ws: Any) -> str:
    """The client address of a websocket connection: the one the PROXY protocol header
    reported (``server.web.proxy``), else the TCP peer's."""
    proxied = getattr(ws, "proxied_address", None)
    if proxied is not None:
        return str(proxied)
    peer = ws.remote_address
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return str(peer or "unknown")


class Window:
    """At most ``limit`` events in any ``seconds``, as a bucket that refills smoothly (a
    sliding minute, without keeping every time)."""

    __slots__ = ("tokens", "stamp")

    def __init__(self, limit: int, now: float) -> None:
        self.tokens = float(limit)
        self.stamp = now

    def take(self, limit: int, seconds: float, now: float) -> float:
        """0 if one more event may happen now (it is counted), else the seconds to wait."""
        rate = limit / seconds
        self.tokens = min(float(limit), self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / rate

    def full(self, limit: int, seconds: float, now: float) -> bool:
        return self.tokens + (now - self.stamp) * limit / seconds >= limit


class Sources:
    """The counts of every address this node hears from (kept only while they matter)."""

    def __init__(self, limits: SourceLimits) -> None:
        self.limits = limits
        self.open: dict[str, int] = {}
        """Open connections by source."""
        self._windows: dict[tuple[str, str], Window] = {}

    def connect(self, source: str) -> bool:
        """Whether a new connection from ``source`` may stay (then it is counted: call
        ``disconnect`` when it closes)."""
        held = self.open.get(source, 0)
        if held >= self.limits.connections:
            return False
        self.open[source] = held + 1
        return True

    def disconnect(self, source: str) -> None:
        held = self.open.get(source, 0) - 1
        if held > 0:
            self.open[source] = held
        else:
            self.open.pop(source, None)

    def take(self, source: str, limit_name: str, now: float) -> float:
        """0 if ``source`` may do one more of ``limit_name`` (``"hellos_per_minute"``,
        ``"rooms_per_minute"``, ``"name_lookups_per_minute"``) now, else the seconds until it
        may."""
        limit = int(getattr(self.limits, limit_name))
        window = self._windows.get((source, limit_name))
        if window is None:
            window = self._windows[(source, limit_name)] = Window(limit, now)
        return window.take(limit, 60.0, now)

    def prune(self, now: float) -> None:
        """Forget the rates of sources back to a full allowance (run now and then)."""
        for key, window in list(self._windows.items()):
            if window.full(int(getattr(self.limits, key[1])), 60.0, now):
                del self._windows[key]
