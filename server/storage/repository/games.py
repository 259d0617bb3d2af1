"""The games' and moves' rows, and the reviews kept with them: what a room writes as it
plays and what a restart or a takeover reads back, under the epochs that fence a former
owner's writes out (``hold_epoch``; moves by the ``moves_fence`` trigger)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, and_, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import games, moves, reviews, upsert_sync
from server.storage.store import Fenced, GameRecord, MoveRecord, ReviewRecord

UNFINISHED = ("waiting", "active")


# -- games and moves -------------------------------------------------------------------------


def _game_values(game: GameRecord) -> dict[str, Any]:
    return {
        "id": game.id,
        "game": game.game,
        "player0_id": game.players[0],
        "player1_id": game.players[1],
        "ai_level": game.ai_level,
        "ai_seat": game.ai_seat,
        "other_ai_level": game.other_ai_level,
        "status": game.status,
        "start_position": game.start_position,
        "created_at": game.created_at,
        "result": game.result,
        "reason": game.reason,
        "finished_at": game.finished_at,
        "time_control": game.time_control,
        "clock_initial_ms": game.clock_initial_ms,
        "clock_increment_ms": game.clock_increment_ms,
        "berserk": sum(1 << seat for seat in set(game.berserk)),
        "evaluation": game.evaluation,
        "rated": game.rated,
        # Only a cluster node's write names an epoch; a 0 must never lower the fence.
        **({"epoch": game.epoch} if game.epoch else {}),
    }


def _game_record(row: Row[Any]) -> GameRecord:
    return GameRecord(
        id=row.id,
        game=row.game,
        players=(row.player0_id, row.player1_id),
        ai_level=row.ai_level,
        ai_seat=row.ai_seat,
        status=row.status,
        start_position=row.start_position,
        created_at=row.created_at,
        result=row.result,
        reason=row.reason,
        finished_at=row.finished_at,
        epoch=row.epoch,
        time_control=row.time_control,
        clock_initial_ms=row.clock_initial_ms,
        clock_increment_ms=row.clock_increment_ms,
        other_ai_level=row.other_ai_level,
        berserk=tuple(seat for seat in (0, 1) if row.berserk >> seat & 1),
        evaluation=bool(row.evaluation),
        rated=bool(row.rated),
    )


def _move_record(row: Row[Any]) -> MoveRecord:
    return MoveRecord(
        game_id=row.game_id,
        ply=row.ply,
        move=row.move,
        seat=row.seat,
        seconds=row.seconds,
        created_at=row.created_at,
        ai_depth=row.ai_depth,
        ai_score=row.ai_score,
        ai_nodes=row.ai_nodes,
        epoch=row.epoch,
        clock0_ms=row.clock0_ms,
        clock1_ms=row.clock1_ms,
    )


def write_game(conn: Connection, game: GameRecord) -> None:
    """Insert or update a game's row, on a sync connection (see ``write_player``);
    ``Fenced`` if it carries an epoch older than the stored game's."""
    hold_epoch(conn, game.id, game.epoch)
    upsert_sync(conn, games, _game_values(game), ["id"])


def hold_epoch(conn: Connection, game_id: str, epoch: int, newer: bool = False) -> None:
    """Raise the game's epoch to ``epoch`` (nothing for 0, or for a game not stored yet), or
    raise ``Fenced`` if it holds a newer one (``newer``, a takeover's fence: one as new too,
    since two owners under one epoch could both write). The game's row is read ``FOR UPDATE`` (on
    PostgreSQL), so it stays locked until the transaction ends: a takeover's fence and a
    former owner's write are ordered, the write either committed before the fence (the new
    owner reads it) or refused. (Moves are checked by the ``moves_fence`` trigger.)"""
    if not epoch:
        return
    held = conn.execute(select(games.c.epoch).where(games.c.id == game_id)
                        .with_for_update()).scalar()
    if held is None:
        return
    if held > epoch or (newer and held == epoch):
        raise Fenced(f"game {game_id} is held at epoch {held}, not {epoch}")
    if held < epoch:
        conn.execute(update(games).where(games.c.id == game_id).values(epoch=epoch))


