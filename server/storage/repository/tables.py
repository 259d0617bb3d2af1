"""The tables as the repository's statements name them, and the upsert every area shares.

The schema is ``server.storage.models``'s; each area's module builds its statements on these
handles, so a table is looked up once, and so is the ``INSERT ... ON CONFLICT`` that
PostgreSQL and SQLite spell alike (built once per shape of values).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.models import (
    Account,
    CachedPosition,
    CalibrationResult,
    CalibrationRun,
    ChatLine,
    ChatSilence,
    ChatSourceSilence,
    Game,
    GameReview,
    Level,
    LevelAudit,
    LevelsVersion,
    Move,
    Player,
    PlayerRating,
    RatingChange,
    Session,
    SpentGuestToken,
    Token,
    Tournament,
    TournamentEntrant,
    TournamentPairing,
    TournamentSchedule,
)

players: Table = Player.__table__  # type: ignore[assignment]
games: Table = Game.__table__  # type: ignore[assignment]
moves: Table = Move.__table__  # type: ignore[assignment]
levels: Table = Level.__table__  # type: ignore[assignment]
tokens: Table = Token.__table__  # type: ignore[assignment]
cache: Table = CachedPosition.__table__  # type: ignore[assignment]
level_audit: Table = LevelAudit.__table__  # type: ignore[assignment]
levels_version: Table = LevelsVersion.__table__  # type: ignore[assignment]
calibration_runs: Table = CalibrationRun.__table__  # type: ignore[assignment]
calibration_results: Table = CalibrationResult.__table__  # type: ignore[assignment]
reviews: Table = GameReview.__table__  # type: ignore[assignment]
accounts: Table = Account.__table__  # type: ignore[assignment]
sessions: Table = Session.__table__  # type: ignore[assignment]
ratings: Table = PlayerRating.__table__  # type: ignore[assignment]
rating_history: Table = RatingChange.__table__  # type: ignore[assignment]
tournaments: Table = Tournament.__table__  # type: ignore[assignment]
tournament_entrants: Table = TournamentEntrant.__table__  # type: ignore[assignment]
tournament_pairings: Table = TournamentPairing.__table__  # type: ignore[assignment]
tournament_schedules: Table = TournamentSchedule.__table__  # type: ignore[assignment]
chat_lines: Table = ChatLine.__table__  # type: ignore[assignment]
chat_silences: Table = ChatSilence.__table__  # type: ignore[assignment]
chat_source_silences: Table = ChatSourceSilence.__table__  # type: ignore[assignment]
spent_guest_tokens: Table = SpentGuestToken.__table__  # type: ignore[assignment]


def dialect_insert(conn: AsyncConnection, table: Table) -> Any:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


async def upsert(
    conn: AsyncConnection, table: Table, values: dict[str, Any], keys: Sequence[str]
) -> None:
    stmt = _upsert_statement(conn.dialect.name, table, tuple(values), tuple(keys))
    await conn.execute(stmt, values)


def upsert_sync(
    conn: Connection, table: Table, values: dict[str, Any], keys: Sequence[str]
) -> None:
    stmt = _upsert_statement(conn.dialect.name, table, tuple(values), tuple(keys))
    conn.execute(stmt, values)


@functools.cache
def _upsert_statement(dialect: str, table: Table, columns: tuple[str, ...],
                      keys: tuple[str, ...]) -> Any:
    """Built once per shape, values bound at execution: building ``excluded`` and the
    statement cost more than running it (a tenth of the server's time in a load run)."""
    stmt = (postgresql if dialect == "postgresql" else sqlite).insert(table)
    changed = {k: stmt.excluded[k] for k in columns if k not in keys}
    return stmt.on_conflict_do_update(index_elements=list(keys), set_=changed)
