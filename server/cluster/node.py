"""A server as one node of a cluster: the cluster side of ``server.play.placement``.

``ClusterPlacement`` answers what the core asks (who owns a room and under which epoch, where
a command for it runs, who is online anywhere) from ``Cluster``'s leases, registry and
presence in Redis. ``ClusterInbox`` is what the cluster calls back (``cluster.Node``):
commands forwarded by other nodes, presence changes, takeovers, lost leases, questions.

Tournaments take the rooms' road: each one is paired by the node holding its lease
(``tournament_lease``: a name in the rooms' lease space, registered with the tournament's id
where a room's entry has its game), so leases, renewals, takeovers after a death and the
store's fencing are the rooms' own; messages about it go to that node's inbox as room
commands do, and the answer comes back in the reply.

Draining (SIGTERM): the node stops running forwarded commands, lets the commands under way
finish, publishes every event they made, and only then gives its leases up and closes its
connections (1012), so every stored move is announced and the other nodes take the rooms over
at once.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Protocol

from pydantic import BaseModel

from server import errors
from server import protocol as p
from server.bots.shared_limits import SharedBotLimiter
from server.challenges.rules import ChallengeBook
from server.challenges.shared import SharedChallengeBook
from server.cluster.cluster import Cluster
from server.cluster.inboxes import OwnerGone
from server.cluster.live_positions import SharedLivePositions
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.people.shared_counts import SharedCounts
from server.play.lobby import Lobby, pick_open
from server.play.locks import RoomLocks
from server.play.placement import Tournaments, unfinished_limit
from server.play.rooms import Room, room_of
from server.play.runner import RoomMoved
from server.reviews import history
from server.settings import Settings
from server.storage.store import Fenced, GameRecord, MoveRecord, Store

log = logging.getLogger("discus.node")

RECONNECT_CLOSE = 1012
"""Service restart: another node runs this node's rooms now; the page reconnects at once."""


TOURNAMENT_LEASE = "tournament:"
"""What a tournament's lease name starts with (room codes never have a colon)."""


def tournament_lease(tournament_id: str) -> str:
    """The name a tournament's lease and registry entry go under, beside the rooms'."""
    return TOURNAMENT_LEASE + tournament_id


MAX_ROUNDS_LOOKED_UP = 1000
"""Rematches of one room looked through for its unfinished game when Redis forgot the room."""


class GuardedPositions(Protocol):
    """This node's guarded live positions (``server.reviews.live_positions``)."""

    async def publish(self, room: Room, here: bool) -> None: ...


