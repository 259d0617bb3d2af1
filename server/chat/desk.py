"""Chat: a lobby chat and each game's players' and spectators' chats (``server.chat.rules``'s
rules).

A connection opens a chat with ``get_chat`` (its newest lines come back) and from then on
hears every line of the channels it may read, until it closes. A line is checked here
(length, the sender's rate, a guest in the lobby, an admin's silence), stored with its game
(``Store.add_chat_line``; the lobby keeps only its newest lines), then sent to the channel.

Why channels and not rooms: a channel is an outbox address (``server.connections.outbox``) that
any node of a cluster publishes to and that reaches its listeners on every node, as a player's
connections do; so a line never waits for the node running its room, and a game's chat goes
on after the game (and its room) ended. Who plays and who watches comes from the stored game
(its seats), which every node reads alike. Silences are in the store, so they hold on every
node; the rate is counted per player on the node the line arrives at.

Muting another player is the page's (it hides their lines, kept in the browser): the server
sends every line of a channel to all its listeners.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from pydantic import BaseModel

from server import errors
from server import protocol as p
from server.chat import rules as chat
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.settings import Settings
from server.storage.store import ChatChannel, ChatLineRecord, Store

log = logging.getLogger("discus.chat")

MAX_OPEN = 16
"""Chats one connection may have open; opening another closes its oldest."""

MAX_RATES = 10_000
"""Players whose recent lines are counted before the quiet ones are forgotten."""

Handler = Callable[[Client, Player, Any], Awaitable[None]]


class People(Protocol):
    """The player registry, read (``server.people.identity``): who wrote a stored line."""

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]: ...


class ChatDesk:
    """``get_chat``, ``chat``, ``admin_delete_chat``, ``admin_silence_chat``; ``gone`` when a
    connection closes. ``present`` tells the cluster that this node listens to a channel
    (``Placement.present``: a channel is addressed as a player is)."""

    def __init__(self, store: Store, outbox: Outbox, people: People,
                 present: Callable[[str, bool], Awaitable[bool]], settings: Settings,
                 stopping: asyncio.Event, now: Callable[[], float] = time.time) -> None:
        self.store = store
        self.outbox = outbox
        self.people = people
        self.present = present
        self.settings = settings
        self.stopping = stopping
        self.now = now
        self._open: dict[Client, dict[str | None, tuple[ChatChannel, tuple[str, ...]]]] = {}
        """Per connection, the chats it opened: the channel it writes in, the addresses it
        listens to."""
        self._said: dict[str, collections.deque[float]] = {}
        """Per player, when its recent lines were said (the rate)."""
        self._tasks: set[asyncio.Task[Any]] = set()

    def handlers(self) -> dict[type[BaseModel], Handler]:
        return {p.GetChat: self._get, p.Chat: self._say,
                p.AdminDeleteChat: self._delete, p.AdminSilenceChat: self._silence}

    # --- everyone ---------------------------------------------------------------------------

    async def _get(self, client: Client, player: Player, message: p.GetChat) -> None:
        game_id = message.game_id
        channel: ChatChannel = "lobby"
        if game_id is not None:
            loaded = await self.store.load_game(game_id)
            if loaded is None:
                raise errors.UnknownGameId(f"there is no stored game {game_id!r}")
            channel = chat.channel_of(player.id, loaded[0].players)
        reads = chat.readable(channel, client.admin is not None)
        opened = self._open.setdefault(client, {})
        if game_id not in opened and len(opened) >= MAX_OPEN:
            self._close(client, next(iter(opened)))
        addresses = tuple(chat.address(game_id, c) for c in reads)
        _, before = opened.pop(game_id, (channel, ()))  # opened again: the seat may differ
        opened[game_id] = (channel, addresses)
        self._unlisten(client, [a for a in before if a not in addresses])
        for address in addresses:  # listen first: a line said meanwhile comes twice at worst
            if self.outbox.listen(address, client):
                await self.present(address, True)
        lines = await self.store.chat_lines(game_id, reads, self.settings.chat_history)
        who = await self.people.people(line.player_id for line in lines)
        self.outbox.send([client], p.ChatHistory(game_id=game_id, channel=channel, lines=[
            chat.view(line, who[line.player_id].bot) for line in lines]))

    async def _say(self, client: Client, player: Player, message: p.Chat) -> None:
        game_id = message.game_id
        opened = self._open.get(client, {}).get(game_id)
        if opened is None:
            where = "the lobby's chat" if game_id is None else f"the chat of game {game_id}"
            raise errors.NotInRoom(f"open {where} with get_chat first")
        channel = opened[0]
        text = chat.clean(message.text, self.settings.chat_max_chars)
        if game_id is None and not player.bot and not self.settings.chat_guests_in_lobby:
            record = await self.store.load_player(player.id)
            if record is None or record.kind == "guest":
                raise errors.NotSignedIn("guests may read the lobby's chat; sign up or sign "
                                         "in to write in it (a game's chat is open to all)")
        now = self.now()
        until = await self.store.chat_silenced_until(player.id)
        if until is not None and until > now:
            raise errors.Silenced(f"an admin silenced your chat for {round(until - now)} s "
                                  "more", until=until)
        said = self._said.setdefault(player.id, collections.deque())
        window = self.settings.chat_window_seconds
        while said and said[0] <= now - window:
            said.popleft()
        if len(said) >= self.settings.chat_lines:
            wait = said[0] + window - now
            raise errors.RateLimited(
                f"at most {self.settings.chat_lines} chat lines in {window:g} s; wait "
                f"{wait:.1f} s", retry_after=round(wait, 3))
        said.append(now)
        if len(self._said) > MAX_RATES:  # forget those who have not spoken for a window
            self._said = {k: q for k, q in self._said.items() if q and q[-1] > now - window}
        line = await self.store.add_chat_line(
            ChatLineRecord(0, game_id, channel, player.id, player.name, text, now),
            self.settings.lobby_chat_kept)
        self.outbox.to_players([chat.address(game_id, channel)],
                               p.ChatLine(line=chat.view(line, player.bot)))

    # --- admins ------------------------------------------------------------------------------

    @staticmethod
    def _admin(client: Client, message: p.AdminDeleteChat | p.AdminSilenceChat) -> Any:
        account = client.admin
        if account is None:
            raise errors.Forbidden(f"{message.type} is for admins: "
                                   "log in with admin_login and an admin token first")
        return account

    async def _delete(self, client: Client, player: Player, message: p.AdminDeleteChat) -> None:
        account = self._admin(client, message)
        line = await self.store.delete_chat_line(message.line, self.now())
        if line is None:
            raise errors.UnknownChatLine(f"there is no chat line {message.line} (or it was "
                                         "deleted already)", line=message.line)
        log.info("admin %s deleted chat line %d of %s", account.name, line.id, line.player_id)
        deleted = p.ChatDeleted(line=line.id, game_id=line.game_id)
        self.outbox.to_players([chat.address(line.game_id, line.channel)], deleted)
        if line.game_id not in self._open.get(client, {}):
            self.outbox.send([client], deleted)

    async def _silence(self, client: Client, player: Player,
                       message: p.AdminSilenceChat) -> None:
        account = self._admin(client, message)
        if await self.store.load_player(message.player) is None:
            raise errors.UnknownPlayer(f"there is no player {message.player!r}")
        until = self.now() + message.seconds if message.seconds else None
        await self.store.silence_chat(message.player, until)
        log.info("admin %s silenced %s for %d s", account.name, message.player,
                 message.seconds)
        self.outbox.send([client], p.ChatSilenced(player=message.player, until=until))

    # --- connections -------------------------------------------------------------------------

    def gone(self, client: Client) -> None:
        """A connection closed: it listens no more."""
        for game_id in list(self._open.get(client, ())):
            self._close(client, game_id)
        self._open.pop(client, None)

    def _close(self, client: Client, game_id: str | None) -> None:
        _, addresses = self._open[client].pop(game_id)
        self._unlisten(client, addresses)

    def _unlisten(self, client: Client, addresses: Iterable[str]) -> None:
        for address in addresses:
            if self.outbox.unlisten(address, client) and not self.stopping.is_set():
                task = asyncio.get_running_loop().create_task(self._absent(address))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _absent(self, address: str) -> None:
        try:
            await self.present(address, False)
        except Exception:
            log.warning("could not tell the cluster nobody here listens to %s", address,
                        exc_info=True)
