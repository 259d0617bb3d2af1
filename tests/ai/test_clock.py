"""The process's one deadline thread raises each search's stop cell at its own time, never a
cancelled one's, whatever order the deadlines come in."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from ai.clock import StopFlag


def _wait_until(flag: StopFlag, limit: float) -> float:
    started = time.perf_counter()
    while not flag.is_set and time.perf_counter() - started < limit:
        time.sleep(0.002)
    return time.perf_counter() - started


def test_overlapping_deadlines_each_fire_at_their_own_time_and_a_finished_one_never() -> None:
    late, early, done = StopFlag(0.6), StopFlag(0.15), StopFlag(0.1)
    with late, early:
        with done:
            pass  # a search that ended before its deadline: its cell stays down
        assert _wait_until(early, 2.0) >= 0.14 and early.is_set
        assert not late.is_set  # the later deadline, registered first, is still ahead
        assert _wait_until(late, 2.0) > 0.2 and late.is_set
    time.sleep(0.15)
    assert not done.is_set


def test_a_shared_stop_array_is_raised_and_no_deadline_means_none() -> None:
    shared = np.zeros(1, dtype=np.int64)
    with StopFlag(0.05, shared) as flag:
        assert flag.array is shared
        _wait_until(flag, 2.0)
    assert shared[0] == 1
    with StopFlag() as untimed:
        time.sleep(0.1)
        assert not untimed.is_set
        untimed.set()  # someone else stops it
        assert untimed.is_set


def test_searches_under_way_at_once_cost_no_thread_each() -> None:
    with StopFlag(5.0):
        before = threading.active_count()  # the deadline thread runs by now
    with contextlib.ExitStack() as stack:
        flags = [stack.enter_context(StopFlag(5.0 + k / 100)) for k in range(50)]
        assert threading.active_count() == before
    assert not any(flag.is_set for flag in flags)
