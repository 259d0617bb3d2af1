"""What the server does for bots: token logins, their published limits, bot accounts.

The server hands this desk the few moments that concern bots: a ``hello`` with a token
(``login``, through ``server.people.identity``), a connection's end (``gone``), a room command or
room creation by a player (``check_command``, ``check_games``, from the room runner) and
``register_bot`` (``register``, when the server lets bots register themselves). The rules of
limits are ``server.bots.limits``'s; this module is the glue between them and the sockets.

A player is a bot for the limits when it said hello with its bot token (on this server, or
on the node of a cluster its command came from); a bot cannot come back by ``resume``
instead (that would slip past its limits), only by its token. In a cluster (``shared`` set)
connections and moves are counted in Redis (``server.bots.shared_limits``) and games in the
database, so the limits hold across every node.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from server import errors
from server import protocol as p
from server.bots.accounts import (
    Accounts,
    BadBotName,
    BotAccount,
    NewBot,
    RevokedToken,
    UnknownBot,
    UnknownToken,
)
from server.bots.limits import BotLimiter, LimitExceeded, RegistrationLimiter
from server.bots.shared_limits import SharedBotLimiter
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.rooms import Room
from server.settings import Settings
from server.storage.store import Store

log = logging.getLogger("discus.bots")


class RoomsOf(Protocol):
    """The rooms a player is in on this node (``Lobby.rooms_of``)."""

    def rooms_of(self, player_id: str) -> list[Room]: ...


def _connection_id(client: Any) -> str:
    """A name for one connection, unique on its node while it is open."""
    return f"{id(client):x}"


def refusal(exc: LimitExceeded, close: bool = False) -> errors.LimitExceeded:
    """The protocol error for a limiter's refusal (``detail``: limit, allowed, retry_after)."""
    refused = errors.LimitExceeded(exc.message, **exc.detail())
    if close:
        refused.close_code = 1008
    return refused


