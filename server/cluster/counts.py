"""What a node asks of Redis, counted: every command and byte this node sends to Redis, and
the events it publishes and reads (``Cluster.redis_counts``). The cluster's cost in Redis is
measured, not guessed: the tally is taken on the path redis-py takes anyway, and each node
also writes it to Redis, for a benchmark running the nodes as processes
(``stored_redis_counts``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from server.storage import keys

COUNTS_TTL_SECONDS = 3600
"""A node's stored Redis counts outlive it by an hour."""


@dataclass
class RedisCounts:
    """What one node asked of Redis since it was made (``Cluster.redis_counts``): everything
    through the cluster's client (leases, inboxes, events, presence, registry, the shared
    limits and challenges), not the AI queue's or the cache's."""

    commands: int = 0
    """Commands sent (each command of a pipeline counts)."""
    bytes_sent: int = 0
    """Bytes of those commands."""
    events_published: int = 0
    """PUBLISH commands of events: one per event per other node it goes to."""
    events_local: int = 0
    """Events whose players were all connected to this node: nothing sent to Redis."""
    events_received: int = 0
    """Events read from this node's channel."""
    event_bytes_received: int = 0
    """Bytes of those events (the message and its addresses)."""
    lookups: int = 0
    """Presence sets read to address an event (players outside this node's rooms)."""


def count_commands(client: Any, counts: RedisCounts) -> None:
    """Make every connection ``client`` opens from now on count into ``counts``: one
    addition per command and per write, on the path redis-py takes anyway."""
    pool = client.connection_pool
    base = pool.connection_class

    class Counting(base):  # type: ignore[misc, valid-type]
        def pack_command(self, *args: Any) -> Any:
            counts.commands += 1
            return super().pack_command(*args)

        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            if isinstance(command, bytes | str):
                counts.bytes_sent += len(command)
            else:
                command = list(command)
                counts.bytes_sent += sum(len(chunk) for chunk in command)
            await super().send_packed_command(command, check_health)

    Counting.__name__ = Counting.__qualname__ = f"Counting{base.__name__}"
    pool.connection_class = Counting


async def stored_redis_counts(client: Any, prefix: str = keys.DEFAULT_PREFIX,
                              ) -> dict[str, dict[str, int]]:
    """Every node's ``RedisCounts`` as it last wrote them (at each renewal, and when it
    stopped), by node: for a benchmark that runs the nodes as processes. ``client`` is any
    Redis client of the deployment's Redis."""
    found: dict[str, dict[str, int]] = {}
    async for name in client.scan_iter(match=keys.node_redis_counts_pattern(prefix),
                                       count=500):
        text = name.decode() if isinstance(name, bytes) else str(name)
        value = await client.get(name)
        if value is not None:
            found[text.split(":")[-2]] = json.loads(value)
    return found
