"""Who runs each room: its lease, and the epoch that fences a former owner out.

Every unfinished room is run by exactly one node, its owner, so the room core
(``server.play.rooms``) stays single-threaded and sans-I/O. Ownership is a lease: a Redis key
``room_owner`` holding ``"<node> <epoch>"`` with a time to live that the owner renews every
``renew_seconds``. The epoch comes from a counter that grows at every takeover and is the
fencing token the store checks (``Store.fence``): a node that was paused or cut off past its
lease may still believe it owns the room, but every write it makes carries the old epoch and
is refused, and at its next renewal it finds the lease gone and lets the room go.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from server.cluster.presence import Presence
from server.storage import keys

log = logging.getLogger("discus.cluster")

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


class Leases:
    """The leases this node holds, and the rooms it lists as its own (``node_rooms``)."""

    def __init__(self, client: Any, prefix: str, node: str, settings: ClusterSettings,
                 presence: Presence) -> None:
        self._client = client
        self._prefix = prefix
        self._node = node
        self._settings = settings
        self._presence = presence
        self.owned: dict[str, int] = {}
        """Room id -> the epoch this node holds its lease at."""
        self.draining = False
        """``Cluster.drain`` was called: this node takes no room and runs no command for
        another."""
        self._scripts: dict[str, Any] = {}

    def open(self) -> None:
        for name, source in (("acquire", _ACQUIRE), ("renew", _RENEW), ("release", _RELEASE),
                             ("catch_up", _CATCH_UP)):
            self._scripts[name] = self._client.register_script(source)

    def holds(self, room_id: str) -> bool:
        return room_id in self.owned

    async def claim(self, room_id: str) -> int | None:
        """Take the room's lease if nobody holds it; the epoch, or None (also while this
        node drains)."""
        if self.draining:
            return None
        epoch = int(await self._scripts["acquire"](
            keys=[keys.room_owner(self._prefix, room_id),
                  keys.room_epoch(self._prefix, room_id),
                  keys.node_rooms(self._prefix, self._node)],
            args=[self._node, int(self._settings.lease_seconds * 1000), room_id]))
        if not epoch:
            return None
        self.owned[room_id] = epoch
        return epoch

    async def release(self, room_id: str, unlist: bool = True) -> None:
        """Give up the room's lease (it closed, or this node stops: ``unlist`` False)."""
        epoch = self.owned.pop(room_id, None)
        self._presence.untrack(room_id)
        if epoch is not None:
            await self._scripts["release"](
                keys=[keys.room_owner(self._prefix, room_id),
                      keys.node_rooms(self._prefix, self._node)],
                args=[f"{self._node} {epoch}", room_id, "1" if unlist else "0"])

    async def catch_up(self, room_id: str, epoch: int) -> None:
        """The stored game holds ``epoch``, newer than the lease's: Redis lost the room's
        counter (a restart). Raise it, so the next claim fences the game with a newer one."""
        await self._scripts["catch_up"](keys=[keys.room_epoch(self._prefix, room_id)],
                                        args=[epoch])

    async def owner(self, room_id: str) -> str | None:
        """The node that owns the room now, or None (no lease: closed, or its owner died)."""
        held = await self._client.get(keys.room_owner(self._prefix, room_id))
        return None if held is None else str(held).split()[0]

    async def renew(self) -> list[tuple[str, int]]:
        """Extend every lease this node holds; those it held no more, with their epochs
        (``lost`` lets each go)."""
        owned = list(self.owned.items())
        if not owned:
            return []
        px = int(self._settings.lease_seconds * 1000)
        async with self._client.pipeline(transaction=False) as pipe:
            for room_id, epoch in owned:
                await self._scripts["renew"](keys=[keys.room_owner(self._prefix, room_id)],
                                             args=[f"{self._node} {epoch}", px], client=pipe)
            results = await pipe.execute()
        return [lease for lease, kept in zip(owned, results, strict=True) if not kept]

    async def lost(self, room_id: str, epoch: int) -> bool:
        """The renewal found this lease gone: forget it and unlist the room, unless this
        node took the room again since. True if it was let go."""
        if self.owned.get(room_id) != epoch:
            return False
        log.warning("lost the lease of room %s; letting it go", room_id)
        del self.owned[room_id]
        self._presence.untrack(room_id)
        await self._client.srem(keys.node_rooms(self._prefix, self._node), room_id)
        return True
