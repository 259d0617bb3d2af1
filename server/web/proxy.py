"""The PROXY protocol, version 2: the real client's address behind a load balancer.

HAProxy (``deploy/haproxy.cfg``: ``send-proxy-v2`` on each server) opens every connection to
a node with a binary header that names the client's address and port; without it every
player would seem to come from the load balancer, and the limits per source
(``server.web.sources``) would count them all as one. A header is read only on connections from
the trusted proxies (``Settings.trusted_proxies``): anyone else could name any address. From a
trusted proxy a connection may also come without one (a health check run on the node itself);
it then counts as the proxy's own.

``ProxiedConnection`` is websockets' ``ServerConnection`` that reads the header off the first
bytes before the HTTP request reaches the handshake (``serve(create_connection=...)``); the
address is then ``proxied_address`` (``server.web.sources.peer_address`` reads it). Version 1 (the
text header) is not read.
"""

from __future__ import annotations

import asyncio
import ipaddress
import struct
from collections.abc import Iterable
from typing import Any

from websockets.asyncio.server import ServerConnection

SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
"""The 12 bytes every version 2 header starts with."""
MAX_HEADER = 16 + 216 + 320
"""Addresses and a generous allowance of TLVs; a longer header is refused."""

Networks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


class ProxyHeaderError(ValueError):
    """The bytes from a trusted proxy start like a header but are not a valid one."""


def networks(specs: Iterable[str]) -> Networks:
    """Each address or CIDR network in ``specs`` (``ValueError`` for one that is neither)."""
    return tuple(ipaddress.ip_network(spec.strip(), strict=False) for spec in specs
                 if spec.strip())


def parse_header(data: bytes) -> tuple[str | None, int] | None:
    """The client address a complete header in ``data`` names (None for a ``LOCAL`` header,
    which a proxy sends for its own checks, or an address family without one) and the bytes
    it takes; None while ``data`` holds only part of a header. ``ProxyHeaderError`` when it is
    not a version 2 header."""
    if len(data) < 16:
        if not SIGNATURE.startswith(data[:12]):
            raise ProxyHeaderError("not a PROXY protocol v2 header")
        return None
    if data[:12] != SIGNATURE:
        raise ProxyHeaderError("not a PROXY protocol v2 header")
    version_command, family, length = struct.unpack("!BBH", data[12:16])
    if version_command >> 4 != 2 or version_command & 0xF not in (0, 1):
        raise ProxyHeaderError("unknown PROXY protocol version or command")
    if 16 + length > MAX_HEADER:
        raise ProxyHeaderError("PROXY protocol header too long")
    if len(data) < 16 + length:
        return None
    body = data[16:16 + length]
    if version_command & 0xF == 0:  # LOCAL: the proxy's own connection
        return None, 16 + length
    kind = family >> 4
    if kind == 1 and length >= 12:
        return str(ipaddress.IPv4Address(body[:4])), 16 + length
    if kind == 2 and length >= 36:
        return str(ipaddress.IPv6Address(body[:16])), 16 + length
    if kind in (1, 2):
        raise ProxyHeaderError("PROXY protocol header too short for its addresses")
    return None, 16 + length  # UNSPEC or a Unix socket: no client address to give


class ProxiedConnection(ServerConnection):
    """A websocket server connection that reads a PROXY v2 header first when its peer is a
    trusted proxy (``trusted``, set by ``factory``)."""

    trusted: Networks = ()
    proxied_address: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head: bytes | None = None
        """Bytes received while a header may still be arriving; None once it is past."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        try:
            ip = ipaddress.ip_address(peer[0]) if isinstance(peer, tuple) else None
        except ValueError:
            ip = None
        if ip is not None and any(ip in network for network in self.trusted):
            self._head = b""

    def data_received(self, data: bytes) -> None:
        if self._head is None:
            super().data_received(data)
            return
        head = self._head + data
        if not SIGNATURE.startswith(head[:12]):  # no header: the proxy's host itself
            self._head = None
            super().data_received(head)
            return
        try:
            parsed = parse_header(head)
        except ProxyHeaderError:
            self.transport.abort()
            return
        if parsed is None:
            self._head = head
            return
        self.proxied_address, used = parsed
        self._head = None
        if len(head) > used:
            super().data_received(head[used:])


def factory(trusted: Networks) -> type[ServerConnection]:
    """The connection class for ``serve(create_connection=...)``: websockets' own when no
    proxy is trusted."""
    if not trusted:
        return ServerConnection
    return type("TrustingConnection", (ProxiedConnection,), {"trusted": trusted})
