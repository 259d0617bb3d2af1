"""Every SQL statement the program runs, as functions named for what they do.

Each takes an open ``AsyncConnection``; the caller owns the transaction. Upserts use the
dialect's ``INSERT ... ON CONFLICT`` (PostgreSQL and SQLite spell it the same way).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Row, Table, delete, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from ai.cached import PROVEN_DEPTH
from ai.levels import BadLevel
from ai.levels import Level as AiLevel
from server.storage.models import (
    Account,
    CachedPosition,
    CalibrationResult,
    CalibrationRun,
    ChatLine,
    ChatSilence,
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
    Token,
    Tournament,
    TournamentEntrant,
    TournamentPairing,
    TournamentSchedule,
)
from server.storage.store import (
    AccountRecord,
    ChatChannel,
    ChatLineRecord,
    EntrantRecord,
    Fenced,
    GameRecord,
    MoveRecord,
    PairingRecord,
    PlayerKind,
    PlayerRecord,
    RateGame,
    RatingChangeRecord,
    RatingRecord,
    ReviewRecord,
    ScheduleRecord,
    SessionRecord,
    TournamentRecord,
    name_key,
    new_rating,
    rating_after,
)

log = logging.getLogger(__name__)

UNFINISHED = ("waiting", "active")

players: Table = Player.__table__  # type: ignore[assignment]
games: Table = Game.__table__  # type: ignore[assignment]
moves: Table = Move.__table__  # type: ignore[assignment]
levels: Table = Level.__table__  # type: ignore[assignment]
tokens: Table = Token.__table__  # type: ignore[assignment]
cache: Table = CachedPosition.__table__  # type: ignore[assignment]
EXACT_BOUND = 3  # ``bound`` of a score exact at its depth (ai.tt.EXACT)
LOWER_BOUND, UPPER_BOUND = 1, 2  # ``bound`` of a lower and an upper bound (ai.tt)
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


def _insert(conn: AsyncConnection, table: Table) -> Any:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


async def _upsert(
    conn: AsyncConnection, table: Table, values: dict[str, Any], keys: Sequence[str]
) -> None:
    stmt = _upsert_statement(conn.dialect.name, table, tuple(values), tuple(keys))
    await conn.execute(stmt, values)


def _upsert_sync(
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


# -- players ---------------------------------------------------------------------------------


async def save_player(conn: AsyncConnection, player: PlayerRecord) -> None:
    await conn.run_sync(write_player, player)


def write_player(conn: Connection, player: PlayerRecord) -> None:
    """``save_player`` on a sync connection: the store's batched writes run these in one
    transaction (``sql_store``), on SQLite in a writer thread of its own."""
    values = {"id": player.id, "name": player.name, "kind": player.kind}
    _upsert_sync(conn, players, {**values, "created_at": player.created_at}, ["id"])


async def find_player(conn: AsyncConnection, player_id: str) -> PlayerRecord | None:
    row = (await conn.execute(select(players).where(players.c.id == player_id))).first()
    if row is None:
        return None
    return PlayerRecord(id=row.id, name=row.name, kind=row.kind, created_at=row.created_at)


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
    _upsert_sync(conn, games, _game_values(game), ["id"])


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
    ``SqlStore`` reports as ``Fenced``)."""
    # Parameters apart from the statement: one cached compiled INSERT for every move.
    conn.execute(_INSERT_MOVE, [_move_row(move) for move in batch])


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
    found: dict[str, list[MoveRecord]] = {game_id: [] for game_id in game_ids}
    if not game_ids:
        return found
    stmt = (
        select(moves)
        .where(moves.c.game_id.in_(list(game_ids)))
        .order_by(moves.c.game_id, moves.c.ply)
    )
    for row in await conn.execute(stmt):
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


# -- difficulty levels (edited by admins) ----------------------------------------------------


async def save_level(
    conn: AsyncConnection,
    game: str,
    name: str,
    position: int,
    settings: dict[str, Any],
    updated_at: float,
) -> None:
    values = {
        "game": game,
        "name": name,
        "position": position,
        "settings": settings,
        "updated_at": updated_at,
    }
    await _upsert(conn, levels, values, ["game", "name"])


