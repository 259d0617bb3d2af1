"""Who watches a tournament's page without playing in it, so its standings reach them live.

A connection that asks for a tournament (``get_tournament``) listens to the tournament's
channel (an outbox address, ``address``) until it asks for another tournament, sends
``unwatch_tournament`` (the page is left) or closes. The desk pushes each standings frame
to that channel as well as to the entrants, so a watcher gets the same coalesced pushes.

Why a channel: it is addressed as a player is, so on a cluster the node that pairs the
tournament publishes to it and every node with a listener delivers it, the way entrants
connected elsewhere get theirs; the listening is done on the watcher's own node, before the
request is forwarded. Why bounds: one tournament per connection and at most ``cap``
watchers of one tournament on each node, so a flood of connections cannot make a push
write to everyone; a connection over the cap still gets its answer, only not the pushes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server.connections.client import Client
from server.connections.outbox import Outbox

log = logging.getLogger("discus.tournaments")

MAX_WATCHERS = 1000
"""Connections on one node that may watch one tournament live."""


def address(tournament_id: str) -> str:
    """The channel a tournament's standings are pushed to, besides its entrants."""
    return f"#tournament:{tournament_id}"


class Watchers:
    """The tournament each connection here watches (one at most), and how many watch each."""

    def __init__(self, outbox: Outbox, present: Callable[[str, bool], Awaitable[object]],
                 cap: int = MAX_WATCHERS) -> None:
        self.outbox = outbox
        self.present = present
        """Tells the cluster this node listens to a channel, or no longer does."""
        self.cap = cap
        self.watching: dict[Client, str] = {}
        self.counts: dict[str, int] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def watch(self, client: Client, tournament_id: str) -> bool:
        """``client`` watches this tournament (and no other); False when it is full here."""
        if self.watching.get(client) == tournament_id:
            return True
        self.unwatch(client)
        if self.counts.get(tournament_id, 0) >= self.cap:
            return False
        self.watching[client] = tournament_id
        self.counts[tournament_id] = self.counts.get(tournament_id, 0) + 1
        if self.outbox.listen(address(tournament_id), client):
            await self.present(address(tournament_id), True)
        return True

    def unwatch(self, client: Client) -> None:
        """``client`` watches nothing now (the page was left, or the connection closed)."""
        tid = self.watching.pop(client, None)
        if tid is None:
            return
        left = self.counts[tid] - 1
        if left:
            self.counts[tid] = left
        else:
            del self.counts[tid]
        if self.outbox.unlisten(address(tid), client):
            task = asyncio.get_running_loop().create_task(self._absent(address(tid)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _absent(self, channel: str) -> None:
        try:
            await self.present(channel, False)
        except Exception:
            log.warning("could not tell the cluster nobody here watches %s", channel,
                        exc_info=True)