class ClusterPlacement:
    """Where rooms run, on a node of ``cluster``."""

    close_code = RECONNECT_CLOSE

    def __init__(self, cluster: Cluster, outbox: Outbox, store: Store, lobby: Lobby,
                 locks: RoomLocks, max_rooms: int) -> None:
        self.cluster = cluster
        self.node: str | None = cluster.node
        self._outbox = outbox
        self._store = store
        self._lobby = lobby
        self._locks = locks
        self._max_rooms = max_rooms
        self._published: dict[str, tuple[object, ...]] = {}
        """What this node last wrote to the cluster's registry for each of its rooms."""
        self.draining = False
        self._inbox: ClusterInbox | None = None
        self.positions = SharedLivePositions(cluster.redis, cluster.prefix)
        """Every node's guarded live positions (``server.reviews.live_positions``)."""
        cluster.kept.append(self.positions.renew)
        self.live: GuardedPositions | None = None
        """This node's guarded positions, told of each change of a room before it is
        announced (``app.build`` sets it)."""

    def publish(self, player_ids: Sequence[str], data: str) -> None:
        self.cluster.publish(player_ids, data)

    def revoked_elsewhere(self, player_id: str, session_id: str | None,
                          keep: str | None) -> None:
        self.cluster.publish_revoked(player_id, session_id, keep)

    async def hold(self, room: Room) -> None:
        if room.id in self.cluster.owned:
            if not room.epoch:
                room.epoch = self.cluster.owned[room.id]
            return
        epoch = await self.cluster.claim(room.id)
        if epoch is None:
            self._lobby.close(room.id)
            raise errors.InternalError(f"room {room.id} is run by another server now; "
                                       "send that again")
        room.epoch = epoch

    def holds(self, room: Room) -> bool:
        held = self.cluster.owned.get(room.id)
        return held is not None and held == room.epoch

    async def registered(self, room: Room) -> None:
        """Bring the cluster's registry up to date with ``room``: its game, its people, its
        spectators, whether it is open; or out of it if it closed."""
        if self.live is not None:  # before the move is announced: no node helps meanwhile
            await self.live.publish(room, self._lobby.rooms.get(room.id) is room)
        if room.id not in self._lobby.rooms:
            self._published.pop(room.id, None)
            await self.cluster.forget(room.id)
            return
        people = tuple(s.player.id for s in room.seats if s.player is not None)
        summary = (json.dumps([room.created_at, room.summary().model_dump(mode="json"),
                               room.source or f"player:{people[0] if people else ''}"])
                   if room.opponent == "open" and room.status == "waiting" else None)
        entry = (room.game_id, people, tuple(sorted(room.spectators)), summary)
        if self._published.get(room.id) == entry:
            return  # a move changes none of it: no Redis round trip on the move's path
        await self.cluster.register(room.id, room.game_id, [*people, *room.spectators],
                                    room.spectators, summary)
        self._published[room.id] = entry

    def forget(self, room_id: str) -> None:
        self._published.pop(room_id, None)

    def let_go(self, room: Room) -> None:
        """This instance of the room may write no more: its lease is given up here (if it
        is still the one held), without writing anything."""
        if self.cluster.owned.get(room.id) == room.epoch:
            self.cluster.owned.pop(room.id, None)
        self._published.pop(room.id, None)
        self.positions.forget(room.id)

    async def forwarded(self, client: Client, player: Player, message: p.RoomCommand) -> bool:
        """Run a room command on the node that owns the room, if that is another node;
        False if it is to run here (this node owns the room, or just took it over)."""
        code = message.room.strip()
        local = self._lobby.rooms.get(code) or self._lobby.rooms.get(code.upper())
        if local is not None and self.holds(local):
            return False
        room_id = code.upper()
        owner = await self.cluster.owner(room_id)
        if (owner is None or owner == self.cluster.node) and not self.draining:
            # A room whose owner died, or one Redis forgot (it restarted empty): take it
            # over now, from the registry or from the store; else ``unknown_room`` here.
            if not await self._take(room_id) and await self._adopt_stored(room_id):
                owner = await self.cluster.owner(room_id)
                if owner is None:
                    raise RoomMoved(room_id)
            owner = await self.cluster.owner(room_id)
        if owner is None or owner == self.cluster.node:
            return False
        try:
            error = await self.cluster.forward(owner, room_id,
                                               (player.id, player.name, player.bot),
                                               p.encode(message))
        except OwnerGone:
            await self.cluster.take_if_ownerless(room_id)  # its owner died: run it here
            return await self.forwarded(client, player, message)  # (or where it went)
        except TimeoutError:
            raise errors.InternalError(f"the server running room {room_id} did not answer; "
                                       "send that again") from None
        if error is not None:
            if json.loads(error).get("detail", {}).get("moved"):
                raise RoomMoved(room_id)  # the owner it went to had just lost the room
            self._outbox.write([client.ws], error)
        return True

    async def _adopt_stored(self, room_id: str) -> bool:
        """The registry does not know the room (Redis lost it): if the store holds an
        unfinished game of it, register that game and try to take the room over (or leave
        it to the node that wins the lease); whether there is such a game. One read per
        round the room played."""
        latest = await self._unfinished_game(room_id)
        if latest is None:
            return False
        await self.cluster.adopt(room_id, latest.id)
        await self._take(room_id)
        return True

    async def _unfinished_game(self, room_id: str) -> GameRecord | None:
        """The room's game in the store if it is unfinished: one read per round played."""
        latest = None
        for round in range(1, MAX_ROUNDS_LOOKED_UP + 1):
            loaded = await self._store.load_game(f"{room_id}-{round}")
            if loaded is None:
                break
            latest = loaded[0]
        if latest is None or latest.status in history.PAST_STATUSES:
            return None
        return latest

    async def _take(self, room_id: str) -> bool:
        """Take the room over if it is registered and nobody holds it."""
        return await self.cluster.take_if_ownerless(room_id)

    async def hold_tournament(self, tournament_id: str) -> int:
        lease = tournament_lease(tournament_id)
        epoch = await self.cluster.claim(lease)
        if epoch is None:
            raise errors.InternalError("this server is stopping; make the tournament again "
                                       "in a moment")
        await self.cluster.adopt(lease, tournament_id)
        return epoch

    async def tournament_forwarded(self, client: Client, player: Player, tournament_id: str,
                                   message: BaseModel) -> bool:
        """As ``forwarded`` for a room: a tournament nobody pairs (its node died) is taken
        over here first; one paired elsewhere gets the message in its node's inbox, and the
        client the answer."""
        lease = tournament_lease(tournament_id)
        if self.cluster.holds(lease):
            return False
        owner = await self.cluster.owner(lease)
        if owner is None and self.draining:
            raise errors.InternalError("this server is stopping; send that again in a moment")
        if owner is None:
            await self.cluster.take_if_ownerless(lease)
            owner = await self.cluster.owner(lease)
        if owner is None or owner == self.cluster.node:
            return False
        try:
            answer = await self.cluster.forward(owner, lease,
                                                (player.id, player.name, player.bot),
                                                p.encode(message))
        except OwnerGone:
            await self.cluster.take_if_ownerless(lease)
            return await self.tournament_forwarded(client, player, tournament_id, message)
        except TimeoutError:
            raise errors.InternalError("the server pairing this tournament did not answer; "
                                       "send that again") from None
        if answer is not None:
            self._outbox.write([client.ws], answer)
        return True

    async def drop_tournament(self, tournament_id: str) -> None:
        await self.cluster.forget(tournament_lease(tournament_id))

    def lost_tournament(self, tournament_id: str, epoch: int) -> None:
        lease = tournament_lease(tournament_id)
        if self.cluster.owned.get(lease) == epoch:
            self.cluster.owned.pop(lease, None)

    async def start_tournaments(self, tournaments: Tournaments) -> int:
        """Register every unfinished tournament the registry lacks (a first start, or Redis
        lost it) and pair here those no node holds; the others stay with their nodes."""
        taken = 0
        for tournament_id in await tournaments.unfinished():
            lease = tournament_lease(tournament_id)
            await self.cluster.adopt(lease, tournament_id)
            if not self.cluster.holds(lease) and await self.cluster.take_if_ownerless(lease):
                taken += 1
        return taken

    async def settled(self, code: str) -> None:
        """Wait while this node is taking the room ``code`` names over (it holds the lease,
        the room is not running yet): a command for it then finds it."""
        room_id = code.strip().upper()
        if self.cluster.holds(room_id) and room_id not in self._lobby.rooms:
            async with self._locks(room_id):
                pass
        if room_id not in self._lobby.rooms and await self._unfinished_game(room_id):
            # Between owners (a takeover under way or refused, Redis just back): the room
            # exists, so not ``unknown_room``: the sender tries again in a moment.
            raise errors.InternalError(f"room {room_id} is moving to another server; send "
                                       "that again")

    async def came_through(self, code: str, player_id: str, node: str) -> None:
        """A command of the player for the room ``code`` names came through ``node``, so the
        player is connected there whatever this node read of its presence (Redis may have
        lost it): the command's answer, an event, goes there. Noted once a takeover under way
        is done: it holds the room's lock until the room runs and its people are tracked,
        and a note about someone not tracked yet is not kept."""
        room_id = code.strip().upper()
        if room_id in self._lobby.rooms or self.cluster.holds(room_id):
            async with self._locks(room_id):
                pass
        self.cluster.presence.heard(player_id, node, True)

    async def check_room_limit(self, player_id: str) -> None:
        await unfinished_limit(self._store, player_id, self._max_rooms)

    async def open_rooms(self, lobby: Lobby) -> p.Rooms:
        found = [json.loads(s) for s in await self.cluster.open_rooms()]
        # An entry from a node before rooms kept their source has two fields.
        return pick_open([(entry[0], entry[2] if len(entry) > 2 else "",
                           p.RoomSummary.model_validate(entry[1])) for entry in found],
                         time.time())

    async def present(self, player_id: str, online: bool) -> bool:
        return await self.cluster.connected(player_id, online=online)

    async def is_online(self, player_id: str) -> bool:
        return await self.cluster.is_online(player_id)

    async def elsewhere(self) -> list[p.AdminRooms]:
        return [p.AdminRooms.model_validate_json(answer)
                for answer in (await self.cluster.ask_all("admin_rooms")).values()]

    async def open(self, inbox: ClusterInbox) -> None:
        """Join the cluster: from now on it calls ``inbox`` back."""
        self._inbox = inbox
        await self.cluster.open(inbox)

    async def start(self, runner: object) -> int:
        """Register the unfinished games no node runs, take over every room without an
        owner (through the inbox's ``take_over``), then start the cluster's loops."""
        for record, _ in await self._store.unfinished_games():
            room_id, _ = room_of(record.id)
            await self.cluster.adopt(room_id, record.id)
        taken = await self.cluster.scan()
        self.cluster.start()
        return taken

    async def drain(self) -> None:
        """Commands other nodes forward from now on are not run here: each waits for the
        room's next owner (the asking node finds it once the lease is given up)."""
        self.draining = True
        self.cluster.draining = True

    async def hand_over(self) -> None:
        """Forwarded commands under way finish, every lease is given up and the node says
        it is gone: the other nodes take its rooms at their next renewal."""
        await self.cluster.drain()

    async def close(self) -> None:
        await self.cluster.close()


