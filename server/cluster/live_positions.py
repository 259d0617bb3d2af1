"""The cluster's side of the positions the engine must not help in: every node's guarded
live games, in Redis, so a request reaching any node is refused as on the room's own
(``server.reviews.live_positions``, docs/SECURITY.md).

Each position a guarded room stands in (or stood in, or is one move from) is a Redis set
named after the position (``keys.live_position``), its members the room ids. The room's node
writes them before the move is announced (``ClusterPlacement.registered``), only when they
changed: the room's ids go into the new positions' sets, out of those it left. Each set
carries a TTL (``LIVE_POSITION_SECONDS``) the node renews with each write and, for rooms where
nothing happened for a while, from the cluster's lease keeper; so the positions of a node that
died lapse within it, and a node taking the room over writes them again. A node asked reads
every symmetric image of each position in one round trip (``EXISTS``, one per position).

Redis out of reach: a write is retried at the room's next change, and a read finds nothing
(the node's own rooms are still refused locally): play never waits on this guard.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from redis.exceptions import RedisError

from server.reviews.live_positions import Key
from server.storage import keys

log = logging.getLogger("discus.cluster.live_positions")

LIVE_POSITION_SECONDS = 300.0
"""How long a guarded position outlives its node's last word on it (a dead node's positions
are refused by the others at most this long after)."""
RENEW_AFTER = LIVE_POSITION_SECONDS / 3
"""A room's positions written longer ago than this are renewed by the lease keeper."""


class SharedLivePositions:
    """The guarded positions of every node's rooms, in Redis under ``prefix``."""

    def __init__(self, client: Any, prefix: str,
                 now: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._prefix = prefix
        self._now = now
        self._written: dict[str, tuple[frozenset[str], float]] = {}
        """Per room of this node: the sets it is in, and when they were last written."""

    def _names(self, positions: Collection[Key]) -> frozenset[str]:
        return frozenset(keys.live_position(self._prefix, game, mine, theirs)
                         for game, mine, theirs in positions)

    async def publish(self, room_id: str, positions: Collection[Key]) -> None:
        """``room_id``'s guarded positions are ``positions`` now (none: its game ended, is
        not guarded, or the room closed). Writes only what changed (nothing, mostly: a room
        whose game did not move)."""
        names = self._names(positions)
        before, at = self._written.get(room_id, (frozenset(), 0.0))
        now = self._now()
        if names == before and (not names or now - at < RENEW_AFTER):
            return
        if not await self._write(room_id, before - names, names):
            # Out of reach: the next change removes and adds it all again.
            self._written[room_id] = (before | names, float("-inf"))
            return
        if names:
            self._written[room_id] = (names, now)
        else:
            self._written.pop(room_id, None)

    async def _write(self, room_id: str, gone: Collection[str], names: Collection[str]
                     ) -> bool:
        ttl = int(LIVE_POSITION_SECONDS)
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for name in gone:
                    pipe.srem(name, room_id)
                for name in names:
                    pipe.sadd(name, room_id)
                    pipe.expire(name, ttl)
                await pipe.execute()
        except (RedisError, OSError):
            log.warning("cannot write room %s's guarded positions to Redis", room_id,
                        exc_info=True)
            return False
        return True

    def forget(self, room_id: str) -> None:
        """This node runs ``room_id`` no more (another took it over, and writes them): what
        this node wrote lapses with its TTL."""
        self._written.pop(room_id, None)

    async def renew(self) -> None:
        """Renew the TTL of the rooms whose positions were written longest ago (their game
        has not moved for ``RENEW_AFTER``): called now and then by the lease keeper."""
        now = self._now()
        for room_id, (names, at) in list(self._written.items()):
            if now - at >= RENEW_AFTER and await self._write(room_id, (), names):
                self._written[room_id] = (names, now)

    async def first_standing(self, images: Sequence[Collection[Key]]) -> int | None:
        """The index of the first entry of ``images`` (each a position's symmetric images)
        that stands on a guarded board of any node; None if none does, or Redis is out of
        reach."""
        if not images:
            return None
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for positions in images:
                    pipe.exists(*self._names(positions))
                found = await pipe.execute()
        except (RedisError, OSError):
            log.warning("cannot read the cluster's guarded positions", exc_info=True)
            return None
        return next((i for i, count in enumerate(found) if count), None)
