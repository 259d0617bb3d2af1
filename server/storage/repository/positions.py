"""The durable tier of the position cache (``server.storage.cache``): search results under
canonical keys, where a stored result gives way only to a better one, and the proven
positions the idle workers extend."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ai.cached import PROVEN_DEPTH
from server.storage.repository.tables import cache, dialect_insert

EXACT_BOUND = 3  # ``bound`` of a score exact at its depth (ai.tt.EXACT)
LOWER_BOUND, UPPER_BOUND = 1, 2  # ``bound`` of a lower and an upper bound (ai.tt)


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
    stmt = dialect_insert(conn, cache).values(list(rows))
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
