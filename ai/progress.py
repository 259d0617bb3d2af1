"""A progress bar for long jobs run from the command line (training, book building)."""

from __future__ import annotations

import time
from typing import TextIO


def clock(seconds: float) -> str:
    if seconds != seconds:  # NaN: nothing measured yet
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{secs:02d}s"


class Progress:
    """A bar redrawn in place on a terminal, a line now and then elsewhere."""

    def __init__(self, out: TextIO, label: str, total: int, done: int = 0) -> None:
        self.out, self.label, self.total, self.start_done = out, label, total, done
        self.done = done
        self.started = time.perf_counter()
        self.shown = 0.0
        self.tty = out.isatty()

    def step(self, count: int = 1) -> None:
        self.done += count
        now = time.perf_counter()
        if now - self.shown < (0.5 if self.tty else 30.0) and self.done < self.total:
            return
        self.shown = now
        spent = now - self.started
        rate = (self.done - self.start_done) / spent if spent > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        filled = round(24 * self.done / max(self.total, 1))
        line = (f"{self.label} [{'#' * filled}{'.' * (24 - filled)}] {self.done}/{self.total}"
                f"  {clock(spent)} spent, ~{clock(left)} left")
        end = "\n" if self.done >= self.total or not self.tty else ""
        self.out.write(("\r" if self.tty else "") + line + end)
        self.out.flush()
