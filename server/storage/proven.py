"""How much the durable position cache holds proven: ``discus book proven``.

Every position a review, an analysis or a move proved is a row of ``position_cache`` with
``exact`` set. The report counts them by stones on the board (a canonical key is the two
sides' bitboards, so its bit count is the stones), and how many were last saved within the
last day and week: how the proven set grows.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from server.storage import repository as repo
from server.storage.sql_store import SqlStore

DAY = 86_400.0


@dataclass(frozen=True)
class ProvenReport:
    game: str
    by_stones: dict[int, int]
    last_day: int
    last_week: int

    @property
    def total(self) -> int:
        return sum(self.by_stones.values())

    def lines(self) -> list[str]:
        out = [f"{self.game}: {self.total} positions proven in the position cache "
               f"({self.last_day} saved in the last day, {self.last_week} in the last week)"]
        out += [f"  {stones:2d} stones: {count}" for stones, count in sorted(
            self.by_stones.items())]
        return out


def stones(key: str) -> int:
    """Stones (or discs) of a canonical key: the bits set in both sides' boards."""
    return int(key, 16).bit_count()


async def proven_report(database_url: str | None, game: str,
                        now: float | None = None) -> ProvenReport:
    """Count the proven positions of ``game`` in the database at ``database_url`` (else
    ``$DATABASE_URL``, else the SQLite file); the database is migrated first if need be."""
    store = SqlStore(database_url)
    await store.open()
    try:
        async with store.engine.connect() as conn:
            rows = await repo.proven_positions(conn, game)
    finally:
        await store.close()
    now = time.time() if now is None else now
    return ProvenReport(
        game,
        dict(Counter(stones(key) for key, _ in rows)),
        sum(1 for _, saved in rows if now - saved <= DAY),
        sum(1 for _, saved in rows if now - saved <= 7 * DAY),
    )
