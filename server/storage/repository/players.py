"""Who a player is and what proves it: the players' rows, people's accounts and their
sessions, bots' and admins' tokens (only hashes are stored), and the rule that spans them
all, that a name is held whatever its letter case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import (
    accounts,
    dialect_insert,
    players,
    sessions,
    spent_guest_tokens,
    tokens,
    upsert_sync,
)
from server.storage.store import AccountRecord, PlayerRecord, SessionRecord, name_key

# -- players ---------------------------------------------------------------------------------


async def save_player(conn: AsyncConnection, player: PlayerRecord) -> None:
    await conn.run_sync(write_player, player)


def write_player(conn: Connection, player: PlayerRecord) -> None:
    """``save_player`` on a sync connection: the store's batched writes run these in one
    transaction (``sql_store``), on SQLite in a writer thread of its own."""
    values = {"id": player.id, "name": player.name, "kind": player.kind}
    upsert_sync(conn, players, {**values, "created_at": player.created_at}, ["id"])


async def find_player(conn: AsyncConnection, player_id: str) -> PlayerRecord | None:
    return await conn.run_sync(read_player, player_id)


def read_player(conn: Connection, player_id: str) -> PlayerRecord | None:
    """``find_player`` on a sync connection: on a SQLite file the store runs its quick reads
    in a reader thread of their own, one hand-off each (``sql_store``)."""
    row = conn.execute(select(players).where(players.c.id == player_id)).first()
    if row is None:
        return None
    return PlayerRecord(id=row.id, name=row.name, kind=row.kind, created_at=row.created_at)


# -- people's accounts and sessions (server.people.accounts) ---------------------------------


async def spend_guest_token(conn: AsyncConnection, player_id: str, now: float) -> bool:
    """Record that the guest's older-form token was used; False if it was already (then it
    resumes nobody). One statement, so two hellos racing with it cannot both win."""
    stmt = dialect_insert(conn, spent_guest_tokens).values(player_id=player_id, spent_at=now)
    result = await conn.execute(stmt.on_conflict_do_nothing(index_elements=["player_id"]))
    return bool(result.rowcount)


async def find_account(conn: AsyncConnection, name: str) -> AccountRecord | None:
    """The account whose name is ``name`` in any letter case (``ux_accounts_name_key``)."""
    stmt = select(accounts).where(accounts.c.name_key == name_key(name))
    row = (await conn.execute(stmt)).first()
    if row is None:
        return None
    return AccountRecord(row.player_id, row.name, row.password_hash, row.created_at)


async def any_name_held(conn: AsyncConnection, names: Sequence[str]) -> bool:
    """Whether an account, or a bot or an admin token (revoked ones too), is called any of
    ``names`` in any letter case: the accounts' name index and the small tokens table, in
    one query, cheap enough for every guest's ``hello``."""
    return await conn.run_sync(names_held, names)


def names_held(conn: Connection, names: Sequence[str]) -> bool:
    """``any_name_held`` on a sync connection (the store's reader thread)."""
    found = {name_key(name) for name in names}
    stmt = select(or_(
        exists().where(accounts.c.name_key.in_(found)),
        exists().where(func.lower(tokens.c.name).in_(found))))
    return bool(conn.execute(stmt).scalar_one())


async def name_is_reserved(conn: AsyncConnection, name: str) -> bool:
    """Whether a bot or an admin is called ``name`` in any letter case (revoked ones too:
    people have seen them under that name)."""
    key = name_key(name)
    stmt = select(func.count()).select_from(players).where(
        players.c.kind.in_(("bot", "admin")), func.lower(players.c.name) == key)
    if (await conn.execute(stmt)).scalar_one():
        return True
    stmt = select(func.count()).select_from(tokens).where(func.lower(tokens.c.name) == key)
    return bool((await conn.execute(stmt)).scalar_one())


async def insert_account(conn: AsyncConnection, account: AccountRecord) -> None:
    """Raises ``IntegrityError`` when an account has the name in any letter case."""
    await conn.execute(accounts.insert().values(
        player_id=account.player_id, name=account.name, name_key=account.name_key,
        password_hash=account.password_hash, created_at=account.created_at))


async def insert_session(conn: AsyncConnection, session: SessionRecord) -> None:
    await conn.execute(sessions.insert().values(
        id=session.id, player_id=session.player_id, token_hash=session.token_hash,
        created_at=session.created_at, revoked_at=session.revoked_at))


