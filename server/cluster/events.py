"""Events between nodes: everything a room sends to its people, on its way to their
connections on other nodes.

An event goes to the pub/sub channel of each other node where one of the players it is for
is connected, with those player ids; that node delivers it to its own connections of those
players. An event whose players are all connected to the node that made it costs Redis
nothing. Pub/sub and not streams: an event matters only to nodes connected now. Where the
players are is ``server.cluster.presence``'s. (A connection hears a room's events from when
its node's presence news reached the room's owner, a few milliseconds after its ``hello``;
the room's state comes with ``join_room`` or ``spectate`` anyway.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from redis.exceptions import RedisError

from server.cluster.counts import RedisCounts
from server.cluster.presence import Presence
from server.storage import keys

log = logging.getLogger("discus.cluster")

REVOKED = "!revoked"
"""The address of an events-channel entry saying sessions were revoked (player ids never
start with ``!``)."""


@dataclass(frozen=True)
class _Event:
    """One event waiting for the publisher."""

    players: list[str]
    nodes: set[str] | None
    """The nodes it goes to, or None: the publisher reads where some of the players are."""
    payload: str


class EventHandler(Protocol):
    """What the node does with the events other nodes send it."""

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None: ...

    def close_revoked(self, player_id: str, session_id: str | None, keep: str | None) -> None:
        """Another node revoked sessions of this account (``Cluster.publish_revoked``)."""
        ...


class Events:
    """This node's events to the others, in order, and its channel, where theirs arrive."""

    def __init__(self, client: Any, prefix: str, node: str, counts: RedisCounts,
                 presence: Presence) -> None:
        self._client = client
        self._prefix = prefix
        self._node = node
        self._counts = counts
        self._presence = presence
        self._app: EventHandler | None = None
        self._pubsub: Any = None
        self._outbox: asyncio.Queue[_Event | None] = asyncio.Queue()
        self.closing = False
        """``Cluster.close`` began: the reader stops."""

    async def open(self, app: EventHandler) -> None:
        """Subscribe to this node's channel."""
        self._app = app
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(keys.node_events(self._prefix, self._node))

    def publish(self, player_ids: Iterable[str], data: str) -> None:
        """Send ``data`` (an encoded server message) to these players' connections on other
        nodes; in order with this node's other events. Nothing goes to Redis when every one
        of them is in a room this node runs and connected to no other node."""
        to = list(player_ids)
        if to:
            self._queue(to, f"{self._node}\n{','.join(to)}\n{data}")

    def publish_revoked(self, player_id: str, session_id: str | None,
                        keep: str | None) -> None:
        """Tell the other nodes where ``player_id`` is connected that sessions of it were
        revoked (``session_id``, or all but ``keep``), so they close the connections that
        came in with them now, not at their next ``hello``. An event addressed to
        ``REVOKED``."""
        data = json.dumps({"player": player_id, "session": session_id, "keep": keep})
        self._queue([player_id], f"{self._node}\n{REVOKED}\n{data}")

    def _queue(self, player_ids: list[str], payload: str) -> None:
        nodes = self._presence.nodes_of(player_ids)
        if nodes is not None and not nodes:
            self._counts.events_local += 1
            return
        self._outbox.put_nowait(_Event(player_ids, nodes, payload))

    def stop(self) -> None:
        """Put the stop marker behind every event queued so far (``publish_queued``)."""
        self._outbox.put_nowait(None)

    async def publish_queued(self) -> None:
        """One task publishes, each batch in one pipeline on one connection: events reach
        each node in the order the rooms made them. It stops at the marker ``stop`` puts
        in the queue, once everything queued before it is published."""
        while True:
            batch = [await self._outbox.get()]
            while not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            events = [e for e in batch if e is not None]  # (and any sent after the marker)
            if events:
                try:
                    await self._send(events)
                except (RedisError, OSError):
                    log.warning("could not publish %d room events", len(events),
                                exc_info=True)
            if None in batch:
                return

    async def _send(self, events: list[_Event]) -> None:
        where = self._presence.where
        unknown = sorted({p for e in events if e.nodes is None for p in e.players
                          if p not in where})
        found = await self._presence.look_up(unknown) if unknown else {}
        async with self._client.pipeline(transaction=False) as pipe:
            for event in events:
                nodes = event.nodes
                if nodes is None:
                    nodes = set()
                    for player_id in event.players:
                        nodes |= found.get(player_id) or where.get(player_id, set())
                    nodes.discard(self._node)
                for node in sorted(nodes):
                    pipe.publish(keys.node_events(self._prefix, node), event.payload)
            self._counts.events_published += len(pipe)
            if len(pipe):
                await pipe.execute()

    async def read(self) -> None:
        assert self._app is not None
        channel = keys.node_events(self._prefix, self._node)
        while not self.closing:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except (RedisError, OSError):
                log.warning("lost the events channel; resubscribing", exc_info=True)
                await asyncio.sleep(0.5)
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.subscribe(channel)
                continue
            if message is None:
                continue
            payload = str(message["data"])
            self._counts.events_received += 1
            self._counts.event_bytes_received += len(payload)
            origin, to, data = payload.split("\n", 2)
            if origin == self._node:
                continue
            if to == REVOKED:
                revoked = json.loads(data)
                self._app.close_revoked(revoked["player"], revoked["session"], revoked["keep"])
            else:
                self._app.deliver_local(to.split(","), data)

    async def aclose(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()