async def list_levels(conn: AsyncConnection, game: str) -> list[dict[str, Any]]:
    """The game's levels, weakest first: dicts with name, position, settings, updated_at."""
    stmt = select(levels).where(levels.c.game == game).order_by(levels.c.position)
    return [
        {
            "name": row.name,
            "position": row.position,
            "settings": row.settings,
            "updated_at": row.updated_at,
        }
        for row in await conn.execute(stmt)
    ]


async def delete_level(conn: AsyncConnection, game: str, name: str) -> bool:
    result = await conn.execute(delete(levels).where(levels.c.game == game, levels.c.name == name))
    return bool(result.rowcount)


class UnknownLevel(LookupError):
    """The game has no level of that name."""


class InvalidLevel(ValueError):
    """A level edit that would make an impossible level; ``problems`` maps each offending
    field to every reason (``ai.levels.BadLevel``'s, and the repository's own two: the name
    stays, and no two levels share an order)."""

    def __init__(self, game: str, name: str, problems: dict[str, list[str]]) -> None:
        self.problems = problems
        self.reasons = "; ".join(dict.fromkeys(s for why in problems.values() for s in why))
        """Every sentence once, in field order."""
        super().__init__(f"{game} level {name!r}: {self.reasons}")


def level_from_row(game: str, row: dict[str, Any]) -> AiLevel:
    """The ``ai.levels.Level`` a ``list_levels`` row describes."""
    return AiLevel.from_dict({"name": row["name"], "order": row["position"], **row["settings"]})


def _settings_of(level: AiLevel) -> dict[str, Any]:
    data = level.to_dict()
    del data["name"], data["order"]
    return data


async def seed_missing_levels(conn: AsyncConnection, defaults: Mapping[str, Sequence[AiLevel]],
                              now: float) -> list[str]:
    """Store the default levels of every game in ``defaults`` that has no level stored (a
    game registered since the database was made), bumping the levels version if any was;
    returns those games. Games with levels are left as their admins made them."""
    stored = set((await conn.execute(select(levels.c.game).distinct())).scalars())
    seeded = [game for game in defaults if game not in stored and defaults[game]]
    for game in seeded:
        for level in defaults[game]:
            await save_level(conn, game, level.name, level.order, _settings_of(level), now)
    if seeded:
        await bump_levels_version(conn, now)
    return seeded


async def find_level(conn: AsyncConnection, game: str, name: str) -> AiLevel | None:
    stmt = select(levels).where(levels.c.game == game, levels.c.name == name)
    row = (await conn.execute(stmt)).first()
    return None if row is None else level_from_row(game, dict(row._mapping))


async def list_game_levels(conn: AsyncConnection, game: str) -> list[AiLevel]:
    """The game's levels as ``ai.levels.Level`` values, weakest first."""
    return [level_from_row(game, row) for row in await list_levels(conn, game)]


async def list_all_levels(conn: AsyncConnection) -> dict[str, tuple[AiLevel, ...]]:
    """Every game's levels, weakest first, keyed by game (the shape of ``DEFAULT_LEVELS``)."""
    stmt = select(levels).order_by(levels.c.game, levels.c.position, levels.c.name)
    found: dict[str, list[AiLevel]] = {}
    for row in await conn.execute(stmt):
        try:
            level = level_from_row(row.game, dict(row._mapping))
        except (TypeError, ValueError) as exc:  # written around validation: skip, don't crash
            log.warning("skipping unusable %s level %r: %s", row.game, row.name, exc)
            continue
        found.setdefault(row.game, []).append(level)
    return {game: tuple(ladder) for game, ladder in found.items()}


