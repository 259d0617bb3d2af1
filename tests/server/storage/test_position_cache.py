"""The shared position cache on the real Redis and PostgreSQL (and the in-process fallback)."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

import games
from ai.cached import PROVEN_DEPTH, not_lost_result, outcome_result
from server.storage import SqlStore, open_cache, open_sync_cache
from server.storage import keys as redis_keys
from server.storage.cache import (
    DURABLE_MIN_DEPTH,
    CachedResult,
    PositionCache,
    RedisTier,
    SqlTier,
)
from server.storage.symmetry import canonical
from tests.server.storage.conftest import opened_sql_store

C4 = games.load("connect4")
DEEP = DURABLE_MIN_DEPTH + 2


@pytest.fixture
async def sql_store(pg_url: str) -> AsyncIterator[SqlStore]:
    """PostgreSQL only: the durable tier's batching is what these tests look at."""
    async with opened_sql_store(pg_url) as store:
        yield store


@pytest.fixture
async def cache(
    sql_store: SqlStore, redis_url: str, redis_prefix: str
) -> AsyncIterator[PositionCache]:
    c = await open_cache(redis_url, sql_store, prefix=redis_prefix)
    try:
        yield c
    finally:
        await c.close()


async def forget_redis(client: aioredis.Redis, prefix: str) -> None:
    """What a Redis restart does to our keys (only ours: the server is shared)."""
    names = [n async for n in client.scan_iter(match=redis_keys.position_pattern(prefix))]
    if names:
        await client.delete(*names)


async def test_a_saved_result_is_found_again(cache: PositionCache) -> None:
    state = C4.parse_moves("4453")
    await cache.save([(state, CachedResult(depth=DEEP, score=3, bound=3, move=1))])
    assert await cache.lookup([state]) == [CachedResult(DEEP, 3, 3, 1, False)]
    assert cache.stats()["hot_hits"] == 1


async def test_a_mirrored_position_finds_the_result_with_its_move_mirrored(
    cache: PositionCache,
) -> None:
    state, mirror = C4.parse_moves("4453"), C4.parse_moves("4435")
    best = C4.parse_move(state, "2")
    await cache.save([(state, CachedResult(depth=DEEP, score=-2, bound=1, move=best))])
    [found] = await cache.lookup([mirror])
    assert found is not None and found.move is not None
    assert C4.format_move(found.move) == "6"  # column 2 seen in the mirror
    assert (found.depth, found.score, found.bound) == (DEEP, -2, 1)


async def test_lookups_of_unknown_positions_are_misses(cache: PositionCache) -> None:
    root = C4.parse_moves("44")
    children = [root.play(m) for m in root.legal_moves()]
    assert await cache.lookup([root, *children]) == [None] * 8
    assert cache.stats()["misses"] == 8 and cache.stats()["hit_rate"] == 0.0


