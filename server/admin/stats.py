"""``get_stats``: the AI pool's and the position cache's figures (see docs/PROTOCOL.md).

Read by players (``stats``) and by the admin page (``admin_stats`` wraps it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from server import protocol as p
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.engines import COUNTED, Pool
from server.engines.overload import LoadGauge

log = logging.getLogger("discus.stats")


class StatsDesk:
    """``pool`` may be None (tests of the glue alone); ``cache`` is the server's
    ``PositionCache``, whose shared counters every process on the same Redis adds to;
    ``gauge`` says whether a warm-up under way compiles the engines or loads them."""

    def __init__(self, outbox: Outbox, pool: Pool | None, cache: Any,
                 gauge: LoadGauge | None = None) -> None:
        self.outbox = outbox
        self.pool = pool
        self.cache = cache
        self.gauge = gauge

    async def handle(self, client: Client, player: Player, message: p.GetStats) -> None:
        self.outbox.send([client], await self.stats())

    async def stats(self) -> p.Stats:
        """The ``stats`` message: the AI pool and its position cache (see docs/PROTOCOL.md)."""
        pool = cache = shared = None
        settings = self.pool.cache if self.pool is not None else None
        if self.pool is not None:
            s = self.pool.snapshot()
            pool = p.PoolView(
                workers=s.workers, ready=s.ready, busy=s.busy, idle=s.ready - s.busy,
                queued=s.queued, jobs=s.jobs, fallbacks=s.fallbacks, from_cache=s.from_cache,
                restarts=s.restarts,
                wait_seconds=None if s.wait_seconds is None else round(s.wait_seconds, 1),
                move_seconds_p50=s.percentile(0.5),
                move_seconds_p99=s.percentile(0.99),
                compiling=self.gauge is not None and self.gauge.compiling,
            )
            if settings is not None:
                cache = _cache_view(s.cache, settings.tiers(), settings.database_url is not None)
        if settings is not None and settings.redis_url and self.cache is not None:
            try:
                counters = await self.cache.shared_stats()
            except Exception:  # Redis down: say nothing rather than fail the request
                log.warning("shared cache counters unavailable", exc_info=True)
            else:
                shared = _cache_view({k: int(counters.get(k, 0)) for k in COUNTED},
                                     settings.tiers(), settings.database_url is not None)
        return p.Stats(pool=pool, cache=cache, shared_cache=shared)


def _cache_view(counts: Mapping[str, int], tiers: tuple[str, str], durable: bool
                ) -> p.CacheView:
    """Cache counters as ``stats`` shows them: the hot tier sees every lookup, the durable
    tier only the hot tier's misses."""
    lookups, hot, deep, misses = (counts[k] for k in COUNTED)

    def rate(hits: int, asked: int) -> float:
        return round(hits / asked, 4) if asked else 0.0

    views = [p.CacheTierView(tier=tiers[0], hits=hot, misses=lookups - hot,  # type: ignore[arg-type]
                             hit_rate=rate(hot, lookups))]
    if durable:
        views.append(p.CacheTierView(tier=tiers[1], hits=deep, misses=misses,  # type: ignore[arg-type]
                                     hit_rate=rate(deep, deep + misses)))
    return p.CacheView(lookups=lookups, hits=hot + deep, misses=misses,
                       hit_rate=rate(hot + deep, lookups), tiers=views)