class BotDesk:
    """The bot side of one server. ``engine`` is the SQL store's (None: a ``MemoryStore``,
    which keeps no bot accounts, so every token is refused with ``bad_token``)."""

    def __init__(self, store: Store, outbox: Outbox, rooms: RoomsOf, settings: Settings,
                 engine: AsyncEngine | None, shared: SharedBotLimiter | None = None) -> None:
        self.store = store
        self.outbox = outbox
        self.rooms = rooms
        self.settings = settings
        self.accounts = Accounts(engine) if engine is not None else None
        self.limiter = BotLimiter(settings.bots)
        self.bots: set[str] = set()
        """Player ids that said hello with a bot token in this process."""
        self._tokens: dict[Any, str] = {}
        """Connection (``app._Client``) -> the token id it logged in with."""
        self.shared = shared
        """On a node of a cluster: the limits counted for every node."""
        self.registrations = RegistrationLimiter(settings.bot_registration_limits)
        self._creating = asyncio.Lock()
        """Held while an account is made, so two requests for one name on this server
        cannot both pass ``Accounts.create``'s check for a live bot of that name."""

    # --- connections -----------------------------------------------------------------------

    async def login(self, client: Any, token: str) -> Player:
        """The bot whose token this is, its connection counted. ``bad_token``,
        ``revoked_token`` or ``limit_exceeded`` (``connections_per_token``; earlier
        connections are kept) otherwise, each closing this connection; nothing is counted."""
        if self.accounts is None:
            raise errors.BadToken("this server has no bot accounts (it keeps no database)")
        try:
            record, account = await self.accounts.verify(token)
        except RevokedToken as exc:
            raise errors.RevokedToken(str(exc)) from None
        except UnknownToken as exc:
            raise errors.BadToken(str(exc)) from None
        try:
            if self.shared is not None:
                await self.shared.open_connection(account.token_id, _connection_id(client))
            else:
                self.limiter.open_connection(account.token_id)
        except LimitExceeded as exc:
            raise refusal(exc, close=True) from None
        self._tokens[client] = account.token_id
        self.bots.add(record.id)
        return Player(record.id, record.name, bot=True)

    async def gone(self, client: Any) -> None:
        """A connection ended: it no longer counts against its token."""
        self.registrations.forget(client)
        token_id = self._tokens.pop(client, None)
        if token_id is None:
            return
        if self.shared is not None:
            await self.shared.close_connection(token_id, _connection_id(client))
        else:
            self.limiter.close_connection(token_id)

    # --- accounts, for admins -----------------------------------------------------------

    def _view(self, account: BotAccount) -> p.BotAccountView:
        live = sum(1 for token_id in self._tokens.values() if token_id == account.token_id)
        return p.BotAccountView(
            token_id=account.token_id, player_id=account.player_id, name=account.name,
            created_at=account.created_at, last_used_at=account.last_used_at,
            revoked_at=account.revoked_at, connections=live,
        )

    def _accounts(self) -> Accounts:
        if self.accounts is None:
            raise errors.Forbidden("this server keeps no database, so it has no bot accounts")
        return self.accounts

    async def list_accounts(self) -> p.AdminBots:
        return p.AdminBots(bots=[self._view(a) for a in await self._accounts().list_bots()])

    async def create_account(self, name: str) -> p.AdminBotCreated:
        made = await self._create(self._accounts(), name)
        return p.AdminBotCreated(bot=self._view(made.account), token=made.token)

    async def _create(self, accounts: Accounts, name: str) -> NewBot:
        """``Accounts.create`` (as ``discus bots create``), its refusal as ``bad_bot_name``."""
        async with self._creating:
            try:
                return await accounts.create(name)
            except BadBotName as exc:
                raise errors.BadBotName(str(exc)) from None

    @property
    def registration_open(self) -> bool:
        """Whether ``register_bot`` may make accounts here: the setting is on and the server
        keeps a database (a ``MemoryStore`` has no bot accounts)."""
        return self.settings.bot_registration and self.accounts is not None

    async def register(self, client: Any, name: str) -> p.BotRegistered:
        """``register_bot``: a bot account made exactly as an admin's, its token in the answer
        only. ``registration_disabled`` unless ``registration_open``; ``limit_exceeded``
        (``registrations_per_connection``, ``registrations_per_minute`` with its
        ``retry_after``) past a registration limit; ``bad_bot_name`` as for admins. A refused
        request makes nothing and counts against no limit."""
        if not self.settings.bot_registration:
            raise errors.RegistrationDisabled(
                "this server does not let bots register themselves; ask its admin for a "
                "bot account")
        if self.accounts is None:
            raise errors.RegistrationDisabled(
                "this server keeps no database, so it has no bot accounts")
        now = time.monotonic()
        try:
            self.registrations.take(client, now)
        except LimitExceeded as exc:
            raise refusal(exc) from None
        try:
            made = await self._create(self.accounts, name)
        except BaseException:
            self.registrations.give_back(client, now)  # no account: it counts for nothing
            raise
        log.info("bot %s registered itself (player %s)", made.account.name,
                 made.account.player_id)
        return p.BotRegistered(bot=self._view(made.account), token=made.token)

    async def revoke_account(self, name_or_id: str) -> p.AdminBotRevoked:
        """Revoke, then close this server's connections that logged in with those tokens."""
        try:
            revoked = await self._accounts().revoke(name_or_id)
        except UnknownBot as exc:
            raise errors.UnknownBot(str(exc)) from None
        closed = self._cut({a.token_id for a in revoked})
        return p.AdminBotRevoked(bots=[self._view(a) for a in revoked], closed=closed)

    async def cut_revoked(self) -> int:
        """Close connections whose token was revoked elsewhere (``discus bots revoke``,
        another server's admin); the server's sweeper calls this every few seconds."""
        if not self._tokens or self.accounts is None:
            return 0
        revoked = {a.token_id for a in await self.accounts.list_bots() if a.revoked}
        return self._cut(revoked & set(self._tokens.values()))

    def _cut(self, token_ids: set[str]) -> int:
        doomed = [c for c, token_id in self._tokens.items() if token_id in token_ids]
        for client in doomed:
            exc = errors.RevokedToken("an admin revoked this bot token; ask for a new one")
            self.outbox.refuse(client, exc, None)
            client.close(exc.close_code, exc.code)
        return len(doomed)

    async def refuse_resume(self, player_id: str) -> None:
        """A bot comes back by its token only (its limits are keyed on it)."""
        if player_id not in self.bots and self.accounts is None:
            return
        record = await self.store.load_player(player_id)
        if player_id in self.bots or (record is not None and record.kind == "bot"):
            raise errors.BadResumeToken(
                "a bot account comes back with its bot token (hello.token), not resume")

    def limits(self, client: Any, base: p.ServerLimits) -> p.ServerLimits:
        """``welcome.limits`` for this connection: with the bounds of ``register_bot`` when
        registration is open, and with the bot's own limits when it is a bot's."""
        update: dict[str, Any] = {}
        if self.registration_open:
            update["bot_registration"] = p.BotRegistrationView(
                **self.registrations.limits.published())
        if client in self._tokens:
            update["bot"] = p.BotLimitsView(
                **self.limiter.limits.published())  # type: ignore[arg-type]
        return base.model_copy(update=update) if update else base

    # --- limits ----------------------------------------------------------------------------

    def unfinished(self, player_id: str) -> list[Room]:
        return [r for r in self.rooms.rooms_of(player_id)
                if r.status != "finished" and r.seat_of(player_id) is not None]

    def _is_bot(self, player: Player) -> bool:
        return player.bot or player.id in self.bots

    async def _playing(self, player_id: str) -> int:
        """Unfinished games the player sits in: on this server, or in a cluster on every
        node (the database holds them all)."""
        if self.shared is None:
            return len(self.unfinished(player_id))
        records = await self.store.games_of_player(
            player_id, self.limiter.limits.concurrent_games + self.settings.max_rooms)
        return sum(1 for r in records if r.status in ("waiting", "active"))

    async def check_games(self, player: Player) -> None:
        """Before a bot takes a seat in a new game: ``limit_exceeded`` (``concurrent_games``,
        retry once a game ends) if it already plays the most allowed. Counted from the rooms
        themselves, so games ending any way (played out, resigned, claimed, swept) free a
        place at once."""
        if not self._is_bot(player):
            return
        allowed = self.limiter.limits.concurrent_games
        playing = await self._playing(player.id)
        if playing >= allowed:
            raise refusal(LimitExceeded(
                "concurrent_games", allowed, None,
                f"a bot may play at most {allowed} games at once and this one plays "
                f"{playing}; finish, resign or leave one first"))

    async def check_command(self, player: Player, message: Any, room: Room) -> None:
        """Before a room command runs: a bot's move counts against ``moves_per_minute`` (even
        one then refused, so refusals cannot be spammed); a join, and a rematch (which starts
        a new game in a finished room), must fit ``concurrent_games``."""
        if not self._is_bot(player):
            return
        player_id = player.id
        if isinstance(message, p.Move):
            try:
                if self.shared is not None:
                    await self.shared.take_move(player_id, time.time())
                else:
                    self.limiter.take_move(player_id, time.monotonic())
            except LimitExceeded as exc:
                raise refusal(exc) from None
        elif (isinstance(message, p.JoinRoom) and room.status == "waiting"
              and room.seat_of(player_id) is None) or (
                isinstance(message, p.OfferRematch | p.AcceptRematch)
                and room.status == "finished"):
            await self.check_games(player)