async def test_after_redis_forgets_results_are_refilled_from_postgres(
    cache: PositionCache, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    state = C4.parse_moves("4453")
    await cache.save([(state, CachedResult(DEEP, 5, 3, 3, False))])
    await cache.flush()
    await forget_redis(redis_client, redis_prefix)

    assert await cache.lookup([state]) == [CachedResult(DEEP, 5, 3, 3, False)]
    assert cache.stats()["durable_hits"] == 1
    # ... and Redis holds it again: the next lookup is a hot hit.
    assert await cache.lookup([state]) == [CachedResult(DEEP, 5, 3, 3, False)]
    assert cache.stats()["hot_hits"] == 1


async def test_shallow_inexact_results_stay_out_of_postgres(
    cache: PositionCache, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    shallow, solved = C4.parse_moves("44"), C4.parse_moves("444")
    await cache.save(
        [(shallow, CachedResult(4, 1, 3, 3)), (solved, CachedResult(2, 0, 3, 3, exact=True))]
    )
    await cache.flush()
    await forget_redis(redis_client, redis_prefix)
    found = await cache.lookup([shallow, solved])
    assert found[0] is None and found[1] is not None and found[1].exact


async def test_a_shallower_result_never_replaces_a_deeper_one(
    cache: PositionCache, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    state = C4.parse_moves("4453")
    await cache.save([(state, CachedResult(DEEP + 4, 7, 3, 3))])
    await cache.save([(state, CachedResult(DEEP, 1, 3, 0))])
    await cache.flush()
    assert await cache.lookup([state]) == [CachedResult(DEEP + 4, 7, 3, 3)]
    await forget_redis(redis_client, redis_prefix)
    assert await cache.lookup([state]) == [CachedResult(DEEP + 4, 7, 3, 3)]


async def test_at_equal_depth_an_exact_score_and_a_known_move_are_kept_in_every_tier(
    cache: PositionCache, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    # What a search for several candidates saves: symmetric children (one key) get an exact
    # score from one root move and a bound from another; the PV's child has a best move.
    exact, bound, pv = C4.parse_moves("4453"), C4.parse_moves("4435"), C4.parse_moves("4452")
    for batch in (
        [(exact, CachedResult(DEEP, 2, 3, None)), (bound, CachedResult(DEEP, 4, 1, None))],
        [(pv, CachedResult(DEEP, 1, 3, 2))],
        [(pv, CachedResult(DEEP, 1, 3, None))],
        [(bound, CachedResult(DEEP, 6, 1, None))],
    ):
        await cache.save(batch)
        await cache.flush()  # each batch its own upsert: the SQL rule decides too
    want = [CachedResult(DEEP, 2, 3, None), CachedResult(DEEP, 1, 3, 2)]
    assert await cache.lookup([exact, pv]) == want
    await forget_redis(redis_client, redis_prefix)
    assert await cache.lookup([exact, pv]) == want
    assert cache.stats()["durable_hits"] == 2


async def test_an_exact_score_is_kept_over_a_proven_bound_that_over_a_floor_and_that_over_any_depth(
    cache: PositionCache, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    # A weak solve's win (a proven bound) after a deep heuristic result and before an
    # exact score, and the other way round, each batch its own upsert: every tier keeps the
    # exact score if there is one, else the proven bound. A weak solve's floor (not lost,
    # the outcome unknown) gives way to the win and beats a search's result.
    deep = CachedResult(PROVEN_DEPTH - 1, 25, 3, 2)  # deeper than any search goes
    win = outcome_result(1, 3)
    exact = CachedResult(30, 3, 3, 3, exact=True)
    quick = CachedResult(9, 8, 3, 3, exact=True)  # a win the heuristic proved in its horizon
    floor = not_lost_result(4)
    searched = CachedResult(30, 12, 3, 2)
    states = [C4.parse_moves(moves)
              for moves in ("4453", "4412", "4467", "4456", "4411", "4422", "4433")]
    orders = ([deep, win, exact], [exact, win, deep], [win, quick], [deep, win],
              [floor, win], [win, floor], [searched, floor, searched])
    for state, order in zip(states, orders, strict=True):
        for result in order:
            await cache.save([(state, result)])
            await cache.flush()
    want = [exact, exact, quick, win, win, win, floor]
    assert await cache.lookup(states) == want
    await forget_redis(redis_client, redis_prefix)
    assert await cache.lookup(states) == want
    assert cache.stats()["durable_hits"] == len(states)


async def test_hit_counts_are_shared_through_redis(
    cache: PositionCache, sql_store: SqlStore, redis_url: str, redis_prefix: str
) -> None:
    state = C4.parse_moves("4")
    await cache.save([(state, CachedResult(DEEP, 0, 3, 3))])
    other = await open_cache(redis_url, sql_store, prefix=redis_prefix)
    try:
        await other.lookup([state, C4.parse_moves("1")])
        shared = await cache.shared_stats()
    finally:
        await other.close()
    assert (shared["lookups"], shared["hot_hits"], shared["misses"]) == (2, 1, 1)
    assert shared["hit_rate"] == 0.5


async def test_without_redis_an_in_process_lru_serves_and_postgres_still_keeps(
    sql_store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    state = C4.parse_moves("4453")
    first = await open_cache(None, sql_store)
    await first.save([(state, CachedResult(DEEP, 2, 3, 3))])
    assert await first.lookup([state]) == [CachedResult(DEEP, 2, 3, 3)]
    await first.close()  # flushes to PostgreSQL
    second = await open_cache(None, sql_store)
    try:
        assert await second.lookup([state]) == [CachedResult(DEEP, 2, 3, 3)]
        assert second.stats()["durable_hits"] == 1
    finally:
        await second.close()


def _worker_saves(redis_url: str, database_url: str, prefix: str) -> None:
    cache = open_sync_cache(redis_url, database_url, prefix=prefix)
    try:
        state = C4.parse_moves("4453")
        cache.save([(state, CachedResult(DEEP, 9, 3, 6))])
    finally:
        cache.close()


@pytest.mark.slow
def test_a_result_saved_by_one_worker_process_is_found_by_another(
    pg_url: str, redis_url: str, redis_prefix: str
) -> None:
    async def migrate() -> None:
        store = SqlStore(pg_url)
        await store.open()
        await store.close()

    asyncio.run(migrate())  # the server migrates before it starts workers
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_worker_saves, args=(redis_url, pg_url, redis_prefix))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0

    cache = open_sync_cache(redis_url, pg_url, prefix=redis_prefix)
    try:
        mirror = C4.parse_moves("4435")
        [found] = cache.lookup([mirror])
        assert found is not None and found.move is not None
        assert C4.format_move(found.move) == "1"  # column 7 mirrored
        assert cache.stats()["hot_hits"] == 1
    finally:
        cache.close()


def test_canonical_keys_of_cached_positions_are_what_redis_holds(redis_prefix: str) -> None:
    key = canonical("connect4", C4.cells(C4.parse_moves("4453")), 0).key
    assert redis_keys.position(redis_prefix, "connect4", key).startswith(f"{redis_prefix}:pos:")


OTHELLO = games.load("othello")


@pytest.mark.parametrize(
    ("opening", "reply"),
    # f5 d6 (perpendicular) seen from black's three other, symmetric first moves.
    [("f5", "d6"), ("c4", "e3"), ("e6", "f4"), ("d3", "c5")],
)
async def test_an_othello_result_is_found_from_each_symmetric_opening_with_its_move_turned(
    cache: PositionCache, opening: str, reply: str
) -> None:
    after_f5 = OTHELLO.parse_moves("f5")
    await cache.save([(after_f5, CachedResult(DEEP, 0, 3, OTHELLO.parse_move(after_f5, "d6")))])
    asked = OTHELLO.parse_moves(opening)
    [found] = await cache.lookup([asked])
    assert found is not None and found.move is not None
    assert OTHELLO.format_move(found.move) == reply


async def test_a_root_and_its_children_take_one_lookup(cache: PositionCache) -> None:
    root = OTHELLO.parse_moves("f5d6")
    children = [root.play(m) for m in root.legal_moves()]
    await cache.save([(children[0], CachedResult(DEEP, 4, 3, children[0].legal_moves()[0]))])
    found = await cache.lookup([root, *children])
    assert found[0] is None and found[1] is not None
    assert cache.stats()["lookups"] == 1 + len(children)


async def test_while_redis_is_down_lookups_fall_back_to_postgres_and_nothing_raises(
    sql_store: SqlStore, unused_tcp_port: int
) -> None:
    state = C4.parse_moves("4453")
    down = aioredis.Redis.from_url(f"redis://127.0.0.1:{unused_tcp_port}/0")
    cache = PositionCache(RedisTier(down, "discus-test-down"), SqlTier(sql_store.engine))
    try:
        await cache.save([(state, CachedResult(DEEP, 1, 3, 3))])
        await cache.flush()
        assert await cache.lookup([state]) == [CachedResult(DEEP, 1, 3, 3)]
        assert cache.stats()["hot_errors"] >= 2 and cache.stats()["durable_hits"] == 1
    finally:
        await cache.close()