class Runner(Protocol):
    """The room runner, as the cluster's callbacks need it."""

    async def command(self, player: Player, message: p.RoomCommand) -> None: ...

    async def presence(self, room_id: str, player_id: str, online: bool) -> None: ...

    async def restore(self, record: GameRecord, moves: Sequence[MoveRecord], epoch: int,
                      online: Callable[[str], Awaitable[bool]] | None = None,
                      watchers: Iterable[str] = ()) -> Room | None: ...

    def forget(self, room_id: str) -> None: ...


class Remembering(Protocol):
    def remember(self, player: Player, replace: bool = False) -> Player: ...


class ClusterInbox:
    """What the cluster calls back on this node (``server.cluster.cluster.Node``)."""

    def __init__(self, placement: ClusterPlacement, runner: Runner, players: Remembering,
                 outbox: Outbox, store: Store, locks: RoomLocks,
                 close_revoked: Callable[[str, str | None, str | None], None],
                 local_rooms: Callable[[str | None], p.AdminRooms], lobby: Lobby,
                 tournaments: Sequence[Tournaments]) -> None:
        self._lobby = lobby
        self._tournaments = tournaments
        """The desks that pair tournaments: a tournament is the first's that ``pairs`` it."""
        self._placement = placement
        self._cluster = placement.cluster
        self._runner = runner
        self._players = players
        self._outbox = outbox
        self._store = store
        self._locks = locks
        self._close_revoked = close_revoked
        self._local_rooms = local_rooms

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None:
        self._outbox.deliver_local(player_ids, data)

    def close_revoked(self, player_id: str, session_id: str | None, keep: str | None) -> None:
        self._close_revoked(player_id, session_id, keep)

    async def answer(self, question: str) -> str:
        """Another node's question (``Cluster.ask_all``): ``admin_rooms``, this node's rooms
        and players as the admin page shows them."""
        if question != "admin_rooms":
            raise ValueError(f"unknown question {question!r}")
        return p.encode(self._local_rooms(self._cluster.node))

    async def run_forwarded(self, who: tuple[str, str, bool], data: str,
                            node: str) -> str | None:
        """A client's room command (or message about a tournament paired here) from node
        ``node``: run as one of this node's; the message for the client (an error, or a
        tournament's answer), or None. A draining node runs none (the client sends it again
        once another node runs the room)."""
        player_id, name, bot = who
        player = self._players.remember(Player(player_id, name, bot=bot), replace=True)
        message: BaseModel | None = None
        try:
            message = p.parse_client(data)
            desk = next((d for d in self._tournaments if isinstance(message, d.commands)),
                        None)
            if desk is not None:
                return await desk.run_forwarded(player, message)
            if not isinstance(message, p.ROOM_COMMANDS):
                raise errors.UnknownType(f"{type(message).__name__} is not a room command")
            if self._placement.draining:
                raise errors.InternalError("the server running this room is stopping; send "
                                           "that again in a moment")
            await self._placement.came_through(message.room, player_id, node)
            await self._runner.command(player, message)
        except errors.ProtocolError as exc:
            ref = getattr(message, "id", None)
            return p.encode(p.error_message(exc, ref=ref, room=getattr(message, "room", None)))
        except Exception:
            log.exception("failed to run a command from another node")
            return p.encode(p.error_message(errors.InternalError("the server failed; try again"),
                                            ref=getattr(message, "id", None)))
        return None

    async def presence_changed(self, player_id: str, room_id: str, online: bool) -> None:
        """A player's last connection on another node closed, or a first one opened."""
        await self._runner.presence(room_id, player_id, online)

    async def take_over(self, room_id: str, game_id: str, epoch: int,
                        watchers: list[str]) -> bool:
        """Run a room whose owner is gone, from its stored game: fenced first, so the former
        owner can no longer write, then read. Its people still connected somewhere get its
        state again; its spectators watch on. False if the game is over (nothing to run).
        A tournament's lease: the tournament desk pairs it here from the store, fenced the
        same way (``game_id`` is then the tournament's id)."""
        if room_id.startswith(TOURNAMENT_LEASE):
            try:
                return await self._desk_of(game_id).take_over(game_id, epoch)
            except Fenced as exc:
                if exc.held is not None:
                    await self._cluster.catch_up(room_id, exc.held)
                raise
        async with self._locks(room_id):  # commands for the room wait until it runs here
            try:
                await self._store.fence(game_id, epoch)
            except Fenced:
                stored = await self._store.load_game(game_id)
                if stored is not None:
                    await self._cluster.catch_up(room_id, stored[0].epoch)
                raise
            loaded = await self._store.load_game(game_id)
            if loaded is None or loaded[0].status in history.PAST_STATUSES:
                return False
            record, moves = loaded
            room = await self._runner.restore(record, moves, epoch,
                                              online=self._cluster.is_online,
                                              watchers=watchers)
            return room is not None

    def _desk_of(self, tournament_id: str) -> Tournaments:
        return next(d for d in self._tournaments if d.pairs(tournament_id))

    def let_go(self, room_id: str) -> str | None:
        """Another node owns the room now: forget it here without writing anything (its AI
        move under way, if any, finds itself stale and is dropped). A tournament's lease:
        the desk forgets the tournament; its id is returned."""
        self._cluster.owned.pop(room_id, None)
        if room_id.startswith(TOURNAMENT_LEASE):
            tournament_id = room_id.removeprefix(TOURNAMENT_LEASE)
            self._desk_of(tournament_id).let_go(tournament_id)
            return tournament_id
        self._placement.forget(room_id)
        room = self._lobby.rooms.get(room_id)
        self._runner.forget(room_id)
        return None if room is None else room.game_id


def shared_state(cluster: Cluster, settings: Settings) -> tuple[
        SharedBotLimiter, SharedCounts, SharedChallengeBook]:
    """A cluster's side of the limits and challenges: kept in Redis for every node."""
    return (SharedBotLimiter(cluster.redis, cluster.prefix, cluster.node, settings.bots),
            SharedCounts(cluster.redis, cluster.prefix),
            SharedChallengeBook(cluster.redis, cluster.prefix,
                                lambda: "c" + secrets.token_hex(4),
                                settings.max_challenges, ChallengeBook.ttl))
