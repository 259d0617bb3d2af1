"""Calibration runs (``server.admin.calibration``): the matches an admin started between a
game's levels, their pairs' results, and the ratings its latest finished run measured."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import calibration_results, calibration_runs


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


async def find_calibrated_levels(conn: AsyncConnection,
                                 game: str) -> dict[str, tuple[float, float]]:
    return await conn.run_sync(read_calibrated_levels, game)


def read_calibrated_levels(conn: Connection, game: str) -> dict[str, tuple[float, float]]:
    """``find_calibrated_levels`` on a sync connection (the store's reader thread)."""
    stmt = (select(calibration_runs.c.ratings)
            .where(calibration_runs.c.game == game, calibration_runs.c.status == "finished",
                   calibration_runs.c.ratings.is_not(None))
            .order_by(calibration_runs.c.finished_at.desc()).limit(1))
    row = conn.execute(stmt).first()
    measured: dict[str, tuple[float, float]] = {}
    for entry in (row.ratings if row is not None else None) or ():
        elo, error = entry.get("elo"), entry.get("error")
        if isinstance(elo, int | float) and math.isfinite(elo):
            measured[str(entry["level"])] = (
                float(elo), float(error) if isinstance(error, int | float)
                and math.isfinite(error) else 0.0)
    return measured
