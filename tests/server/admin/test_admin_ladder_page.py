"""The admin page sets each game's ladder levels: the game's default level shows ticked
before any bot has entered, ticking a level enters it and unticking one takes it off, as the
ladder's list then says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, expect
from wsclient import Client

from server.admin.tokens import Admins
from server.app import running
from server.storage import SqlStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


async def active_levels(client: Client) -> set[str]:
    await client.send(type="get_ladder", game="connect4")
    shown: dict[str, Any] = await client.expect("ladder")
    return {e["level"] for e in shown["entrants"] if e["level"] and e["active"]}


async def test_an_admin_ticks_and_unticks_a_games_ladder_levels(
        browser: Browser, tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(port=0, store=store) as server:
        _, token = await Admins(store.engine).create("Ann")
        weakest, other = list(server.app.lobby.levels["connect4"])[:2]
        problems: list[str] = []
        context = await browser.new_context(viewport={"width": 1280, "height": 1400})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        await page.goto(f"http://127.0.0.1:{server.port}/admin")
        await page.fill("#token", token)
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#desk")).to_be_visible()
        await page.locator('#levels-game input[value="connect4"]').check()
        box = page.locator("#ladder-levels")
        await expect(box.locator(f'[data-ladder-level="{weakest}"]')).to_be_checked()
        await expect(box.locator(f'[data-ladder-level="{other}"]')).not_to_be_checked()

        await box.locator(f'[data-ladder-level="{other}"]').check()
        await expect(box.locator(f'[data-ladder-level="{other}"]')).to_be_enabled()
        watcher = await Client.open(server.url, "Watcher")
        assert await active_levels(watcher) == {weakest, other}
        await box.locator(f'[data-ladder-level="{weakest}"]').uncheck()
        await expect(box.locator(f'[data-ladder-level="{weakest}"]')).to_be_enabled()
        await expect(box.locator(f'[data-ladder-level="{weakest}"]')).not_to_be_checked()
        assert await active_levels(watcher) == {other}
        await watcher.close()
        await context.close()
        assert problems == []