async def update_level(
    conn: AsyncConnection,
    game: str,
    name: str,
    changes: dict[str, Any],
    actor: str,
    now: float,
) -> tuple[AiLevel, AiLevel, int]:
    """Apply ``changes`` (field -> new value: any ``ai.levels.Level`` field but ``name``,
    which games refer to) to one level, audit it and bump the levels version, all in the
    caller's transaction; returns (before, after, new version).

    The merged level is checked by ``ai.levels.Level``'s schema alone. Raises
    ``UnknownLevel`` or ``InvalidLevel`` (every problem, by field); the caller must then
    roll its transaction back (``engine.begin()`` does), undoing the version bump.

    Edits are serialised by bumping the version first: that write takes PostgreSQL's row lock
    and SQLite's write lock before the level is read, so two admins' edits apply one after
    the other and neither is lost (SQLite's driver would otherwise read outside any
    transaction).
    """
    if "name" in changes:
        raise InvalidLevel(game, name, {"name": [
            "name cannot be changed (games refer to a level by its name)"]})
    version = await bump_levels_version(conn, now)
    stmt = select(levels).where(levels.c.game == game, levels.c.name == name)
    row = (await conn.execute(stmt)).first()
    if row is None:
        raise UnknownLevel(f"{game} has no level {name!r}")
    before = level_from_row(game, dict(row._mapping))
    merged = {**before.to_dict(), **changes}
    try:
        after = AiLevel.from_dict(merged)
    except BadLevel as exc:
        raise InvalidLevel(game, name, exc.problems) from None
    if after.order != before.order:
        taken = select(levels.c.name).where(
            levels.c.game == game, levels.c.position == after.order, levels.c.name != name
        )
        other = (await conn.execute(taken)).scalar()
        if other is not None:
            taken_by = f"order {after.order} is taken by {other!r}"
            raise InvalidLevel(game, name, {"order": [taken_by]})
    await conn.execute(
        update(levels)
        .where(levels.c.game == game, levels.c.name == name)
        .values(position=after.order, settings=_settings_of(after), updated_at=now)
    )
    await insert_level_audit(
        conn, game, name, actor, "update", before.to_dict(), after.to_dict(), now
    )
    return before, after, version


async def insert_level_audit(
    conn: AsyncConnection,
    game: str,
    level: str,
    actor: str,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    now: float,
) -> None:
    await conn.execute(
        level_audit.insert().values(
            game=game, level=level, actor=actor, action=action, before=before, after=after,
            created_at=now,
        )
    )  # fmt: skip


