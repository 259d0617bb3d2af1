"""The sign-in limits' counts (``server.people.sign_in_limits.Counts``) kept across every node
of a cluster, in Redis: on one node alone, a guesser could make the limits' failures on each
node behind the load balancer."""

from __future__ import annotations

import math
import secrets
from typing import Any

from server.storage import keys

_RECENT = """
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1] - ARGV[2])
local n = redis.call('zcard', KEYS[1])
if n == 0 then return {0, '0', ARGV[1]} end
local newest = redis.call('zrange', KEYS[1], -1, -1, 'WITHSCORES')
local oldest = redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES')
return {n, newest[2], oldest[2]}
"""
"""Drop events older than the window (ARGV[2] s before ARGV[1], now); how many remain, the
newest's time and the oldest's (now for none)."""


class SharedCounts:
    """``server.people.sign_in_limits.Counts`` on one Redis for every node: on one node alone, a
    guesser could make the limits' failures on each node behind the load balancer. One
    sorted set per key, a unique member per event scored by its wall-clock time."""

    def __init__(self, client: Any, prefix: str) -> None:
        self._prefix = prefix
        self._client = client
        self._recent = client.register_script(_RECENT)

    async def _read(self, key: str, now: float, window: float) -> tuple[int, float, float]:
        n, newest, oldest = await self._recent(
            keys=[keys.sign_in_counts(self._prefix, key)], args=[now, window])
        return int(n), float(newest), float(oldest)

    async def recent(self, key: str, now: float, window: float) -> tuple[int, float]:
        n, newest, _ = await self._read(key, now, window)
        return n, newest

    async def oldest(self, key: str, now: float, window: float) -> float:
        return (await self._read(key, now, window))[2]

    async def note(self, key: str, now: float, window: float) -> None:
        name = keys.sign_in_counts(self._prefix, key)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.zadd(name, {secrets.token_hex(6): now})
            pipe.expire(name, math.ceil(window) + 60)
            await pipe.execute()

    async def forget(self, key: str) -> None:
        await self._client.delete(keys.sign_in_counts(self._prefix, key))
