"""Where players are connected: the presence sets in Redis (``player_nodes``: which nodes a
player is connected to), and what this node keeps of them for the people of the rooms it runs.

Presence is what lets a node taking a room over know who is still there, an owner hear when a
player's last connection on another node closes, and events go only to the nodes where their
players are. A node knows where the people of the rooms it runs are (it reads their presence
sets when it registers a room, and the presence news other nodes send its inbox keeps that
up to date); anyone else's presence set it reads when it has an event for them. So a node's
work per move does not grow with the number of nodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from server.cluster.counts import RedisCounts
from server.storage import keys


class Presence:
    """This node's players in the presence sets, and where the people of its rooms are."""

    def __init__(self, client: Any, prefix: str, node: str, counts: RedisCounts) -> None:
        self._client = client
        self._prefix = prefix
        self._node = node
        self._counts = counts
        self._members: dict[str, frozenset[str]] = {}
        """Room id -> its people and spectators, for the rooms this node registered while
        holding their lease."""
        self._rooms_with: dict[str, set[str]] = {}
        """Player id -> those of the rooms above the player is in."""
        self.where: dict[str, set[str]] = {}
        """Player id -> the nodes the player is connected to, for players in the rooms
        above: read when the room was registered, kept up to date by presence news."""
        self._asking: dict[str, object] = {}
        """Player id -> the read of its presence set under way; presence news about the
        player meanwhile makes that read too old to keep."""
        self.here: set[str] = set()
        """Players connected to this node (``connected``)."""

    # --- this node's players -------------------------------------------------------------

    async def connected(self, player_id: str, online: bool) -> bool:
        """The player's first connection to this node opened, or its last one closed: in
        or out of the player's presence set. True if after a close the player is still
        connected to another node."""
        key = keys.player_nodes(self._prefix, player_id)
        if online:
            self.here.add(player_id)
            await self._client.sadd(key, self._node)
            return False
        self.here.discard(player_id)
        await self._client.srem(key, self._node)
        return await self.is_online(player_id)

    async def is_online(self, player_id: str) -> bool:
        """Whether the player is connected to some live node."""
        nodes = await self._client.smembers(keys.player_nodes(self._prefix, player_id))
        if not nodes:
            return False
        alive = await self._client.exists(*(keys.cluster_node(self._prefix, n) for n in nodes))
        return bool(alive)

    async def restore(self) -> list[str]:
        """Put this node back in the presence sets of its players (Redis lost them); those
        players."""
        here = sorted(self.here)
        async with self._client.pipeline(transaction=False) as pipe:
            for player_id in here:
                pipe.sadd(keys.player_nodes(self._prefix, player_id), self._node)
            await pipe.execute()
        return here

    # --- where the people of this node's rooms are -----------------------------------------

    def nodes_of(self, player_ids: Iterable[str]) -> set[str] | None:
        """The other live nodes where these players are connected, if this node knows
        where each of them is; else None."""
        nodes: set[str] = set()
        for player_id in player_ids:
            where = self.where.get(player_id)
            if where is None:
                return None
            nodes |= where
        nodes.discard(self._node)
        return nodes

    async def look_up(self, player_ids: list[str]) -> dict[str, set[str]]:
        """The nodes each of these players is connected to, from their presence sets; kept
        for those in this node's rooms."""
        self._counts.lookups += len(player_ids)
        asked = {p: self.ask(p) for p in player_ids}
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for player_id in player_ids:
                    pipe.smembers(keys.player_nodes(self._prefix, player_id))
                results = await pipe.execute()
        except BaseException:
            self.forget_asked(asked)
            raise
        found = {p: set(nodes) for p, nodes in zip(player_ids, results, strict=True)}
        for player_id, nodes in found.items():
            self.learned(player_id, asked[player_id], nodes)
        return found

    def ask(self, player_id: str) -> object:
        """Note a read of the player's presence set starting (``learned`` keeps it)."""
        token = self._asking[player_id] = object()
        return token

    def forget_asked(self, asked: dict[str, object]) -> None:
        for player_id, token in asked.items():
            if self._asking.get(player_id) is token:
                del self._asking[player_id]

    def learned(self, player_id: str, token: object, nodes: Iterable[str]) -> None:
        """A read of the player's presence set came back: kept if the player is in a room
        this node runs and no presence news about it came meanwhile."""
        if self._asking.get(player_id) is token:
            del self._asking[player_id]
            if player_id in self._rooms_with:
                self.where[player_id] = set(nodes)

    def heard(self, player_id: str, node: str, online: bool) -> None:
        """Presence news from ``node``: the player's first connection there opened, or its
        last one closed."""
        self._asking.pop(player_id, None)
        where = self.where.get(player_id)
        if where is not None:
            if online:
                where.add(node)
            else:
                where.discard(node)

    def track(self, room_id: str, people: Iterable[str]) -> None:
        """The people of a room this node runs, as just registered."""
        before = self._members.get(room_id, frozenset())
        now = self._members[room_id] = frozenset(people)
        for player_id in now - before:
            self._rooms_with.setdefault(player_id, set()).add(room_id)
        for player_id in before - now:
            self._drop(player_id, room_id)

    def rooms_run_with(self, player_id: str) -> list[str]:
        """The rooms this node runs that the player is in (as last registered)."""
        return sorted(self._rooms_with.get(player_id, ()))

    def untrack(self, room_id: str) -> None:
        """This node no longer runs the room: presence news of its people may go elsewhere."""
        for player_id in self._members.pop(room_id, ()):
            self._drop(player_id, room_id)

    def _drop(self, player_id: str, room_id: str) -> None:
        rooms = self._rooms_with.get(player_id)
        if rooms is None:
            return
        rooms.discard(room_id)
        if not rooms:
            del self._rooms_with[player_id]
            self.where.pop(player_id, None)
            self._asking.pop(player_id, None)
