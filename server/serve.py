"""``discus serve``: the whole server in this process plus its AI worker processes.

Opens the store, the position cache and the AI pool, decides whether this server is a node of
a cluster (Redis and a SQL store shared), and runs ``server.app.running`` until SIGINT or
SIGTERM, on uvloop where it is installed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import time
from collections.abc import Coroutine
from typing import Any

from server.app import running
from server.cluster.cluster import Cluster
from server.engines import AiPool, Pool
from server.engines.overload import LoadGauge
from server.gc_policy import Collector
from server.settings import MIN_AI_MOVE_SECONDS, IdleProving, Settings
from server.storage.memory import MemoryStore
from server.storage.store import Store
from server.web.sources import DEFAULT_SOURCE_LIMITS, SourceLimits

log = logging.getLogger("discus.server")


async def serve_forever(host: str = "127.0.0.1", port: int = 8000, store: Store | None = None,
                        workers: int | None = None, secret: bytes | None = None,
                        redis_url: str | None = None, settings: Settings | None = None,
                        lease: float | None = None) -> None:
    """Run until SIGINT or SIGTERM, then shut down cleanly.

    The store is opened (and migrated) first; then the position cache (Redis at
    ``redis_url``, else ``$REDIS_URL``, else in-process LRUs, over the store's table when it
    is SQL), then the workers, which open the same cache themselves. With Redis and a SQL
    store the server is a node of a cluster (``server.cluster.cluster``) sharing both: leases of
    ``lease`` seconds (default ``ClusterSettings``), renewed three times as often.
    """
    from server.engines import CacheSettings
    from server.storage import SqlStore, open_cache
    from server.storage import redis_url as resolve_redis_url

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    store = store if store is not None else MemoryStore()
    await store.open()
    cache = await open_cache(redis_url, store)
    sql_url = store.url if isinstance(store, SqlStore) else None
    shared = resolve_redis_url(redis_url)
    pool: Pool
    if workers == 0:
        if shared is None:
            raise ValueError("a server without AI workers needs Redis (REDIS_URL or "
                             "--redis-url), where `discus worker` processes take its AI moves")
        from server.engines import QueuedPool

        pool = QueuedPool(shared, database_url=sql_url)
    else:
        pool = AiPool(processes=workers, cache=CacheSettings(shared, sql_url))
    await pool.start()
    cluster = None
    if shared is not None and sql_url is not None:
        from server.cluster.leases import ClusterSettings

        timing = ClusterSettings() if lease is None else ClusterSettings(
            lease_seconds=lease, renew_seconds=lease / 3)
        cluster = Cluster(shared, settings=timing)
    async with running(host, port, store=store, pool=pool, settings=settings, secret=secret,
                       cache=cache, redis_url=shared, cluster=cluster) as server:
        collector = Collector()
        collector.start()
        log.info("Discus on http://%s:%d/ (websocket %s)", host, server.port, server.url)
        print(f"Discus serving http://{host}:{server.port}/ — Ctrl-C to stop", flush=True)
        telling = asyncio.create_task(tell_warm_up(server.app.gauge))
        await stop.wait()
        telling.cancel()
        collector.stop()
        print("Discus shutting down", flush=True)


async def tell_warm_up(gauge: LoadGauge, every: float = 10.0, quiet: float = 2.0) -> None:
    """Say how the engines' warm-up goes, so a first start (which compiles them for about a
    minute) never looks hung: when it takes more than a moment, then every ``every``
    seconds until the workers are ready, then that they are. A start that loads them from
    numba's cache says so, and is not called a first start. Nothing is said for a warm-up
    done within ``quiet`` seconds (a start from the cache usually is)."""
    started = time.monotonic()
    await asyncio.sleep(quiet)
    told = False
    while gauge.warming is not None:
        first = (" (a first start only; later starts load them from numba's cache)"
                 if gauge.compiling else "")
        print(f"Discus: {gauge.warming}{first}", flush=True)
        told = True
        for _ in range(int(every / 0.5)):
            if gauge.warming is None:
                break
            await asyncio.sleep(0.5)
    if told:
        print(f"Discus: the engines are ready ({time.monotonic() - started:.0f} s after "
              "the start)", flush=True)


def persistent_secret() -> bytes:
    """``$DISCUS_SECRET``, else a random secret kept in the data directory (created once), so
    resume tokens stay valid across restarts. Servers sharing a database must share it."""
    from_env = os.environb.get(b"DISCUS_SECRET")
    if from_env:
        return from_env
    from server.storage.config import data_dir

    path = data_dir() / "server-secret"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_bytes(secrets.token_bytes(32))
    os.chmod(path, 0o600)  # made before the data directory was kept private, perhaps
    return path.read_bytes()


def run_loop(main: Coroutine[Any, Any, None], loop: str | None = None) -> None:
    """Run ``main`` on uvloop where it is installed (the ``fast`` extra), else on asyncio's
    own loop; ``loop`` (else ``$DISCUS_EVENT_LOOP``) ``"asyncio"`` forces the latter.
    uvloop is a drop-in loop written in C: ``bench.load --loop`` measures what it saves."""
    choice = loop or os.environ.get("DISCUS_EVENT_LOOP") or "uvloop"
    if choice == "uvloop":
        try:
            import uvloop
        except ImportError:
            choice = "asyncio"
        else:
            uvloop.run(main)
            return
    if choice != "asyncio":
        raise ValueError(f"unknown event loop {choice!r}: 'uvloop' or 'asyncio'")
    asyncio.run(main)


def run(host: str = "127.0.0.1", port: int = 8000, database_url: str | None = None,
        redis_url: str | None = None, workers: int | None = None,
        bot_registration: bool = False, lease: float | None = None,
        chat_guests: bool = False, idle_proving: bool = True,
        trusted_proxies: tuple[str, ...] = (),
        allowed_origins: tuple[str, ...] = (),
        sources: SourceLimits = DEFAULT_SOURCE_LIMITS) -> None:
    """``discus serve``: the whole server in this process plus its AI worker processes.

    Games are kept by ``server.storage``: ``database_url``, else ``$DATABASE_URL``, else the
    embedded SQLite file in the data directory; unfinished games come back on restart.
    The AI workers share a position cache: ``redis_url`` (else ``$REDIS_URL``) for the hot
    tier, else an LRU per process, over the database's ``position_cache`` table.
    ``bot_registration`` lets connections make bot accounts (``Settings.bot_registration``);
    ``chat_guests`` lets guests write in the lobby chat (``Settings.chat_guests_in_lobby``);
    ``idle_proving`` lets idle AI workers prove stored games' positions
    (``Settings.idle_proving``);
    ``trusted_proxies``, ``allowed_origins`` and ``sources`` are ``Settings``'
    (docs/SECURITY.md).
    """
    from server.storage import open_store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from server.web import proxy

    proxy.networks(trusted_proxies)  # a bad address fails here, before anything starts
    settings = Settings(bot_registration=bot_registration, chat_guests_in_lobby=chat_guests,
                        min_ai_move_seconds=MIN_AI_MOVE_SECONDS,
                        trusted_proxies=trusted_proxies, allowed_origins=allowed_origins,
                        sources=sources, idle_proving=IdleProving(enabled=idle_proving))
    run_loop(serve_forever(host, port, store=open_store(database_url), workers=workers,
                              secret=persistent_secret(), redis_url=redis_url,
                              settings=settings, lease=lease))


def main() -> None:
    """``python -m server.serve``: serve on the defaults."""
    run()


if __name__ == "__main__":
    main()
