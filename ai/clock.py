"""Hard deadlines for compiled searches that cannot read a clock themselves.

The search kernels poll one cell of a shared ``stop`` array every few thousand nodes; at the
hard deadline that cell is raised. Kernels are compiled with ``nogil=True`` so the raising
thread runs while they search. The caller owns the clock; the kernel only obeys.

One thread per process raises every search's cell (``_Deadlines``), rather than a
``threading.Timer`` per search: starting and joining a thread costs more than a beginner's
whole search (measured in an engine process: about 0.4 ms of a Connect Four beginner move's
0.6 ms), and an engine process runs thousands of those a minute on a busy server.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from types import TracebackType

import numpy as np


class _Deadlines:
    """The process's deadline thread: raises each registered stop array at its time."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._arrays: dict[int, np.ndarray] = {}
        """Live entries by number; a cancelled entry leaves the heap when it comes up."""
        self._numbers = itertools.count()
        self._owner: int | None = None
        """The process whose thread runs (a forked child starts its own)."""

    def add(self, seconds: float, array: np.ndarray) -> int:
        """Raise ``array[0]`` in ``seconds``; the number ``cancel`` takes."""
        deadline = time.monotonic() + seconds
        with self._wake:
            if self._owner != os.getpid():
                self._owner = os.getpid()
                self._heap, self._arrays = [], {}
                threading.Thread(target=self._run, name="discus-deadlines", daemon=True).start()
            number = next(self._numbers)
            self._arrays[number] = array
            heapq.heappush(self._heap, (deadline, number))
            if self._heap[0][1] == number:
                self._wake.notify()
        return number

    def cancel(self, number: int) -> None:
        with self._wake:
            self._arrays.pop(number, None)

    def _run(self) -> None:
        with self._wake:
            while True:
                while self._heap and self._heap[0][1] not in self._arrays:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._wake.wait()
                    continue
                deadline, number = self._heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._heap)
                self._arrays.pop(number)[0] = 1


_DEADLINES = _Deadlines()


class StopFlag:
    """A ``stop`` array for kernels, raised at an optional deadline.

    Use as a context manager around the search so the deadline never outlives it.
    """

    def __init__(self, hard_time: float | None = None, array: np.ndarray | None = None) -> None:
        """``array``: an existing stop array to raise at the deadline (one that someone else
        may raise too, to stop the search sooner); a fresh one by default."""
        self.array = np.zeros(1, dtype=np.int64) if array is None else array
        self.started = time.perf_counter()
        self._hard_time = hard_time
        self._deadline: int | None = None

    def set(self) -> None:
        """Ask the running kernel to stop at its next poll."""
        self.array[0] = 1

    @property
    def is_set(self) -> bool:
        return bool(self.array[0])

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def __enter__(self) -> StopFlag:
        if self._hard_time is not None:
            self._deadline = _DEADLINES.add(self._hard_time, self.array)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._deadline is not None:
            _DEADLINES.cancel(self._deadline)
            self._deadline = None
