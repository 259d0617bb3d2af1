"""How the server process uses CPython's cyclic collector, so that it never pauses the event
loop for long, even with 10,000 connections.

CPython starts a pass when the count of new container objects, net of those freed, passes a
threshold. A server that frees old objects (finished moves, positions) as fast as it makes new
ones keeps that count low while its youngest generation grows, so one pass now and then walks
hundreds of thousands of objects; and after a wave of new connections (a restart, a burst of
players) one pass of the middle generation walked every new connection's objects, about 150
each (``bench.load``, 10,000 clients: passes of 300–560 ms).

Yet the server's own traffic makes almost no cyclic garbage (``bench.load --gc-census``: none
per move or game; per closed connection only the asyncio transport, which
``release_transport`` frees). So the collector runs on the loop's schedule instead
(``Collector``):

- automatic passes are off; what is alive once the server is set up (compiled rules, numba,
  pydantic schemas) is frozen, out of the collector's sight for good;
- every ``YOUNG_PASS_SECONDS`` one pass over what was made since the last one, then what
  survived it is frozen too: a pause bounded by what the server makes in that time, and no
  pass ever walks the old objects again (reference counting still frees them);
- every ``FULL_PASS_SECONDS`` a full pass over everything, frozen objects included, frees any
  cycle among old objects: the price of freezing, paid rarely (about half a second at 10,000
  connections).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

log = logging.getLogger("discus.gc")

YOUNG_PASS_SECONDS = 0.1
"""Between two passes over the newest objects."""

FULL_PASS_SECONDS = 3600.0
"""Between two full passes, frozen objects included."""


class Collector:
    """The server process's cyclic collector, run from the event loop (module docstring).
    ``start`` once the server is set up, in a process that is only the server."""

    def __init__(self, young_seconds: float = YOUNG_PASS_SECONDS,
                 full_seconds: float = FULL_PASS_SECONDS) -> None:
        self.young_seconds = young_seconds
        self.full_seconds = full_seconds
        self._timer: asyncio.TimerHandle | None = None
        self._next_full = 0.0

    def start(self) -> None:
        gc.collect()
        gc.freeze()
        gc.disable()
        self._next_full = time.monotonic() + self.full_seconds
        self._schedule()

    def stop(self) -> None:
        """Back to CPython's own policy (the frozen objects stay frozen)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        gc.enable()

    def _schedule(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.young_seconds, self._pass)

    def _pass(self) -> None:
        if time.monotonic() >= self._next_full:
            self._next_full = time.monotonic() + self.full_seconds
            full_pass()
        else:
            gc.collect(0)
            gc.freeze()
        self._schedule()


def full_pass() -> tuple[int, float]:
    """Collect everything, frozen objects included, then freeze the survivors again; returns
    (objects freed, seconds taken)."""
    started = time.perf_counter()
    gc.unfreeze()
    freed = gc.collect()
    gc.freeze()
    seconds = time.perf_counter() - started
    log.info("full collection: %d objects freed in %.0f ms", freed, seconds * 1000)
    return freed, seconds


def release_transport(transport: Any) -> None:
    """Break the reference cycle of a closed asyncio socket transport (CPython 3.11's selector
    loop keeps its own read callback as a bound method of itself), so reference counting frees
    the transport, its socket and its buffers at once. Call only once the connection is lost
    (the loop reads from it no more). A transport without the cycle (uvloop's) is left alone."""
    if (transport is not None and transport.is_closing()
            and getattr(transport, "_read_ready_cb", None) is not None
            and getattr(transport, "_sock", 1) is None):
        transport._read_ready_cb = None
