"""A short calibration on real worker processes gives a consistent table and is stored."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import ai
from ai.calibrate import play_game
from ai.connect4.engine import clear as clear_connect4_tables
from ai.levels import levels_of
from server.admin.calibration import (
    calibrate_and_store,
    load_levels_for_calibration,
    run_calibration_on_pool,
)
from server.cli import main
from server.engines import AiPool
from server.storage import SqlStore
from server.storage import repository as repo

TINY = 0.1  # a tenth of the live time budgets: enough for the two weakest levels


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"


@pytest.fixture
async def store(sqlite_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(sqlite_url)
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.mark.slow
async def test_a_short_calibration_adds_up_alternates_colours_and_is_stored(
    store: SqlStore,
) -> None:
    levels = await load_levels_for_calibration(
        store.engine, "connect4", ["easy", "beginner"], time_scale=TINY
    )
    assert [lv.name for lv in levels] == ["beginner", "easy"]
    assert levels[0].hard_time == pytest.approx(0.02)
    seen: list[tuple[int, int]] = []
    run_id, report = await calibrate_and_store(
        store.engine, "connect4", levels, games_per_pair=4, seed=3, processes=2,
        on_progress=lambda done, total, result: seen.append((done, total)),
    )  # fmt: skip
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    (pair,) = report.pairs
    assert (pair.a, pair.b, pair.games, pair.a_first) == ("beginner", "easy", 4, 2)
    assert [r.match.first for r in report.results] == ["beginner", "easy"] * 2
    for result in report.results:
        assert result.moves.startswith(result.match.opening)
    beginner, easy = report.ratings
    assert (beginner.elo, beginner.games, easy.games) == (0, 4, 4)
    assert beginner.score + easy.score == 4
    # The Elo gap has the sign of the score difference.
    assert (easy.elo > 0) == (easy.score > 2) and (easy.elo < 0) == (easy.score < 2)
    # What a move of each level cost its worker, measured in the worker's own CPU time: a
    # search within the level's clock (plus a margin for a move's own steps).
    for rating, level in zip(report.ratings, levels, strict=True):
        assert rating.cpu_per_move is not None
        assert 0 < rating.cpu_per_move <= level.hard_time + 0.05
    async with store.engine.connect() as conn:
        (stored,) = await repo.list_calibration_runs(conn, "connect4")
    assert (stored["id"], stored["status"], stored["games_per_pair"]) == (run_id, "finished", 4)
    assert stored["pairs"] == report.to_dict()["pairs"]
    assert stored["ratings"] == report.to_dict()["ratings"]
    assert [lv["hard_time"] for lv in stored["levels"]] == [lv.hard_time for lv in levels]


async def test_unknown_levels_are_refused_before_anything_is_played(store: SqlStore) -> None:
    with pytest.raises(ValueError, match="no level 'grandmaster'"):
        await load_levels_for_calibration(store.engine, "othello", ["easy", "grandmaster"])
    with pytest.raises(ValueError, match="two levels"):
        await load_levels_for_calibration(store.engine, "othello", ["easy"])


@pytest.mark.slow
def test_discus_calibrate_shows_progress_prints_the_table_and_stores_the_run(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "calibrate", "othello", "--levels", "beginner,easy", "--games-per-pair", "2",
        "--time-scale", str(TINY), "--processes", "2", "--database-url", sqlite_url,
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0
    assert "\r[" in err and "2/2 games" in err
    assert "beginner vs easy" in out and "Elo" in out and "CPU s/move" in out
    assert "stored as calibration run" in out


async def test_on_a_servers_pool_every_move_is_a_live_ai_job_with_the_same_choices() -> None:
    # The two weakest levels, given clocks they cannot run out of even on a loaded machine,
    # stop at their depth, so the games are deterministic and must be those played in-process.
    levels = [
        dataclasses.replace(level, soft_time=30.0, hard_time=60.0)
        for level in levels_of("connect4")[:2]
    ]
    pool = AiPool(processes=1, games=("connect4",))
    await pool.start(wait_ready=True, timeout=120)
    try:
        report = await run_calibration_on_pool(pool, "connect4", levels, games_per_pair=2, seed=4)
        jobs = pool.snapshot().jobs
    finally:
        await pool.close()
    ai.warm_up("connect4")
    clear_connect4_tables()  # as fresh as the worker's: earlier tests' entries change choices
    by_name = {level.name: level for level in levels}
    for result in report.results:
        assert result.moves == play_game("connect4", by_name, result.match).moves
    (pair,) = report.pairs
    assert (pair.games, pair.a_first) == (2, 1)
    opening_plies = sum(len(r.match.opening) for r in report.results)
    assert 0 < jobs <= sum(r.plies for r in report.results) - opening_plies
    # Every searched move was a job, and each answer carried the worker's CPU for it.
    assert sum(sum(r.searched) for r in report.results) == jobs
    assert all(r.cpu_per_move is not None and r.cpu_per_move > 0 for r in report.ratings)
