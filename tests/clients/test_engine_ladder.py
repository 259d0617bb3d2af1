"""Engines on the ladder: two ``columns`` engines enter it through the bridge like any bot,
play each other and a level, the rating list names each engine as it named itself, and
``discus ladder export`` writes the list as CSV and JSON."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from clients.bot import BotCore, BotRunner
from clients.bridges import EngineId, bridge_from
from clients.ladder_export import COLUMNS, export, fetch
from server import protocol as p
from server.admin.tokens import Admins
from server.app import Settings, running
from server.bots.accounts import Accounts
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore

ENGINES = Path(__file__).resolve().parent / "engines"
QUICK = TimeControl("ladder", 20_000, 200)


@pytest.mark.slow
async def test_engines_enter_the_ladder_named_as_they_say_and_the_list_exports(
        tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    settings = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK},
                        ladder_time_control=QUICK.name, ladder_pace_seconds=0.2)
    async with running(store=store, settings=settings) as srv:
        accounts = Accounts(store.engine)
        runners, bridges = [], []
        for name, args in (("Solver", "--scores"), ("Picker", "")):
            workdir = tmp_path / name
            workdir.mkdir()
            bridge = bridge_from(f"{sys.executable} {ENGINES / 'columns_engine.py'} {args}",
                                 "columns", cwd=workdir, env=dict(os.environ),
                                 name=f"{name}Engine")
            identity = bridge.start()
            core = BotCore(token=(await accounts.create(name)).token, ladder="connect4",
                           engine=identity)
            bridges.append(bridge)
            runners.append(BotRunner(srv.url, core, bridge))
        tasks = [asyncio.create_task(r.run()) for r in runners]
        _, admin_token = await Admins(store.engine).create("Ann")
        async with connect(srv.url) as boss:
            await boss.send(p.encode(p.Hello(version=p.PROTOCOL_VERSION, name="admin")))
            await boss.send(json.dumps({"type": "admin_login", "token": admin_token}))
            await boss.send(json.dumps({"type": "enter_ladder", "game": "connect4",
                                        "entrant": "beginner"}))
            while json.loads(await asyncio.wait_for(boss.recv(), 10))["type"] != "ladder":
                pass
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        ladder = await fetch(srv.url, "connect4")
        while ladder.played < 6 and loop.time() < deadline:
            await asyncio.sleep(0.3)
            ladder = await fetch(srv.url, "connect4")
        for runner in runners:
            runner.stop()
        await asyncio.gather(*tasks)
        for bridge in bridges:
            bridge.close()
    assert ladder.played >= 6, ladder
    engines = {e.name: e.engine for e in ladder.entrants}
    assert engines == {"Solver": p.EngineView(name="SolverEngine"),
                       "Picker": p.EngineView(name="PickerEngine"), "beginner": None}
    table = list(csv.DictReader(io.StringIO(export(ladder, "csv"))))
    assert tuple(table[0]) == COLUMNS
    by_name = {row["name"]: row for row in table}
    assert by_name["Solver"]["engine"] == "SolverEngine" and by_name["beginner"]["kind"] == "level"
    assert sum(int(row["games"]) for row in table) == 2 * ladder.played
    listed = json.loads(export(ladder, "json"))
    assert listed["game"] == "connect4" and listed["played"] == ladder.played
    for row in listed["entrants"]:
        if row["rating"] is not None:
            assert row["low"] <= row["rating"] <= row["high"]
            assert row["high"] - row["low"] == 4 * row["error"]


def test_a_bot_names_its_engine_on_entering_and_a_blank_name_not_at_all() -> None:
    def entry(engine: EngineId | None) -> p.EnterLadder:
        core = BotCore(token="t", ladder="othello", engine=engine)
        core.connected()
        (message,) = core.receive(p.Pong(id="sync"))
        assert isinstance(message, p.EnterLadder)
        return message

    assert entry(EngineId("Edax", "4.4")).engine == p.EngineView(name="Edax", version="4.4")
    assert entry(EngineId("NTest", "")).engine == p.EngineView(name="NTest")
    assert entry(EngineId(" ")).engine is None and entry(None).engine is None


async def test_discus_ladder_export_prints_the_list_of_a_running_server(
        capsys: pytest.CaptureFixture[str]) -> None:
    from server.cli import main

    # No AI level on the ladder by default here, so the list starts empty.
    async with running(port=0, settings=Settings(ladder_levels={})) as srv:
        assert await asyncio.to_thread(main, ["ladder", "export", "othello", "--url", srv.url]) \
            == 0
        assert capsys.readouterr().out == ",".join(COLUMNS) + "\n"  # nobody on it yet
        assert await asyncio.to_thread(main, ["ladder", "export", "othello", "--url", srv.url,
                                              "--format", "json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert listed == {"game": "othello", "time_control": "3+2", "played": 0,
                          "entrants": []}
