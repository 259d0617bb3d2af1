"""Calibration runs against the stored levels, and ``discus calibrate``.

``calibrate_and_store`` is what both the command and the admin page call: it records a
``running`` run, plays the matches (on worker processes of its own, through
``ai.calibrate.run_calibration`` in a thread, or on a running server's ``AiPool`` through
``run_calibration_on_pool``), and stores the pair table and the ratings (or ``failed``).
Progress callbacks run on the event loop, so an admin page can forward them as messages.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TextIO

from sqlalchemy.ext.asyncio import AsyncEngine

import games
from ai.calibrate import (
    CalibrationReport,
    GameResult,
    MatchGame,
    PairMode,
    build_report,
    format_report,
    move_seed,
    opening_moves,
    prepare,
    run_calibration,
)
from ai.levels import Level
from server.engines import AiJob, Pool
from server.storage import repository as repo

OnProgress = Callable[[int, int, GameResult], None]


async def load_levels_for_calibration(
    engine: AsyncEngine,
    game: str,
    names: Sequence[str] | None = None,
    time_scale: float = 1.0,
) -> list[Level]:
    """The stored levels of ``game`` (only ``names`` if given), weakest first, with their
    time budgets multiplied by ``time_scale`` (1: exactly as live games play them)."""
    if time_scale <= 0:
        raise ValueError("the time scale must be positive")
    async with engine.connect() as conn:
        stored = await repo.list_game_levels(conn, game)
    if not stored:
        raise ValueError(f"no levels stored for {game!r}")
    if names:
        known = {level.name: level for level in stored}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError(
                f"{game} has no level {', '.join(map(repr, unknown))}; levels: {', '.join(known)}"
            )
        stored = sorted((known[name] for name in dict.fromkeys(names)), key=lambda lv: lv.order)
    if time_scale != 1.0:
        stored = [
            dataclasses.replace(
                level,
                soft_time=level.soft_time * time_scale,
                hard_time=level.hard_time * time_scale,
            )
            for level in stored
        ]
    if len(stored) < 2:
        raise ValueError("calibration needs at least two levels")
    return stored


async def calibrate_and_store(
    engine: AsyncEngine,
    game: str,
    levels: Sequence[Level],
    games_per_pair: int = 8,
    seed: int = 1,
    mode: PairMode = "adjacent",
    processes: int | None = None,
    actor: str = "cli",
    on_progress: OnProgress | None = None,
    pool: Pool | None = None,
) -> tuple[str, CalibrationReport]:
    """Play and store one calibration; returns (run id, report). ``on_progress(done, total,
    result)`` is called on this event loop after each game.

    With ``pool`` (a running server's), the games are played on it, at most ``processes``
    at once (default: the pool's size); without, on ``processes`` worker processes of its
    own (default: one per core), warmed up for this run."""
    loop = asyncio.get_running_loop()
    run_id = uuid.uuid4().hex
    ladder = sorted(levels, key=lambda level: level.order)
    async with engine.begin() as conn:
        await repo.insert_calibration_run(
            conn, run_id, game, actor, games_per_pair, seed, mode,
            [level.to_dict() for level in ladder], time.time(),
        )  # fmt: skip

    def progress(done: int, total: int, result: GameResult) -> None:
        if on_progress is not None:
            loop.call_soon_threadsafe(on_progress, done, total, result)

    started = time.perf_counter()
    try:
        if pool is not None:
            report = await run_calibration_on_pool(
                pool, game, ladder, games_per_pair, seed, mode, processes, on_progress
            )
        else:
            report = await asyncio.to_thread(
                run_calibration, game, ladder, games_per_pair, seed, processes, mode, None,
                progress,
            )  # fmt: skip
    except BaseException:
        async with engine.begin() as conn:
            await repo.finish_calibration_run(
                conn, run_id, "failed", [], None, time.perf_counter() - started, time.time()
            )
        raise
    data = report.to_dict()
    async with engine.begin() as conn:
        await repo.finish_calibration_run(
            conn, run_id, "finished", data["pairs"], data["ratings"], report.seconds, time.time()
        )
    return run_id, report


async def run_calibration_on_pool(
    pool: Pool,
    game_name: str,
    levels: Sequence[Level],
    games_per_pair: int = 8,
    seed: int = 1,
    mode: PairMode = "adjacent",
    concurrency: int | None = None,
    on_progress: OnProgress | None = None,
) -> CalibrationReport:
    """A calibration played on a running server's ``AiPool``: every move is an ``AiJob``,
    exactly as in a live game (same seeds per ply, same watchdog and fallback), so it
    shares the workers with live games. At most ``concurrency`` games (default: the pool's
    size) are in play at once; lower it to leave room for people's games."""
    ladder, planned = prepare(game_name, levels, games_per_pair, seed, mode)
    by_name = {level.name: level for level in ladder}
    gate = asyncio.Semaphore(concurrency or pool.size)
    results: list[GameResult] = []
    started = time.perf_counter()

    async def play(match: MatchGame) -> None:
        async with gate:
            result = await _play_on_pool(pool, game_name, by_name, match)
        results.append(result)
        if on_progress is not None:
            on_progress(len(results), len(planned), result)

    await asyncio.gather(*(play(match) for match in planned))
    return build_report(game_name, ladder, games_per_pair, seed, mode, results,
                        time.perf_counter() - started)  # fmt: skip


async def _play_on_pool(
    pool: Pool, game_name: str, levels: dict[str, Level], match: MatchGame
) -> GameResult:
    game = games.load(game_name)
    started = time.perf_counter()
    moves = opening_moves(game, match.opening)
    state = game.parse_moves(match.opening)
    seats = (levels[match.first], levels[match.second])
    cpu, searched = [0.0, 0.0], [0, 0]
    while not state.is_over():
        legal = state.legal_moves()
        if len(legal) == 1:
            move = legal[0]
        else:
            seat = state.to_move
            job = AiJob(game_name, tuple(moves), seats[seat],
                        move_seed(match.seed, state.ply))  # fmt: skip
            answer = await pool.think(job)
            move = answer.move
            cpu[seat] += answer.cpu
            searched[seat] += 1
        moves.append(move)
        state = state.play(move)
    return GameResult(match, state.result(), game.format_moves(moves), state.ply,
                      time.perf_counter() - started, (cpu[0], cpu[1]),
                      (searched[0], searched[1]))  # fmt: skip


class ProgressBar:
    """A one-line text progress bar, redrawn in place with ``\\r`` (no terminal codes)."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.started = time.monotonic()

    def __call__(self, done: int, total: int, result: GameResult) -> None:
        filled = self.width * done // max(total, 1)
        elapsed = time.monotonic() - self.started
        left = elapsed / done * (total - done) if done else 0.0
        last = f"{result.match.first} vs {result.match.second}"
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} games, "
            f"{elapsed:.0f}s, ~{left:.0f}s left (last: {last})    "
        )
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


async def _calibrate(
    game: str,
    games_per_pair: int,
    names: Sequence[str] | None,
    seed: int,
    database_url: str | None,
    mode: PairMode,
    processes: int | None,
    time_scale: float,
    out: TextIO,
    err: TextIO,
) -> int:
    from server.storage import SqlStore

    store = SqlStore(database_url)
    await store.open()
    try:
        levels = await load_levels_for_calibration(store.engine, game, names, time_scale)
        planned = len(levels) - 1 if mode == "adjacent" else len(levels) * (len(levels) - 1) // 2
        err.write(
            f"calibrating {game}: {', '.join(lv.name for lv in levels)}; "
            f"{planned * games_per_pair} games\n"
        )
        run_id, report = await calibrate_and_store(
            store.engine, game, levels, games_per_pair, seed, mode, processes,
            on_progress=ProgressBar(err),
        )  # fmt: skip
    finally:
        await store.close()
    out.write(format_report(report) + "\n")
    out.write(f"stored as calibration run {run_id}\n")
    return 0


def main_calibrate(
    game: str,
    games_per_pair: int = 8,
    levels: str | None = None,
    seed: int = 1,
    database_url: str | None = None,
    mode: PairMode = "adjacent",
    processes: int | None = None,
    time_scale: float = 1.0,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """``discus calibrate GAME``: levels from the database, table on ``out``, progress bar
    on ``err``, the run stored. ``levels`` is a comma-separated list of level names."""
    names = [name.strip() for name in levels.split(",") if name.strip()] if levels else None
    return asyncio.run(
        _calibrate(
            game, games_per_pair, names, seed, database_url, mode, processes, time_scale,
            out or sys.stdout, err or sys.stderr,
        )
    )  # fmt: skip
