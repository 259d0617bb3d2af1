"""Every frame the server sends leaves through one ``Outbox``.

Why one place: ordering and back-pressure are decided here once. A message is encoded once for
all its readers and written with websockets' synchronous ``broadcast``, so each connection sees
a room's messages in the order they were produced; a reader that lets ``max_buffered_bytes``
pile up is cut off rather than grow the server's memory; and a message for players connected
to other nodes of a cluster is handed to ``publish`` (a no-op on a single node) in the same
call, so no caller has to know where its readers are.

The outbox also keeps which connections each player has on this node (``attach``/``detach``);
``server.people.identity`` decides who a connection is, the outbox only where to write. A *channel*
(a name starting with ``#``, never a player id) is addressed like a player: the connections
listening to it here (``listen``/``unlisten``) get its frames, and a cluster publishes them to
the nodes where it has listeners, as it does for a player's connections (``server.chat.desk``
says which channels there are).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel
from websockets.asyncio.server import ServerConnection, broadcast

from server import errors
from server import protocol as p
from server.connections.client import Client

log = logging.getLogger("discus.outbox")

Publish = Callable[[Sequence[str], str], None]
"""Hands an encoded frame to the other nodes that hold these players' connections."""


@dataclass(frozen=True)
class Send:
    """Send ``message`` to every connection of each player in ``to``."""

    to: tuple[str, ...]
    message: p.RoomState | p.MoveMade | p.RoomEvent | p.AiThinking | p.GameOver | p.Rooms


class Delivery(Protocol):
    """What a room command produced, as far as the outbox reads it
    (``server.play.outcome.Outcome``): its frames in order."""

    @property
    def sends(self) -> list[Send]: ...


def publish_nowhere(player_ids: Sequence[str], data: str) -> None:
    """A single node's ``Publish``: every connection is local."""


class Outbox:
    """This node's connections by player, and the one way out for frames."""

    def __init__(self, max_buffered_bytes: int, publish: Publish = publish_nowhere) -> None:
        self.max_buffered_bytes = max_buffered_bytes
        self.publish = publish
        self._connections: dict[str, set[Client]] = {}
        self._channels: dict[str, set[Client]] = {}

    # --- who is connected here --------------------------------------------------------------

    def attach(self, player_id: str, client: Client) -> bool:
        """Count ``client`` as one of the player's connections; True if it is the first."""
        mine = self._connections.setdefault(player_id, set())
        mine.add(client)
        return len(mine) == 1

    def detach(self, player_id: str, client: Client) -> bool:
        """Forget ``client``; True if it was the player's last connection here."""
        mine = self._connections.get(player_id)
        if mine is None or client not in mine:
            return False
        mine.discard(client)
        if mine:
            return False
        del self._connections[player_id]
        return True

    def listen(self, channel: str, client: Client) -> bool:
        """``client`` gets the channel's frames; True if it is the channel's first here."""
        listeners = self._channels.setdefault(channel, set())
        listeners.add(client)
        return len(listeners) == 1

    def unlisten(self, channel: str, client: Client) -> bool:
        """``client`` stops listening; True if it was the channel's last listener here."""
        listeners = self._channels.get(channel)
        if listeners is None or client not in listeners:
            return False
        listeners.discard(client)
        if listeners:
            return False
        del self._channels[channel]
        return True

    def connections(self, player_id: str) -> Collection[Client]:
        return self._connections.get(player_id, ())

    def everyone(self) -> Iterator[Client]:
        for clients in self._connections.values():
            yield from clients

    def players_online(self) -> int:
        """How many players have a connection to this node."""
        return len(self._connections)

    def is_here(self, player_id: str) -> bool:
        return player_id in self._connections

    # --- sending ------------------------------------------------------------------------------

    def send(self, clients: Iterable[Client], message: BaseModel) -> None:
        """To these connections only (answers, errors, welcomes)."""
        targets = [c.ws for c in clients]
        if targets:
            self.write(targets, p.encode(message))

    def refuse(self, client: Client, exc: errors.ProtocolError,
               message: BaseModel | None) -> None:
        """The error message for ``exc``, naming the request it answers (and its room)."""
        ref = getattr(message, "id", None) if message is not None else exc.ref
        room = getattr(message, "room", None)
        self.send([client], p.error_message(exc, ref=ref, room=room))

    def to_players(self, player_ids: Sequence[str], message: BaseModel) -> None:
        """To every connection of these players: this node's, and other nodes' through
        ``publish``."""
        self.to_players_encoded(player_ids, p.encode(message))

    def to_players_encoded(self, player_ids: Sequence[str], data: str) -> None:
        """``to_players`` for a frame already encoded (one message made once, sent to many
        with a part of its own each)."""
        self.deliver_local(player_ids, data)
        self.publish(player_ids, data)

    def deliver(self, out: Delivery) -> None:
        """Every message of a room's outcome, in order."""
        for send in out.sends:
            self.to_players(send.to, send.message)

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None:
        """An encoded frame to this node's connections of these players, or listeners of
        these channels (a cluster's subscriber calls this with frames other nodes
        published)."""
        self.write([c.ws for pid in player_ids
                    for c in self._connections.get(pid) or self._channels.get(pid) or ()],
                   data)

    def write(self, targets: list[ServerConnection], data: str) -> None:
        """The one place frames are written; a connection that stopped reading is cut."""
        if not targets:
            return
        broadcast(targets, data)
        limit = self.max_buffered_bytes
        for ws in targets:
            transport = ws.transport
            if transport is not None and transport.get_write_buffer_size() > limit:
                log.warning("closing a client that stopped reading")
                transport.abort()
