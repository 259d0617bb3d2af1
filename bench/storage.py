"""How long the server waits for a move to be durable, and for a cache lookup.

``python -m bench.storage [--moves N] [--games G]`` (or ``discus bench storage``): appends
N moves (default 400) on PostgreSQL (a scratch database, dropped afterwards) and on SQLite (a
scratch file), first one at a time, then spread over G games appending at once (default 16,
as during a load run), and reports p50/p99 per ``append_move``; then the position cache's
job-start lookup (a root and its children) on Redis and from PostgreSQL after Redis lost it;
then AI move times over the first 6 plies of a repeated Connect Four opening, cold and warm,
in this process and through the server's worker pool (a real worker process with the cache
wired as ``discus serve`` wires it; the time is the server's wait for each move).
Ratios are against the load target's 50 ms p99 for a whole move round trip: persisting must
be a small part of it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence

TARGET_P99_MS = 50.0
PG_HOST = os.environ.get("DISCUS_BENCH_PG_HOST", "127.0.0.1")
REDIS_URL = os.environ.get("DISCUS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _row(label: str, samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    p50, p99 = _pct(ms, 0.50), _pct(ms, 0.99)
    return (
        f"{label:<38} n={len(ms):>5}  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"mean {statistics.fmean(ms):7.2f} ms  p99/target {p99 / TARGET_P99_MS:5.2f}"
    )


async def _timed(call: Callable[[], Awaitable[None]], out: list[float]) -> None:
    start = time.perf_counter()
    await call()
    out.append(time.perf_counter() - start)


async def _append_moves(url: str, moves: int, games: int) -> tuple[list[float], list[float]]:
    from server.storage import SqlStore
    from server.store import GameRecord, MoveRecord

    store = SqlStore(url)
    await store.open()
    now = time.time()
    try:

        async def new_game() -> str:
            game_id = uuid.uuid4().hex
            await store.save_game(
                GameRecord(game_id, "connect4", ("p1", "p2"), None, None, "active", "", now)
            )
            return game_id

        alone: list[float] = []
        game_id = await new_game()
        for ply in range(moves):
            move = MoveRecord(game_id, ply, "4", ply % 2, 0.1, now)
            await _timed(lambda m=move: store.append_move(m), alone)  # type: ignore[misc]

        together: list[float] = []
        ids = [await new_game() for _ in range(games)]

        async def play(game_id: str) -> None:
            for ply in range(moves // games):
                move = MoveRecord(game_id, ply, "4", ply % 2, 0.1, now)
                await _timed(lambda m=move: store.append_move(m), together)  # type: ignore[misc]

        await asyncio.gather(*(play(g) for g in ids))
        return alone, together
    finally:
        await store.close()


async def scratch_postgres() -> tuple[str, Callable[[], Awaitable[None]]]:
    import asyncpg

    name = f"discus_bench_{uuid.uuid4().hex[:12]}"
    for user in ("postgres", "root"):
        try:
            conn = await asyncpg.connect(host=PG_HOST, user=user, database="postgres")
            break
        except (OSError, asyncpg.PostgresError):
            continue
    else:
        raise RuntimeError(f"no PostgreSQL at {PG_HOST} for users postgres or root")
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()

    async def drop() -> None:
        c = await asyncpg.connect(host=PG_HOST, user=user, database="postgres")
        await c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await c.close()

    return f"postgresql+asyncpg://{user}@{PG_HOST}/{name}", drop


async def _cache_lookups(url: str, rounds: int) -> tuple[list[float], list[float]]:
    import redis.asyncio as aioredis

    import games
    from server.storage import SqlStore, keys, open_cache
    from server.storage.cache import DURABLE_MIN_DEPTH, CachedResult

    othello = games.load("othello")
    prefix = f"discus-bench-{uuid.uuid4().hex[:8]}"
    store = SqlStore(url)
    await store.open()
    cache = await open_cache(REDIS_URL, store, prefix=prefix)
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        root = othello.parse_moves("f5d6c3d3c4")
        positions = [root, *(root.play(m) for m in root.legal_moves())]
        await cache.save(
            [(s, CachedResult(DURABLE_MIN_DEPTH, 1, 3, s.legal_moves()[0])) for s in positions]
        )
        await cache.flush()
        hot: list[float] = []
        refill: list[float] = []
        for _ in range(rounds):
            await _timed(lambda: _discard(cache.lookup(positions)), hot)
            names = [n async for n in client.scan_iter(match=keys.position_pattern(prefix))]
            await client.delete(*names)
            await _timed(lambda: _discard(cache.lookup(positions)), refill)
        return hot, refill
    finally:
        await cache.close()
        await store.close()
        names = [n async for n in client.scan_iter(match=f"{prefix}:*")]
        if names:
            await client.delete(*names)
        await client.aclose()


async def _discard(result: Awaitable[object]) -> None:
    await result


async def _ai_opening(url: str, game_name: str, opening_plies: int, depth: int) -> None:
    """AI move times for the first plies of a game the AI plays against itself, twice: with
    a cold cache, then (the same opening again) with the warm one."""
    import ai
    import games
    from server.storage import SqlStore, open_cache, pv_results, usable_answer
    from server.storage.cache import CachedResult

    game = games.load(game_name)
    print(f"\n{game_name}: warm-up (JIT) {ai.warm_up(game_name):.1f} s; "
          f"first {opening_plies} plies at depth {depth}, AI against itself")
    limits = ai.Limits(depth=depth)
    prefix = f"discus-bench-{uuid.uuid4().hex[:8]}"
    store = SqlStore(url)
    await store.open()
    cache = await open_cache(REDIS_URL, store, prefix=prefix)
    try:
        runs: list[tuple[list[float], list[int]]] = []
        for _ in ("cold", "warm"):
            state = game.initial()
            times: list[float] = []
            played: list[int] = []
            for _ply in range(opening_plies):
                start = time.perf_counter()
                children = [state.play(m) for m in state.legal_moves()]
                hits = await cache.lookup([state, *children])
                answer = usable_answer(hits[0], limits)
                if answer is None:
                    last = ai.best(state, limits)
                    await cache.save(pv_results(state, last))
                    answer = CachedResult(last.depth, last.score, 3, last.move, last.exact)
                assert answer.move is not None
                times.append(time.perf_counter() - start)
                played.append(answer.move)
                state = state.play(answer.move)
            runs.append((times, played))
        (cold, cold_moves), (warm, warm_moves) = runs
        for ply, (c, w) in enumerate(zip(cold, warm, strict=True)):
            print(f"  ply {ply + 1}: cold {c * 1000:8.1f} ms   warm {w * 1000:6.2f} ms")
        print(f"  total: cold {sum(cold) * 1000:.0f} ms, warm {sum(warm) * 1000:.1f} ms, "
              f"cold/warm {sum(cold) / max(sum(warm), 1e-9):.0f}x; "
              f"same moves: {'yes' if cold_moves == warm_moves else 'NO'}; "
              f"hit rate {cache.stats()['hit_rate']:.2f}")
    finally:
        await cache.close()
        await store.close()
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(REDIS_URL)
        names = [n async for n in client.scan_iter(match=f"{prefix}:*")]
        if names:
            await client.delete(*names)
        await client.aclose()


async def _forget_positions(url: str) -> None:
    from sqlalchemy import delete

    from server.storage import SqlStore
    from server.storage.models import CachedPosition

    store = SqlStore(url)
    await store.open()
    try:
        async with store.engine.begin() as conn:
            await conn.execute(delete(CachedPosition))
    finally:
        await store.close()


async def _pool_opening(url: str, opening_plies: int, depth: int) -> None:
    """The same cold and warm opening through ``AiPool`` with ``CacheSettings``: what a
    server's AI moves cost with the cache wired in."""
    import redis.asyncio as aioredis

    from ai.levels import Level
    from server.workers import AiJob, AiPool, CacheSettings

    await _forget_positions(url)  # the in-process run above filled the durable tier
    level = Level("bench", 0, "", depth, 30.0, 60.0, None, candidates=1, margin=0, rails=True)
    prefix = f"discus-bench-{uuid.uuid4().hex[:8]}"
    pool = AiPool(processes=1, games=("connect4",), cache=CacheSettings(REDIS_URL, url, prefix))
    await pool.start(wait_ready=True, timeout=180)
    print(f"\nconnect4 through the worker pool (1 process, Redis + PostgreSQL), first "
          f"{opening_plies} plies at depth {depth}, AI against itself")
    try:
        runs: list[tuple[list[float], list[int]]] = []
        for _ in ("cold", "warm"):
            moves: list[int] = []
            times: list[float] = []
            for _ply in range(opening_plies):
                start = time.perf_counter()
                answer = await pool.think(AiJob("connect4", tuple(moves), level, seed=1))
                times.append(time.perf_counter() - start)
                moves.append(answer.move)
            runs.append((times, moves))
        (cold, cold_moves), (warm, warm_moves) = runs
        for ply, (c, w) in enumerate(zip(cold, warm, strict=True)):
            print(f"  ply {ply + 1}: cold {c * 1000:8.1f} ms   warm {w * 1000:6.2f} ms")
        stats = pool.snapshot()
        lookups = stats.cache["lookups"]
        hits = stats.cache["hot_hits"] + stats.cache["durable_hits"]
        print(f"  total: cold {sum(cold) * 1000:.0f} ms, warm {sum(warm) * 1000:.1f} ms, "
              f"cold/warm {sum(cold) / max(sum(warm), 1e-9):.0f}x; "
              f"same moves: {'yes' if cold_moves == warm_moves else 'NO'}; "
              f"moves from the cache {stats.from_cache}/{stats.jobs}; "
              f"lookup hit rate {hits / max(lookups, 1):.2f}")
    finally:
        await pool.close()
        client = aioredis.Redis.from_url(REDIS_URL)
        names = [n async for n in client.scan_iter(match=f"{prefix}:*")]
        if names:
            await client.delete(*names)
        await client.aclose()


