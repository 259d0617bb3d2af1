"""Several server nodes on one Redis and one database: who runs each room, and how commands
and events reach it. ``Cluster`` is this node's part, the one object the server holds; it
owns the node's life in the cluster (joining, its liveness key, draining, leaving) and
composes the parts, each the owner of one concept:

- **Leases** (``server.cluster.leases``): every unfinished room is run by exactly one node,
  which holds its lease; the lease's epoch fences a former owner's writes out of the store.
- **Commands** (``server.cluster.inboxes``): a command for a room another node owns goes to
  that node's inbox, and the answer comes back on the asking node's.
- **Events** (``server.cluster.events``): everything a room sends to its people goes to the
  nodes where they are connected, and nowhere else.
- **Takeover** (``server.cluster.registry``): the live rooms are registered, so a room whose
  owner is gone is taken over by another node.
- **Presence** (``server.cluster.presence``): which nodes a player is connected to.
- **Counts** (``server.cluster.counts``): what this node asks of Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict
from typing import Any, Protocol

from redis.exceptions import RedisError

from server.cluster.counts import COUNTS_TTL_SECONDS, RedisCounts, count_commands
from server.cluster.events import EventHandler, Events
from server.cluster.inboxes import Inbox, InboxHandler
from server.cluster.leases import ClusterSettings, Leases
from server.cluster.presence import Presence
from server.cluster.registry import Registry, TakingOver
from server.storage import keys
from server.storage.config import async_redis

log = logging.getLogger("discus.cluster")


class Node(InboxHandler, EventHandler, TakingOver, Protocol):
    """What the cluster calls back on the node it runs in (``server.cluster.node.ClusterInbox``)."""

    def let_go(self, room_id: str) -> str | None:
        """Another node owns the room now: forget it without writing anything; the id of
        the game it was running, if it had the room."""
        ...


class Cluster:
    """This node's part: its leases, inbox, events and presence. ``start`` after the node's
    rooms are restorable; ``close`` gives its rooms up (the others take them at once)."""

    def __init__(self, redis_url: str, prefix: str = keys.DEFAULT_PREFIX,
                 settings: ClusterSettings | None = None, node: str | None = None) -> None:
        self.redis_url = redis_url
        self.prefix = prefix
        self.settings = settings or ClusterSettings()
        self.node = node or secrets.token_hex(5)
        self.counts = RedisCounts()
        """What this node asked of Redis (``redis_counts``)."""
        self._client: Any = async_redis(self.redis_url, decode_responses=True)
        """Made here, connected at first use: the node's other shared state (limits,
        challenges) is built on it before the node joins (``open``)."""
        count_commands(self._client, self.counts)
        self.presence = Presence(self._client, prefix, self.node, self.counts)
        self.leases = Leases(self._client, prefix, self.node, self.settings, self.presence)
        self.inbox = Inbox(self._client, prefix, self.node, self.settings, self.leases,
                           self.presence)
        self.events = Events(self._client, prefix, self.node, self.counts, self.presence)
        self.registry = Registry(self._client, prefix, self.node, self.leases, self.presence)
        self._app: Node | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._publisher: asyncio.Task[None] | None = None
        self._closing = False
        self._keeper: asyncio.Task[None] | None = None
        self.kept: list[Callable[[], Awaitable[None]]] = []
        """Called at each renewal of the leases, after it: other state of this node's
        rooms that lapses unless renewed (their guarded positions)."""

    # --- life --------------------------------------------------------------------------

    async def open(self, app: Node) -> None:
        self._app = app
        self.leases.open()
        self.inbox.open(app)
        self.registry.open(app)
        await self._beat()
        await self.events.open(app)

    def start(self) -> None:
        """Start reading the inbox and the events, renewing leases and taking rooms over."""
        self._publisher = asyncio.create_task(self.events.publish_queued())
        self._keeper = asyncio.create_task(self._keep())
        self._tasks = [asyncio.create_task(self.inbox.read()),
                       asyncio.create_task(self.events.read()),
                       self._publisher,
                       self._keeper]

    @property
    def draining(self) -> bool:
        """``drain`` was called: this node takes no room and runs no command for another."""
        return self.leases.draining

    @draining.setter
    def draining(self, value: bool) -> None:
        self.leases.draining = value

    async def drain(self) -> None:
        """Hand this node's rooms over before the server closes its clients (then
        ``close``): from now on it runs no command from another node (each is left to the
        room's next owner, which the asking node finds when the lease is gone), claims and
        takes over no room; the commands under way finish, then every lease is released and
        the node says it is gone, so the other nodes take its rooms over at their next
        renewal. Its events keep going out until ``close``."""
        self.draining = True
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.wait([self._keeper], timeout=2.0)
        if self.inbox.handlers:
            await asyncio.wait(list(self.inbox.handlers), timeout=self.settings.forward_timeout)
        with contextlib.suppress(RedisError, OSError):
            await self._leave()

    async def _leave(self) -> None:
        """Leases given up, rooms still listed under this node, which says it is gone: the
        other nodes take them over at their next renewal, as after a death."""
        for room_id in list(self.owned):
            await self.leases.release(room_id, unlist=False)
        await self._client.delete(keys.cluster_node(self.prefix, self.node))

    async def close(self) -> None:
        """Stop, and release every lease this node holds so other nodes take its rooms over
        at their next look instead of after the lease runs out.

        Every event published before ``close`` is sent first: the commands from other nodes
        under way are finished (not cancelled half way, after a move is stored and before it
        is announced), then the publisher empties its queue up to the stop marker."""
        # redis-py was seen to swallow a cancellation arriving inside a pipeline, so the
        # loops also stop on a flag (and the publisher on a marker), and are waited for a
        # bounded time only.
        self._closing = self.inbox.closing = self.events.closing = True
        loops = [t for t in self._tasks if t is not self._publisher]
        for task in loops:
            task.cancel()
        if loops:
            await asyncio.wait(loops, timeout=2.0)
        if self.inbox.handlers:
            await asyncio.wait(list(self.inbox.handlers), timeout=self.settings.forward_timeout)
        self.events.stop()
        if self._publisher is not None:
            await asyncio.wait([self._publisher], timeout=5.0)
        for left in [*self._tasks, *self.inbox.handlers]:
            left.cancel()
        with contextlib.suppress(RedisError, OSError):
            await self._leave()
            await self._client.set(keys.node_redis_counts(self.prefix, self.node),
                                   json.dumps(asdict(self.counts)), ex=COUNTS_TTL_SECONDS)
        self.owned.clear()
        await self.events.aclose()
        await self._client.aclose(close_connection_pool=True)

    async def _beat(self) -> bool:
        """Say this node is alive; True if the list of nodes did not hold it (Redis lost
        it, or the others took this node for dead), or this is the first beat."""
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.set(keys.cluster_node(self.prefix, self.node), str(time.time()),
                     px=int(self.settings.lease_seconds * 1000))
            pipe.hset(keys.cluster_nodes(self.prefix), self.node, str(time.time()))
            pipe.set(keys.node_redis_counts(self.prefix, self.node),
                     json.dumps(asdict(self.counts)), ex=COUNTS_TTL_SECONDS)
            results = await pipe.execute()
        return bool(results[1])

    async def _here_again(self) -> None:
        """Redis lost this node (a restart without persistence, or the others took it for
        dead): put its players' presence back, and tell every other node which players
        are here, so that nodes which read their presence meanwhile send events here."""
        here = await self.presence.restore()
        for node in await self.live_nodes():
            if node != self.node:
                await self.inbox.post(node, {"kind": "here", "node": self.node,
                                             "players": here})

    async def live_nodes(self) -> list[str]:
        """Every node alive now, this one included."""
        nodes = sorted(await self._client.hkeys(keys.cluster_nodes(self.prefix)))
        alive = await self._client.mget([keys.cluster_node(self.prefix, n) for n in nodes])
        return [n for n, up in zip(nodes, alive, strict=True) if up is not None]

    def redis_counts(self) -> dict[str, int]:
        """What this node asked of Redis since it was made (``RedisCounts``' fields); take
        the difference of two readings for a window of time."""
        return asdict(self.counts)

    @property
    def redis(self) -> Any:
        """The node's Redis client (``open`` made it), for other shared state."""
        return self._client

    # --- leases ------------------------------------------------------------------------

    async def _keep(self) -> None:
        """Renew this node's leases, and take over rooms whose owner is gone: those of nodes
        that died at each renewal, every registered room now and then."""
        last_full = 0.0
        while not self._closing:
            try:
                await self._renew()
                for keep in self.kept:
                    await keep()
                if time.monotonic() - last_full >= self.settings.full_scan_seconds:
                    last_full = time.monotonic()
                    await self.registry.scan()
                else:
                    await self.registry.after_deaths()
            except (RedisError, OSError):
                log.warning("cannot reach Redis to renew leases", exc_info=True)
            except Exception:
                log.exception("keeping the leases failed")
            await asyncio.sleep(self.settings.renew_seconds)

    async def _renew(self) -> None:
        if await self._beat() and self.presence.here:
            log.warning("Redis did not list this node; announcing its %d players again",
                        len(self.presence.here))
            await self._here_again()
        lost = await self.leases.renew()
        assert self._app is not None
        for room_id, epoch in lost:
            if await self.leases.lost(room_id, epoch):
                game_id = self._app.let_go(room_id)
                if game_id is not None:
                    # Back in the registry if Redis lost it (a restart), and run again from
                    # the store unless another node runs it now.
                    await self.registry.adopt(room_id, game_id)
                    await self.registry.take_if_ownerless(room_id)

    @property
    def owned(self) -> dict[str, int]:
        """Room id -> the epoch this node holds its lease at (``Leases.owned``)."""
        return self.leases.owned

    def holds(self, room_id: str) -> bool:
        return self.leases.holds(room_id)

    async def claim(self, room_id: str) -> int | None:
        return await self.leases.claim(room_id)

    async def catch_up(self, room_id: str, epoch: int) -> None:
        await self.leases.catch_up(room_id, epoch)

    async def owner(self, room_id: str) -> str | None:
        return await self.leases.owner(room_id)

    # --- the room registry ---------------------------------------------------------------

    @property
    def takeovers(self) -> int:
        """Rooms this node took over from another (for tests and the admin view)."""
        return self.registry.takeovers

    async def register(self, room_id: str, game_id: str, people: Iterable[str],
                       watchers: Iterable[str], open_summary: str | None) -> None:
        await self.registry.register(room_id, game_id, people, watchers, open_summary)

    async def adopt(self, room_id: str, game_id: str) -> None:
        await self.registry.adopt(room_id, game_id)

    async def forget(self, room_id: str) -> None:
        await self.registry.forget(room_id)

    async def open_rooms(self) -> list[str]:
        return await self.registry.open_rooms()

    async def scan(self) -> int:
        return await self.registry.scan()

    async def take_if_ownerless(self, room_id: str) -> bool:
        return await self.registry.take_if_ownerless(room_id)

    # --- presence ------------------------------------------------------------------------

    async def connected(self, player_id: str, online: bool) -> bool:
        """The player's first connection to this node opened, or its last one closed; the
        owners of its rooms elsewhere hear of it, unless after a close the player is still
        connected to another node: then this returns True, and those owners only learn
        not to send the player's events here any more."""
        elsewhere = await self.presence.connected(player_id, online)
        for room_id in await self.registry.rooms_of(player_id):
            if room_id in self.owned:
                continue
            owner = await self.owner(room_id)
            if owner is not None and owner != self.node:
                await self.inbox.post(owner, {"kind": "moved" if elsewhere else "presence",
                                              "player": player_id, "room": room_id,
                                              "online": online, "node": self.node})
        return elsewhere

    async def is_online(self, player_id: str) -> bool:
        return await self.presence.is_online(player_id)

    # --- commands and events between nodes -------------------------------------------------

    async def forward(self, owner: str, room_id: str, player: tuple[str, str, bool],
                      message: str) -> str | None:
        return await self.inbox.forward(owner, room_id, player, message)

    async def ask_all(self, question: str, timeout: float = 2.0) -> dict[str, str]:
        """Ask every other live node ``question`` (``Node.answer``); their answers, by node,
        from those that answered within ``timeout``."""
        return await self.inbox.ask_all(await self.live_nodes(), question, timeout)

    def publish(self, player_ids: Iterable[str], data: str) -> None:
        self.events.publish(player_ids, data)

    def publish_revoked(self, player_id: str, session_id: str | None,
                        keep: str | None) -> None:
        self.events.publish_revoked(player_id, session_id, keep)
