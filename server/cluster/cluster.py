"""Several server nodes on one Redis and one database: who runs each room, and how commands
and events reach it.

- **Leases** (``server.cluster.leases``): every unfinished room is run by exactly one node,
  which holds its lease; the lease's epoch fences a former owner's writes out of the store.
- **Commands** for a room another node owns go to that node's inbox, a Redis Stream read by
  that node only, with the asking node's id; the owner runs them under the room's lock, as
  its own clients' commands, and answers on the asking node's inbox (nothing, or the error
  for the client). A stream and not pub/sub: an entry written while the owner's reader is
  between two reads, or reconnecting, waits for it instead of being lost.
- **Events** (everything a room sends to its people) go to the pub/sub channel of each
  other node where one of the players they are for is connected, with those player ids;
  that node delivers them to its own connections of those players. An event whose players
  are all connected to the node that made it costs Redis nothing. Pub/sub and not streams:
  an event matters only to nodes connected now. Where the players are is
  ``server.cluster.presence``'s. (A connection hears a room's events from when its node's
  presence news reached the room's owner, a few milliseconds after its ``hello``; the
  room's state comes with ``join_room`` or ``spectate`` anyway.)
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
from collections.abc import Awaitable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from redis.exceptions import RedisError

from server.cluster.counts import COUNTS_TTL_SECONDS, RedisCounts, count_commands
from server.cluster.leases import ClusterSettings, Leases
from server.cluster.presence import Presence
from server.cluster.registry import Registry, TakingOver
from server.storage import keys
from server.storage.config import async_redis

log = logging.getLogger("discus.cluster")

FIELD = "m"
"""The one field of an inbox entry; its value is the JSON message."""

INBOX_MAXLEN = 10_000
INBOX_TTL_SECONDS = 3600
"""A node's inbox outlives the node by an hour at most."""
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


class OwnerGone(Exception):
    """The node a command was forwarded to lost the room's lease before answering."""


