"""Bot accounts: a player of kind ``bot`` and its secret token, shown once and stored hashed.

An admin creates a bot (``discus bots create NAME``) and hands the printed token to whoever
runs it; where the server enables it, a bot may instead register itself (``register_bot``,
through the same ``Accounts.create``). The bot sends the token in ``hello.token``. Only
``sha256(token)`` is stored, so a leaked database does not let anyone connect as a bot.

Why plain SHA-256 and not a slow password hash (bcrypt, scrypt, argon2): the token is 32
random bytes from ``secrets`` (256 bits of entropy), so the hash cannot be brute-forced back
to it whatever its speed. A slow hash only protects low-entropy secrets chosen by people, and
here would cost every connection tens of milliseconds. A fast, unsalted hash also makes the
stored hash a lookup key: verification is one indexed query (``tokens.token_hash`` is unique).

Everything goes through ``server.storage.repository`` on the store's engine, so it works on
the SQLite default and on PostgreSQL alike.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.people import names
from server.storage import repository as repo
from server.storage.store import PlayerRecord

TOKEN_PREFIX = "discus_bot_"
"""Marks the secret as a Discus bot token (secret scanners and people recognise it)."""
TOKEN_BYTES = 32
SCOPE: Literal["bot"] = "bot"
MAX_NAME = 40
"""Same bound as ``hello.name``: a bot's name is its display name."""


class AccountError(ValueError):
    """Base of the account failures; ``code`` is the protocol error code it maps to."""

    code: ClassVar[str] = "bad_token"


class UnknownToken(AccountError):
    """The presented token belongs to no bot (mistyped, or from another server)."""

    code = "bad_token"


class RevokedToken(AccountError):
    """The token was valid once and has been revoked; ask the admin for a new bot token."""

    code = "revoked_token"


class UnknownBot(AccountError):
    """``revoke`` named no live bot (by name, token id or player id)."""

    code = "unknown_bot"


class BadBotName(AccountError):
    """Empty, too long, or already the name of a live bot."""

    code = "bad_bot_name"


@dataclass(frozen=True)
class BotAccount:
    """One bot token as listed: never the secret itself. Times are epoch seconds."""

    token_id: str
    player_id: str
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> BotAccount:
        return cls(row["id"], row["player_id"], row["name"], row["created_at"],
                   row["last_used_at"], row["revoked_at"])


