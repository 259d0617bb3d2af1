"""The Redis streams between server nodes and ``discus worker`` processes: what both sides
share (the entry's one field, the consumer group, the streams' caps, who is alive).

Why Streams and not pub/sub or a list: a consumer group hands each job to exactly one
worker, remembers which worker holds it until it is acknowledged, and lets another worker
take it over (``XAUTOCLAIM``) when the holder dies; pub/sub would lose jobs nobody listens
for, and a list (``BRPOPLPUSH``) would need that bookkeeping written by hand. Answers use a
stream per node rather than pub/sub so an answer published during a reconnect is not lost.

Every entry is one field, ``FIELD``, holding one message of ``server.engines.messages`` in
its one encoding: ``Posted`` on the job stream (``keys.ai_jobs``); ``Started``, ``Thinking``,
``Answered`` or ``Failed`` on a node's reply stream (``keys.ai_replies``). A live worker's key
(``keys.ai_worker``) holds its ``WorkerAlive``.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import ResponseError

from server.engines.messages import Message, WorkerAlive, decode, encode
from server.storage import keys

log = logging.getLogger(__name__)

FIELD = "m"
"""The one field of every job and reply entry; its value is the encoded message."""

JOBS_MAXLEN = 100_000
"""Approximate cap on the job stream: acknowledged jobs are deleted, so only a backlog with no
worker at all grows it, and those jobs were answered by the quick move long ago."""

REPLIES_MAXLEN = 10_000
REPLIES_TTL_SECONDS = 3600
"""A node's reply stream outlives a node that stopped by an hour at most."""


def entry(message: Message) -> dict[Any, Any]:
    """``message`` as the fields of a stream entry."""
    return {FIELD: encode(message)}


def read(fields: dict[bytes, bytes], *expected: type[Message]) -> Message:
    """The message in a stream entry's fields (``ValueError`` unless of an ``expected``
    type)."""
    return decode(fields[FIELD.encode()], *expected)


async def ensure_group(client: Any, prefix: str) -> None:
    """Create the job stream and its consumer group unless they exist."""
    try:
        await client.xgroup_create(keys.ai_jobs(prefix), keys.AI_GROUP, id="0", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


async def live_workers(client: Any, prefix: str) -> list[WorkerAlive]:
    """What every live ``discus worker`` last said of itself (a key that is no
    ``WorkerAlive``, say from a worker of another version, is skipped)."""
    names = [k async for k in client.scan_iter(match=keys.ai_worker_pattern(prefix), count=100)]
    values = await client.mget(names) if names else []
    alive = []
    for name, value in zip(names, values, strict=True):
        if value is None:
            continue
        try:
            said = decode(value, WorkerAlive)
        except ValueError:
            log.warning("the live-worker key %s is not understood; skipped", name)
            continue
        assert isinstance(said, WorkerAlive)
        alive.append(said)
    return alive