async def list_level_audit(
    conn: AsyncConnection, game: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Audit entries, newest first: dicts with id, game, level, actor, action, before, after,
    created_at (``before``/``after`` as ``Level.to_dict``)."""
    stmt = select(level_audit).order_by(level_audit.c.id.desc()).limit(limit)
    if game is not None:
        stmt = stmt.where(level_audit.c.game == game)
    return [dict(row._mapping) for row in await conn.execute(stmt)]


async def read_levels_version(conn: AsyncConnection) -> int:
    """The levels' version counter (0 if the row is missing)."""
    stmt = select(levels_version.c.version).where(levels_version.c.id == 1)
    return int((await conn.execute(stmt)).scalar() or 0)


async def bump_levels_version(conn: AsyncConnection, now: float) -> int:
    """Add one to the version counter (creating it if missing) and return the new value."""
    stmt = (
        update(levels_version)
        .where(levels_version.c.id == 1)
        .values(version=levels_version.c.version + 1, updated_at=now)
        .returning(levels_version.c.version)
    )
    version = (await conn.execute(stmt)).scalar()
    if version is None:
        await conn.execute(levels_version.insert().values(id=1, version=1, updated_at=now))
        return 1
    return int(version)


# -- calibration runs ------------------------------------------------------------------------


async def insert_calibration_run(
    conn: AsyncConnection,
    run_id: str,
    game: str,
    actor: str,
    games_per_pair: int,
    seed: int,
    pair_mode: str,
    level_dicts: Sequence[dict[str, Any]],
    now: float,
) -> None:
    """Record a run that has started (status ``running``); ``finish_calibration_run`` ends it."""
    await conn.execute(
        calibration_runs.insert().values(
            id=run_id, game=game, status="running", actor=actor,
            games_per_pair=games_per_pair, seed=seed, pair_mode=pair_mode,
            levels=list(level_dicts), ratings=None, seconds=None, created_at=now,
            finished_at=None,
        )
    )  # fmt: skip


async def finish_calibration_run(
    conn: AsyncConnection,
    run_id: str,
    status: str,
    pairs: Sequence[dict[str, Any]],
    ratings: Sequence[dict[str, Any]] | None,
    seconds: float,
    now: float,
) -> None:
    """Store a run's end: ``finished`` with its pair results (dicts with a, b, wins, draws,
    losses) and ratings, or ``failed`` with whatever it had."""
    await conn.execute(
        update(calibration_runs)
        .where(calibration_runs.c.id == run_id)
        .values(
            status=status,
            ratings=None if ratings is None else list(ratings),
            seconds=seconds,
            finished_at=now,
        )
    )
    if pairs:
        await conn.execute(
            calibration_results.insert(),
            [
                {
                    "run_id": run_id,
                    "level_a": p["a"],
                    "level_b": p["b"],
                    "wins": p["wins"],
                    "draws": p["draws"],
                    "losses": p["losses"],
                }
                for p in pairs
            ],
        )


async def list_calibration_runs(
    conn: AsyncConnection, game: str | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Runs, newest first, each a dict of its columns plus ``pairs`` (a, b, wins, draws,
    losses, weaker level first, in ladder order)."""
    stmt = select(calibration_runs).order_by(calibration_runs.c.created_at.desc()).limit(limit)
    if game is not None:
        stmt = stmt.where(calibration_runs.c.game == game)
    runs = [dict(row._mapping) for row in await conn.execute(stmt)]
    if not runs:
        return runs
    by_run: dict[str, list[dict[str, Any]]] = {run["id"]: [] for run in runs}
    found = select(calibration_results).where(calibration_results.c.run_id.in_(list(by_run)))
    for row in await conn.execute(found):
        by_run[row.run_id].append(
            {"a": row.level_a, "b": row.level_b, "wins": row.wins, "draws": row.draws,
             "losses": row.losses}
        )  # fmt: skip
    for run in runs:
        ladder = {level["name"]: level["order"] for level in run["levels"]}
        run["pairs"] = sorted(
            by_run[run["id"]], key=lambda p: (ladder.get(p["a"], 0), ladder.get(p["b"], 0))
        )
    return runs


# -- bot and admin tokens (only hashes are stored) -------------------------------------------


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


# -- chat ------------------------------------------------------------------------------------


def insert_chat_line(conn: Connection, line: ChatLineRecord, lobby_kept: int) -> int:
    """Insert a chat line; its id. A lobby line also deletes all but the newest
    ``lobby_kept`` lobby lines."""
    result = conn.execute(chat_lines.insert().values(
        game_id=line.game_id, channel=line.channel, player_id=line.player_id,
        name=line.name, text=line.text, created_at=line.created_at))
    key = result.inserted_primary_key
    assert key is not None, "an INSERT has its primary key"
    line_id = int(key[0])
    if line.game_id is None:
        oldest_kept = (select(chat_lines.c.id).where(chat_lines.c.game_id.is_(None))
                       .order_by(chat_lines.c.id.desc()).offset(max(0, lobby_kept - 1))
                       .limit(1).scalar_subquery())
        conn.execute(delete(chat_lines).where(chat_lines.c.game_id.is_(None),
                                              chat_lines.c.id < oldest_kept))
    return line_id


def _chat_line(row: Row[Any]) -> ChatLineRecord:
    return ChatLineRecord(row.id, row.game_id, row.channel, row.player_id, row.name, row.text,
                          row.created_at)


async def find_chat_lines(conn: AsyncConnection, game_id: str | None,
                          channels: Sequence[ChatChannel], limit: int) -> list[ChatLineRecord]:
    """The newest ``limit`` lines not deleted of a game's chat (None: the lobby's) in these
    channels, oldest first."""
    where = (chat_lines.c.game_id.is_(None) if game_id is None
             else chat_lines.c.game_id == game_id)
    rows = (await conn.execute(
        select(chat_lines).where(where, chat_lines.c.channel.in_(list(channels)),
                                 chat_lines.c.deleted_at.is_(None))
        .order_by(chat_lines.c.id.desc()).limit(limit))).all()
    return [_chat_line(row) for row in reversed(rows)]


def mark_chat_line_deleted(conn: Connection, line_id: int, now: float) -> ChatLineRecord | None:
    """Mark a line deleted; the line, or None if there is none not deleted already."""
    row = conn.execute(select(chat_lines).where(chat_lines.c.id == line_id,
                                                chat_lines.c.deleted_at.is_(None))).first()
    if row is None:
        return None
    conn.execute(update(chat_lines).where(chat_lines.c.id == line_id).values(deleted_at=now))
    return _chat_line(row)


def write_chat_silence(conn: Connection, player_id: str, until: float | None) -> None:
    """Silence the player until ``until``, or lift its silence (None)."""
    conn.execute(delete(chat_silences).where(chat_silences.c.player_id == player_id))
    if until is not None:
        conn.execute(chat_silences.insert().values(player_id=player_id, until=until))


async def find_chat_silence(conn: AsyncConnection, player_id: str) -> float | None:
    row = (await conn.execute(select(chat_silences.c.until)
                              .where(chat_silences.c.player_id == player_id))).first()
    return None if row is None else float(row.until)


# -- the durable position cache --------------------------------------------------------------


async def find_cached_positions(
    conn: AsyncConnection, game: str, keys: Iterable[str]
) -> dict[str, tuple[int, int, int, str | None, bool]]:
    """Canonical key -> (depth, score, bound, best_move, exact) for the keys that are stored."""
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return {}
    stmt = select(cache).where(cache.c.game == game, cache.c.key.in_(wanted))
    return {
        row.key: (row.depth, row.score, row.bound, row.best_move, bool(row.exact))
        for row in await conn.execute(stmt)
    }


async def proven_positions(conn: AsyncConnection, game: str) -> list[tuple[str, float]]:
    """(canonical key, last saved) of every position of ``game`` stored proven."""
    stmt = select(cache.c.key, cache.c.updated_at).where(cache.c.game == game,
                                                          cache.c.exact.is_(True))
    return [(row.key, float(row.updated_at)) for row in await conn.execute(stmt)]


async def proven_outcome_count(conn: AsyncConnection, game: str) -> int:
    """How many positions of ``game`` are stored with a proven outcome but no exact score:
    proven bounds (``ai.cached.CachedResult.proven_bound``), a weak solve's win or loss."""
    stmt = select(func.count()).select_from(cache).where(
        cache.c.game == game, cache.c.exact.is_(False), cache.c.depth == PROVEN_DEPTH,
        cache.c.bound.in_((LOWER_BOUND, UPPER_BOUND)))
    return int((await conn.execute(stmt)).scalar_one())


async def save_cached_positions(
    conn: AsyncConnection,
    rows: Sequence[dict[str, Any]],
) -> None:
    """Upsert many results in one statement, keeping the better of stored and new as
    ``cache.Entry.better_than`` says: proven beats unproven, then deeper wins; at equal depth
    an exact-at-depth score beats a bound, then a result with a best move beats one without,
    then the newer wins. (A proven bound is not ``exact`` and deeper than any search: it
    beats every depth-bounded result and no exact score.)"""
    if not rows:
        return
    stmt = _insert(conn, cache).values(list(rows))
    new, old = stmt.excluded, cache.c
    same_depth = (new.exact == old.exact) & (new.depth == old.depth)
    new_exact, old_exact = new.bound == EXACT_BOUND, old.bound == EXACT_BOUND
    keep_better = or_(
        new.exact & ~old.exact,
        (new.exact == old.exact) & (new.depth > old.depth),
        same_depth & new_exact & ~old_exact,
        same_depth & (new_exact == old_exact)
        & (new.best_move.is_not(None) | old.best_move.is_(None)),
    )
    await conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["game", "key"],
            set_={
                name: new[name]
                for name in ("depth", "score", "bound", "best_move", "exact", "updated_at")
            },
            where=keep_better,
        )
    )


