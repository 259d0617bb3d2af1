"""The pure rules of recurring arenas: which occurrences are due, none twice or skipped."""

from __future__ import annotations

from server.storage.store import ScheduleRecord
from server.tournaments.schedules import arena_of, due, first_start

HOUR = 3600.0


def hourly(made: int = 0, first: float = 10 * HOUR) -> ScheduleRecord:
    return ScheduleRecord("s1", "connect4", "Hourly", "3+2", 30, 60, first, "Root", 0.0,
                          made=made, min_games=5)


def test_occurrences_are_due_once_they_start_within_the_lead() -> None:
    assert due(hourly(), 10 * HOUR - 2 * HOUR, HOUR) == ([], 0)
    assert due(hourly(), 10 * HOUR - HOUR, HOUR) == ([0], 1)
    assert due(hourly(), 10 * HOUR - 1, 2 * HOUR) == ([0, 1], 2)


def test_what_was_made_is_not_due_again_and_what_follows_is() -> None:
    assert due(hourly(made=1), 10 * HOUR - HOUR, HOUR) == ([], 1)
    assert due(hourly(made=1), 10 * HOUR, HOUR) == ([1], 2)


def test_an_occurrence_over_while_nobody_ran_is_passed_over_one_under_way_is_made() -> None:
    # At 12:20 with nothing made since 10:00: 10:00 and 11:00 are over, 12:00 runs.
    make, made = due(hourly(), 12 * HOUR + 20 * 60, 0.0)
    assert (make, made) == ([2], 3)


def test_a_schedule_begun_long_ago_goes_straight_to_what_is_due() -> None:
    ancient = hourly(first=0.0)
    for now in (1_764_150_000.0, 1_764_151_900.0):  # 490,000 hours on: :00:00 and :31:40
        hour = int(now // HOUR)
        expected = [k for k in range(hour - 3, hour + 3)
                    if k * HOUR + 30 * 60 > now and k * HOUR <= now + HOUR]
        assert due(ancient, now, HOUR) == (expected, expected[-1] + 1)


def test_each_occurrence_is_an_arena_of_fixed_id_with_the_schedules_settings() -> None:
    arena = arena_of(hourly(), 2, 11 * HOUR)
    assert (arena.id, arena.starts_at, arena.ends_at) == ("s1-2", 12 * HOUR, 12.5 * HOUR)
    assert arena.status == "upcoming" and arena.min_games == 5 and arena.schedule_id == "s1"
    assert arena.created_by is None
    assert arena_of(hourly(), 0, 10 * HOUR).status == "running"


def test_the_default_first_start_is_on_the_next_boundary() -> None:
    assert first_start(60, 10 * HOUR + 1) == 11 * HOUR
    assert first_start(60, 10 * HOUR) == 10 * HOUR
    assert first_start(30, 10 * HOUR + 31 * 60) == 11 * HOUR
