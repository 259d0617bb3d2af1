"""The live rooms of the whole cluster, so that no room is left without an owner.

The live rooms are a Redis hash (``rooms``: room id -> current game and spectators), with
the rooms each player is in and the rooms open for anyone to join. Every ``renew_seconds``
each node looks for rooms whose lease is gone and tries to take them over: it wins the lease
(one node does), fences the game in the store, and only then reads it, so it sees every move
the former owner stored and no later one. People connected to surviving nodes stay
connected; they get the room's state again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any, Protocol

from server.cluster.leases import Leases
from server.cluster.presence import Presence
from server.storage import keys
from server.storage.store import Fenced

log = logging.getLogger("discus.cluster")


class TakingOver(Protocol):
    """What the node does with a room whose owner is gone."""

    async def take_over(self, room_id: str, game_id: str, epoch: int,
                        watchers: list[str]) -> bool:
        """Run the room from its stored game (fenced at ``epoch``); False if it is over."""
        ...


class Registry:
    """The registry of live rooms, and taking over those no node holds."""

    def __init__(self, client: Any, prefix: str, node: str, leases: Leases,
                 presence: Presence) -> None:
        self._client = client
        self._prefix = prefix
        self._node = node
        self._leases = leases
        self._presence = presence
        self._app: TakingOver | None = None
        self.takeovers = 0
        """Rooms this node took over from another (for tests and the admin view)."""

    def open(self, app: TakingOver) -> None:
        self._app = app

    # --- the rooms -----------------------------------------------------------------------

    async def register(self, room_id: str, game_id: str, people: Iterable[str],
                       watchers: Iterable[str], open_summary: str | None) -> None:
        """Record the live room (its game and spectators, for a takeover), the rooms each
        of its people is in (for presence), and whether it is open for anyone to join.

        A node holding the room's lease also reads where its people are, in the same round
        trip: from then on presence news keeps that up to date (each node where they connect
        or disconnect finds the room in their rooms and tells its owner), so the room's
        events go only to those nodes."""
        people = list(people)
        owned = self._leases.owned
        new = ([p for p in people if p not in self._presence.where] if room_id in owned
               else [])
        asked = {p: self._presence.ask(p) for p in new}
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hset(keys.cluster_rooms(self._prefix), room_id,
                      json.dumps({"game": game_id, "watchers": sorted(watchers)}))
            for player_id in people:
                pipe.sadd(keys.player_rooms(self._prefix, player_id), room_id)
            if open_summary is None:
                pipe.hdel(keys.open_rooms(self._prefix), room_id)
            else:
                pipe.hset(keys.open_rooms(self._prefix), room_id, open_summary)
            for player_id in new:
                pipe.smembers(keys.player_nodes(self._prefix, player_id))
            try:
                results = await pipe.execute()
            except BaseException:
                self._presence.forget_asked(asked)
                raise
        if room_id in owned:
            self._presence.track(room_id, people)
        for player_id, nodes in zip(new, results[len(results) - len(new):], strict=True):
            self._presence.learned(player_id, asked[player_id], nodes)

    async def adopt(self, room_id: str, game_id: str) -> None:
        """Register a stored unfinished game's room unless the registry has it already."""
        await self._client.hsetnx(keys.cluster_rooms(self._prefix), room_id,
                                  json.dumps({"game": game_id, "watchers": []}))

    async def forget(self, room_id: str) -> None:
        """The room closed: out of the registry and the open list, lease released."""
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hdel(keys.cluster_rooms(self._prefix), room_id)
            pipe.hdel(keys.open_rooms(self._prefix), room_id)
            await pipe.execute()
        await self._leases.release(room_id)

    async def open_rooms(self) -> list[str]:
        """The summaries (JSON) of every node's open rooms."""
        return list((await self._client.hgetall(keys.open_rooms(self._prefix))).values())

    async def rooms_of(self, player_id: str) -> list[str]:
        """Live rooms the player sits in or watches, on any node (closed ones are dropped)."""
        found = await self._client.smembers(keys.player_rooms(self._prefix, player_id))
        if not found:
            return []
        found = sorted(found)
        live = await self._client.hmget(keys.cluster_rooms(self._prefix), found)
        gone = [r for r, entry in zip(found, live, strict=True) if entry is None]
        if gone:
            await self._client.srem(keys.player_rooms(self._prefix, player_id), *gone)
        return [r for r, entry in zip(found, live, strict=True) if entry is not None]

    # --- takeovers -----------------------------------------------------------------------

    async def scan(self) -> int:
        """Take over every registered room that no node holds; returns how many."""
        assert self._app is not None
        rooms = await self._client.hgetall(keys.cluster_rooms(self._prefix))
        candidates = [r for r in rooms if r not in self._leases.owned]
        if not candidates:
            return 0
        async with self._client.pipeline(transaction=False) as pipe:
            for room_id in candidates:
                pipe.exists(keys.room_owner(self._prefix, room_id))
            held = await pipe.execute()
        taken = 0
        for room_id, exists in zip(candidates, held, strict=True):
            if not exists and await self._take(room_id, rooms[room_id]):
                taken += 1
        return taken

    async def after_deaths(self) -> int:
        """Take over the rooms of every node whose liveness key is gone; returns how many.
        A dead node is forgotten once each of its rooms has another owner (or closed)."""
        nodes = await self._client.hkeys(keys.cluster_nodes(self._prefix))
        others = [n for n in nodes if n != self._node]
        if not others:
            return 0
        alive = await self._client.mget([keys.cluster_node(self._prefix, n) for n in others])
        taken = 0
        for node, up in zip(others, alive, strict=True):
            if up is None:
                # Events still go to a node taken for dead: it may only be paused (a long
                # stall, SIGSTOP), and Redis keeps its channel's messages until it reads
                # again, so its people hear what happened meanwhile.
                taken += await self._inherit(node)
        return taken

    async def _inherit(self, node: str) -> int:
        rooms = sorted(await self._client.smembers(keys.node_rooms(self._prefix, node)))
        entries = (await self._client.hmget(keys.cluster_rooms(self._prefix), rooms)
                   if rooms else [])
        owners = (await self._client.mget([keys.room_owner(self._prefix, r) for r in rooms])
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
                pipe.delete(keys.node_rooms(self._prefix, node))
                pipe.hdel(keys.cluster_nodes(self._prefix), node)
                await pipe.execute()
        return taken

    async def take_if_ownerless(self, room_id: str) -> bool:
        """Take this one room over if it is registered and no node holds it (a command for
        it arrived before the next look for ownerless rooms)."""
        entry = await self._client.hget(keys.cluster_rooms(self._prefix), room_id)
        owned = self._leases.owned
        if entry is None or room_id in owned:
            return room_id in owned
        return await self._take(room_id, entry)

    async def _take(self, room_id: str, entry: str, again: bool = True) -> bool:
        """Claim the room and run it here. A claim the store refuses (Redis lost the epoch
        counter, so the new epoch was not newer than the game's: ``catch_up`` raised it) is
        made once more at once, rather than leaving the room without an owner until the
        next full scan."""
        assert self._app is not None
        epoch = await self._leases.claim(room_id)
        if epoch is None:
            return False
        registered = json.loads(entry)
        try:
            alive = await self._app.take_over(room_id, registered["game"], epoch,
                                              registered.get("watchers", []))
        except Fenced as exc:  # Redis lost the epoch counter: it was raised, try again
            log.warning("taking room %s over at epoch %d was refused (%s)", room_id, epoch,
                        exc)
            await self._leases.release(room_id)
            return again and await self._take(room_id, entry, again=False)
        except Exception:
            log.exception("taking room %s over failed", room_id)
            await self._leases.release(room_id)
            return False
        if not alive:
            await self.forget(room_id)
            return False
        self.takeovers += 1
        log.info("took room %s over at epoch %d", room_id, epoch)
        return True
