"""What a review or an analysis proves is kept in the position cache and used by later ones.

Real AI worker processes (``AiPool``) on a real SQLite database, without Redis: each process
keeps an in-process LRU, so a fresh pool finds only what the durable table kept. A review
done once is done again with a proof budget far too short to prove anything, and is still
exact at every ply; the expert level then plays a position of that game from the cache; an
analysis board position answers at once the second time.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

import games
from ai.connect4 import book
from ai.levels import find
from ai.review import Review
from server.engines import AiJob, AiPool, CacheSettings
from server.reviews.desk import ANALYSIS_TASK, REVIEW_TASK
from server.storage import SqlStore
from tests.server.storage.conftest import sqlite_url  # noqa: F401 - fixture

pytestmark = pytest.mark.slow

GAME = (3, 3, 3, 3, 3, 3, 2, 1, 0, 4, 0, 4, 4, 5, 0, 6, 4, 2, 6, 1)
"""Twenty plies: the book's opening, then moves the solver proves in about a second."""

NO_TIME = 1e-4
"""A proof budget in which the solver proves none of these positions (checked below)."""


def _state(moves: tuple[int, ...]) -> games.State:
    state = games.load("connect4").initial()
    for move in moves:
        state = state.play(move)
    return state


async def _pool(url: str) -> AiPool:
    pool = AiPool(processes=2, games=("connect4",), cache=CacheSettings(None, url))
    await pool.start(wait_ready=True, timeout=120)
    return pool


async def _rows(url: str) -> int:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(text(
                "SELECT count(*) FROM position_cache WHERE game = 'connect4' AND exact"))
            return int(found.scalar_one())
    finally:
        await engine.dispose()


async def test_a_second_review_reads_every_proven_value_from_the_durable_cache(
    sqlite_url: str  # noqa: F811
) -> None:
    store = SqlStore(sqlite_url)
    await store.open()  # migrates: workers never do
    await store.close()
    pool = await _pool(sqlite_url)
    try:
        hurried: Review = await pool.run_task(REVIEW_TASK, "connect4", GAME, NO_TIME)
        assert not all(hurried.values_exact), "the budget proves these positions by itself"
        started = time.perf_counter()
        first: Review = await pool.run_task(REVIEW_TASK, "connect4", GAME)
        first_seconds = time.perf_counter() - started
    finally:
        await pool.close()
    assert all(first.values_exact)
    off_book = sum(book.lookup(_state(GAME[:n])) is None for n in range(len(GAME)))
    assert await _rows(sqlite_url) >= off_book  # every position off the book (the book's
    # are read from it, never stored)
    pool = await _pool(sqlite_url)  # new processes: only the durable table remembers
    try:
        started = time.perf_counter()
        second: Review = await pool.run_task(REVIEW_TASK, "connect4", GAME, NO_TIME)
        second_seconds = time.perf_counter() - started
        expert = await pool.think(AiJob("connect4", GAME[:12], find("connect4", "expert"), 1))
    finally:
        await pool.close()
    assert second == first and all(second.values_exact)
    assert all(move.exact for move in second.moves)
    assert second_seconds < first_seconds + 1.0
    assert expert.cached and expert.exact and expert.move == first.moves[12].best


async def test_an_analysis_answers_from_the_cache_the_second_time(
    sqlite_url: str  # noqa: F811
) -> None:
    store = SqlStore(sqlite_url)
    await store.open()
    await store.close()
    pool = await _pool(sqlite_url)
    try:
        position = GAME[:10]
        hurried = await pool.run_task(ANALYSIS_TASK, "connect4", position, NO_TIME)
        assert not all(mv.exact for mv in hurried), "the budget proves these by itself"
        first = await pool.run_task(ANALYSIS_TASK, "connect4", position, 30.0)
        assert all(mv.exact for mv in first)
        again = await pool.run_task(ANALYSIS_TASK, "connect4", position, NO_TIME)
    finally:
        await pool.close()
    assert again == first