def write_moves(conn: Connection, batch: Sequence[MoveRecord]) -> None:
    """Several moves in one INSERT, on a sync connection (see ``write_player``); fails as a
    whole if any ply is already taken (the (game_id, ply) primary key), or if a move's epoch
    is older than its game's (the ``moves_fence`` trigger of migration 0005, which
    ``SqlStore`` reports as ``Fenced``).

    On SQLite one statement with a row of values per move, not one INSERT run per move
    (``executemany``): the driver lets go of the GIL around each run of a statement, and the
    store's writer thread, sharing the GIL with a busy event loop, waits up to the switch
    interval (5 ms) to take it back each time. Measured apart against a fully busy thread,
    a commit of ten moves took 58 ms at the median, one statement 12 ms. The statement's
    text is made once per number of rows, as SQLAlchemy's multi-row ``values()`` compiled
    anew per batch (a commit's CPU tripled in ``bench.load``)."""
    if conn.dialect.name != "sqlite":
        # Parameters apart from the statement: one cached compiled INSERT for every move.
        conn.execute(_INSERT_MOVE, [_move_row(move) for move in batch])
        return
    conn.exec_driver_sql(_sqlite_insert_moves(len(batch)),
                         tuple([getattr(move, name) for move in batch for name in _MOVE_FIELDS]))


_MOVE_FIELDS = tuple(field.name for field in dataclasses.fields(MoveRecord))


@functools.cache
def _sqlite_insert_moves(rows: int) -> str:
    """The INSERT of ``rows`` moves in SQLite's own parameter style (a batch holds at most
    ``SqlStore``'s 256 writes: 256 × 12 parameters, well under SQLite's 32,766)."""
    row = "(" + ", ".join("?" * len(_MOVE_FIELDS)) + ")"
    return (f"INSERT INTO moves ({', '.join(_MOVE_FIELDS)}) VALUES "
            + ", ".join([row] * rows))


def delete_moves_from(conn: Connection, game_id: str, ply: int) -> None:
    """Delete the game's moves from ``ply`` on (a take-back), on a sync connection."""
    conn.execute(delete(moves).where(moves.c.game_id == game_id, moves.c.ply >= ply))


_INSERT_MOVE = moves.insert()


def _move_row(move: MoveRecord) -> dict[str, Any]:
    # A shallow copy of the fields: ``dataclasses.asdict`` deep-copies recursively and cost
    # 5% of the server's time in a load run, for a record of plain values.
    return dict(vars(move))


async def has_move(conn: AsyncConnection, game_id: str, ply: int) -> bool:
    stmt = select(moves.c.ply).where(moves.c.game_id == game_id, moves.c.ply == ply)
    return (await conn.execute(stmt)).first() is not None


async def count_moves(conn: AsyncConnection, game_ids: Sequence[str]) -> dict[str, int]:
    """Moves stored for each game (every id present, 0 when it has none)."""
    counts = {game_id: 0 for game_id in game_ids}
    if game_ids:
        stmt = (
            select(moves.c.game_id, func.count())
            .where(moves.c.game_id.in_(list(game_ids)))
            .group_by(moves.c.game_id)
        )
        counts.update({game_id: n for game_id, n in (await conn.execute(stmt)).all()})
    return counts


async def find_game(conn: AsyncConnection, game_id: str) -> GameRecord | None:
    row = (await conn.execute(select(games).where(games.c.id == game_id))).first()
    return None if row is None else _game_record(row)


async def find_games(conn: AsyncConnection, game_ids: Sequence[str]) -> list[GameRecord]:
    """The stored games of ``game_ids`` (those that exist), in no particular order."""
    if not game_ids:
        return []
    rows = await conn.execute(select(games).where(games.c.id.in_(list(game_ids))))
    return [_game_record(row) for row in rows]


async def list_moves(conn: AsyncConnection, game_ids: Sequence[str]) -> dict[str, list[MoveRecord]]:
    """Moves of each game in ply order (every id present, possibly with no moves)."""
    return await conn.run_sync(read_moves, game_ids)


