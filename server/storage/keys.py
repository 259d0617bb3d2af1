"""Every Redis key Discus uses, built here and nowhere else.

All keys start with a prefix (default ``discus``) so one Redis can serve several deployments
and each test can own (and delete) its own namespace. Cache keys always carry a TTL, so the
cache never grows without bound even on a Redis without ``maxmemory``; production Redis should
also run with ``maxmemory`` and ``maxmemory-policy volatile-lru`` or ``allkeys-lru`` (see
docker-compose.yml).
"""

from __future__ import annotations

DEFAULT_PREFIX = "discus"
POSITION_TTL_SECONDS = 7 * 24 * 3600  # a week unused and a cached position may go


def position(prefix: str, game: str, canonical_key: str) -> str:
    """One cached search result (value: ``depth|score|bound|move|exact``)."""
    return f"{prefix}:pos:{game}:{canonical_key}"


def position_pattern(prefix: str) -> str:
    """Matches every cached position under ``prefix`` (for SCAN when clearing a namespace)."""
    return f"{prefix}:pos:*"


def cache_stats(prefix: str) -> str:
    """Hash of hit/miss counters summed over every process sharing the cache."""
    return f"{prefix}:cache:stats"


def levels_version(prefix: str) -> str:
    """The levels' version counter (an integer), mirrored from the database's after each
    edit, so a server checks it per AI move without touching the database."""
    return f"{prefix}:levels:version"


def levels_channel(prefix: str) -> str:
    """Pub/sub channel announcing a level edit (message: the new version number)."""
    return f"{prefix}:levels:changed"
