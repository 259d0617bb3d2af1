"""Arena rules in every store (memory, SQLite, PostgreSQL): a game's berserk seats, an
arena's entry conditions and schedule, and arena schedules read back as written."""

from __future__ import annotations

from dataclasses import replace

from server.storage.store import GameRecord, ScheduleRecord, Store, TournamentRecord


async def test_a_games_berserk_seats_read_back(store: Store) -> None:
    game = GameRecord("R1-1", "connect4", ("ann", "bob"), None, None, "active", "", 10.0,
                      time_control="3+2", clock_initial_ms=180_000, clock_increment_ms=2000)
    await store.save_game(game)
    loaded = await store.load_game("R1-1")
    assert loaded is not None and loaded[0].berserk == ()
    for seats in ((1,), (0, 1)):
        await store.save_game(replace(game, berserk=seats))
        loaded = await store.load_game("R1-1")
        assert loaded is not None and loaded[0].berserk == seats


async def test_an_arenas_conditions_and_schedule_read_back(store: Store) -> None:
    arena = TournamentRecord("s1-0", "arena", "othello", "Hourly", "3+2", True, None, 5.0,
                             100.0, 1900.0, None, True, False, "upcoming", 1400, 1800, 10,
                             "s1")
    await store.save_tournament(arena)
    assert await store.load_tournament("s1-0") == arena
    assert await store.list_tournaments(["upcoming"]) == [arena]


async def test_schedules_are_saved_replaced_listed_oldest_first_and_deleted(
        store: Store) -> None:
    hourly = ScheduleRecord("s1", "connect4", "Hourly", "3+2", 30, 60, 3600.0, "Root", 2.0,
                            False, True, None, 1800, 5)
    daily = ScheduleRecord("s2", "othello", "Daily", "10+5", 60, 1440, 86400.0, "Root", 1.0)
    for schedule in (hourly, daily):
        await store.save_schedule(schedule)
    assert await store.list_schedules() == [daily, hourly]
    await store.save_schedule(replace(hourly, made=3))
    assert [s.made for s in await store.list_schedules()] == [0, 3]
    assert await store.delete_schedule("s2") is True
    assert await store.delete_schedule("s2") is False
    assert [s.id for s in await store.list_schedules()] == ["s1"]
    assert hourly.start_of(2) == 3600.0 + 2 * 3600 and hourly.arena_id(2) == "s1-2"


async def test_whether_a_tournament_and_a_schedule_are_rated_reads_back(store: Store) -> None:
    casual = TournamentRecord("t1", "roundrobin", "connect4", "Friendly", "3+2", False, "ann",
                              5.0, 100.0)
    await store.save_tournament(casual)
    loaded = await store.load_tournament("t1")
    assert loaded is not None and loaded.rated is False
    await store.save_tournament(replace(casual, rated=True))
    loaded = await store.load_tournament("t1")
    assert loaded is not None and loaded.rated is True
    weekly = ScheduleRecord("s3", "connect4", "Weekly", "3+2", 30, 10080, 0.0, "Root", 1.0,
                            rated=False)
    rated = ScheduleRecord("s4", "connect4", "Daily", "3+2", 30, 1440, 0.0, "Root", 2.0)
    for schedule in (weekly, rated):
        await store.save_schedule(schedule)
    assert [(s.id, s.rated) for s in await store.list_schedules()] == [("s3", False),
                                                                        ("s4", True)]