# -- bot accounts (server.bots.accounts) ----------------------------------------------------------


async def find_token(conn: AsyncConnection, token_hash: str) -> dict[str, Any] | None:
    """The token with this hash, revoked or not, as a dict of its columns, or None."""
    row = (await conn.execute(select(tokens).where(tokens.c.token_hash == token_hash))).first()
    return None if row is None else dict(row._mapping)


# -- people's accounts and sessions (server.people.accounts) ---------------------------------------


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
    found = {name_key(name) for name in names}
    stmt = select(or_(
        exists().where(accounts.c.name_key.in_(found)),
        exists().where(func.lower(tokens.c.name).in_(found))))
    return bool((await conn.execute(stmt)).scalar_one())


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
    row = (await conn.execute(
        select(sessions).where(sessions.c.token_hash == token_hash))).first()
    if row is None:
        return None
    return SessionRecord(row.id, row.player_id, row.token_hash, row.created_at, row.revoked_at,
                         row.used_at)


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


# -- ratings ---------------------------------------------------------------------------------


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
        _upsert_sync(conn, ratings, _rating_values(rating_after(change)),
                     ["player_id", "game"])
    if changes:
        conn.execute(rating_history.insert(), [vars(change) for change in changes])
    return changes


def _rating_values(record: RatingRecord, updated_at: float | None = None) -> dict[str, Any]:
    return {"player_id": record.player_id, "game": record.game, "rating": record.rating,
            "rd": record.rd, "volatility": record.volatility, "games": record.games,
            "updated_at": record.updated_at if updated_at is None else updated_at}


