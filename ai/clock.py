"""Hard deadlines for compiled searches that cannot read a clock themselves.

The search kernels poll one cell of a shared ``stop`` array every few thousand nodes; a timer
thread sets it when the hard deadline passes. Kernels are compiled with ``nogil=True`` so the
timer thread runs while they search. The caller owns the clock; the kernel only obeys.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import numpy as np


class StopFlag:
    """A ``stop`` array for kernels plus an optional timer that raises it at a deadline.

    Use as a context manager around the search so the timer never outlives it.
    """

    def __init__(self, hard_time: float | None = None, array: np.ndarray | None = None) -> None:
        """``array``: an existing stop array to raise at the deadline (one that someone else
        may raise too, to stop the search sooner); a fresh one by default."""
        self.array = np.zeros(1, dtype=np.int64) if array is None else array
        self.started = time.perf_counter()
        self._timer: threading.Timer | None = None
        if hard_time is not None:
            self._timer = threading.Timer(hard_time, self.set)
            self._timer.daemon = True

    def set(self) -> None:
        """Ask the running kernel to stop at its next poll."""
        self.array[0] = 1

    @property
    def is_set(self) -> bool:
        return bool(self.array[0])

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def __enter__(self) -> StopFlag:
        if self._timer is not None:
            self._timer.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
