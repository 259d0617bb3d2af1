"""Bot limits kept across every node of a cluster, in Redis.

``BotLimiter`` (``server.bots.limits``) counts in one process: behind a load balancer a bot
could open ``connections_per_token`` connections on each node and move at
``moves_per_minute`` on each. Here the same two limits are kept in Redis by scripts that
check and count in one step (two nodes cannot both pass a check for the last place), and
raise the same ``LimitExceeded``. The third limit, ``concurrent_games``, needs no counter of
its own: the database holds every node's unfinished games (``BotDesk.check_games``).

A connection is counted under its node, so the connections of a node that died (its
liveness key in ``server.cluster.cluster`` gone) stop counting at the next check instead of
locking the token out.
"""

from __future__ import annotations

import math
from typing import Any

from server.bots.limits import BotLimits, LimitExceeded
from server.storage import keys

_OPEN = """
local fields = redis.call('hkeys', KEYS[1])
local held = 0
for _, field in ipairs(fields) do
  local node = string.match(field, '^([^/]+)/')
  if redis.call('exists', ARGV[1] .. node) == 1 then
    held = held + 1
  else
    redis.call('hdel', KEYS[1], field)
  end
end
if held >= tonumber(ARGV[3]) then return -held end
redis.call('hset', KEYS[1], ARGV[2], 1)
redis.call('expire', KEYS[1], 86400)
return held + 1
"""
"""Count connection ARGV[2] (``node/id``) unless the token holds ARGV[3] on live nodes;
the count after, or minus the count held when refused. ARGV[1]: the node key prefix."""

_MOVE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('hmget', KEYS[1], 'tokens', 'stamp')
local tokens = burst
if state[1] then
  tokens = math.min(burst, tonumber(state[1]) + (now - tonumber(state[2])) * rate)
end
if tokens < 1 then return tostring((1 - tokens) / rate) end
redis.call('hset', KEYS[1], 'tokens', tostring(tokens - 1), 'stamp', tostring(now))
redis.call('expire', KEYS[1], math.ceil(burst / rate) + 60)
return '0'
"""
"""Take one move from the bot's bucket: '0', or the seconds until one is back."""


class SharedBotLimiter:
    """``connections_per_token`` and ``moves_per_minute`` for every node on one Redis."""

    def __init__(self, client: Any, prefix: str, node: str, limits: BotLimits) -> None:
        self.limits = limits
        self._prefix = prefix
        self._node = node
        self._open = client.register_script(_OPEN)
        self._move = client.register_script(_MOVE)
        self._client = client

    async def open_connection(self, token_id: str, connection: str) -> None:
        allowed = self.limits.connections_per_token
        held = int(await self._open(
            keys=[keys.bot_connections(self._prefix, token_id)],
            args=[keys.cluster_node(self._prefix, ""), f"{self._node}/{connection}", allowed]))
        if held < 0:
            raise LimitExceeded(
                "connections_per_token", allowed, None,
                f"this bot token already has {-held} open connection(s) on this service, "
                "the most allowed; close one first (earlier connections are kept)")

    async def close_connection(self, token_id: str, connection: str) -> None:
        await self._client.hdel(keys.bot_connections(self._prefix, token_id),
                                f"{self._node}/{connection}")

    async def take_move(self, bot_id: str, now: float) -> None:
        """``now``: wall-clock seconds (every node's clock counts alike)."""
        rate = self.limits.moves_per_minute / 60.0
        wait = float(await self._move(keys=[keys.bot_moves(self._prefix, bot_id)],
                                      args=[rate, self.limits.move_burst, now]))
        if wait > 0:
            wait = math.ceil(wait * 1000) / 1000
            raise LimitExceeded(
                "moves_per_minute", self.limits.moves_per_minute, wait,
                f"a bot may make {self.limits.moves_per_minute:g} moves a minute "
                f"(bursts of {self.limits.move_burst}); retry in {wait:g} s")
