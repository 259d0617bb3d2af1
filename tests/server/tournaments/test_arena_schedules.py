"""Recurring arenas over real websockets: an admin makes a schedule, the server makes each
arena ahead of time (listed as upcoming, with the schedule's settings), a restart neither
duplicates nor skips one, and the admin lists and deletes schedules; nobody else may."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from wsclient import Client

from server.admin.tokens import Admins
from server.app import Settings, running
from server.storage import SqlStore

HOUR = 3600


async def admin_client(url: str, store: SqlStore) -> Client:
    _, token = await Admins(store.engine).create("Root")
    admin = await Client.open(url, "admin page")
    assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"
    return admin


def of(listed: dict[str, Any], schedule: str) -> list[dict[str, Any]]:
    return [t for t in listed["tournaments"] if t["schedule"] == schedule]


async def test_a_schedule_makes_its_arenas_ahead_once_each_across_restarts(
        tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    first_start = time.time() + 600
    store = SqlStore(url)
    async with running(store=store) as srv:
        admin = await admin_client(srv.url, store)
        made = await admin.request(
            "admin_create_schedule", game="connect4", name="Hourly blitz", time_control="3+2",
            minutes=30, every_minutes=60, first_start=first_start, berserk=False,
            min_rating=1400)
        assert made["type"] == "schedules"
        (schedule,) = made["schedules"]
        sid = schedule["id"]
        assert schedule["next_start"] == first_start + HOUR  # the first is made already
        player = await Client.open(srv.url, "Ann")
        (arena,) = of(await player.request("list_tournaments"), sid)
        assert arena["status"] == "upcoming" and arena["starts_at"] == first_start
        assert arena["ends_at"] == first_start + 30 * 60 and arena["berserk"] is False
        assert arena["min_rating"] == 1400 and arena["name"] == "Hourly blitz"
        for client in (admin, player):
            await client.close()
    async with running(store=SqlStore(url)) as srv:  # the same lead: nothing new
        player = await Client.open(srv.url, "Ann")
        assert [a["starts_at"] for a in of(await player.request("list_tournaments"), sid)] == [
            first_start]
        await player.close()
    later = Settings(schedule_lead_seconds=3 * HOUR)
    async with running(store=SqlStore(url), settings=later) as srv:
        player = await Client.open(srv.url, "Ann")
        arenas = of(await player.request("list_tournaments"), sid)
        assert [a["starts_at"] for a in arenas] == [first_start + k * HOUR for k in range(3)]
        assert [a["id"] for a in arenas] == [f"{sid}-{k}" for k in range(3)]
        await player.close()


async def test_an_occurrence_under_way_is_made_running_and_one_already_over_is_passed(
        tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    store = SqlStore(url)
    now = time.time()
    async with running(store=store) as srv:
        admin = await admin_client(srv.url, store)
        made = await admin.request(
            "admin_create_schedule", game="othello", name="Twice hourly", time_control="5+3",
            minutes=20, every_minutes=30, first_start=now - 40 * 60)
        (schedule,) = made["schedules"]
        # 40 min ago: over (20 min long); 10 min ago: running; in 20 and 50 min (within
        # the hour's lead): upcoming.
        arenas = of(await admin.request("list_tournaments"), schedule["id"])
        assert [(a["id"][-2:], a["status"]) for a in arenas] == [
            ("-1", "running"), ("-2", "upcoming"), ("-3", "upcoming")]
        assert schedule["next_start"] == now - 40 * 60 + 4 * 30 * 60
        await admin.close()


async def test_the_admin_lists_and_deletes_schedules_and_nobody_else_may(
        tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    store = SqlStore(url)
    async with running(store=store) as srv:
        player = await Client.open(srv.url, "Ann")
        refused = await player.request(
            "admin_create_schedule", game="connect4", name="Mine", time_control="3+2",
            minutes=30, every_minutes=60)
        assert refused["code"] == "forbidden"
        assert (await player.request("admin_list_schedules"))["code"] == "forbidden"
        admin = await admin_client(srv.url, store)
        bad = await admin.request("admin_create_schedule", game="connect4", name="X",
                                  time_control="2+1", minutes=30, every_minutes=60)
        assert bad["code"] == "unknown_time_control"
        made = await admin.request("admin_create_schedule", game="connect4", name="Daily",
                                   time_control="10+5", minutes=60, every_minutes=24 * 60)
        (schedule,) = made["schedules"]
        assert schedule["first_start"] % (24 * HOUR) == 0  # on the day's boundary
        assert [s["id"] for s in (await admin.request("admin_list_schedules"))["schedules"]
                ] == [schedule["id"]]
        assert (await player.request("admin_delete_schedule", schedule=schedule["id"])
                )["code"] == "forbidden"
        gone = await admin.request("admin_delete_schedule", schedule=schedule["id"])
        assert gone["type"] == "schedules" and gone["schedules"] == []
        again = await admin.request("admin_delete_schedule", schedule=schedule["id"])
        assert again["code"] == "unknown_schedule"
        for client in (admin, player):
            await client.close()
