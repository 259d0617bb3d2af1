"""People's accounts: sign up, sign in, sessions that keep a browser signed in, sign out.

A guest plays at once with no account. ``sign_up`` turns the guest into an account: the same
player id, so its games are the account's. ``sign_in`` gives a session token, which the page
keeps (in ``localStorage``, where it kept the guest's resume token) and says ``hello`` with as
``resume``; the token is 32 random bytes, stored only as its SHA-256 (as bot tokens are, see
``server.bots.accounts`` for why a fast hash is right for a random token), and revocable. A guest's
resume token (an HMAC of its id) does not bring back a player that has become an account:
only a live session does, so signing out everywhere really signs the account out.

Passwords are people's secrets, low in entropy, so they are hashed with Argon2id
(``argon2-cffi``'s defaults, RFC 9106's low-memory profile), off the event loop. A sign-in for
an unknown name still verifies a password against a dummy hash, so the answer takes as long
as for a known name with a wrong password; both get the same error.

Attempts are limited: per connection (``sign_up`` and ``sign_in`` alike) in this server's
memory (``AttemptLimiter``); failed passwords per (name, source), per name and per source, and
sign-ups per source, by ``server.people.sign_in_limits`` (in memory, or in Redis on a cluster so
every
node counts them), built so that a guesser slows itself down, never the owner. Hashes go
through a bounded queue fair per source (``server.people.hash_queue``): past its bound, ``busy``.

``AccountDesk`` is the server's glue; ``check_name`` and ``AttemptLimiter`` are pure.
"""

from __future__ import annotations

import collections
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from server import errors
from server import protocol as p
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.people import names
from server.people.hash_queue import Busy, HashQueue
from server.people.sessions import SESSION_BYTES, SESSION_PREFIX, hash_session
from server.people.sign_in_limits import (
    DEFAULT_SIGN_IN_LIMITS,
    Counts,
    LocalCounts,
    Refused,
    SignInGuard,
    SignInLimits,
)
from server.storage.store import (
    AccountRecord,
    NameTaken,
    NotAGuest,
    PlayerRecord,
    SessionRecord,
    Store,
    name_key,
)

__all__ = ["SESSION_PREFIX", "AccountDesk", "AttemptLimiter", "check_name", "hash_session"]


class Becoming(Protocol):
    """Identity's hand-over: the guest is now the account ``player`` (same id)."""

    def became(self, player: Player) -> None: ...


RevokedSessions = Callable[[str, "str | None", "str | None"], None]
"""Tells every other node to close the connections of revoked sessions (a no-op alone)."""
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,19}")
"""3 to 20 ASCII letters, digits, ``_`` and ``-``, not starting with ``_`` or ``-``: ASCII
only, so no look-alike letters from other scripts can pass for another name."""
RESERVED_NAMES = frozenset({"admin", "administrator", "discus", "moderator", "root", "system",
                            "server", "guest", "bot", "ai"})
"""Names (any case) nobody may take: they would pass for the site or its staff."""
MIN_PASSWORD = 8
MAX_PASSWORD = 128


def check_name(name: str) -> str:
    """``name`` trimmed if it may be an account's name, else ``BadAccountName`` with
    ``detail.rule`` (``characters`` or ``reserved``). Whether it is taken is the store's."""
    try:
        name = names.enforce(name.strip())  # the one profile of every name (server.people.names)
    except names.BadName:
        name = ""
    if not NAME_PATTERN.fullmatch(name):
        raise errors.BadAccountName(
            "a name is 3 to 20 letters, digits, '_' or '-', starting with a letter or digit",
            rule="characters")
    if name_key(name) in RESERVED_NAMES:
        raise errors.BadAccountName(f"the name {name!r} is reserved", rule="reserved")
    return name


def check_password(password: str) -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise errors.BadPassword(
            f"a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters",
            min=MIN_PASSWORD, max=MAX_PASSWORD)