class Node(TakingOver, Protocol):
    """What the cluster calls back on the node it runs in (``server.cluster.node.ClusterInbox``)."""

    async def run_forwarded(self, player: tuple[str, str, bool], message: str) -> str | None:
        """Run a client's command from another node; the error message for it, or None."""
        ...

    async def presence_changed(self, player_id: str, room_id: str, online: bool) -> None: ...

    async def answer(self, question: str) -> str:
        """This node's answer to another's ``Cluster.ask`` (JSON)."""
        ...

    def let_go(self, room_id: str) -> str | None:
        """Another node owns the room now: forget it without writing anything; the id of
        the game it was running, if it had the room."""
        ...

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None: ...

    def close_revoked(self, player_id: str, session_id: str | None, keep: str | None) -> None:
        """Another node revoked sessions of this account (``Cluster.publish_revoked``)."""
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
        self.registry = Registry(self._client, prefix, self.node, self.leases, self.presence)
        self._app: Node | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._publisher: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Future[None]] = set()
        """Commands, questions and answers from other nodes being handled."""
        self._waiting: dict[str, asyncio.Future[str | None]] = {}
        self._pubsub: Any = None
        self._outbox: asyncio.Queue[_Event | None] = asyncio.Queue()
        self._closing = False
        self._keeper: asyncio.Task[None] | None = None

    # --- life --------------------------------------------------------------------------

    async def open(self, app: Node) -> None:
        self._app = app
        self.leases.open()
        self.registry.open(app)
        await self._beat()
        self._pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        await self._pubsub.subscribe(keys.node_events(self.prefix, self.node))

    def start(self) -> None:
        """Start reading the inbox and the events, renewing leases and taking rooms over."""
        self._publisher = asyncio.create_task(self._publish())
        self._keeper = asyncio.create_task(self._keep())
        self._tasks = [asyncio.create_task(self._read_inbox()),
                       asyncio.create_task(self._read_events()),
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
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=self.settings.forward_timeout)
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
        self._closing = True
        loops = [t for t in self._tasks if t is not self._publisher]
        for task in loops:
            task.cancel()
        if loops:
            await asyncio.wait(loops, timeout=2.0)
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=self.settings.forward_timeout)
        self._outbox.put_nowait(None)
        if self._publisher is not None:
            await asyncio.wait([self._publisher], timeout=5.0)
        for left in [*self._tasks, *self._handlers]:
            left.cancel()
        with contextlib.suppress(RedisError, OSError):
            await self._leave()
            await self._client.set(keys.node_redis_counts(self.prefix, self.node),
                                   json.dumps(asdict(self.counts)), ex=COUNTS_TTL_SECONDS)
        self.owned.clear()
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()
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
                await self._post(node, {"kind": "here", "node": self.node, "players": here})

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
                await self._post(owner, {"kind": "moved" if elsewhere else "presence",
                                         "player": player_id, "room": room_id,
                                         "online": online, "node": self.node})
        return elsewhere

    async def is_online(self, player_id: str) -> bool:
        return await self.presence.is_online(player_id)

    # --- commands between nodes ----------------------------------------------------------

    async def forward(self, owner: str, room_id: str, player: tuple[str, str, bool],
                      message: str) -> str | None:
        """Run a client's command on the room's owner; its error message (JSON), or None.

        Raises ``OwnerGone`` as soon as the owner no longer holds the room's lease (it died:
        the caller takes the room over and runs the command itself; the dead owner ran it
        or not, and the stored game says which), ``TimeoutError`` if a live owner does not
        answer within ``forward_timeout``."""
        ask = secrets.token_hex(8)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._waiting[ask] = future
        deadline = time.monotonic() + self.settings.forward_timeout
        try:
            await self._post(owner, {"kind": "command", "id": ask, "from": self.node,
                                     "player": list(player), "message": message})
            while True:
                try:
                    return await asyncio.wait_for(asyncio.shield(future),
                                                  self.settings.renew_seconds)
                except TimeoutError:
                    if await self.owner(room_id) != owner:
                        raise OwnerGone(room_id) from None
                    if time.monotonic() > deadline:
                        raise
        finally:
            self._waiting.pop(ask, None)

    async def live_nodes(self) -> list[str]:
        """Every node alive now, this one included."""
        nodes = sorted(await self._client.hkeys(keys.cluster_nodes(self.prefix)))
        alive = await self._client.mget([keys.cluster_node(self.prefix, n) for n in nodes])
        return [n for n, up in zip(nodes, alive, strict=True) if up is not None]

    async def ask_all(self, question: str, timeout: float = 2.0) -> dict[str, str]:
        """Ask every other live node ``question`` (``Node.answer``); their answers, by node,
        from those that answered within ``timeout``."""
        asked: dict[str, asyncio.Future[str | None]] = {}
        for node in await self.live_nodes():
            if node == self.node:
                continue
            ask = secrets.token_hex(8)
            asked[node] = self._waiting[ask] = asyncio.get_running_loop().create_future()
            await self._post(node, {"kind": "ask", "id": ask, "from": self.node,
                                    "question": question})
        try:
            if asked:
                await asyncio.wait(asked.values(), timeout=timeout)
        finally:
            for ask in [a for a, f in self._waiting.items() if f in asked.values()]:
                self._waiting.pop(ask, None)
        return {node: str(f.result()) for node, f in asked.items()
                if f.done() and not f.cancelled() and f.result() is not None}

    async def _post(self, node: str, message: dict[str, Any]) -> None:
        inbox = keys.cluster_inbox(self.prefix, node)
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.xadd(inbox, {FIELD: json.dumps(message, separators=(",", ":"))},
                      maxlen=INBOX_MAXLEN, approximate=True)
            pipe.expire(inbox, INBOX_TTL_SECONDS)
            await pipe.execute()

    async def _read_inbox(self) -> None:
        inbox = keys.cluster_inbox(self.prefix, self.node)
        last = "$"
        while not self._closing:
            try:
                batches = await self._client.xread({inbox: last}, count=256, block=1000)
            except (RedisError, OSError):
                log.warning("cannot read this node's inbox; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for _, entries in batches or ():
                for entry_id, fields in entries:
                    last = entry_id
                    message = json.loads(fields[FIELD])
                    # Presence news before anything after it runs: events from now on go
                    # to the nodes where their players are.
                    if message["kind"] in ("presence", "moved") and "node" in message:
                        self.presence.heard(message["player"], message["node"],
                                            bool(message["online"]))
                    elif message["kind"] == "here":
                        for player_id in message["players"]:
                            self.presence.heard(player_id, message["node"], True)
                    self._spawn(self._on_entry(message))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _on_entry(self, message: dict[str, Any]) -> None:
        assert self._app is not None
        kind = message["kind"]
        try:
            if kind == "reply":
                future = self._waiting.get(message["id"])
                if future is not None and not future.done():
                    future.set_result(message["error"])
            elif kind == "command":
                if self.draining:
                    return  # not run here: the asking node sends it to the next owner
                player = tuple(message["player"])
                error = await self._app.run_forwarded(
                    (str(player[0]), str(player[1]), bool(player[2])), message["message"])
                await self._post(message["from"], {"kind": "reply", "id": message["id"],
                                                   "error": error})
            elif kind == "ask":
                answer = await self._app.answer(message["question"])
                await self._post(message["from"], {"kind": "reply", "id": message["id"],
                                                   "error": answer})
            elif kind == "presence":
                await self._app.presence_changed(message["player"], message["room"],
                                                 bool(message["online"]))
        except Exception:
            log.exception("failed to handle a %s from another node", kind)

    # --- events --------------------------------------------------------------------------

    def publish(self, player_ids: Iterable[str], data: str) -> None:
        """Send ``data`` (an encoded server message) to these players' connections on other
        nodes; in order with this node's other events. Nothing goes to Redis when every one
        of them is in a room this node runs and connected to no other node."""
        to = list(player_ids)
        if to:
            self._queue(to, f"{self.node}\n{','.join(to)}\n{data}")

    def publish_revoked(self, player_id: str, session_id: str | None,
                        keep: str | None) -> None:
        """Tell the other nodes where ``player_id`` is connected that sessions of it were
        revoked (``session_id``, or all but ``keep``), so they close the connections that
        came in with them now, not at their next ``hello``. An event addressed to
        ``REVOKED``."""
        data = json.dumps({"player": player_id, "session": session_id, "keep": keep})
        self._queue([player_id], f"{self.node}\n{REVOKED}\n{data}")

    def _queue(self, player_ids: list[str], payload: str) -> None:
        nodes = self.presence.nodes_of(player_ids)
        if nodes is not None and not nodes:
            self.counts.events_local += 1
            return
        self._outbox.put_nowait(_Event(player_ids, nodes, payload))

    async def _publish(self) -> None:
        """One task publishes, each batch in one pipeline on one connection: events reach
        each node in the order the rooms made them. It stops at the marker ``close`` puts
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
        where = self.presence.where
        unknown = sorted({p for e in events if e.nodes is None for p in e.players
                          if p not in where})
        found = await self.presence.look_up(unknown) if unknown else {}
        async with self._client.pipeline(transaction=False) as pipe:
            for event in events:
                nodes = event.nodes
                if nodes is None:
                    nodes = set()
                    for player_id in event.players:
                        nodes |= found.get(player_id) or where.get(player_id, set())
                    nodes.discard(self.node)
                for node in sorted(nodes):
                    pipe.publish(keys.node_events(self.prefix, node), event.payload)
            self.counts.events_published += len(pipe)
            if len(pipe):
                await pipe.execute()

    async def _read_events(self) -> None:
        assert self._app is not None
        channel = keys.node_events(self.prefix, self.node)
        while not self._closing:
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
            self.counts.events_received += 1
            self.counts.event_bytes_received += len(payload)
            origin, to, data = payload.split("\n", 2)
            if origin == self.node:
                continue
            if to == REVOKED:
                revoked = json.loads(data)
                self._app.close_revoked(revoked["player"], revoked["session"], revoked["keep"])
            else:
                self._app.deliver_local(to.split(","), data)
