"""Where rooms run: the one interface the core asks, and its single-node implementation.

Why: a server runs alone or as one node of a cluster (``server.cluster.node``), and the core (the
room runner, the gateway, the desks) must not care which. Everything that differs — who owns
a room and under which fencing epoch, where a command for it runs, who hears its events,
whether a player is online anywhere, how many rooms a player has in all — is a method here,
chosen once at start-up, as websockets picks its asyncio or sync layer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from server import errors
from server import protocol as p
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.rooms import Room, room_of
from server.storage.store import GameRecord, MoveRecord, Store


class Restoring(Protocol):
    """The room runner's restore, as a start-up needs it."""

    def lock(self, room_id: str) -> asyncio.Lock: ...

    async def restore(self, record: GameRecord, moves: Sequence[MoveRecord],
                      epoch: int) -> Room | None: ...


class Tournaments(Protocol):
    """A desk that pairs tournaments (``server.tournaments.desk``, ``server.ladder.desk``), as
    the placement brings them back, hands them over and runs other nodes' messages for
    them."""

    @property
    def commands(self) -> tuple[type[BaseModel], ...]:
        """The messages about one of its tournaments, run where the tournament is paired."""
        ...

    def pairs(self, tournament_id: str) -> bool:
        """Whether the tournament ``tournament_id`` is one of this desk's kind."""
        ...

    async def unfinished(self) -> list[str]:
        """The tournaments upcoming or running in the store, by id."""
        ...

    async def take_over(self, tournament_id: str, epoch: int) -> bool:
        """Pair the tournament here from the store, fenced at ``epoch`` first; False if it
        is over (nothing to pair)."""
        ...

    def let_go(self, tournament_id: str) -> None:
        """Another node pairs it now: forget it here without writing anything."""
        ...

    async def run_forwarded(self, player: Player, message: BaseModel) -> str:
        """A message about a tournament paired here (one of ``commands``), from a player on
        another node, who was let send it there: the answer, encoded
        (``errors.ProtocolError`` as for a local player)."""
        ...


class Placement(Protocol):
    """What the core asks of "where rooms run", and of where tournaments are paired: one
    node at a time pairs each tournament, under a lease and an epoch as a room is run."""

    node: str | None
    """This node's name in a cluster (None alone)."""
    close_code: int
    """How this node's connections are closed when it stops (1012 in a cluster: another
    node runs their rooms now, reconnect at once; 1001 alone)."""

    def publish(self, player_ids: Sequence[str], data: str) -> None:
        """An encoded frame to these players' connections on other nodes."""

    def revoked_elsewhere(self, player_id: str, session_id: str | None,
                          keep: str | None) -> None:
        """Have other nodes close connections of revoked sessions."""

    async def hold(self, room: Room) -> None:
        """Own ``room`` before its first write (a new room): sets ``room.epoch``."""

    async def registered(self, room: Room) -> None:
        """After a write: what other nodes see of the room (its people, whether open)."""

    def holds(self, room: Room) -> bool:
        """Whether this instance of the room may still write (its lease is current)."""

    def let_go(self, room: Room) -> None:
        """This instance of the room is stale (its write was fenced): it writes no more."""

    async def forwarded(self, client: Client, player: Player, message: p.RoomCommand) -> bool:
        """Run the command on the node that owns its room if that is another one (True)."""

    async def settled(self, code: str) -> None:
        """Wait while the room ``code`` names is being taken over by this node."""

    async def check_room_limit(self, player_id: str) -> None:
        """``too_many_rooms`` if the player sits in ``max_rooms`` unfinished games anywhere."""

    async def open_rooms(self, lobby: Lobby) -> p.Rooms:
        """Open rooms to join, of every node."""

    async def present(self, player_id: str, online: bool) -> bool:
        """This node's first connection of the player opened (``online``) or its last
        closed; True if the player is still connected through another node. A chat
        channel's listeners (``Outbox.listen``) are announced the same way."""

    async def is_online(self, player_id: str) -> bool:
        """Whether the player has a connection on any node."""

    async def elsewhere(self) -> list[p.AdminRooms]:
        """Other nodes' rooms, as the admin page lists them."""

    async def start(self, runner: Restoring) -> int:
        """Bring back the unfinished games this node is to run (at start-up); how many."""

    async def hold_tournament(self, tournament_id: str) -> int:
        """Pair a new tournament here: before its first write; its epoch (0 alone)."""

    async def tournament_forwarded(self, client: Client, player: Player, tournament_id: str,
                                   message: BaseModel) -> bool:
        """Run the message on the node that pairs ``tournament_id``, if that is another one
        (True); False if it is to run here (this node pairs it, took it over just now, or
        no node pairs it: over, or unknown)."""

    async def drop_tournament(self, tournament_id: str) -> None:
        """The tournament is over: nobody is to pair it any more."""

    def lost_tournament(self, tournament_id: str, epoch: int) -> None:
        """A write of the tournament at ``epoch`` was fenced: another node pairs it now, so
        this one gives its lease up here, writing nothing (as ``let_go`` for a room)."""

    async def start_tournaments(self, tournaments: Tournaments) -> int:
        """Bring back the unfinished tournaments this node is to pair (at start-up, after
        the rooms); how many."""

    async def drain(self) -> None:
        """Stop running commands other nodes forward (at shutdown)."""

    async def hand_over(self) -> None:
        """After the commands under way: let other nodes run this node's rooms."""

    async def close(self) -> None:
        """Publish what is queued, then hand every room over to the other nodes."""


