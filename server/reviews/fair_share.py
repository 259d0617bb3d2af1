"""The engine lanes reviews and analyses run on, shared fairly among addresses.

Why: engine work is not preemptible (a Connect Four proof runs for seconds), so a queue in
arrival order lets one address that keeps asking for slow positions hold every lane while
another person's quick question waits behind it. Here each address may hold at most
``cap`` lanes (half of them, at least one), so with two lanes one lane is always free of any
given address; a free lane goes to the waiting address holding the fewest, the one served
longest ago first (round robin). A lane is given back only when its work is really done: work
whose asker went away keeps its lane until the engine finishes it, so closing connections
cannot free lanes that are still busy.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque


class FairShare:
    """``lanes`` engine lanes (numbered from 0, the first given out first)."""

    def __init__(self, lanes: int) -> None:
        if lanes < 1:
            raise ValueError("reviews and analyses need one engine lane at least")
        self.lanes = lanes
        self.cap = max(1, lanes // 2)
        """Lanes one address may hold at once."""
        self._free = list(range(lanes))
        self._running: Counter[str] = Counter()
        self._waiting: dict[str, deque[asyncio.Future[int]]] = {}
        """Per address, its requests waiting for a lane."""
        self._served: dict[str, int] = {}
        """When each address was last given a lane (a count of lanes given): the one served
        longest ago goes first among those holding as few."""
        self._given = 0

    REMEMBERED = 4096
    """Past this many addresses in ``_served``, those neither holding nor waiting are
    forgotten (they come back as if never served: at worst one turn early)."""

    def running(self, source: str) -> int:
        """Lanes ``source`` holds now."""
        return self._running[source]

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    async def acquire(self, source: str) -> int:
        """Wait for a lane for ``source`` (its turn, and a free lane under its cap); the
        caller must ``release`` it when the work is done. Cancelled while waiting: nothing
        is held."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(source, deque()).append(future)
        self._dispatch()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(source, future.result())  # given a lane as it was cancelled
            else:
                queue = self._waiting.get(source)
                if queue is not None and future in queue:
                    queue.remove(future)
                    if not queue:
                        del self._waiting[source]
            raise

    def release(self, source: str, lane: int) -> None:
        """``lane`` is free again; the next turn gets it."""
        self._running[source] -= 1
        if self._running[source] <= 0:
            del self._running[source]
        self._free.append(lane)
        self._free.sort()
        self._dispatch()

    def _dispatch(self) -> None:
        while self._free:
            source = self._next()
            if source is None:
                return
            queue = self._waiting[source]
            future = queue.popleft()
            if not queue:
                del self._waiting[source]
            self._running[source] += 1
            self._given += 1
            self._served[source] = self._given
            if len(self._served) > self.REMEMBERED:
                self._served = {s: n for s, n in self._served.items()
                                if s in self._running or s in self._waiting}
            future.set_result(self._free.pop(0))

    def _next(self) -> str | None:
        """The waiting address under its cap holding the fewest lanes, served longest ago."""
        ready = [s for s in self._waiting if self._running[s] < self.cap]
        if not ready:
            return None
        return min(ready, key=lambda s: (self._running[s], self._served.get(s, 0)))
