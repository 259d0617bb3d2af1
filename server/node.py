"""The glue between one server and its cluster (``server.cluster``): what a node does with
rooms it does not run, rooms it takes over, and rooms it loses.

``server.app`` calls it where a cluster changes what happens: a room command that may
belong to another node (``forwarded``), a game or move to write (``fenced``, with this
node's epoch), a room to claim or to publish in the registry (``hold``, ``registered``),
the open-rooms list and the start of a node (``open_rooms``, ``adopt_unfinished``). The
cluster calls it back (it is the ``cluster.Node``) with commands from other nodes, presence
changes, takeovers and lost leases.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from server import errors, history
from server import protocol as p
from server.cluster import Cluster, OwnerGone
from server.rooms import Player, Room, room_of
from server.store import Fenced, GameRecord, replace

if TYPE_CHECKING:
    from server.app import DiscusServer
    from server.connection import Client

log = logging.getLogger("discus.node")


class ClusterNode:
    """One server as a node of ``cluster``."""

    def __init__(self, app: DiscusServer, cluster: Cluster) -> None:
        self.app = app
        self.cluster = cluster
        self._published: dict[str, tuple[Any, ...]] = {}
        """What this node last wrote to the cluster's registry for each of its rooms."""

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None:
        self.app.deliver_local(player_ids, data)

    def close_revoked(self, player_id: str, session_id: str | None, keep: str | None) -> None:
        self.app.accounts.close_revoked(player_id, session_id, keep)

    async def answer(self, question: str) -> str:
        """Another node's question (``Cluster.ask_all``): ``admin_rooms``, this node's rooms
        and players as the admin page shows them."""
        if question != "admin_rooms":
            raise ValueError(f"unknown question {question!r}")
        return p.encode(self.app.desk.local_rooms(self.cluster.node))

    async def check_room_limit(self, player_id: str) -> None:
        """``too_many_rooms`` if the player sits in ``max_rooms`` unfinished games on any
        node (the database holds them all; each node's lobby knows only its own rooms)."""
        limit = self.app.settings.max_rooms
        records = await self.app.store.games_of_player(player_id, 2 * limit)
        if sum(1 for r in records if r.status in ("waiting", "active")) >= limit:
            raise errors.TooManyRooms(
                f"you already play in {limit} unfinished rooms; finish or leave one",
                limit=limit)

    async def settled(self, code: str) -> None:
        """Wait while this node is taking the room ``code`` names over (it holds the lease,
        the room is not running yet): a command for it then finds it."""
        room_id = code.strip().upper()
        if self.cluster.holds(room_id) and room_id not in self.app.lobby.rooms:
            async with self.app.lock(room_id):
                pass

    async def forwarded(self, client: Client, player: Player, message: p.RoomCommand) -> bool:
        """Run a room command on the node that owns the room, if that is another node;
        False if it is to run here (this node owns the room, or just took it over)."""
        code = message.room.strip()
        local = self.app.lobby.rooms.get(code) or self.app.lobby.rooms.get(code.upper())
        if local is not None and self.cluster.holds(local.id):
            return False
        room_id = code.upper()
        owner = await self.cluster.owner(room_id)
        if owner is None or owner == self.cluster.node:
            # A room whose owner died: take it over now; else ``unknown_room`` here.
            await self.cluster.take_if_ownerless(room_id)
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
            self.app.send_raw([client.ws], error)
        return True

    async def run_forwarded(self, who: tuple[str, str, bool], data: str) -> str | None:
        """A client's room command from another node (``Cluster.forward``): run as one of
        this node's; the error message for the client, or None."""
        player_id, name, bot = who
        player = self.app.players.get(player_id)
        if player is None or player.name != name:
            player = self.app.players[player_id] = Player(player_id, name, bot=bot)
        message: BaseModel | None = None
        try:
            message = p.parse_client(data)
            if not isinstance(message, p.ROOM_COMMANDS):
                raise errors.UnknownType(f"{type(message).__name__} is not a room command")
            await self.app.room_command(player, message)
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
        room = self.app.lobby.rooms.get(room_id)
        if room is None:
            return
        async with self.app.lock(room_id):
            if online:
                out = room.reconnect(player_id, self.app.now())
            else:
                out = room.disconnect(player_id, self.app.now())
            await self.app.carry(room, out)

    async def take_over(self, room_id: str, game_id: str, epoch: int,
                        watchers: list[str]) -> bool:
        """Run a room whose owner is gone, from its stored game: fenced first, so the former
        owner can no longer write, then read. Its people still connected somewhere get its
        state again; its spectators watch on. False if the game is over (nothing to run)."""
        async with self.app.lock(room_id):  # commands for the room wait until it runs here
            try:
                await self.app.store.fence(game_id, epoch)
            except Fenced:
                stored = await self.app.store.load_game(game_id)
                if stored is not None:
                    await self.cluster.catch_up(room_id, stored[0].epoch)
                raise
            loaded = await self.app.store.load_game(game_id)
            if loaded is None or loaded[0].status in history.PAST_STATUSES:
                return False
            record, moves = loaded
            self.app.lobby.close(room_id)  # a copy left from an earlier lease, if any
            people = await self.app.people(record.players)
            for person in people.values():
                self.app.players.setdefault(person.id, person)
            room, out = self.app.lobby.restore(record, moves, people, self.app.now())
            await self.app.show_ratings(room)
            for player_id in people:
                if await self.cluster.is_online(player_id):
                    out.extend(room.reconnect(player_id, self.app.now()))
            for player_id in watchers:
                if await self.cluster.is_online(player_id):
                    out.extend(self.app.lobby.spectate(self.app.players.get(player_id)
                                                   or Player(player_id, "Player"), room_id,
                                                   self.app.now()))
            await self.app.carry(room, out)
        return True

    def let_go(self, room_id: str) -> str | None:
        """Another node owns the room now: forget it here without writing anything (its AI
        move under way, if any, is dropped when it comes back); the game it was running."""
        self.cluster.owned.pop(room_id, None)
        self._published.pop(room_id, None)
        room = self.app.lobby.rooms.get(room_id)
        self.app.lobby.close(room_id)
        return None if room is None else room.game_id

    async def adopt_unfinished(self) -> int:
        """At the start of a node: register the unfinished games no node runs (a cluster's
        first start, or after every node stopped), then take over every room without an
        owner; returns how many this node took."""
        for record, _ in await self.app.store.unfinished_games():
            room_id, _ = room_of(record.id)
            await self.cluster.adopt(room_id, record.id)
        return await self.cluster.scan()

    async def open_rooms(self) -> p.Rooms:
        if self.cluster is None:
            return self.app.lobby.open_rooms()
        found = sorted((json.loads(s) for s in await self.cluster.open_rooms()),
                       key=lambda entry: -entry[0])
        return p.Rooms(rooms=[p.RoomSummary.model_validate(summary)
                              for _, summary in found[:100]])

    async def hold(self, room: Room) -> None:
        if room.id in self.cluster.owned:
            return
        if await self.cluster.claim(room.id) is None:
            self.app.lobby.close(room.id)
            raise errors.InternalError(f"room {room.id} is run by another server now; "
                                       "send that again")

    def epoch(self, room_id: str) -> int:
        """The fencing token this node writes the room's game with (-1, which every stored
        game refuses, if it holds no lease on it)."""
        return self.cluster.owned.get(room_id, 0) or -1

    def fenced(self, record: Any) -> Any:
        """``record`` (a game or a move) with this node's epoch for its room."""
        room_id, _ = room_of(record.id if isinstance(record, GameRecord) else record.game_id)
        return replace(record, epoch=self.epoch(room_id))

    async def registered(self, room: Room) -> None:
        """Bring the cluster's registry up to date with ``room``: its game, its people, its
        spectators, whether it is open; or out of it if it closed."""
        if room.id not in self.app.lobby.rooms:
            self._published.pop(room.id, None)
            await self.cluster.forget(room.id)
            return
        people = tuple(s.player.id for s in room.seats if s.player is not None)
        summary = (json.dumps([room.created_at, room.summary().model_dump(mode="json")])
                   if room.opponent == "open" and room.status == "waiting" else None)
        entry = (room.game_id, people, tuple(sorted(room.spectators)), summary)
        if self._published.get(room.id) == entry:
            return  # a move changes none of it: no Redis round trip on the move's path
        await self.cluster.register(room.id, room.game_id, [*people, *room.spectators],
                                    room.spectators, summary)
        self._published[room.id] = entry
