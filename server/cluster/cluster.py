"""Several server nodes on one Redis and one database: who runs each room, and how commands
and events reach it.

Every unfinished room is run by exactly one node, its owner, so the room core
(``server.play.rooms``) stays single-threaded and sans-I/O. Ownership is a lease: a Redis key
``room_owner`` holding ``"<node> <epoch>"`` with a time to live that the owner renews every
``renew_seconds``. The epoch comes from a counter that grows at every takeover and is the
fencing token the store checks (``Store.fence``): a node that was paused or cut off past its
lease may still believe it owns the room, but every write it makes carries the old epoch and
is refused, and at its next renewal it finds the lease gone and lets the room go.

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
- **Takeover**: the live rooms are a Redis hash (``rooms``: room id -> current game and
  spectators). Every ``renew_seconds`` each node looks for rooms whose lease is gone and
  tries to take them over: it wins the lease (one node does), fences the game in the store,
  and only then reads it, so it sees every move the former owner stored and no later one.
  People connected to surviving nodes stay connected; they get the room's state again.
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
from server.cluster.presence import Presence
from server.storage import keys
from server.storage.config import async_redis
from server.storage.store import Fenced

log = logging.getLogger("discus.cluster")

FIELD = "m"
"""The one field of an inbox entry; its value is the JSON message."""

INBOX_MAXLEN = 10_000
INBOX_TTL_SECONDS = 3600
"""A node's inbox outlives the node by an hour at most."""
REVOKED = "!revoked"
"""The address of an events-channel entry saying sessions were revoked (player ids never
start with ``!``)."""

_ACQUIRE = """
if redis.call('exists', KEYS[1]) == 1 then return 0 end
local epoch = redis.call('incr', KEYS[2])
redis.call('set', KEYS[1], ARGV[1] .. ' ' .. epoch, 'PX', ARGV[2])
redis.call('sadd', KEYS[3], ARGV[3])
return epoch
"""
"""Take a room's lease if nobody holds it, and list the room under the node: the new epoch,
or 0."""

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
"""Extend the lease if this node still holds it at this epoch: 1, else 0."""

_CATCH_UP = """
if tonumber(redis.call('get', KEYS[1]) or '0') < tonumber(ARGV[1]) then
  redis.call('set', KEYS[1], ARGV[1])
end
return 1
"""
"""Raise a room's epoch counter to at least the stored game's (after Redis lost it)."""

_RELEASE = """
if ARGV[3] == '1' then redis.call('srem', KEYS[2], ARGV[2]) end
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
"""Give a lease up; ARGV[3] '1': and unlist the room from the node (it closed)."""


@dataclass(frozen=True)
class ClusterSettings:
    """How long a lease lasts and how often it is renewed (``discus serve --lease``)."""

    lease_seconds: float = 3.0
    """A node silent this long loses its rooms to the others."""
    renew_seconds: float = 1.0
    """How often leases are renewed and ownerless rooms looked for; well below the lease,
    so a busy event loop does not lose its rooms."""
    forward_timeout: float = 10.0
    """How long a node waits for a room's owner to answer a forwarded command."""
    full_scan_seconds: float = 30.0
    """How often every registered room is checked for an owner. Between those checks a node
    looks only at the rooms of nodes that died, so a quiet cluster costs Redis a few
    commands a second however many rooms it runs."""


@dataclass(frozen=True)
class _Event:
    """One event waiting for the publisher."""

    players: list[str]
    nodes: set[str] | None
    """The nodes it goes to, or None: the publisher reads where some of the players are."""
    payload: str


class OwnerGone(Exception):
    """The node a command was forwarded to lost the room's lease before answering."""


