"""Argon2 work (about 0.1 s of a core per password) through a bounded queue, fair per source.

At most ``workers`` hashes run at once, off the event loop, so a burst of sign-ins never takes
every core from the games. Waiting hashes are served round-robin over their sources (client
addresses), so one address holding thirty connections gets one turn in each round like
everybody else; past ``per_source`` hashes waiting or running for one source, or ``total``
for everyone, a request is refused at once (``Busy``, with a ``retry_after`` estimated from
the recent hash time) rather than queued for a minute.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Busy(Exception):
    """The queue is full for this source or for everyone; ``retry_after`` seconds."""

    def __init__(self, retry_after: float, limit: str) -> None:
        super().__init__(f"the password checks are busy; retry in {retry_after:g} s")
        self.retry_after = retry_after
        self.limit = limit


class HashQueue:
    """See the module docstring. ``run`` is the one entry point."""

    def __init__(self, workers: int = 2, per_source: int = 3, total: int = 64) -> None:
        self.workers = workers
        self.per_source = per_source
        self.total = total
        self.seconds = 0.1
        """A moving average of one hash's time, for ``retry_after``."""
        self._running = 0
        self._held: collections.Counter[str] = collections.Counter()
        """Hashes waiting or running, per source."""
        self._waiting: collections.OrderedDict[str, collections.deque[asyncio.Future[None]]] = (
            collections.OrderedDict())

    @property
    def depth(self) -> int:
        """Hashes waiting for a worker."""
        return sum(len(q) for q in self._waiting.values())

    async def run(self, source: str, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a thread when ``source``'s turn comes; ``Busy`` at once if the
        queue is full for it."""
        if self._held[source] >= self.per_source:
            raise Busy(self._estimate(self._held[source]), "hash_source")
        if self.depth >= self.total:
            raise Busy(self._estimate(self.depth), "hash_queue")
        self._held[source] += 1
        try:
            await self._turn(source)
            try:
                started = time.perf_counter()
                result = await asyncio.to_thread(work, *args)
                self.seconds = 0.8 * self.seconds + 0.2 * (time.perf_counter() - started)
                return result
            finally:
                self._running -= 1
                self._dispatch()
        finally:
            self._held[source] -= 1
            if not self._held[source]:
                del self._held[source]

    async def _turn(self, source: str) -> None:
        """Wait for a worker; returns with ``_running`` counting this hash."""
        if self._running < self.workers and not self._waiting:
            self._running += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(source, collections.deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._running -= 1  # granted as it was cancelled: hand the worker on
                self._dispatch()
            else:
                queue = self._waiting.get(source)
                if queue is not None and turn in queue:
                    queue.remove(turn)
                    if not queue:
                        del self._waiting[source]
            raise

    def _dispatch(self) -> None:
        """Give free workers to the waiting, one source after another."""
        while self._running < self.workers and self._waiting:
            source, queue = next(iter(self._waiting.items()))
            turn = queue.popleft()
            del self._waiting[source]
            if queue:
                self._waiting[source] = queue  # to the back of the round
            if not turn.done():
                self._running += 1
                turn.set_result(None)

    def _estimate(self, ahead: int) -> float:
        return round(max(0.5, (ahead + 1) * self.seconds / max(1, self.workers) * 2), 1)