def read_moves(conn: Connection, game_ids: Sequence[str]) -> dict[str, list[MoveRecord]]:
    """``list_moves`` on a sync connection."""
    found: dict[str, list[MoveRecord]] = {game_id: [] for game_id in game_ids}
    if not game_ids:
        return found
    stmt = (
        select(moves)
        .where(moves.c.game_id.in_(list(game_ids)))
        .order_by(moves.c.game_id, moves.c.ply)
    )
    for row in conn.execute(stmt):
        found[row.game_id].append(_move_record(row))
    return found


async def list_unfinished_games(conn: AsyncConnection) -> list[GameRecord]:
    stmt = select(games).where(games.c.status.in_(UNFINISHED)).order_by(games.c.created_at)
    return [_game_record(row) for row in await conn.execute(stmt)]


async def list_recent_games(conn: AsyncConnection, game: str, limit: int) -> list[GameRecord]:
    """The newest ``limit`` games of ``game``, newest first."""
    stmt = (
        select(games)
        .where(games.c.game == game)
        .order_by(games.c.created_at.desc(), games.c.id.desc())
        .limit(limit)
    )
    return [_game_record(row) for row in await conn.execute(stmt)]


def read_games_ended_after(conn: Connection, game: str, after: tuple[float, str] | None,
                           limit: int) -> list[tuple[GameRecord, list[MoveRecord]]]:
    """Up to ``limit`` games of ``game`` that ended after ``after`` ((finished_at, id); None:
    from the first), in the order they ended, with their moves in ply order."""
    stmt = select(games).where(games.c.game == game, games.c.finished_at.is_not(None))
    if after is not None:
        at, game_id = after
        stmt = stmt.where(or_(games.c.finished_at > at,
                              and_(games.c.finished_at == at, games.c.id > game_id)))
    stmt = stmt.order_by(games.c.finished_at, games.c.id).limit(limit)
    found = [_game_record(row) for row in conn.execute(stmt)]
    by_game = read_moves(conn, [g.id for g in found])
    return [(g, by_game[g.id]) for g in found]


def read_ended_mark(conn: Connection, game: str, newest: int) -> tuple[float, str] | None:
    """(finished_at, id) of the game of ``game`` that ended just before the ``newest`` last
    to end, so that ``read_games_ended_after`` from it reads those; None if no more than
    ``newest`` have ended."""
    stmt = (select(games.c.finished_at, games.c.id)
            .where(games.c.game == game, games.c.finished_at.is_not(None))
            .order_by(games.c.finished_at.desc(), games.c.id.desc())
            .offset(newest).limit(1))
    row = conn.execute(stmt).first()
    return None if row is None else (row.finished_at, row.id)


async def list_games_of_player(
    conn: AsyncConnection, player_id: str, limit: int
) -> list[GameRecord]:
    stmt = (
        select(games)
        .where(or_(games.c.player0_id == player_id, games.c.player1_id == player_id))
        .order_by(games.c.created_at.desc(), games.c.id.desc())
        .limit(limit)
    )
    return [_game_record(row) for row in await conn.execute(stmt)]


async def list_finished_ai_games(conn: AsyncConnection, player_id: str) -> list[GameRecord]:
    """The player's finished games against the AI (the rows ``score_levels`` tallies)."""
    stmt = select(games).where(
        or_(games.c.player0_id == player_id, games.c.player1_id == player_id),
        games.c.status == "finished", games.c.ai_level.is_not(None))
    return [_game_record(row) for row in await conn.execute(stmt)]


# -- game reviews ----------------------------------------------------------------------------


def insert_review_if_absent(conn: Connection, review: ReviewRecord) -> None:
    """Insert the game's review unless it has one (``ON CONFLICT DO NOTHING``): two nodes
    storing the same review store it once."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(reviews).values(
        game_id=review.game_id, review=review.review, created_at=review.created_at
    ).on_conflict_do_nothing(index_elements=["game_id"])
    conn.execute(stmt)


async def find_review(conn: AsyncConnection, game_id: str) -> ReviewRecord | None:
    row = (await conn.execute(select(reviews).where(reviews.c.game_id == game_id))).first()
    if row is None:
        return None
    return ReviewRecord(row.game_id, row.review, row.created_at)
