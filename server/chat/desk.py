"""Chat: a lobby chat and each game's players' and spectators' chats (``server.chat.rules``'s
rules).

A connection opens a chat with ``get_chat`` (its newest lines come back) and from then on
hears every line of the channels it may read, until it closes. A line is checked here
(length, the sender's rate and its address's, a guest in the lobby, a finished game, an
admin's silence of the player or of its address), stored with its game
(``Store.add_chat_line``; the lobby keeps only its newest lines), then sent to the channel.
The sweep (``sweep``) deletes lines past their time (``Settings.lobby_chat_days``,
``game_chat_days``).

Why channels and not rooms: a channel is an outbox address (``server.connections.outbox``) that
any node of a cluster publishes to and that reaches its listeners on every node, as a player's
connections do; so a line never waits for the node running its room, and a game's chat goes
on after the game (and its room) ended. Who plays and who watches comes from the stored game
(its seats), which every node reads alike. Silences are in the store, so they hold on every
node; the rates are counted per player and per address on the node the line arrives at.
An admin's silence holds the player's addresses (those of its connections to this node) for
as long: a guest who says ``hello`` afresh from one is silent still.

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
from server.connections.client import Client, source_of
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
        """Per player, and per address (``@`` and the address), when its recent lines were
        said (the rates)."""
        self._pruned = float("-inf")
        """When ``sweep`` last deleted old lines."""
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
        if game_id is not None:
            loaded = await self.store.load_game(game_id)
            if loaded is not None:
                chat.check_open(player.id, loaded[0], now,
                                self.settings.chat_after_game_seconds)
        source = None if client.admin is not None else source_of(client)
        until = await self.store.chat_silenced_until(player.id, source)
        if until is not None and until > now:
            raise errors.Silenced(f"an admin silenced your chat for {round(until - now)} s "
                                  "more", until=until)
        window = self.settings.chat_window_seconds
        rates: list[tuple[collections.deque[float], int, str | None]] = [
            (self._recent(player.id, now), self.settings.chat_lines, None)]
        if source is not None:
            rates.append((self._recent(f"@{source}", now), self.settings.chat_lines_per_source,
                          "chat_lines_per_source"))
        for said, most, limit in rates:
            if len(said) >= most:
                wait = said[0] + window - now
                whose = "from your address " if limit else ""
                raise errors.RateLimited(
                    f"at most {most} chat lines {whose}in {window:g} s; wait {wait:.1f} s",
                    retry_after=round(wait, 3), **({"limit": limit} if limit else {}))
        for said, _, _ in rates:
            said.append(now)
        if len(self._said) > MAX_RATES:  # forget those who have not spoken for a window
            self._said = {k: q for k, q in self._said.items() if q and q[-1] > now - window}
        line = await self.store.add_chat_line(
            ChatLineRecord(0, game_id, channel, player.id, player.name, text, now),
            self.settings.lobby_chat_kept)
        self.outbox.to_players([chat.address(game_id, channel)],
                               p.ChatLine(line=chat.view(line, player.bot)))

    def _recent(self, key: str, now: float) -> collections.deque[float]:
        """When ``key`` (a player id, or ``@`` and an address) said its lines within the
        window."""
        said = self._said.setdefault(key, collections.deque())
        while said and said[0] <= now - self.settings.chat_window_seconds:
            said.popleft()
        return said

    async def sweep(self) -> None:
        """Delete the lines past their time (``Settings.lobby_chat_days``,
        ``game_chat_days``), at most once a hundredth of the shorter time (and an hour)."""
        now = self.now()
        lobby = self.settings.lobby_chat_days * 86400
        games = self.settings.game_chat_days * 86400
        if now - self._pruned < min(3600.0, min(lobby, games) / 100):
            return
        self._pruned = now
        gone = await self.store.prune_chat(now - lobby, now - games)
        if gone:
            log.info("deleted %d chat lines past their time", gone)

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
        connections = self.outbox.connections(message.player)
        if (not connections and await self.store.load_player(message.player) is None
                and await self.store.chat_silenced_until(message.player) is None):
            raise errors.UnknownPlayer(f"there is no player {message.player!r} (a guest "
                                       "who never played is known while it is connected, "
                                       "or while silenced)")
        until = self.now() + message.seconds if message.seconds else None
        sources = sorted({source_of(c) for c in connections if c.admin is None})
        await self.store.silence_chat(message.player, until, sources)
        log.info("admin %s silenced %s (and %d addresses) for %d s", account.name,
                 message.player, len(sources), message.seconds)
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