class SingleNode:
    """A server alone: it owns every room it has, and every player is local."""

    node: str | None = None
    close_code = 1001

    def __init__(self, outbox: Outbox, store: Store, max_rooms: int) -> None:
        self._outbox = outbox
        self._store = store
        self._max_rooms = max_rooms

    def publish(self, player_ids: Sequence[str], data: str) -> None:
        """Nobody elsewhere."""

    def revoked_elsewhere(self, player_id: str, session_id: str | None,
                          keep: str | None) -> None:
        """Nobody elsewhere."""

    async def hold(self, room: Room) -> None:
        room.epoch = 0

    async def registered(self, room: Room) -> None:
        """Nobody else to tell."""

    def holds(self, room: Room) -> bool:
        return True

    def let_go(self, room: Room) -> None:
        """Alone, nobody takes a room over."""

    async def forwarded(self, client: Client, player: Player, message: p.RoomCommand) -> bool:
        return False

    async def settled(self, code: str) -> None:
        """No takeovers alone."""

    async def check_room_limit(self, player_id: str) -> None:
        """The lobby counts this node's rooms itself, and they are all of them."""

    async def open_rooms(self, lobby: Lobby) -> p.Rooms:
        return lobby.open_rooms(time.time())

    async def present(self, player_id: str, online: bool) -> bool:
        return False

    async def is_online(self, player_id: str) -> bool:
        return self._outbox.is_here(player_id)

    async def elsewhere(self) -> list[p.AdminRooms]:
        return []

    async def start(self, runner: Restoring) -> int:
        """Every unfinished game of the store: their players are away until they say hello
        with their resume token (within the grace period); an AI whose turn it is moves."""
        count = 0
        for record, moves in await self._store.unfinished_games():
            async with runner.lock(room_of(record.id)[0]):
                if await runner.restore(record, moves, 0) is not None:
                    count += 1
        return count

    async def hold_tournament(self, tournament_id: str) -> int:
        return 0

    async def tournament_forwarded(self, client: Client, player: Player, tournament_id: str,
                                   message: BaseModel) -> bool:
        return False

    async def drop_tournament(self, tournament_id: str) -> None:
        """Nobody else would pair it."""

    def lost_tournament(self, tournament_id: str, epoch: int) -> None:
        """Alone, nobody takes a tournament over."""

    async def start_tournaments(self, tournaments: Tournaments) -> int:
        """Every unfinished tournament of the store (after a restart)."""
        count = 0
        for tournament_id in await tournaments.unfinished():
            if await tournaments.take_over(tournament_id, 0):
                count += 1
        return count

    async def drain(self) -> None:
        """Nothing is forwarded here."""

    async def hand_over(self) -> None:
        """Nobody to hand over to."""

    async def close(self) -> None:
        """Nothing to hand over."""


async def unfinished_limit(store: Store, player_id: str, limit: int) -> None:
    """``too_many_rooms`` if the store holds ``limit`` unfinished games of the player (on a
    cluster the database holds every node's; each lobby knows only its own)."""
    records = await store.games_of_player(player_id, 2 * limit)
    if sum(1 for r in records if r.status in ("waiting", "active")) >= limit:
        raise errors.TooManyRooms(
            f"you already play in {limit} unfinished rooms; finish or leave one", limit=limit)