async def _main(moves: int, games: int, rounds: int, ai_depth: int) -> None:
    print(f"append_move, target for a whole move round trip p99 {TARGET_P99_MS:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/bench.sqlite3"
        alone, together = await _append_moves(url, moves, games)
        print(_row("SQLite (WAL, synchronous=FULL), one game", alone))
        print(_row(f"SQLite, {games} games at once", together))
    pg_url, drop = await scratch_postgres()
    try:
        alone, together = await _append_moves(pg_url, moves, games)
        print(_row("PostgreSQL, one game", alone))
        print(_row(f"PostgreSQL, {games} games at once", together))
        hot, refill = await _cache_lookups(pg_url, rounds)
        print("\nposition cache: one job-start lookup (root + children)")
        print(_row("Redis hit", hot))
        print(_row("Redis miss, refilled from PostgreSQL", refill))
        if ai_depth:
            await _ai_opening(pg_url, "connect4", 6, ai_depth)
            await _pool_opening(pg_url, 6, ai_depth)
    finally:
        await drop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__)
    parser.add_argument("--moves", type=int, default=400, help="moves per run (bounded)")
    parser.add_argument("--games", type=int, default=16, help="games appending at once")
    parser.add_argument("--rounds", type=int, default=100, help="cache lookups per kind")
    parser.add_argument(
        "--ai-depth", type=int, default=16,
        help="Connect Four search depth for the cold/warm opening run (0: skip it)",
    )
    args = parser.parse_args(argv)
    moves = max(args.games, min(args.moves, 5000))
    asyncio.run(
        _main(moves, max(1, args.games), max(1, min(args.rounds, 1000)), max(0, args.ai_depth))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
