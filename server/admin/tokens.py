"""Admin accounts: a player of kind ``admin`` and its secret token, shown once, stored hashed.

The same machinery as bot accounts (``server.bots.accounts``: 32 random bytes, stored as
``hash_token``'s SHA-256, revocable, a row in ``tokens``), under the scope ``admin`` and a
token prefix of its own, so a bot token never opens the admin page and an admin token never
plays as a bot. ``discus admins create NAME`` prints the token; the admin page sends it in
``admin_login``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncEngine

from server.bots.accounts import (
    TOKEN_BYTES,
    AccountError,
    BotAccount,
    create_account,
    hash_token,
    print_accounts,
)
from server.storage import repository as repo

SCOPE: Literal["admin"] = "admin"
TOKEN_PREFIX = "discus_admin_"
MAX_NAME = 40

AdminAccount = BotAccount
"""An admin token as listed (never the secret): the same fields as a bot's."""


class UnknownAdminToken(AccountError):
    """The token is no live admin token (mistyped, revoked, a bot's, or another server's)."""

    code = "bad_admin_token"


class UnknownAdmin(AccountError):
    """``revoke`` named no live admin (by name, token id or player id)."""

    code = "unknown_admin"


class BadAdminName(AccountError):
    """Empty, too long, or already the name of a live admin."""

    code = "bad_admin_name"


class Admins:
    """Admin accounts on one database (``SqlStore.engine``); ``clock`` gives epoch seconds."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    async def create(self, name: str) -> tuple[AdminAccount, str]:
        """A new admin and its token (the caller must show the token now: it is kept
        nowhere). ``BadAdminName`` if the name is empty, too long or a live admin's."""
        name = name.strip()
        if not name or len(name) > MAX_NAME or not name.isprintable():
            raise BadAdminName(f"an admin name is 1 to {MAX_NAME} printable characters")
        token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        account = await create_account(self.engine, SCOPE, name, token, self.clock(),
                                       BadAdminName(f"there is already an admin called {name!r}"))
        return account, token

    async def list_admins(self) -> list[AdminAccount]:
        """Every admin token ever issued, revoked ones included, oldest first."""
        async with self.engine.connect() as conn:
            return [AdminAccount.from_row(row) for row in await repo.list_tokens(conn, SCOPE)]

    async def revoke(self, name_or_id: str) -> list[AdminAccount]:
        """Revoke the live tokens of the admin with this name, token id or player id.
        A server cuts the admin rights of connections logged in with them at its next sweep
        (``AdminDesk.cut_revoked``), and before any change they ask for."""
        now = self.clock()
        revoked: list[AdminAccount] = []
        async with self.engine.begin() as conn:
            for row in await repo.list_tokens(conn, SCOPE):
                if row["revoked_at"] is None and name_or_id in (
                    row["name"], row["id"], row["player_id"]
                ):
                    if await repo.revoke_token(conn, row["id"], now):
                        revoked.append(AdminAccount.from_row({**row, "revoked_at": now}))
        if not revoked:
            raise UnknownAdmin(f"no live admin called {name_or_id!r} (by name, token id or "
                               "player id)")
        return revoked

    async def dead(self, token_ids: Iterable[str]) -> set[str]:
        """Those of ``token_ids`` that are no live admin tokens any more (revoked, gone)."""
        async with self.engine.connect() as conn:
            live = {row["id"] for row in await repo.list_tokens(conn, SCOPE)
                    if row["revoked_at"] is None}
        return set(token_ids) - live

    async def verify(self, token: str) -> AdminAccount:
        """The admin a presented token belongs to, noting the use; ``UnknownAdminToken``
        otherwise (nothing written then)."""
        async with self.engine.begin() as conn:
            row = await repo.find_live_token(conn, hash_token(token))
            if row is None or row["scope"] != SCOPE:
                raise UnknownAdminToken("that admin token is not valid here (unknown or revoked)")
            now = self.clock()
            await repo.touch_token(conn, row["id"], now)
        return AdminAccount.from_row({**row, "last_used_at": now})


# --- ``discus admins`` -------------------------------------------------------------------------


async def _run_admins(action: str, argument: str | None, database_url: str | None) -> int:
    from server.storage import SqlStore

    store = SqlStore(database_url)
    await store.open()
    try:
        admins = Admins(store.engine)
        if action == "create":
            account, token = await admins.create(argument or "")
            print(f"admin {account.name!r} created (player {account.player_id}, "
                  f"token id {account.token_id})")
            print("its token, shown only this once (log in at /admin with it):")
            print(token)
        elif action == "list":
            print_accounts(await admins.list_admins())
        else:
            for admin in await admins.revoke(argument or ""):
                print(f"revoked admin {admin.name!r} (token id {admin.token_id})")
    finally:
        await store.close()
    return 0


def main_admins(action: str, argument: str | None, database_url: str | None) -> int:
    """``discus admins create NAME | list | revoke NAME_OR_ID``; account errors are
    ``ValueError``s, which the CLI reports with exit status 2."""
    import asyncio

    return asyncio.run(_run_admins(action, argument, database_url))
