"""When a node is saturated: shed new connections instead of slowing every player down.

Every connected player's latency grows with the event loop's lag, so past a point one more
connection makes the game worse for all of them. ``LoadGauge`` says when that point is
passed: the loop ran late by more than ``max_lag`` seconds within the last ``window``
seconds (``watch`` measures it: a timer that should fire every ``interval`` seconds, and how
late it fires), or ``max_connections`` are open. The server then closes each new connection
at once with 1013 ("try again later") and a reason, and answers ``/readyz`` with 503, so a
load balancer's health check sends new players to another node until this one recovers.
Players already connected are never dropped for it.

While the AI workers warm up (a first start compiles the engines for about a minute, a later
one loads them from numba's cache in seconds; either shows as loop lag here too) the lag is
not counted: it is the server's own start, not its players, and a new or reconnecting player
is never refused for it. ``watch_warm_up`` keeps ``LoadGauge.warming`` saying how far the
warm-up has come, and ``LoadGauge.compiling`` whether it compiles or loads.
"""

from __future__ import annotations

import asyncio
import collections
import time

from ai.jitcache import cache_ready
from server.engines import Pool


class LoadGauge:
    """The loop's recent lag and the open connections; ``busy`` says if a node must shed."""

    def __init__(self, max_lag: float, max_connections: int, window: float = 2.0) -> None:
        self.max_lag = max_lag
        self.max_connections = max_connections
        self.window = window
        self.connections = 0
        self.warming: str | None = None
        """While the AI workers warm up: how far they are (``watch_warm_up``); else None."""
        self.compiling = False
        """While they warm up: True if they compile the kernels, False if they load them
        from numba's cache."""
        self._late: collections.deque[tuple[float, float]] = collections.deque()
        """(when, seconds late) of every sample over ``max_lag`` within ``window``."""

    def record_lag(self, seconds: float, now: float) -> None:
        if seconds > self.max_lag and self.warming is None:
            self._late.append((now, seconds))

    def busy(self, now: float) -> str | None:
        """Why a new connection must be shed now, or None when it is welcome."""
        while self._late and now - self._late[0][0] > self.window:
            self._late.popleft()
        if self.connections >= self.max_connections:
            return f"this server holds its maximum of {self.max_connections} connections"
        if self._late:
            worst = max(late for _, late in self._late)
            return f"this server is overloaded (its event loop ran {worst:.2f} s late)"
        return None


async def watch(gauge: LoadGauge, interval: float = 0.1) -> None:
    """Measure the running loop's lag into ``gauge`` until cancelled."""
    while True:
        due = time.monotonic() + interval
        await asyncio.sleep(interval)
        now = time.monotonic()
        gauge.record_lag(now - due, now)


def warming_text(ready: int, workers: int, seconds: float, compiling: bool) -> str:
    """What ``LoadGauge.warming`` says: ``ready`` of ``workers`` after ``seconds``, the
    kernels being compiled or loaded from numba's cache."""
    doing = "compiling" if compiling else "loading from numba's cache"
    return (f"the engines are {doing}: {ready} of {workers} AI workers ready after "
            f"{seconds:.0f} s; AI moves come from the quick fallback meanwhile")


async def watch_warm_up(gauge: LoadGauge, pool: Pool, interval: float = 0.5,
                        compiling: bool | None = None) -> None:
    """Keep ``gauge.warming`` saying how many of ``pool``'s workers are warm until all are
    (then None, and return). A pool without workers of its own (a cluster's queue) has
    nothing to warm. ``compiling``: whether the workers compile the kernels; None guesses
    it from numba's cache files (``ai.jitcache.cache_ready``), so call this as the workers
    start, before they write any."""
    started = time.monotonic()
    gauge.compiling = not cache_ready() if compiling is None else compiling
    while True:
        stats = pool.snapshot()
        if stats.workers == 0 or stats.ready >= stats.workers:
            gauge.warming = None
            return
        gauge.warming = warming_text(stats.ready, stats.workers, time.monotonic() - started,
                                     gauge.compiling)
        await asyncio.sleep(interval)
