"""What the cluster tests share: a Redis key prefix of their own, the fast lease settings,
and two whole nodes on one fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
from people import CHEAP_HASHER

from server.app import Running, running
from server.cluster.cluster import Cluster
from server.cluster.leases import ClusterSettings
from server.storage import SqlStore
from tests.server.storage.conftest import (  # noqa: F401 - the fixture
    REDIS_URL,
    create_database,
    drop_database,
    redis_prefix,
)

SECRET = b"the cluster test's secret"
FAST = ClusterSettings(lease_seconds=1.5, renew_seconds=0.3, forward_timeout=5.0)


@pytest.fixture
def prefix(redis_prefix: str) -> str:  # noqa: F811
    """A Redis key prefix owned by the test (its keys are deleted afterwards)."""
    return redis_prefix


@pytest.fixture
async def nodes(prefix: str) -> AsyncIterator[tuple[Running, Running]]:
    """Two nodes of one cluster over a database of the test's own."""
    url, name = await create_database()
    try:
        async with AsyncExitStack() as stack:
            started = []
            for _ in range(2):
                node = await stack.enter_async_context(running(
                    store=SqlStore(url), secret=SECRET,
                    cluster=Cluster(REDIS_URL, prefix=prefix, settings=FAST)))
                node.app.accounts.hasher = CHEAP_HASHER
                started.append(node)
            yield started[0], started[1]
    finally:
        await drop_database(name)
