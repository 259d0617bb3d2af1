"""How this server's AI workers and position cache are doing (``server.admin.stats``): the
figures anyone may ask for with ``stats``, and that ``admin_stats`` adds the rooms to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.common import _ClientMessage, _Message

__all__ = [
    "GetStats", "PoolView", "CacheTierView", "CacheView", "Stats",
]


# --- client -> server -----------------------------------------------------------------------------


class GetStats(_ClientMessage):
    """Ask how the AI workers and the position cache are doing; answered by ``stats``.
    Anyone may ask (it says nothing about players); ``admin_get_stats`` adds rooms."""

    type: Literal["stats"] = "stats"


# --- views ----------------------------------------------------------------------------------------


class PoolView(_Message):
    """The AI worker processes of this server."""

    workers: int = Field(description="Worker processes running.")
    ready: int = Field(description="Workers warmed up (the others are still starting).")
    busy: int = Field(description="Workers searching a move now.")
    idle: int = Field(description="Ready workers without a job.")
    queued: int = Field(description="AI moves waiting for a free worker.")
    jobs: int = Field(description="AI moves answered since the server started.")
    fallbacks: int = Field(description="... of them made by the quick fallback, not a search.")
    from_cache: int = Field(description="... of them played from the position cache.")
    restarts: int = Field(description="Workers replaced after hanging or dying.")
    wait_seconds: float | None = Field(
        default=None, description="Estimated seconds an AI move asked now would wait for a "
        "free worker (0: one is free); null when the server cannot tell.")
    move_seconds_p50: float | None = Field(
        description="Median seconds from asking for an AI move to having it (recent moves).")
    move_seconds_p99: float | None = Field(description="99th percentile of the same.")
    compiling: bool = Field(
        default=False, description="While workers warm up (`ready` below `workers`): true "
        "when they compile the engines (a first start, about a minute), false when they load "
        "them from numba's cache (seconds).")


class CacheTierView(_Message):
    """One tier of the position cache, as seen by the lookups that reached it."""

    tier: Literal["redis", "lru", "postgresql", "sqlite"] = Field(
        description="redis or lru: the hot tier; postgresql or sqlite: the durable table.")
    hits: int
    misses: int = Field(description="Lookups this tier could not answer (passed on, or lost).")
    hit_rate: float = Field(description="hits / (hits + misses); 0 before any lookup.")


class CacheView(_Message):
    """Position cache lookups (a root and its children per AI move)."""

    lookups: int
    hits: int = Field(description="Found in any tier.")
    misses: int = Field(description="Found in no tier.")
    hit_rate: float
    tiers: list[CacheTierView] = Field(description="Hot tier first, then the durable one.")


# --- server -> client -----------------------------------------------------------------------------


class Stats(_Message):
    """Answer to ``stats``. ``cache`` counts this server's workers' lookups; ``shared_cache``
    those of every process on the same Redis (null without Redis); either is null when
    there is no cache."""

    type: Literal["stats"] = "stats"
    pool: PoolView | None = Field(description="Null when AI moves are made without workers.")
    cache: CacheView | None = None
    shared_cache: CacheView | None = None