async def find_session(conn: AsyncConnection, token_hash: str) -> SessionRecord | None:
    return await conn.run_sync(read_session, token_hash)


def read_session(conn: Connection, token_hash: str) -> SessionRecord | None:
    """``find_session`` on a sync connection (the store's reader thread)."""
    row = conn.execute(select(sessions).where(sessions.c.token_hash == token_hash)).first()
    if row is None:
        return None
    return SessionRecord(row.id, row.player_id, row.token_hash, row.created_at, row.revoked_at,
                         row.used_at)


def read_session_player(conn: Connection, token_hash: str
                        ) -> tuple[SessionRecord, PlayerRecord | None] | None:
    """The session with this token hash and its player's row (None if there is none), in
    one query, on a sync connection (the store's reader thread)."""
    stmt = (select(sessions, players.c.name.label("player_name"),
                   players.c.kind.label("player_kind"),
                   players.c.created_at.label("player_created_at"))
            .select_from(sessions.outerjoin(players, players.c.id == sessions.c.player_id))
            .where(sessions.c.token_hash == token_hash))
    row = conn.execute(stmt).first()
    if row is None:
        return None
    session = SessionRecord(row.id, row.player_id, row.token_hash, row.created_at,
                            row.revoked_at, row.used_at)
    if row.player_name is None:
        return session, None
    return session, PlayerRecord(row.player_id, row.player_name, row.player_kind,
                                 row.player_created_at)


async def touch_session(conn: AsyncConnection, session_id: str, used_at: float) -> None:
    await conn.execute(update(sessions).where(sessions.c.id == session_id).values(
        used_at=used_at))


async def revoke_sessions(conn: AsyncConnection, player_id: str, revoked_at: float,
                          session_id: str | None = None, keep: str | None = None) -> int:
    """Revoke the player's live sessions: only ``session_id`` when given, never ``keep``."""
    stmt = update(sessions).where(sessions.c.player_id == player_id,
                                  sessions.c.revoked_at.is_(None))
    if session_id is not None:
        stmt = stmt.where(sessions.c.id == session_id)
    if keep is not None:
        stmt = stmt.where(sessions.c.id != keep)
    return int((await conn.execute(stmt.values(revoked_at=revoked_at))).rowcount)


async def set_password(conn: AsyncConnection, player_id: str, password_hash: str) -> None:
    await conn.execute(update(accounts).where(accounts.c.player_id == player_id)
                       .values(password_hash=password_hash))


# -- bot and admin tokens (server.bots.accounts, server.admin.tokens) ------------------------


async def insert_token(
    conn: AsyncConnection,
    token_id: str,
    player_id: str,
    name: str,
    scope: str,
    token_hash: str,
    created_at: float,
) -> None:
    await conn.execute(
        tokens.insert().values(
            id=token_id,
            player_id=player_id,
            name=name,
            scope=scope,
            token_hash=token_hash,
            created_at=created_at,
        )
    )


async def find_live_token(conn: AsyncConnection, token_hash: str) -> dict[str, Any] | None:
    """The unrevoked token with this hash, as a dict of its columns, or None."""
    stmt = select(tokens).where(tokens.c.token_hash == token_hash, tokens.c.revoked_at.is_(None))
    row = (await conn.execute(stmt)).first()
    return None if row is None else dict(row._mapping)


async def find_token(conn: AsyncConnection, token_hash: str) -> dict[str, Any] | None:
    """The token with this hash, revoked or not, as a dict of its columns, or None."""
    row = (await conn.execute(select(tokens).where(tokens.c.token_hash == token_hash))).first()
    return None if row is None else dict(row._mapping)


async def list_tokens(conn: AsyncConnection, scope: str | None = None) -> list[dict[str, Any]]:
    stmt = select(tokens).order_by(tokens.c.created_at)
    if scope is not None:
        stmt = stmt.where(tokens.c.scope == scope)
    return [dict(row._mapping) for row in await conn.execute(stmt)]


async def touch_token(conn: AsyncConnection, token_id: str, used_at: float) -> None:
    await conn.execute(update(tokens).where(tokens.c.id == token_id).values(last_used_at=used_at))


async def revoke_token(conn: AsyncConnection, token_id: str, revoked_at: float) -> bool:
    result = await conn.execute(
        update(tokens)
        .where(tokens.c.id == token_id, tokens.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return bool(result.rowcount)
