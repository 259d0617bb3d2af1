"""Recurring arenas, sans-I/O: which occurrences of a schedule are due to be made, and the
arena each one is.

A schedule's occurrence ``k`` starts at ``first_start + k * every``; the schedule keeps how
many occurrences it has dealt with (``made``), so whoever makes them (after a restart too)
goes on from the first not yet dealt with: none twice, none skipped. An occurrence is made
once it starts within ``lead`` seconds (listed as upcoming before its start); one whose
whole time passed while no server ran is passed over (nobody could have played it), while
one already started but not yet over is made, running.
"""

from __future__ import annotations

import math

from server.storage.store import ScheduleRecord, TournamentRecord


def first_start(every_minutes: int, now: float) -> float:
    """The default first start: the next whole multiple of ``every_minutes`` since the
    epoch (so "every hour" starts on the hour) at or after ``now``."""
    every = every_minutes * 60
    return math.ceil(now / every) * every


def due(schedule: ScheduleRecord, now: float, lead: float) -> tuple[list[int], int]:
    """The occurrences to make at ``now``, and the schedule's ``made`` after them (those
    passed over included)."""
    make: list[int] = []
    # Straight to the first occurrence not over: a schedule long unattended (or one whose
    # first start is long past) is not walked occurrence by occurrence.
    length = schedule.minutes * 60
    first_not_over = math.floor((now - length - schedule.first_start)
                                / (schedule.every_minutes * 60)) + 1
    k = max(schedule.made, first_not_over)
    while schedule.start_of(k) <= now + lead:
        if schedule.start_of(k) + schedule.minutes * 60 > now:
            make.append(k)
        k += 1
    return make, k


def arena_of(schedule: ScheduleRecord, k: int, now: float) -> TournamentRecord:
    """Occurrence ``k`` of ``schedule`` as an arena made at ``now`` (by an admin: no
    ``created_by``)."""
    starts_at = schedule.start_of(k)
    return TournamentRecord(
        schedule.arena_id(k), "arena", schedule.game, schedule.name, schedule.time_control,
        schedule.rated, None, now, starts_at, starts_at + schedule.minutes * 60, None,
        schedule.berserk,
        schedule.private, "running" if starts_at <= now else "upcoming", schedule.min_rating,
        schedule.max_rating, schedule.min_games, schedule.id)
