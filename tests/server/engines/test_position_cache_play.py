"""AI workers share what they learn through the position cache, and play the same moves.

Real worker processes (``AiPool``) on the real Redis, PostgreSQL and SQLite: a second game
from the same opening gets its AI moves from the cache without searching, and they are the
moves the search found, for a single-choice level and for shipped levels that choose among
several moves; without Redis each worker's LRU does the same; after Redis loses everything,
the durable table answers and refills it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
import redis.asyncio as aioredis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from wsclient import Client

import ai
import games
from ai.cached import PROVEN_DEPTH, not_lost_result
from ai.levels import DEFAULT_LEVELS, Level, choose_move, find
from ai.limits import Limits
from games.base import State
from server.app import running
from server.engines import AiAnswer, AiJob, AiPool, CacheCounts, CacheSettings
from server.engines.engine_process import IDLE_FLUSH_SECONDS, _cached_answer, _save, think
from server.engines.messages import Think
from server.storage import CachedResult, SqlStore, keys, open_cache, open_sync_cache
from server.storage.memory import MemoryStore
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    REDIS_URL,
    pg_url,
    redis_prefix,
    sqlite_url,
)

pytestmark = pytest.mark.slow

DETERMINISTIC = Level("steady", 9, "Always the best move at depth 12.", 12, 5.0, 10.0, None,
                      candidates=1, margin=0, rails=True)
"""Depth-bounded and single-choice: the search's answer is the move, so a cached one may
stand in for it (and is deep enough for the durable tier)."""

PEOPLE = (3, 2, 4, 1)  # Connect Four columns (0-based) a person plays; the AI answers each


async def _pool(cache: CacheSettings | None, processes: int = 1) -> AiPool:
    pool = AiPool(processes=processes, games=("connect4",), cache=cache)
    await pool.start(wait_ready=True, timeout=120)
    return pool


async def _opening(pool: AiPool, seed: int = 1) -> list[AiAnswer]:
    """The person's fixed moves, each answered by the AI: the AI's answers in order."""
    moves: list[int] = []
    answers = []
    for column in PEOPLE:
        moves.append(column)
        answer = await pool.think(AiJob("connect4", tuple(moves), DETERMINISTIC, seed))
        assert not answer.fallback
        answers.append(answer)
        moves.append(answer.move)
    return answers


@pytest.fixture
async def uncached_moves() -> AsyncIterator[list[int]]:
    pool = await _pool(None)
    try:
        yield [a.move for a in await _opening(pool)]
    finally:
        await pool.close()


async def _clear(prefix: str) -> int:
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        names = [n async for n in client.scan_iter(match=keys.position_pattern(prefix))]
        if names:
            await client.delete(*names)
        return len(names)
    finally:
        await client.aclose()


async def test_a_second_game_from_the_same_opening_is_answered_from_redis_by_other_workers(
    pg_url: str, redis_prefix: str, uncached_moves: list[int]  # noqa: F811
) -> None:
    store = SqlStore(pg_url)
    await store.open()  # migrates: workers never do
    await store.close()
    settings = CacheSettings(REDIS_URL, pg_url, redis_prefix)
    first_pool = await _pool(settings, processes=2)
    try:
        first = await _opening(first_pool)
        assert not any(a.cached for a in first)
        assert first_pool.snapshot().cache["hot_hits"] == 0
    finally:
        await first_pool.close()
    second_pool = await _pool(settings, processes=2)  # new processes: only Redis remembers
    try:
        second = await _opening(second_pool)
        stats = second_pool.snapshot()
    finally:
        await second_pool.close()
    assert all(a.cached for a in second) and stats.from_cache == len(PEOPLE)
    assert stats.cache["hot_hits"] >= len(PEOPLE) and stats.cache["durable_hits"] == 0
    assert [a.move for a in first] == [a.move for a in second] == uncached_moves
    assert all(a.nodes == 0 and a.depth == DETERMINISTIC.max_depth for a in second)


async def test_an_idle_worker_writes_its_buffered_durable_results_without_being_stopped(
    pg_url: str  # noqa: F811
) -> None:
    # Deep results wait in the worker's durable batch (64 rows, or 5 s at the next save);
    # a worker that then gets no job must still write them, not keep them until it stops
    # (or lose them if it is killed).
    store = SqlStore(pg_url)
    await store.open()
    await store.close()
    pool = await _pool(CacheSettings(None, pg_url))
    engine = create_async_engine(pg_url)
    try:
        answer = await pool.think(AiJob("connect4", (3,), DETERMINISTIC, 1))
        assert not answer.cached
        rows = 0
        deadline = asyncio.get_running_loop().time() + IDLE_FLUSH_SECONDS + 10
        while rows == 0 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.5)
            async with engine.connect() as conn:
                found = await conn.execute(text("SELECT count(*) FROM position_cache"))
                rows = found.scalar_one()
        assert rows > 0, "the idle worker kept its durable results to itself"
    finally:
        await engine.dispose()
        await pool.close()


async def test_after_redis_loses_everything_postgres_answers_and_refills_it(
    pg_url: str, redis_prefix: str  # noqa: F811
) -> None:
    store = SqlStore(pg_url)
    await store.open()
    await store.close()
    settings = CacheSettings(REDIS_URL, pg_url, redis_prefix)
    pool = await _pool(settings)
    try:
        first = await _opening(pool)
    finally:
        await pool.close()  # the workers flush their durable batch as they stop
    assert await _clear(redis_prefix) > 0
    pool = await _pool(settings)
    try:
        refilled = await _opening(pool)
        after_refill = dict(pool.snapshot().cache)
        again = await _opening(pool)
        stats = pool.snapshot()
    finally:
        await pool.close()
    assert all(a.cached for a in refilled) and all(a.cached for a in again)
    assert after_refill["durable_hits"] >= len(PEOPLE)
    assert stats.cache["hot_hits"] - after_refill["hot_hits"] >= len(PEOPLE)
    assert stats.cache["durable_hits"] == after_refill["durable_hits"], "Redis was refilled"
    assert [a.move for a in first] == [a.move for a in refilled] == [a.move for a in again]


SHIPPED = [("connect4", "medium"), ("othello", "medium"), ("othello", "hard")]
"""Shipped levels that choose among several moves and reach their full depth well inside
their time on any machine (Connect Four's hard level may stop a ply short in the opening
when the machine is busy, and then searches rather than take a deeper cached answer)."""


def _person(state: State, ply: int) -> int:
    """The person's move: fixed by the position and ply, so both games follow the same line
    as long as the AI answers the same."""
    legal = state.legal_moves()
    return legal[(3 * ply + 1) % len(legal)]


async def _ai_first_opening(pool: AiPool, game: str, level: Level, plies: int = 6
                            ) -> list[AiAnswer]:
    """The AI moves first and every other ply, seeds fixed per ply; its answers in order."""
    state = games.load(game).initial()
    moves: list[int] = []
    answers = []
    for ply in range(plies):
        if ply % 2 == 0:
            answer = await pool.think(AiJob(game, tuple(moves), level, seed=7919 * ply + 13))
            assert not answer.fallback
            answers.append(answer)
            move = answer.move
        else:
            move = _person(state, ply)
        moves.append(move)
        state = state.play(move)
    return answers


@pytest.mark.parametrize(("game", "name"), SHIPPED)
async def test_a_second_game_against_a_shipped_level_takes_its_moves_from_the_cache(
    pg_url: str, redis_prefix: str, game: str, name: str  # noqa: F811
) -> None:
    level = find(game, name)
    assert level.candidates > 1 and level.max_depth is not None
    uncached = AiPool(processes=1, games=(game,))
    await uncached.start(wait_ready=True, timeout=120)
    try:
        fresh = await _ai_first_opening(uncached, game, level)
    finally:
        await uncached.close()
    store = SqlStore(pg_url)
    await store.open()  # migrates: workers never do
    await store.close()
    settings = CacheSettings(REDIS_URL, pg_url, redis_prefix)
    pool = AiPool(processes=1, games=(game,), cache=settings)
    await pool.start(wait_ready=True, timeout=120)
    try:
        first = await _ai_first_opening(pool, game, level)
    finally:
        await pool.close()
    pool = AiPool(processes=1, games=(game,), cache=settings)  # a new process: Redis remembers
    await pool.start(wait_ready=True, timeout=120)
    try:
        second = await _ai_first_opening(pool, game, level)
        stats = pool.snapshot()
    finally:
        await pool.close()
    assert not any(a.cached for a in first) and all(a.nodes for a in first)
    assert all(a.cached and a.nodes == 0 for a in second), [a.cached for a in second]
    assert stats.from_cache == len(second) and stats.cache["hot_hits"] > len(second)
    assert [a.move for a in fresh] == [a.move for a in first] == [a.move for a in second]
    assert [(a.depth, a.score) for a in first] == [(a.depth, a.score) for a in second]
    assert all(a.depth == level.max_depth for a in second)


def test_children_saved_by_a_search_give_back_its_root_scores_and_its_choices() -> None:
    level = find("othello", "hard")
    rules = games.load("othello")
    state = rules.parse_moves("f5d6c3d3c4f4")  # no symmetry left: every child is its own
    last = ai.best(state, level.limits())
    raw = dict(last.root_scores)
    cache = open_sync_cache(None, durable=False)
    try:
        _save(cache, state, last, level.candidates)
        answer, _, counts = _cached_answer(cache, state, level.limits())
    finally:
        cache.close()
    assert answer is not None
    assert counts.lookups == 1 + len(state.legal_moves()) and counts.misses == 0
    # Same best score and the same exact candidates with their scores; ties (common in
    # Othello's disc units) may come in another order than the search's.
    assert answer.score == last.score == raw[answer.move]
    top = answer.root_scores[: level.candidates]
    assert {m for m, _ in top} == {m for m, _ in last.root_scores[: level.candidates]}
    assert all(raw[m] == s for m, s in top)
    for seed in range(20):
        assert choose_move(state, level, seed, [answer]) == choose_move(
            state, level, seed, [last])


def test_a_deeper_or_looser_child_result_is_not_taken_for_the_levels_own() -> None:
    level = find("othello", "hard")
    assert level.max_depth is not None
    rules = games.load("othello")
    state = rules.parse_moves("f5d6c3d3c4f4")
    last = ai.best(state, level.limits())
    best, second = last.root_scores[0][0], last.root_scores[1][0]
    runner_up = min(m for m, _ in last.root_scores[level.candidates:])
    for changed in (
        # The best child searched deeper (by another level): a different depth's score.
        (state.play(second), CachedResult(level.max_depth + 2, -last.score, 3, None)),
        # A move outside the candidates now only bounded above the second best's score:
        # the search would have had to look at it exactly.
        (state.play(runner_up), CachedResult(level.max_depth - 1, -last.score - 5, 1, None)),
    ):
        cache = open_sync_cache(None, durable=False)
        try:
            _save(cache, state, last, level.candidates)
            assert _cached_answer(cache, state, level.limits())[0] is not None
            cache.save([changed])
            answer, _, _ = _cached_answer(cache, state, level.limits())
            assert answer is None, changed
        finally:
            cache.close()
    assert best != second


class _Quiet:
    """A pipe that drops the progress messages of ``think``."""

    def send(self, message: object) -> None:
        pass


def test_an_outcome_weak_solved_once_is_not_weak_solved_again_on_another_worker(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    c4_engine_calls: Callable[..., list[Any]], no_c4_outcomes: None,
) -> None:
    # The weak solve proves the win in about a second here, the exact solve takes about four:
    # the expert (with a hard time a busy machine cannot miss) proves the outcome, not the
    # score. A second worker (its own cache client and an empty solver table) finds the
    # outcome in SQLite, does not prove it again, and still plays a move that keeps it.
    monkeypatch.delenv("REDIS_URL", raising=False)
    from ai.connect4 import engine

    rules = games.load("connect4")
    state = rules.parse_moves("64171")
    moves = tuple(int(c) - 1 for c in "64171")
    expert = Level("roomy-expert", 9, "", None, 1.5, 6.0, None, candidates=1, margin=0,
                   rails=True)
    asyncio.run(_migrate(sqlite_url))
    weak_solves = c4_engine_calls("_weak_solve", lambda args: args)
    answers = []
    for job_id in ("first", "second"):
        engine.clear()
        answer = _worker_move(sqlite_url, job_id, moves, expert)
        answers.append(answer)
        if job_id == "first":
            assert len(weak_solves) == 1 and not answer.exact
            assert asyncio.run(_stored(sqlite_url, state)) == CachedResult(
                PROVEN_DEPTH, 1, 1, answer.move)
    first, second = answers
    assert len(weak_solves) == 1  # the second worker took the outcome from the cache
    assert not second.cached and second.cache.durable_hits >= 1
    for answer in answers:
        after = state.play(answer.move)
        assert ai.best(after, Limits(exact=True)).score < 0  # the win is kept


def test_a_position_proven_only_not_lost_is_not_asked_so_again_on_another_worker(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    c4_engine_calls: Callable[..., list[Any]], no_c4_outcomes: None,
) -> None:
    # 763144444, a draw: a budget of 12 M nodes ends the expert's weak solve after "not a
    # loss?" (about 9 M nodes) and before "a win?" (tests/ai/test_connect4_expert.py). The
    # first worker proves only that the position is not lost and stores that floor; a
    # second (its own cache client, an empty solver table) finds it in SQLite and asks only
    # "a win?"; both play a move that keeps the draw.
    monkeypatch.delenv("REDIS_URL", raising=False)
    from ai.connect4 import engine

    rules = games.load("connect4")
    state = rules.parse_moves("763144444")
    moves = tuple(int(c) - 1 for c in "763144444")
    level = Level("counted-expert", 9, "", None, 30.0, 60.0, 12_000_000, candidates=1,
                  margin=0, rails=True)
    asyncio.run(_migrate(sqlite_url))
    windows = c4_engine_calls("_null_window", lambda args: args[2])  # each window's alpha
    monkeypatch.setattr(engine, "_proof", lambda *args, **kwargs: None)  # no exact solve
    asked, played = [], []
    for job_id in ("first", "second"):
        engine.clear()
        windows.clear()
        answer = _worker_move(sqlite_url, job_id, moves, level)
        asked.append(list(windows))
        played.append(answer.move)
        assert asyncio.run(_stored(sqlite_url, state)) == not_lost_result(played[0])
    assert asked == [[-1, 0], [0]]
    for move in played:
        assert ai.best(state.play(move), Limits(exact=True)).score == 0  # the draw is kept


def _worker_move(url: str, job_id: str, moves: tuple[int, ...], level: Level) -> AiAnswer:
    """One Connect Four move as a worker with its own cache client on the SQLite ``url`` (no
    Redis) makes it: looked up, searched, answered, then saved and written to SQLite."""
    cache = open_sync_cache(None, url)
    try:
        answer, learnt = think(_Quiet(), Think(job_id, AiJob("connect4", moves, level, 1)),
                               ai.search, False, cache)
        assert learnt is not None
        _save(cache, *learnt)
    finally:
        cache.close()  # writes its batch to SQLite
    return answer


async def _migrate(url: str) -> None:
    store = SqlStore(url)
    await store.open()
    await store.close()


async def _stored(url: str, state: State) -> CachedResult | None:
    store = SqlStore(url, migrate=False)
    await store.open()
    try:
        cache = await open_cache(None, store)
        found = (await cache.lookup([state]))[0]
        await cache.close()
        return found
    finally:
        await store.close()


async def _play_against(client: Client, level: str) -> list[str]:
    await client.send(type="create_room", game="connect4", seat=0,
                      opponent={"kind": "ai", "level": level})
    state = await client.expect("room_state")
    room = state["room"]["id"]
    played = []
    for ply, column in enumerate(PEOPLE):
        await client.send(type="move", room=room, ply=2 * ply, move=str(column + 1))
        await client.expect("move_made", ply=2 * ply)
        played.append((await client.expect("move_made", ply=2 * ply + 1, timeout=30))["move"])
    await client.send(type="resign", room=room)
    await client.expect("game_over")
    return played


async def test_without_redis_each_worker_keeps_an_lru_and_stats_show_its_hits(
    uncached_moves: list[int],
) -> None:
    # A memory store: no durable tier, so only the LRU can remember (and the levels stay
    # the ones set here rather than a database's).
    store = MemoryStore()
    pool = await _pool(CacheSettings(None, None))
    cache = await open_cache(None, store)
    async with running(port=0, store=store, pool=pool, cache=cache) as server:
        levels: dict[str, Sequence[Level]] = dict(DEFAULT_LEVELS)
        levels["connect4"] = (*DEFAULT_LEVELS["connect4"], DETERMINISTIC)
        server.app.levels.set(levels)
        ann = await Client.open(server.url, "Ann")
        first = await _play_against(ann, DETERMINISTIC.name)
        before = await ann.request("stats")
        second = await _play_against(ann, DETERMINISTIC.name)
        after = await ann.request("stats")
    assert first == second == [str(m + 1) for m in uncached_moves]
    assert before["pool"]["from_cache"] == 0 and after["pool"]["from_cache"] == len(PEOPLE)
    assert after["pool"]["jobs"] == 2 * len(PEOPLE) and after["pool"]["workers"] == 1
    assert after["pool"]["move_seconds_p50"] > 0
    assert [t["tier"] for t in after["cache"]["tiers"]] == ["lru"]
    assert after["cache"]["tiers"][0]["hits"] >= len(PEOPLE) and after["cache"]["hit_rate"] > 0
    assert after["shared_cache"] is None  # nothing shared without Redis


def test_a_position_whose_children_are_all_solved_is_answered_as_solved() -> None:
    rules = games.load("connect4")
    state = rules.initial().play(3).play(2)  # not mirror-symmetric: children all differ
    legal = state.legal_moves()
    # Scores from each child's side to move: the child after column 1 (index 1) is the worst
    # for the opponent, so it is the root's best move, proven.
    scores = {m: (-5 if i == 1 else 2 + i) for i, m in enumerate(legal)}
    cache = open_sync_cache(None, durable=False)
    try:
        children = [state.play(m) for m in legal]
        cache.save([(child, CachedResult(20, scores[m], 3, child.legal_moves()[0], exact=True))
                    for m, child in zip(legal, children, strict=True)])
        answer, _, counts = _cached_answer(cache, state, Limits(depth=12))
        assert answer is not None and answer.exact
        assert answer.move == legal[1] and answer.score == 5 and answer.depth == 21
        assert counts == CacheCounts(1 + len(legal), len(legal), 0, 1)
        # Proven children give a level choosing among moves no depth-12 scores to choose by.
        refused, _, again = _cached_answer(cache, state, Limits(depth=12, multipv=2))
        assert refused is None and again == counts
    finally:
        cache.close()


async def test_with_redis_stats_also_show_the_counters_every_process_shares(
    redis_prefix: str,  # noqa: F811
) -> None:
    store = MemoryStore()
    pool = await _pool(CacheSettings(REDIS_URL, None, redis_prefix))
    cache = await open_cache(REDIS_URL, store, prefix=redis_prefix)
    async with running(port=0, store=store, pool=pool, cache=cache) as server:
        levels: dict[str, Sequence[Level]] = dict(DEFAULT_LEVELS)
        levels["connect4"] = (*DEFAULT_LEVELS["connect4"], DETERMINISTIC)
        server.app.levels.set(levels)
        ann = await Client.open(server.url, "Ann")
        for _ in range(2):
            await _play_against(ann, DETERMINISTIC.name)
        stats = await ann.request("stats")
    mine, shared = stats["cache"], stats["shared_cache"]
    assert [t["tier"] for t in mine["tiers"]] == ["redis"]
    assert mine["hits"] >= len(PEOPLE) and stats["pool"]["from_cache"] == len(PEOPLE)
    assert shared["lookups"] == mine["lookups"] and shared["hits"] == mine["hits"]


@pytest.mark.parametrize("game", ["connect4", "othello"])
def test_a_shallow_level_neither_asks_nor_teaches_the_cache_and_a_deeper_one_does(
    game: str,
) -> None:
    """Beginner and easy search in about a millisecond, less than the lookup and the save
    (``ai.cached.SHALLOW_DEPTH``); medium's search is worth them."""
    ai.warm_up(game)
    rules = games.load(game)
    moves = tuple(rules.parse_move(rules.initial(), text) for text in
                  (["4"] if game == "connect4" else ["f5"]))
    cache = open_sync_cache(None, durable=False)
    try:
        for name, worth in (("beginner", False), ("easy", False), ("medium", True)):
            level = find(game, name)
            answer, learnt = think(_Quiet(), Think(name, AiJob(game, moves, level, 1)),
                                   ai.search, False, cache)
            assert not answer.fallback and answer.nodes
            assert (answer.cache.lookups > 0) == worth, (name, answer.cache)
            assert (learnt is not None) == worth, name
    finally:
        cache.close()
