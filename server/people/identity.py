"""Who a connection is: ``hello`` (guests, resume tokens, sessions, bot tokens), guest names,
renames and the sign-in hand-over. The only writer of the player registry.

Why one module: a player's name and kind are read by every room message, history line and
rating, and were once written from eight places; now everything else reads them through
``Identity.get``/``people`` and only this module changes them. A guest's resume token is its
id signed with the server's secret (checked without a lookup, valid across restarts sharing
the secret); a session token (``server.people.sessions``) is looked up in the store.

A guest costs nothing until it plays (on one node; a cluster's nodes look each other's
players up in the store, so there the row is written at ``hello``): its ``players`` row is
written when it first sits in a game that is stored, in that game's commit (``unsaved``,
which the runner asks before it stores a game, then ``kept``), so a script saying hello a
thousand times leaves no rows. Until then the guest is known to this node's registry only;
its token, being signed, still resumes it after a restart, as a guest by the name its
``hello`` gives.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from server import errors
from server import protocol as p
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.people import names
from server.people.sessions import hash_session, is_session
from server.storage.store import PlayerRecord, Store


class BotLogin(Protocol):
    """What identity asks of the bot desk at ``hello``."""

    async def login(self, client: Client, token: str) -> Player: ...

    async def refuse_resume(self, player_id: str) -> None: ...


class Renaming(Protocol):
    """Where a new name must show at once: the rooms (``Lobby.rename``)."""

    def rename(self, player: Player) -> None: ...


@dataclass(frozen=True)
class _Looked:
    """A player's row as one ``hello`` read it (None: the store has none), so the same hello
    need not read it again."""

    record: PlayerRecord | None


class Identity:
    """The player registry of this node and the ``hello`` that fills it."""

    def __init__(self, store: Store, outbox: Outbox, secret: bytes, bots: BotLogin,
                 rooms: Renaming, token_seconds: float = 0.0, session_seconds: float = 0.0,
                 now: Callable[[], float] = time.time, lazy_guests: bool = True,
                 may_look_up: Callable[[str], bool] = lambda source: True) -> None:
        self._may_look_up = may_look_up
        """Whether an address may be told once more whether a name is taken (and then it is
        counted): ``SourceLimits.name_lookups_per_minute``, wired by ``server.app``."""
        self._lazy_guests = lazy_guests
        """Whether a guest's row waits for its first game (one node); a cluster's nodes look
        each other's players up in the store, so there it is written at ``hello``."""
        self._token_seconds = token_seconds
        """A guest's resume token older than this no longer resumes (0: never expires)."""
        self._session_seconds = session_seconds
        """A session unused this long has ended (0: never)."""
        self._now = now
        self._store = store
        self._outbox = outbox
        self._secret = secret
        self._bots = bots
        self._rooms = rooms
        self._players: dict[str, Player] = {}
        self._unsaved: dict[str, float] = {}
        """Guests with no ``players`` row yet, and when they first said hello."""
        self._kept: set[str] = set()
        """Players known to have their row (``unsaved`` need not look again)."""

    # --- reading -----------------------------------------------------------------------------

    def get(self, player_id: str) -> Player | None:
        """The player as this node knows it (online here, or met since the start)."""
        return self._players.get(player_id)

    def is_unsaved_guest(self, player_id: str) -> bool:
        """Whether ``player_id`` is a guest of this node's with no ``players`` row yet (so
        nothing of it can be read from the store: no rating, no settings)."""
        return player_id in self._unsaved

    def named(self, name: str) -> list[Player]:
        """Players connected to this node who go by ``name``."""
        return [player for player_id, player in self._players.items()
                if player.name == name and self._outbox.is_here(player_id)]

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]:
        """The players behind stored ids: those known here as they are, others from the store
        (an id the store lost reads as "Player")."""
        people: dict[str, Player] = {}
        for player_id in player_ids:
            if player_id is None or player_id in people:
                continue
            known = self._players.get(player_id)
            if known is None:
                stored = await self._store.load_player(player_id)
                known = (Player(player_id, stored.name, bot=stored.kind == "bot")
                         if stored is not None else Player(player_id, "Player"))
            people[player_id] = known
        return people

    def token_for(self, player_id: str, issued: int | None = None) -> str:
        """The resume token of ``player_id`` issued now (or at ``issued``, whole seconds):
        ``<id>.<issued>.<mac>``, the id and the time signed with the server's secret. Each
        ``hello`` with it gets a fresh one, so it expires only when unused for
        ``token_seconds`` (sliding)."""
        issued = int(self._now()) if issued is None else issued
        return f"{player_id}.{issued}.{self._mac(f'{player_id}.{issued}')}"

    def _mac(self, text: str) -> str:
        mac = hmac.new(self._secret, text.encode(), hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(mac).decode()

    def _token_player(self, token: str) -> str:
        """The player id a guest resume token names, or ``bad_resume_token``: forged, or
        expired. A token of the older form (``<id>.<mac>``, no time, so it never expired) is
        taken once (``_resumed`` spends it in the store) and replaced by the ``welcome`` of
        that ``hello`` with one of the new form, which expires as any."""
        parts = token.split(".")
        if len(parts) == 2 and parts[0] and hmac.compare_digest(self._mac(parts[0]), parts[1]):
            return parts[0]
        if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not hmac.compare_digest(
                self._mac(f"{parts[0]}.{parts[1]}"), parts[2]):
            raise errors.BadResumeToken("that resume token is not valid here; say hello without it")
        if self._token_seconds > 0 and self._now() - int(parts[1]) > self._token_seconds:
            raise errors.BadResumeToken("that resume token has expired (unused too long); say "
                                        "hello without it")
        return parts[0]

    # --- writing -----------------------------------------------------------------------------

    def remember(self, player: Player, replace: bool = False) -> Player:
        """A player met through another node or the store (a forwarded command, a restored
        game): kept as known unless ``replace``; returns the one kept."""
        known = self._players.get(player.id)
        if known is None or (replace and known != player):
            self._players[player.id] = player
            return player
        return known

    def forget(self, player_id: str) -> None:
        """Know the player from the store again from now on, as after a restart."""
        self._players.pop(player_id, None)

    async def hello(self, client: Client, hello: p.Hello) -> tuple[Player, str]:
        """The player this ``hello`` makes ``client`` and its resume token; the connection is
        attached to the player in the outbox. Refusals raise before anything is written."""
        if client.player is not None:
            raise errors.HelloRequired("this connection already said hello")
        if hello.version != p.PROTOCOL_VERSION:
            raise errors.UnsupportedVersion(
                f"this server speaks protocol version {p.PROTOCOL_VERSION}, "
                f"not {hello.version}", supported=p.PROTOCOL_VERSION)
        if hello.token is not None:
            player = await self._bots.login(client, hello.token)
            self._players[player.id] = player
            token = self.token_for(player.id)
        elif hello.resume is not None:
            player, looked = await self._resumed(hello.resume, client, hello.name)
            await self._bots.refuse_resume(player.id)
            await self._refuse_account_resume(client, player.id, looked)
            token = hello.resume if client.account is not None else self._renewed(
                hello.resume, player.id)
            name = (hello.name or "").strip()
            if name and name != player.name and client.account is None:  # accounts keep theirs
                player = await self._rename(player, name, source_of(client))
        else:
            asked = (hello.name or "").strip()
            name = asked or f"Guest {secrets.randbelow(9000) + 1000}"
            player = Player(secrets.token_hex(6), await self._guest_name(
                name, source_of(client) if asked else None))
            self._players[player.id] = player
            token = self.token_for(player.id)
            if self._lazy_guests:
                self._unsaved[player.id] = time.time()
            else:
                await self._store.save_player(PlayerRecord(player.id, player.name, "guest",
                                                           time.time()))
        client.player = player
        self._outbox.attach(player.id, client)
        return player, token

    async def unsaved(self, player_ids: Iterable[str | None]) -> list[PlayerRecord]:
        """The ``players`` rows to write of the guests among ``player_ids`` that have none
        yet (they sit in a game about to be stored): the caller stores them with the game,
        in its commit (``Store.save_game``), then calls ``kept``. A guest met through another
        node (a forwarded command) is looked up once. If that commit fails, a later call
        gives the row again."""
        rows: list[PlayerRecord] = []
        for player_id in dict.fromkeys(player_ids):
            if player_id is None or player_id in self._kept:
                continue
            created = self._unsaved.pop(player_id, None)
            player = self._players.get(player_id)
            if created is None and (player is None or player.bot
                                    or await self._store.load_player(player_id) is not None):
                self._kept.add(player_id)
                continue
            if player is not None:
                rows.append(PlayerRecord(player.id, player.name, "guest",
                                         created or time.time()))
            else:
                self._kept.add(player_id)
        return rows

    def kept(self, rows: Iterable[PlayerRecord]) -> None:
        """The rows ``unsaved`` gave are stored: their players need no look again."""
        self._kept.update(row.id for row in rows)

    def became(self, player: Player) -> None:
        """The guest became the account ``player`` (same id, sign-up or sign-in): its new
        name in the rooms it sits in and on its connections here. The account's row is
        written by the store: ``unsaved`` has nothing left to write for it."""
        self._unsaved.pop(player.id, None)
        self._kept.add(player.id)
        self._show(player)

    def _show(self, player: Player) -> None:
        """``player``'s name, as it is now, in its rooms and on its connections here."""
        self._players[player.id] = player
        self._rooms.rename(player)
        for client in self._outbox.connections(player.id):
            client.player = player

    async def _resumed(self, token: str, client: Client, name: str | None
                       ) -> tuple[Player, _Looked | None]:
        """The player a resume token names, and its row if this hello read it already (None:
        not read). A guest's token this node signed but whose player it knows of nowhere is a
        guest that has not played yet (met by another node, or before a restart): it comes
        back as that guest, by ``name``."""
        if is_session(token):
            return await self._session(client, token), None
        player_id = self._token_player(token)
        if token.count(".") == 1 and not await self._store.spend_guest_token(player_id,
                                                                             self._now()):
            raise errors.BadResumeToken("that resume token (of the older form) was used "
                                        "once already; say hello without it")
        player = self._players.get(player_id)
        looked = None
        if player is None:
            record = await self._store.load_player(player_id)
            looked = _Looked(record)
            if record is None:
                asked = (name or "").strip()
                name = asked or f"Guest {secrets.randbelow(9000) + 1000}"
                player = Player(player_id, await self._guest_name(
                    name, source_of(client) if asked else None))
                self._unsaved[player_id] = time.time()
            else:
                player = Player(record.id, record.name, bot=record.kind == "bot")
            self._players[player_id] = player
        return player, looked

    def _renewed(self, token: str, player_id: str) -> str:
        """``token`` while it is young (under a day, or a hundredth of its life), else a
        fresh one: each use starts the guest token's life again (sliding expiry)."""
        parts = token.split(".")
        refresh = min(86400.0, self._token_seconds / 100 if self._token_seconds else 86400.0)
        if len(parts) == 3 and self._now() - int(parts[1]) < refresh:
            return token
        return self.token_for(player_id)

    async def _session(self, client: Client, token: str) -> Player:
        """The account a live session token belongs to; remembers the session on
        ``client``. ``bad_resume_token`` for an unknown or revoked session. The session and
        its player's row are one lookup (``Store.find_session_player``)."""
        found = await self._store.find_session_player(hash_session(token))
        session, record = found if found is not None else (None, None)
        if session is None or session.revoked_at is not None:
            raise errors.BadResumeToken(
                "that session has ended (signed out, or unknown here); sign in again")
        now = self._now()
        used = session.used_at if session.used_at is not None else session.created_at
        if self._session_seconds > 0 and now - used > self._session_seconds:
            raise errors.BadResumeToken("that session has expired (unused too long); sign in "
                                        "again")
        if now - used > min(3600.0, self._session_seconds / 100 or 3600.0):
            await self._store.touch_session(session.id, now)  # not on every quick reconnect
        player = self._players.get(session.player_id)
        if player is None:
            if record is None:
                raise errors.BadResumeToken("that session's player is unknown here")
            player = self._players[record.id] = Player(record.id, record.name)
        client.account = session
        return player

    async def _refuse_account_resume(self, client: Client, player_id: str,
                                     looked: _Looked | None) -> None:
        """An account comes back with a session only, never with a guest's resume token (it
        may be the token of the guest it was, on a browser that never signed in). ``looked``:
        the player's row as this hello read it already (None: read it now)."""
        if client.account is not None:
            return
        record = looked.record if looked is not None else await self._store.load_player(
            player_id)
        if record is not None and record.kind == "account":
            raise errors.BadResumeToken(
                "this player is an account now: sign in (hello.resume with a session token)")

    async def _guest_name(self, name: str, source: str | None = None) -> str:
        """``name`` as the names profile shows a guest's (``server.people.names.guest``), marked
        ``"name (guest)"`` if it, or its look-alike (``server.people.names.lookalike``), is an
        account's, a bot's or an admin's name in any letter case: nobody passes for a
        signed-up person, a bot or the staff. ``source``: the address that chose ``name``;
        past its lookups (``may_look_up``) the name is marked without looking, so the mark
        tells it nothing (the guest may rename itself later)."""
        shown = names.guest(name) or f"Guest {secrets.randbelow(9000) + 1000}"
        if source is not None and not self._may_look_up(source):
            return f"{shown} (guest)"
        if await self._store.name_is_held(*dict.fromkeys((shown, names.lookalike(shown)))):
            return f"{shown} (guest)"
        return shown

    async def _rename(self, player: Player, name: str, source: str) -> Player:
        """The guest ``player`` now goes by ``name`` (as ``_guest_name`` has it, asked by
        ``source``): stored, and shown in its rooms (from the next message that carries
        seats) and connections."""
        renamed = Player(player.id, await self._guest_name(name, source), bot=player.bot)
        if player.id not in self._unsaved:
            record = await self._store.load_player(player.id)
            created = record.created_at if record is not None else time.time()
            await self._store.save_player(PlayerRecord(player.id, renamed.name, "guest",
                                                       created))
        self._show(renamed)  # still a guest: its row, if it has none, waits for its first game
        return renamed