class Node(Protocol):
    """What the cluster calls back on the node it runs in (``server.cluster.node.ClusterInbox``)."""

    async def run_forwarded(self, player: tuple[str, str, bool], message: str) -> str | None:
        """Run a client's command from another node; the error message for it, or None."""
        ...

    async def presence_changed(self, player_id: str, room_id: str, online: bool) -> None: ...

    async def answer(self, question: str) -> str:
        """This node's answer to another's ``Cluster.ask`` (JSON)."""
        ...

    async def take_over(self, room_id: str, game_id: str, epoch: int,
                        watchers: list[str]) -> bool:
        """Run the room from its stored game (fenced at ``epoch``); False if it is over."""
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
        self.owned: dict[str, int] = {}
        """Room id -> the epoch this node holds its lease at."""
        self.counts = RedisCounts()
        """What this node asked of Redis (``redis_counts``)."""
        self._client: Any = async_redis(self.redis_url, decode_responses=True)
        """Made here, connected at first use: the node's other shared state (limits,
        challenges) is built on it before the node joins (``open``)."""
        count_commands(self._client, self.counts)
        self.presence = Presence(self._client, prefix, self.node, self.counts)
        self._app: Node | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._publisher: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Future[None]] = set()
        """Commands, questions and answers from other nodes being handled."""
        self._waiting: dict[str, asyncio.Future[str | None]] = {}
        self._pubsub: Any = None
        self._outbox: asyncio.Queue[_Event | None] = asyncio.Queue()
        self._closing = False
        self.draining = False
        """``drain`` was called: this node takes no room and runs no command for another."""
        self._keeper: asyncio.Task[None] | None = None
        self._scripts: dict[str, Any] = {}
        self.takeovers = 0
        """Rooms this node took over from another (for tests and the admin view)."""

    # --- life --------------------------------------------------------------------------

    async def open(self, app: Node) -> None:
        self._app = app
        for name, source in (("acquire", _ACQUIRE), ("renew", _RENEW), ("release", _RELEASE),
                             ("catch_up", _CATCH_UP)):
            self._scripts[name] = self._client.register_script(source)
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
            await self.release(room_id, unlist=False)
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

    def holds(self, room_id: str) -> bool:
        return room_id in self.owned

    async def claim(self, room_id: str) -> int | None:
        """Take the room's lease if nobody holds it; the epoch, or None (also while this
        node drains)."""
        if self.draining:
            return None
        epoch = int(await self._scripts["acquire"](
            keys=[keys.room_owner(self.prefix, room_id), keys.room_epoch(self.prefix, room_id),
                  keys.node_rooms(self.prefix, self.node)],
            args=[self.node, int(self.settings.lease_seconds * 1000), room_id]))
        if not epoch:
            return None
        self.owned[room_id] = epoch
        return epoch

    async def release(self, room_id: str, unlist: bool = True) -> None:
        """Give up the room's lease (it closed, or this node stops: ``unlist`` False)."""
        epoch = self.owned.pop(room_id, None)
        self.presence.untrack(room_id)
        if epoch is not None:
            await self._scripts["release"](
                keys=[keys.room_owner(self.prefix, room_id),
                      keys.node_rooms(self.prefix, self.node)],
                args=[f"{self.node} {epoch}", room_id, "1" if unlist else "0"])

    async def catch_up(self, room_id: str, epoch: int) -> None:
        """The stored game holds ``epoch``, newer than the lease's: Redis lost the room's
        counter (a restart). Raise it, so the next claim fences the game with a newer one."""
        await self._scripts["catch_up"](keys=[keys.room_epoch(self.prefix, room_id)],
                                        args=[epoch])

    async def owner(self, room_id: str) -> str | None:
        """The node that owns the room now, or None (no lease: closed, or its owner died)."""
        held = await self._client.get(keys.room_owner(self.prefix, room_id))
        return None if held is None else str(held).split()[0]

    async def _keep(self) -> None:
        """Renew this node's leases, and take over rooms whose owner is gone: those of nodes
        that died at each renewal, every registered room now and then."""
        last_full = 0.0
        while not self._closing:
            try:
                await self._renew()
                if time.monotonic() - last_full >= self.settings.full_scan_seconds:
                    last_full = time.monotonic()
                    await self.scan()
                else:
                    await self.after_deaths()
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
        owned = list(self.owned.items())
        if not owned:
            return
        px = int(self.settings.lease_seconds * 1000)
        async with self._client.pipeline(transaction=False) as pipe:
            for room_id, epoch in owned:
                await self._scripts["renew"](keys=[keys.room_owner(self.prefix, room_id)],
                                             args=[f"{self.node} {epoch}", px], client=pipe)
            results = await pipe.execute()
        assert self._app is not None
        for (room_id, epoch), kept in zip(owned, results, strict=True):
            if not kept and self.owned.get(room_id) == epoch:
                log.warning("lost the lease of room %s; letting it go", room_id)
                del self.owned[room_id]
                self.presence.untrack(room_id)
                await self._client.srem(keys.node_rooms(self.prefix, self.node), room_id)
                game_id = self._app.let_go(room_id)
                if game_id is not None:
                    # Back in the registry if Redis lost it (a restart), and run again from
                    # the store unless another node runs it now.
                    await self.adopt(room_id, game_id)
                    await self.take_if_ownerless(room_id)

    async def scan(self) -> int:
        """Take over every registered room that no node holds; returns how many."""
        assert self._app is not None
        rooms = await self._client.hgetall(keys.cluster_rooms(self.prefix))
        candidates = [r for r in rooms if r not in self.owned]
        if not candidates:
            return 0
        async with self._client.pipeline(transaction=False) as pipe:
            for room_id in candidates:
                pipe.exists(keys.room_owner(self.prefix, room_id))
            held = await pipe.execute()
        taken = 0
        for room_id, exists in zip(candidates, held, strict=True):
            if not exists and await self._take(room_id, rooms[room_id]):
                taken += 1
        return taken

    async def after_deaths(self) -> int:
        """Take over the rooms of every node whose liveness key is gone; returns how many.
        A dead node is forgotten once each of its rooms has another owner (or closed)."""
        nodes = await self._client.hkeys(keys.cluster_nodes(self.prefix))
        others = [n for n in nodes if n != self.node]
        if not others:
            return 0
        alive = await self._client.mget([keys.cluster_node(self.prefix, n) for n in others])
        taken = 0
        for node, up in zip(others, alive, strict=True):
            if up is None:
                # Events still go to a node taken for dead: it may only be paused (a long
                # stall, SIGSTOP), and Redis keeps its channel's messages until it reads
                # again, so its people hear what happened meanwhile.
                taken += await self._inherit(node)
        return taken

    async def _inherit(self, node: str) -> int:
        rooms = sorted(await self._client.smembers(keys.node_rooms(self.prefix, node)))
        entries = (await self._client.hmget(keys.cluster_rooms(self.prefix), rooms)
                   if rooms else [])
        owners = (await self._client.mget([keys.room_owner(self.prefix, r) for r in rooms])
                  if rooms else [])
        taken = 0
        waiting = False
        for room_id, entry, owner in zip(rooms, entries, owners, strict=True):
            if entry is None or (owner is not None and owner.split()[0] != node):
                continue  # closed, or already run by a live node
            waiting = True
            if owner is None and await self._take(room_id, entry):
                taken += 1
        if not waiting:
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.delete(keys.node_rooms(self.prefix, node))
                pipe.hdel(keys.cluster_nodes(self.prefix), node)
                await pipe.execute()
        return taken

    async def take_if_ownerless(self, room_id: str) -> bool:
        """Take this one room over if it is registered and no node holds it (a command for
        it arrived before the next look for ownerless rooms)."""
        entry = await self._client.hget(keys.cluster_rooms(self.prefix), room_id)
        if entry is None or room_id in self.owned:
            return room_id in self.owned
        return await self._take(room_id, entry)

    async def _take(self, room_id: str, entry: str, again: bool = True) -> bool:
        """Claim the room and run it here. A claim the store refuses (Redis lost the epoch
        counter, so the new epoch was not newer than the game's: ``catch_up`` raised it) is
        made once more at once, rather than leaving the room without an owner until the
        next full scan."""
        assert self._app is not None
        epoch = await self.claim(room_id)
        if epoch is None:
            return False
        registered = json.loads(entry)
        try:
            alive = await self._app.take_over(room_id, registered["game"], epoch,
                                              registered.get("watchers", []))
        except Fenced as exc:  # Redis lost the epoch counter: it was raised, try again
            log.warning("taking room %s over at epoch %d was refused (%s)", room_id, epoch,
                        exc)
            await self.release(room_id)
            return again and await self._take(room_id, entry, again=False)
        except Exception:
            log.exception("taking room %s over failed", room_id)
            await self.release(room_id)
            return False
        if not alive:
            await self.forget(room_id)
            return False
        self.takeovers += 1
        log.info("took room %s over at epoch %d", room_id, epoch)
        return True

    # --- the room registry ---------------------------------------------------------------

    async def register(self, room_id: str, game_id: str, people: Iterable[str],
                       watchers: Iterable[str], open_summary: str | None) -> None:
        """Record the live room (its game and spectators, for a takeover), the rooms each
        of its people is in (for presence), and whether it is open for anyone to join.

        A node holding the room's lease also reads where its people are, in the same round
        trip: from then on presence news keeps that up to date (each node where they connect
        or disconnect finds the room in their rooms and tells its owner), so the room's
        events go only to those nodes."""
        people = list(people)
        new = [p for p in people if p not in self.presence.where] if room_id in self.owned else []
        asked = {p: self.presence.ask(p) for p in new}
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hset(keys.cluster_rooms(self.prefix), room_id,
                      json.dumps({"game": game_id, "watchers": sorted(watchers)}))
            for player_id in people:
                pipe.sadd(keys.player_rooms(self.prefix, player_id), room_id)
            if open_summary is None:
                pipe.hdel(keys.open_rooms(self.prefix), room_id)
            else:
                pipe.hset(keys.open_rooms(self.prefix), room_id, open_summary)
            for player_id in new:
                pipe.smembers(keys.player_nodes(self.prefix, player_id))
            try:
                results = await pipe.execute()
            except BaseException:
                self.presence.forget_asked(asked)
                raise
        if room_id in self.owned:
            self.presence.track(room_id, people)
        for player_id, nodes in zip(new, results[len(results) - len(new):], strict=True):
            self.presence.learned(player_id, asked[player_id], nodes)

    async def adopt(self, room_id: str, game_id: str) -> None:
        """Register a stored unfinished game's room unless the registry has it already."""
        await self._client.hsetnx(keys.cluster_rooms(self.prefix), room_id,
                                  json.dumps({"game": game_id, "watchers": []}))

    async def forget(self, room_id: str) -> None:
        """The room closed: out of the registry and the open list, lease released."""
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hdel(keys.cluster_rooms(self.prefix), room_id)
            pipe.hdel(keys.open_rooms(self.prefix), room_id)
            await pipe.execute()
        await self.release(room_id)

    async def open_rooms(self) -> list[str]:
        """The summaries (JSON) of every node's open rooms."""
        return list((await self._client.hgetall(keys.open_rooms(self.prefix))).values())

    async def rooms_of(self, player_id: str) -> list[str]:
        """Live rooms the player sits in or watches, on any node (closed ones are dropped)."""
        found = await self._client.smembers(keys.player_rooms(self.prefix, player_id))
        if not found:
            return []
        found = sorted(found)
        live = await self._client.hmget(keys.cluster_rooms(self.prefix), found)
        gone = [r for r, entry in zip(found, live, strict=True) if entry is None]
        if gone:
            await self._client.srem(keys.player_rooms(self.prefix, player_id), *gone)
        return [r for r, entry in zip(found, live, strict=True) if entry is not None]

    # --- presence ------------------------------------------------------------------------

    async def connected(self, player_id: str, online: bool) -> bool:
        """The player's first connection to this node opened, or its last one closed; the
        owners of its rooms elsewhere hear of it, unless after a close the player is still
        connected to another node: then this returns True, and those owners only learn
        not to send the player's events here any more."""
        elsewhere = await self.presence.connected(player_id, online)
        for room_id in await self.rooms_of(player_id):
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
