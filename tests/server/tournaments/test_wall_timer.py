"""A tournament's timers (its start, its end, a round's tick) go by the wall clock its times
are in, whatever the event loop's own timers do: uvloop's fire up to a millisecond early by
the wall clock, and an arena whose start tick came early never started."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from server.tournaments.held import WallTimer


def slow_clock() -> tuple[float, Callable[[], float]]:
    """A wall clock running at half the loop's speed: every timer the loop fires is early
    by it."""
    origin = time.monotonic()

    def now() -> float:
        return 1000.0 + (time.monotonic() - origin) / 2
    return now(), now


async def test_a_timer_the_loop_fires_early_waits_for_the_wall_clock() -> None:
    start, now = slow_clock()
    fired: list[float] = []
    done = asyncio.Event()
    WallTimer(now, start + 0.05, lambda: (fired.append(now()), done.set()))
    await asyncio.wait_for(done.wait(), 5.0)
    await asyncio.sleep(0.05)
    assert len(fired) == 1 and fired[0] >= start + 0.05


async def test_a_cancelled_timer_never_fires_even_after_it_was_set_again() -> None:
    start, now = slow_clock()
    fired: list[float] = []
    timer = WallTimer(now, start + 0.05, lambda: fired.append(now()))
    await asyncio.sleep(0.07)  # the loop's first timer has fired, early, and set itself again
    timer.cancel()
    await asyncio.sleep(0.15)
    assert fired == []
