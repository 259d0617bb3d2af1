"""The AI's difficulty levels as admins edit them: each game's stored ladder, the audit of
every edit and the version counter servers watch (``server.storage.levels``). An edit is
checked and serialised here, inside the caller's transaction."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from ai.levels import BadLevel
from ai.levels import Level as AiLevel
from server.storage.repository.tables import level_audit, levels, levels_version, upsert

log = logging.getLogger(__name__)


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
    await upsert(conn, levels, values, ["game", "name"])


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
    return await conn.run_sync(levels_version_now)


def levels_version_now(conn: Connection) -> int:
    """``read_levels_version`` on a sync connection (a SQLite file's reader thread: the
    level book checks it before every AI move)."""
    stmt = select(levels_version.c.version).where(levels_version.c.id == 1)
    return int(conn.execute(stmt).scalar() or 0)


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