class AttemptLimiter:
    """At most ``limit`` attempts per key within ``window`` seconds (a sliding window). Pure:
    the caller passes the time."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._seen: dict[object, collections.deque[float]] = {}

    def wait(self, key: object, now: float) -> float:
        """0 if another attempt may be made now, else the seconds until one may."""
        seen = self._seen.get(key)
        if seen is None:
            return 0.0
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if not seen:
            del self._seen[key]
            return 0.0
        return 0.0 if len(seen) < self.limit else seen[0] + self.window - now

    def note(self, key: object, now: float) -> None:
        self._seen.setdefault(key, collections.deque()).append(now)

    def forget(self, key: object) -> None:
        self._seen.pop(key, None)


class AccountDesk:
    """Accounts and sessions of one server (``server.app`` hands it the messages).

    A connection's session, once it said hello with one, is in ``client.account`` (the
    ``SessionRecord``); ``client.account`` is None on a guest's, bot's or admin's.
    """

    def __init__(self, store: Store, outbox: Outbox, identity: Becoming,
                 signed_up: Callable[[str], None], revoked_elsewhere: RevokedSessions,
                 counts: Counts | None = None,
                 limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
                 hasher: PasswordHasher | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.store = store
        self.outbox = outbox
        self.identity = identity
        self.signed_up = signed_up
        self.revoked_elsewhere = revoked_elsewhere
        self.hasher = hasher or PasswordHasher()
        self.clock = clock
        self.wall = wall
        self.by_connection = AttemptLimiter(limits.per_connection, limits.window_seconds)
        self.guard = SignInGuard(counts if counts is not None else LocalCounts(), limits)
        """Failures per (name, source), name and source, and sign-ups per source: in this
        process, or in Redis on a cluster (``server.people.shared_counts.SharedCounts``)."""
        self.hashes = HashQueue(limits.hashes_at_once, limits.hashes_per_source,
                                limits.hashes_waiting)
        self._dummy_hash: str | None = None

    # --- messages ------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player, message: Any) -> None:
        if isinstance(message, p.SignUp):
            answer: Any = await self.sign_up(client, player, message.name, message.password)
        elif isinstance(message, p.SignIn):
            answer = await self.sign_in(client, message.name, message.password)
        elif isinstance(message, p.ChangePassword):
            answer = await self.change_password(client, player, message.password,
                                                message.new_password)
        else:
            answer = await self.sign_out(client, player, message.everywhere)
        self.outbox.send([client], answer)
        if isinstance(message, p.SignOut) and client.account is not None:
            self._signed_out(player.id, None if message.everywhere else client.account.id)
        if isinstance(message, p.ChangePassword) and client.account is not None:
            self._signed_out(player.id, None, keep=client.account.id)

    async def sign_up(self, client: Client, player: Player, name: str,
                      password: str) -> p.SignedIn:
        self._attempt(client)
        name = check_name(name)
        check_password(password)
        if player.bot or client.admin is not None or client.account is not None:
            raise errors.NotAGuest("only a guest can sign up; this is an account already")
        await self._limited(self.guard.sign_up(source_of(client), self.wall()))
        password_hash = await self._hash(client, password)
        account = AccountRecord(player.id, name, password_hash, time.time())
        try:
            record = await self.store.create_account(account)
        except NameTaken:
            raise errors.BadAccountName(f"the name {name!r} is taken", rule="taken") from None
        except NotAGuest:
            raise errors.NotAGuest("only a guest can sign up; this is an account already"
                                   ) from None
        self.identity.became(Player(record.id, record.name))
        self.signed_up(record.id)
        return await self._new_session(record)

    async def sign_in(self, client: Client, name: str, password: str) -> p.SignedIn:
        self._attempt(client)
        key, source = name_key(name.strip()), source_of(client)
        await self._limited(self.guard.check_password(key, source, self.wall()))
        account = await self.store.find_account(name.strip())
        if not await self._verify(client, account, password):
            await self.guard.failed(key, source, self.wall())
            raise errors.WrongNameOrPassword("wrong name or password")
        assert account is not None
        record = await self.store.load_player(account.player_id)
        if record is None:  # the account's foreign key makes this impossible
            raise errors.WrongNameOrPassword("wrong name or password")
        await self.guard.succeeded(key, source)
        return await self._new_session(record)

    async def sign_out(self, client: Client, player: Player, everywhere: bool) -> p.SignedOut:
        session = client.account
        if session is None:
            raise errors.NotSignedIn("this connection is not signed in with a session")
        revoked = await self.store.revoke_sessions(
            player.id, time.time(), None if everywhere else session.id)
        return p.SignedOut(revoked=revoked)

    async def change_password(self, client: Client, player: Player, password: str,
                              new_password: str) -> p.PasswordChanged:
        """The current password is checked as a sign-in is (counted against the name's
        failures too), so a stolen session cannot be turned into the account for good."""
        session = client.account
        if session is None:
            raise errors.NotSignedIn("this connection is not signed in with a session")
        self._attempt(client)
        check_password(new_password)
        key, source = name_key(player.name), source_of(client)
        await self._limited(self.guard.check_password(key, source, self.wall()))
        account = await self.store.find_account(player.name)
        if account is not None and account.player_id != player.id:
            account = None
        if not await self._verify(client, account, password):
            await self.guard.failed(key, source, self.wall())
            raise errors.WrongNameOrPassword("that is not this account's password")
        revoked = await self.store.change_password(
            player.id, await self._hash(client, new_password), time.time(), session.id)
        return p.PasswordChanged(revoked=revoked)

    # --- inside --------------------------------------------------------------------------

    def _attempt(self, client: Client) -> None:
        now = self.clock()
        retry = self.by_connection.wait(client, now)
        if retry:
            raise errors.RateLimited(f"too many sign-in attempts; {errors.try_again_in(retry)}",
                                     retry_after=round(retry, 1), limit="sign_in")
        self.by_connection.note(client, now)

    @staticmethod
    async def _limited(check: Any) -> None:
        """Await a ``SignInGuard`` check; its refusal as ``rate_limited``."""
        try:
            await check
        except Refused as exc:
            raise errors.RateLimited(f"{exc}; {errors.try_again_in(exc.retry_after)}",
                                     retry_after=round(max(0.1, exc.retry_after), 1),
                                     limit=exc.limit) from None

    async def _verify(self, client: Client, account: AccountRecord | None,
                      password: str) -> bool:
        """Whether ``password`` is the account's; for no account, as slow and always False."""
        if account is None:
            if self._dummy_hash is None:
                self._dummy_hash = await self._hash(client, secrets.token_urlsafe(16))
            stored = self._dummy_hash
        else:
            stored = account.password_hash
        try:
            await self._hashed(client, self.hasher.verify, stored, password)
        except (VerificationError, InvalidHashError):
            return False
        return account is not None

    async def _hash(self, client: Client, password: str) -> str:
        result: str = await self._hashed(client, self.hasher.hash, password)
        return result

    async def _hashed(self, client: Client, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)`` through the hash queue, in the connection's source's turn;
        ``busy`` at once past the queue's bound."""
        try:
            return await self.hashes.run(source_of(client), work, *args)
        except Busy as exc:
            raise errors.Busy("the password checks are busy; try again shortly",
                              retry_after=exc.retry_after, limit=exc.limit) from None

    async def _new_session(self, record: PlayerRecord) -> p.SignedIn:
        token = SESSION_PREFIX + secrets.token_urlsafe(SESSION_BYTES)
        await self.store.add_session(
            SessionRecord(secrets.token_hex(8), record.id, hash_session(token), time.time()))
        return p.SignedIn(player=p.PlayerView(id=record.id, name=record.name), session=token)

    def _signed_out(self, player_id: str, session_id: str | None,
                    keep: str | None = None) -> None:
        """Sessions were just revoked: close the connections that came in with them here,
        and on a cluster have every other node do the same (``close_revoked``)."""
        self.close_revoked(player_id, session_id, keep)
        self.revoked_elsewhere(player_id, session_id, keep)

    def close_revoked(self, player_id: str, session_id: str | None,
                      keep: str | None = None) -> None:
        """Close this server's connections of the player that came in with a revoked
        session: ``session_id``, or any but ``keep`` for None."""
        for client in list(self.outbox.connections(player_id)):
            account = client.account
            if (account is not None and session_id in (None, account.id)
                    and account.id != keep):
                client.close(1000, "signed_out")

    def forget(self, client: Client) -> None:
        """The connection is gone: drop its attempt count."""
        self.by_connection.forget(client)
