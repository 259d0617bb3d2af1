"""Time controls and the two clocks of a timed game, as plain values (no clock of their own).

A room's clocks never read the time: every call takes ``now`` (the same seconds the room is
given), so the server alone measures a move (from when the turn began to when the move is
accepted) and tests drive the clocks with made-up times. Remaining time is kept in whole
milliseconds, the unit the protocol sends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from server import protocol as p


@dataclass(frozen=True)
class TimeControl:
    """``initial_ms`` on each clock at the start, ``increment_ms`` added after each move.

    ``name`` is what people pick and the protocol carries (``"3+2"``: three minutes, two
    seconds a move), and what a stored game keeps beside the two numbers.
    """

    name: str
    initial_ms: int
    increment_ms: int

    def view(self) -> p.TimeControlView:
        return p.TimeControlView(name=self.name, initial_ms=self.initial_ms,
                                 increment_ms=self.increment_ms)


def _control(minutes: int, increment: int) -> TimeControl:
    return TimeControl(f"{minutes}+{increment}", minutes * 60_000, increment * 1000)


TIME_CONTROLS: Mapping[str, TimeControl] = {
    c.name: c for c in (_control(1, 0), _control(3, 2), _control(5, 3), _control(10, 5))
}
"""The time controls a room may be made with (none: untimed, the default), quickest first."""

FIRST_MOVE_SECONDS = 30.0
"""How long each side of a timed game between two people (accounts, guests or bots) has to
make its first move before the game is aborted (``Settings.first_move_seconds``): a player
who never moves must not hold the other for a whole clock."""


@dataclass
class Clocks:
    """Both seats' remaining time in a game played under ``control``.

    ``running`` is the seat whose clock runs (None: no clock runs, for instance while the AI,
    which has no clock, is to move), since ``since``. ``remaining_ms`` is each seat's time as
    of the start of its own turn; ``left`` says what is left at a given moment.
    """

    control: TimeControl
    remaining_ms: list[int]
    running: int | None = None
    since: float = 0.0

    @classmethod
    def fresh(cls, control: TimeControl) -> Clocks:
        return cls(control, [control.initial_ms, control.initial_ms])

    def left(self, seat: int, now: float) -> int:
        """Milliseconds ``seat`` has at ``now``: never below 0."""
        if seat != self.running:
            return self.remaining_ms[seat]
        return max(0, self.remaining_ms[seat] - elapsed_ms(self.since, now))

    def after_move(self, seat: int, now: float) -> tuple[int, int]:
        """Both clocks after ``seat`` moves at ``now`` (its time spent, the increment added);
        nothing changes. The caller has checked that the flag has not fallen."""
        clocks = [self.remaining_ms[0], self.remaining_ms[1]]
        if seat == self.running:
            clocks[seat] = self.left(seat, now) + self.control.increment_ms
        return clocks[0], clocks[1]

    def run(self, seat: int | None, now: float) -> None:
        """Start ``seat``'s clock at ``now`` (None: stop every clock), first charging the
        clock that ran until now."""
        if self.running is not None:
            self.remaining_ms[self.running] = self.left(self.running, now)
        self.running = seat
        self.since = now

    def flagged(self, now: float) -> int | None:
        """The seat whose time has run out at ``now``, if any."""
        if self.running is not None and self.left(self.running, now) <= 0:
            return self.running
        return None

    def deadline(self) -> float | None:
        """When the running clock reaches 0 (in ``now``'s seconds), or None."""
        if self.running is None:
            return None
        return self.since + self.remaining_ms[self.running] / 1000


def elapsed_ms(since: float, now: float) -> int:
    """Whole milliseconds from ``since`` to ``now``, rounded up: a move is never measured as
    quicker than it was (so a flag never survives on a rounding). The microsecond rounding
    first keeps float noise (0.25 s read as 250.00000000000003 ms) from adding one."""
    return max(0, math.ceil(round((now - since) * 1000, 3)))