async def list_ratings(conn: AsyncConnection, player_id: str) -> list[RatingRecord]:
    stmt = select(ratings).where(ratings.c.player_id == player_id, ratings.c.games > 0)
    return [_rating_record(row) for row in await conn.execute(stmt.order_by(ratings.c.game))]


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


async def list_finished_ai_games(conn: AsyncConnection, player_id: str) -> list[GameRecord]:
    """The player's finished games against the AI (the rows ``score_levels`` tallies)."""
    stmt = select(games).where(
        or_(games.c.player0_id == player_id, games.c.player1_id == player_id),
        games.c.status == "finished", games.c.ai_level.is_not(None))
    return [_game_record(row) for row in await conn.execute(stmt)]


async def find_calibrated_levels(conn: AsyncConnection,
                                 game: str) -> dict[str, tuple[float, float]]:
    stmt = (select(calibration_runs.c.ratings)
            .where(calibration_runs.c.game == game, calibration_runs.c.status == "finished",
                   calibration_runs.c.ratings.is_not(None))
            .order_by(calibration_runs.c.finished_at.desc()).limit(1))
    row = (await conn.execute(stmt)).first()
    measured: dict[str, tuple[float, float]] = {}
    for entry in (row.ratings if row is not None else None) or ():
        elo, error = entry.get("elo"), entry.get("error")
        if isinstance(elo, int | float) and math.isfinite(elo):
            measured[str(entry["level"])] = (
                float(elo), float(error) if isinstance(error, int | float)
                and math.isfinite(error) else 0.0)
    return measured


# -- tournaments -----------------------------------------------------------------------------


async def save_tournament(conn: AsyncConnection, tournament: TournamentRecord,
                          epoch: int = 0) -> None:
    """Insert or update a tournament; ``Fenced`` if ``epoch`` is older than the stored one
    (a new tournament is stored at ``epoch``)."""
    await hold_tournament_epoch(conn, tournament.id, epoch)
    await _upsert(conn, tournaments, dataclasses.asdict(tournament), ["id"])
    if epoch:
        await conn.execute(update(tournaments).where(tournaments.c.id == tournament.id,
                                                     tournaments.c.epoch < epoch)
                           .values(epoch=epoch))