@dataclass(frozen=True)
class NewBot:
    """What ``create`` returns: the account and its token. The token is not kept anywhere;
    the caller must show it now, once."""

    account: BotAccount
    token: str


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """The stored form of a token (hex SHA-256 of its UTF-8 text); see the module docstring."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def create_account(engine: AsyncEngine, scope: Literal["bot", "admin"], name: str,
                         token: str, now: float, taken: AccountError) -> BotAccount:
    """A new player of kind ``scope`` (``bot`` or ``admin``) and its token's row, stored
    hashed; raises ``taken`` (and writes nothing) if a live token of ``scope`` has ``name``,
    or a person's account has it in any letter case.

    The check runs in the transaction, and the database's unique index on live names
    (``ux_tokens_live_name``) refuses the insert of a server that raced past it.
    """
    try:
        async with engine.begin() as conn:
            live = await repo.list_tokens(conn, scope)
            if any(row["name"] == name and row["revoked_at"] is None for row in live):
                raise taken
            if await repo.find_account(conn, name) is not None:
                raise taken  # a person's account (``server.people.accounts``): no impersonation
            player = PlayerRecord(secrets.token_hex(6), name, scope, now)
            await repo.save_player(conn, player)
            token_id = secrets.token_hex(8)
            await repo.insert_token(conn, token_id, player.id, name, scope, hash_token(token),
                                    now)
    except IntegrityError:
        raise taken from None
    return BotAccount(token_id, player.id, name, now, None, None)


class Accounts:
    """Bot accounts on one database. ``engine`` is ``SqlStore.engine``; ``clock`` gives epoch
    seconds (tests pass their own)."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    async def create(self, name: str) -> NewBot:
        """A new bot player and its token. ``BadBotName`` if the name is empty, too long or
        taken by a live bot; nothing is written then."""
        try:
            name = names.enforce(name.strip())
        except names.BadName as exc:
            raise BadBotName(f"a bot name is 1 to {MAX_NAME} printable characters: {exc}"
                             ) from None
        if len(name) > MAX_NAME:
            raise BadBotName(f"a bot name is 1 to {MAX_NAME} printable characters")
        look = names.lookalike(name)
        if look != name:
            async with self.engine.connect() as conn:
                if (await repo.find_account(conn, look) is not None
                        or await repo.name_is_reserved(conn, look)):
                    raise BadBotName(f"{name!r} looks like {look!r}, another player's name")
        token = new_token()
        account = await create_account(self.engine, SCOPE, name, token, self.clock(),
                                       BadBotName(f"there is already a bot called {name!r}"))
        return NewBot(account, token)

    async def list_bots(self) -> list[BotAccount]:
        """Every bot token ever issued, revoked ones included, oldest first."""
        async with self.engine.connect() as conn:
            return [BotAccount.from_row(row) for row in await repo.list_tokens(conn, SCOPE)]

    async def revoke(self, name_or_id: str) -> list[BotAccount]:
        """Revoke the live tokens of the bot with this name, token id or player id; the
        accounts as they are now. ``UnknownBot`` if none is live."""
        now = self.clock()
        revoked: list[BotAccount] = []
        async with self.engine.begin() as conn:
            for row in await repo.list_tokens(conn, SCOPE):
                if row["revoked_at"] is None and name_or_id in (
                    row["name"], row["id"], row["player_id"]
                ):
                    if await repo.revoke_token(conn, row["id"], now):
                        revoked.append(BotAccount.from_row({**row, "revoked_at": now}))
        if not revoked:
            raise UnknownBot(f"no live bot called {name_or_id!r} (by name, token id or player id)")
        return revoked

    async def verify(self, token: str) -> tuple[PlayerRecord, BotAccount]:
        """The bot a presented token belongs to, noting the use (``last_used_at``).

        ``UnknownToken`` or ``RevokedToken`` otherwise; nothing is written then.
        """
        async with self.engine.begin() as conn:
            row = await repo.find_token(conn, hash_token(token))
            if row is None or row["scope"] != SCOPE:
                raise UnknownToken("that bot token is not known here")
            if row["revoked_at"] is not None:
                raise RevokedToken("that bot token has been revoked; ask for a new one")
            player = await repo.find_player(conn, row["player_id"])
            if player is None:  # the row's foreign key makes this impossible; be explicit
                raise UnknownToken("that bot token's player is gone")
            now = self.clock()
            await repo.touch_token(conn, row["id"], now)
        return player, BotAccount.from_row({**row, "last_used_at": now})


# --- ``discus bots`` ---------------------------------------------------------------------------


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


async def _run_bots(action: str, argument: str | None, database_url: str | None) -> int:
    from server.storage import SqlStore

    store = SqlStore(database_url)
    await store.open()
    try:
        accounts = Accounts(store.engine)
        if action == "create":
            made = await accounts.create(argument or "")
            print(f"bot {made.account.name!r} created (player {made.account.player_id}, "
                  f"token id {made.account.token_id})")
            print("its token, shown only this once:")
            print(made.token)
        elif action == "list":
            print_accounts(await accounts.list_bots())
        else:
            for bot in await accounts.revoke(argument or ""):
                print(f"revoked bot {bot.name!r} (token id {bot.token_id})")
    finally:
        await store.close()
    return 0


def print_accounts(rows: Sequence[BotAccount]) -> None:
    """The table ``discus bots list`` and ``discus admins list`` print, one account a row."""
    print(f"{'name':<24} {'token id':<16} {'player':<12} {'created':<20} "
          f"{'last used':<20} revoked")
    for row in rows:
        print(f"{row.name:<24} {row.token_id:<16} {row.player_id:<12} "
              f"{_when(row.created_at):<20} {_when(row.last_used_at):<20} "
              f"{_when(row.revoked_at)}")


def main_bots(action: str, argument: str | None, database_url: str | None) -> int:
    """``discus bots create NAME | list | revoke NAME_OR_ID``; account errors are
    ``ValueError``s, which the CLI reports with exit status 2."""
    import asyncio

    return asyncio.run(_run_bots(action, argument, database_url))
