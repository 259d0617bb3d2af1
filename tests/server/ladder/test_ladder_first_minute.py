"""The ladder works from the first minute: a fresh server's ladder has its game's default AI
level entered when it is made, so two bots that enter it themselves are rated by their first
games with no admin's help; the list says what an unrated bot waits for."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from wsclient import Client

from clients.bot import BotCore, BotRunner, RandomEngine
from server.admin.tokens import Admins
from server.app import Settings, running
from server.bots.accounts import Accounts
from server.cli import main
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore

QUICK = TimeControl("ladder", 30_000, 500)


def settings(**more: Any) -> Settings:
    """The fastest ladder: a short clock, a new round every 0.3 s."""
    return Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK},
                    ladder_time_control=QUICK.name, ladder_pace_seconds=0.3, **more)


async def ladder(client: Client) -> dict[str, Any]:
    await client.send(type="get_ladder", game="connect4")
    return await client.expect("ladder")


async def test_a_fresh_server_rates_two_bots_on_its_connect_four_ladder_unaided(
        tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(store=store, settings=settings()) as srv:
        accounts = Accounts(store.engine)
        runners = []
        for seed, name in enumerate(("Randy", "Rita")):
            core = BotCore(token=(await accounts.create(name)).token, ladder="connect4",
                           seed=seed)
            runners.append(BotRunner(srv.url, core, RandomEngine()))
        tasks = [asyncio.create_task(r.run()) for r in runners]
        watcher = await Client.open(srv.url, "Watcher")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        now = await ladder(watcher)
        while len(now["entrants"]) < 2 and loop.time() < deadline:
            await asyncio.sleep(0.2)
            now = await ladder(watcher)
        levels = [e for e in now["entrants"] if e["level"] is not None]
        weakest = next(iter(srv.app.lobby.levels["connect4"]))
        assert [e["level"] for e in levels] == [weakest], now["entrants"]
        assert levels[0]["anchored"] and levels[0]["active"]
        bots = {e["name"]: e for e in now["entrants"] if e["level"] is None}
        assert all(b["waits_for"] == "game" for b in bots.values() if b["rating"] is None)
        while loop.time() < deadline:
            bots = {e["name"]: e for e in now["entrants"] if e["level"] is None}
            if set(bots) == {"Randy", "Rita"} and all(b["rating"] is not None
                                                      for b in bots.values()):
                break
            await asyncio.sleep(0.3)
            now = await ladder(watcher)
        for runner in runners:
            runner.stop()
        await asyncio.gather(*tasks)
        assert set(bots) == {"Randy", "Rita"}, now["entrants"]
        for bot in bots.values():
            assert bot["rating"] is not None and bot["games"] >= 1, bot
            assert bot["waits_for"] is None
        await watcher.close()


async def test_a_ladder_with_no_level_says_its_bots_wait_for_one(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(store=store, settings=settings(ladder_levels={})) as srv:
        token = (await Accounts(store.engine).create("Randy")).token
        bot = await Client.open(srv.url, hello=False)
        await bot.send(type="hello", version=1, token=token)
        await bot.expect("welcome")
        await bot.send(type="enter_ladder", game="connect4")
        shown = await bot.expect("ladder")
        assert [e["waits_for"] for e in shown["entrants"]] == ["level"], shown["entrants"]
        await bot.close()


async def test_an_admin_sets_a_ladders_levels_with_the_cli_and_a_level_taken_off_stays_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    store = SqlStore(url)
    async with running(store=store, settings=settings()) as srv:
        _, token = await Admins(store.engine).create("Ann")
        names = list(srv.app.lobby.levels["connect4"])
        wanted = names[1:3]  # two levels, not the default

        def cli(*levels: str) -> int:
            return main(["ladder", "levels", "connect4", *levels, "--url", srv.url,
                         "--token", token])

        assert await asyncio.to_thread(cli, *wanted) == 0
        assert capsys.readouterr().out.split(":", 1)[1].split() == wanted
        watcher = await Client.open(srv.url, "Watcher")
        shown = await ladder(watcher)
        active = [e["level"] for e in shown["entrants"] if e["level"] and e["active"]]
        assert sorted(active) == sorted(wanted)
        assert await asyncio.to_thread(cli) == 0  # no levels named: only shown
        assert sorted(capsys.readouterr().out.split(":", 1)[1].split()) == sorted(wanted)
        assert await asyncio.to_thread(main, ["ladder", "levels", "connect4", "--url",
                                              srv.url, "--token", "wrong"]) == 1
        await watcher.close()
    async with running(store=SqlStore(url), settings=settings()) as srv:
        watcher = await Client.open(srv.url, "Watcher")
        shown = await ladder(watcher)  # after a restart: the admin's choice, not the default
        active = [e["level"] for e in shown["entrants"] if e["level"] and e["active"]]
        assert sorted(active) == sorted(wanted)
        await watcher.close()