async def hold_tournament_epoch(conn: AsyncConnection, tournament_id: str, epoch: int,
                                newer: bool = False) -> None:
    """``hold_epoch`` for a tournament: raise its epoch to ``epoch`` (nothing for 0 or for a
    tournament not stored yet), or ``Fenced`` if it holds a newer one (``newer``: a
    takeover's fence, one as new too). The row is read ``FOR UPDATE`` on PostgreSQL, so a
    takeover's fence and a former holder's write are ordered."""
    if not epoch:
        return
    held = (await conn.execute(select(tournaments.c.epoch)
                               .where(tournaments.c.id == tournament_id)
                               .with_for_update())).scalar()
    if held is None:
        return
    if held > epoch or (newer and held == epoch):
        raise Fenced(f"tournament {tournament_id} is held at epoch {held}, not {epoch}", held)
    if held < epoch:
        await conn.execute(update(tournaments).where(tournaments.c.id == tournament_id)
                           .values(epoch=epoch))


def _tournament(row: Row[Any]) -> TournamentRecord:
    # The fencing epoch is the store's own (``hold_tournament_epoch``), not the record's.
    return TournamentRecord(**{k: v for k, v in row._mapping.items() if k != "epoch"})


async def find_tournament(conn: AsyncConnection, tournament_id: str) -> TournamentRecord | None:
    row = (await conn.execute(select(tournaments).where(tournaments.c.id == tournament_id))
           ).first()
    return None if row is None else _tournament(row)


async def list_tournaments(conn: AsyncConnection, statuses: Sequence[str], limit: int
                           ) -> list[TournamentRecord]:
    stmt = (select(tournaments).where(tournaments.c.status.in_(list(statuses)))
            .order_by(tournaments.c.starts_at, tournaments.c.id).limit(limit))
    return [_tournament(row) for row in await conn.execute(stmt)]


async def save_entrant(conn: AsyncConnection, entrant: EntrantRecord) -> None:
    await _upsert(conn, tournament_entrants, dataclasses.asdict(entrant),
                  ["tournament_id", "player_id"])


async def list_entrants(conn: AsyncConnection, tournament_id: str) -> list[EntrantRecord]:
    stmt = (select(tournament_entrants)
            .where(tournament_entrants.c.tournament_id == tournament_id)
            .order_by(tournament_entrants.c.joined_at, tournament_entrants.c.player_id))
    return [EntrantRecord(**row._mapping) for row in await conn.execute(stmt)]


async def save_pairing(conn: AsyncConnection, pairing: PairingRecord) -> None:
    values = dataclasses.asdict(pairing)
    values["berserk"] = list(pairing.berserk)
    await _upsert(conn, tournament_pairings, values, ["tournament_id", "pairing_id"])


async def list_pairings(conn: AsyncConnection, tournament_id: str) -> list[PairingRecord]:
    stmt = (select(tournament_pairings)
            .where(tournament_pairings.c.tournament_id == tournament_id)
            .order_by(tournament_pairings.c.seq))
    return [PairingRecord(**{**row._mapping, "berserk": tuple(row.berserk)})
            for row in await conn.execute(stmt)]


async def save_schedule(conn: AsyncConnection, schedule: ScheduleRecord) -> None:
    await _upsert(conn, tournament_schedules, dataclasses.asdict(schedule), ["id"])


async def list_schedules(conn: AsyncConnection) -> list[ScheduleRecord]:
    stmt = select(tournament_schedules).order_by(tournament_schedules.c.created_at,
                                                 tournament_schedules.c.id)
    return [ScheduleRecord(**row._mapping) for row in await conn.execute(stmt)]


async def delete_schedule(conn: AsyncConnection, schedule_id: str) -> bool:
    gone = await conn.execute(delete(tournament_schedules)
                              .where(tournament_schedules.c.id == schedule_id))
    return bool(gone.rowcount)
