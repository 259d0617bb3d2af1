"""Players' Glicko-2 ratings and their history: a finished game rated once, under its
players' row locks, and the reads of a player's ratings, history and the leaderboards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import games, players, rating_history, ratings, upsert_sync
from server.storage.store import (
    PlayerKind,
    PlayerRecord,
    RateGame,
    RatingChangeRecord,
    RatingRecord,
    new_rating,
    rating_after,
)


def _rating_record(row: Row[Any]) -> RatingRecord:
    return RatingRecord(row.player_id, row.game, row.rating, row.rd, row.volatility, row.games,
                        row.updated_at)


def _rating_change(row: Row[Any]) -> RatingChangeRecord:
    return RatingChangeRecord(**{name: getattr(row, name)
                                 for name in RatingChangeRecord.__dataclass_fields__})


def rate_game(conn: Connection, game_id: str, player_ids: Sequence[str],
              rate: RateGame) -> list[RatingChangeRecord]:
    """``Store.rate_game`` inside the caller's transaction, on a sync connection (the
    store's batched writes run it). The players' rating rows are locked first, in id order
    (so two transactions never wait on each other crosswise), and only then is the history
    looked at: a second rating of the same game waits for the first and finds its rows."""
    found = conn.execute(select(games.c.game).where(games.c.id == game_id)).first()
    if found is None:
        return []
    game = str(found.game)
    ids = sorted(set(player_ids))
    kinds: dict[str, PlayerKind] = {
        row.id: row.kind for row in conn.execute(
            select(players.c.id, players.c.kind).where(players.c.id.in_(ids)))}
    ids = [pid for pid in ids if pid in kinds]
    current: dict[str, RatingRecord] = {}
    if ids:
        stmt = select(ratings).where(ratings.c.game == game, ratings.c.player_id.in_(ids))
        if conn.dialect.name == "postgresql":
            # A missing row cannot be locked: make it first (a no-op when it is there).
            insert = postgresql.insert(ratings).on_conflict_do_nothing()
            conn.execute(insert, [_rating_values(new_rating(pid, game), 0.0) for pid in ids])
            stmt = stmt.order_by(ratings.c.player_id).with_for_update()
        current = {row.player_id: _rating_record(row) for row in conn.execute(stmt)}
    done = conn.execute(select(rating_history).where(rating_history.c.game_id == game_id))
    stored = [_rating_change(row) for row in done]
    if stored:
        return stored
    changes = list(rate({pid: (kinds[pid], current.get(pid) or new_rating(pid, game))
                         for pid in ids}))
    for change in changes:
        upsert_sync(conn, ratings, _rating_values(rating_after(change)),
                     ["player_id", "game"])
    if changes:
        conn.execute(rating_history.insert(), [vars(change) for change in changes])
    return changes


def _rating_values(record: RatingRecord, updated_at: float | None = None) -> dict[str, Any]:
    return {"player_id": record.player_id, "game": record.game, "rating": record.rating,
            "rd": record.rd, "volatility": record.volatility, "games": record.games,
            "updated_at": record.updated_at if updated_at is None else updated_at}


async def list_ratings(conn: AsyncConnection, player_id: str) -> list[RatingRecord]:
    return await conn.run_sync(read_ratings, player_id)


def read_ratings(conn: Connection, player_id: str) -> list[RatingRecord]:
    """``list_ratings`` on a sync connection (the store's reader thread)."""
    stmt = select(ratings).where(ratings.c.player_id == player_id, ratings.c.games > 0)
    return [_rating_record(row) for row in conn.execute(stmt.order_by(ratings.c.game))]


async def list_rating_history(conn: AsyncConnection, player_id: str, game: str | None,
                              limit: int) -> list[RatingChangeRecord]:
    stmt = select(rating_history).where(rating_history.c.player_id == player_id)
    if game is not None:
        stmt = stmt.where(rating_history.c.game == game)
    stmt = stmt.order_by(rating_history.c.created_at.desc(),
                         rating_history.c.game_id.desc()).limit(limit)
    return [_rating_change(row) for row in await conn.execute(stmt)][::-1]


async def list_leaders(conn: AsyncConnection, game: str, limit: int,
                       max_rd: float | None) -> list[tuple[PlayerRecord, RatingRecord]]:
    stmt = (
        select(ratings, players.c.name, players.c.kind, players.c.created_at)
        .join(players, players.c.id == ratings.c.player_id)
        .where(ratings.c.game == game, ratings.c.games > 0)
        .order_by(ratings.c.rating.desc(), ratings.c.games.desc(), players.c.name,
                  players.c.id)
        .limit(limit)
    )
    if max_rd is not None:
        stmt = stmt.where(ratings.c.rd <= max_rd)
    return [(PlayerRecord(row.player_id, row.name, row.kind, row.created_at),
             _rating_record(row)) for row in await conn.execute(stmt)]
