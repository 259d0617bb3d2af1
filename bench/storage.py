"""How long the server waits for a move to be durable, and for a cache lookup.

``python -m bench.storage [--moves N] [--games G]`` (or ``discus bench storage``): appends
N moves (default 400) on PostgreSQL (a scratch database, dropped afterwards) and on SQLite (a
scratch file), first one at a time, then spread over G games appending at once (default 16,
as during a load run), and reports p50/p99 per ``append_move``; then the position cache's
job-start lookup (a root and its children) on Redis and from PostgreSQL after Redis lost it;
then AI move times over the first 6 plies of a repeated opening of each game at shipped
levels (``--ai-levels``, default medium and hard), cold and warm, through the server's worker
pool (a real worker process with the cache wired as ``discus serve`` wires it; the time is
the server's wait for each move).
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
    from server.storage.store import GameRecord, MoveRecord

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


def _person(state: object, ply: int) -> int:
    """The person's move in the opening runs: fixed by the position and the ply."""
    legal = state.legal_moves()  # type: ignore[attr-defined]
    move: int = legal[(3 * ply + 1) % len(legal)]
    return move


async def _pool_opening(url: str, game: str, level_name: str, plies: int) -> bool:
    """AI move times over the first ``plies`` of an opening against a person (fixed moves)
    at a shipped level, the AI first and then second (so every ply is an AI move once),
    through ``AiPool`` with ``CacheSettings`` as ``discus serve`` wires it: once with an
    empty cache, then the same opening again (same seeds) with the warm one. The time is
    the server's wait for each move. True when both runs played the same moves.
    """
    import redis.asyncio as aioredis

    import games as rules
    from ai.levels import find
    from server.engines import AiJob, AiPool, CacheSettings

    level = find(game, level_name)
    print(f"\n{game} {level_name} (depth {level.max_depth}, {level.candidates} candidates), "
          f"first {plies} plies against a person, 1 worker, Redis + PostgreSQL")
    cold: dict[int, float] = {}
    warm: dict[int, float] = {}
    from_cache: dict[int, bool] = {}
    same = True
    searched = 0
    for ai_side in (0, 1):
        await _forget_positions(url)
        prefix = f"discus-bench-{uuid.uuid4().hex[:8]}"
        pool = AiPool(processes=1, games=(game,), cache=CacheSettings(REDIS_URL, url, prefix))
        await pool.start(wait_ready=True, timeout=180)
        try:
            played: list[list[int]] = []
            for times in (cold, warm):
                state = rules.load(game).initial()
                moves: list[int] = []
                for ply in range(plies):
                    if ply % 2 == ai_side:
                        start = time.perf_counter()
                        answer = await pool.think(AiJob(game, tuple(moves), level, 101 + ply))
                        times[ply] = time.perf_counter() - start
                        from_cache[ply] = answer.cached
                        move = answer.move
                    else:
                        move = _person(state, ply)
                    moves.append(move)
                    state = state.play(move)
                played.append(moves)
            same = same and played[0] == played[1]
            searched += pool.snapshot().jobs - pool.snapshot().from_cache
        finally:
            await pool.close()
            client = aioredis.Redis.from_url(REDIS_URL)
            names = [n async for n in client.scan_iter(match=f"{prefix}:*")]
            if names:
                await client.delete(*names)
            await client.aclose()
    for ply in range(plies):
        print(f"  ply {ply + 1}: cold {cold[ply] * 1000:8.1f} ms   warm {warm[ply] * 1000:8.2f} ms"
              f"   {'(cached)' if from_cache[ply] else '(searched)'}")
    total_cold, total_warm = sum(cold.values()), sum(warm.values())
    print(f"  total: cold {total_cold * 1000:.0f} ms, warm {total_warm * 1000:.1f} ms, "
          f"cold/warm {total_cold / max(total_warm, 1e-9):.1f}x; "
          f"same moves: {'yes' if same else 'NO'}; warm moves from the cache "
          f"{sum(from_cache.values())}/{plies} ({searched} searches in all)")
    return same


async def _main(moves: int, games: int, rounds: int, ai_levels: Sequence[str]) -> None:
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
        for level in ai_levels:
            for game in ("connect4", "othello"):
                await _pool_opening(pg_url, game, level, 6)
    finally:
        await drop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__)
    parser.add_argument("--moves", type=int, default=400, help="moves per run (bounded)")
    parser.add_argument("--games", type=int, default=16, help="games appending at once")
    parser.add_argument("--rounds", type=int, default=100, help="cache lookups per kind")
    parser.add_argument(
        "--ai-levels", default="medium,hard",
        help="shipped levels for the cold/warm opening runs, comma-separated ('': skip them)",
    )
    args = parser.parse_args(argv)
    moves = max(args.games, min(args.moves, 5000))
    asyncio.run(
        _main(moves, max(1, args.games), max(1, min(args.rounds, 1000)),
              [name for name in args.ai_levels.split(",") if name])
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
