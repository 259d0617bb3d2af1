"""What the server needs of its AI, whichever kind it has: the ``Pool`` interface, its
figures (``PoolStats``), where the engines find the position cache (``CacheSettings``), and
the deadlines both kinds keep.

Two pools implement it, chosen once at start-up: ``server.engines.local.AiPool`` (engine
processes of this server's own) and ``server.engines.queued.QueuedPool`` (a cluster's
``discus worker`` processes, through Redis). The rooms cannot tell them apart.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from server.engines.fair_queue import QueueWait
from server.engines.messages import COUNTED, AiAnswer, AiJob, Progress

DEFAULT_MARGIN = 1.0
"""Seconds past a level's hard deadline before a move is presumed lost and played by the
quick fallback (a local engine process that late is killed)."""

DEFAULT_QUEUE_TIMEOUT = 15.0
"""Seconds before a waiting job is answered by ``quick_move``: in ``AiPool``, seconds it may
wait while no worker is ready at all (each dead or being replaced; busy workers are no
reason, the job waits its turn); in ``QueuedPool``, seconds for some worker to start it."""


@dataclass(frozen=True)
class CacheSettings:
    """Where engine processes find the shared position cache (``server.storage.open_sync_cache``).

    ``redis_url`` None means each process keeps an in-process LRU; ``database_url`` is the
    server's (already migrated) database, whose ``position_cache`` table is the durable tier.
    """

    redis_url: str | None
    database_url: str | None
    """None: no durable tier (the server keeps no SQL database)."""
    prefix: str = "discus"

    def tiers(self) -> tuple[str, str]:
        """Names of the hot and the durable tier, as ``stats`` reports them."""
        durable = "sqlite" if (self.database_url or "").startswith("sqlite") else "postgresql"
        return ("redis" if self.redis_url else "lru"), durable


@dataclass
class PoolStats:
    """What an operator wants to see (the ``stats`` message; the admin issue shows it).

    ``seconds``: for recent moves, the time from ``think`` to its answer (queueing included).
    ``cache``: the engines' position cache counters (``COUNTED``), summed over every job.
    """

    workers: int
    ready: int
    busy: int
    queued: int
    jobs: int = 0
    fallbacks: int = 0
    from_cache: int = 0
    restarts: int = 0
    wait_seconds: float | None = None
    """The estimated wait of a move asked now for a free worker (0: one is free); None when
    the pool cannot tell (no ready worker, or a cluster's queue)."""
    seconds: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=500))
    cache: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))

    def percentile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1) of ``seconds``, None before the first move."""
        if not self.seconds:
            return None
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Pool(Protocol):
    """What the server needs of its AI: ``AiPool`` (engine processes of its own) and
    ``QueuedPool`` (a cluster's ``discus worker`` processes) both are one."""

    @property
    def size(self) -> int:
        """Engine processes that can search at once (a calibration keeps this many busy)."""

    games: tuple[str, ...]
    cache: CacheSettings | None

    async def start(self, wait_ready: bool = False, timeout: float = 120.0) -> None: ...

    async def think(self, job: AiJob, on_progress: Callable[[Progress], None] | None = None,
                    room: str | None = None,
                    on_wait: Callable[[QueueWait], None] | None = None) -> AiAnswer:
        """The move for ``job`` (always legal). ``room`` names whose move it is, so waiting
        moves are taken fairly across rooms; ``on_wait`` is told, while the move waits for a
        free engine, its place and estimated wait (a pool that cannot tell never calls it)."""
        ...

    def snapshot(self) -> PoolStats: ...

    async def close(self) -> None: ...
