"""The admin page in Debian's headless Chromium against a real server: log in with a token,
edit a level (a refused edit shows its errors field by field), see the audit entry, run a
short calibration and see its table, make a bot and revoke it.

The server runs in this test's event loop (``running``) on an SQLite file of its own with
one real AI worker process; Chromium is the system one (never downloaded).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from pages import ONLINE
from playwright.async_api import Browser, expect
from wsclient import Client

from server.admin.tokens import Admins
from server.app import running
from server.engines import AiPool
from server.storage import SqlStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]



async def test_an_admin_logs_in_retunes_a_level_sees_the_audit_and_calibrates(
    browser: Browser, tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    store = SqlStore(url)
    pool = AiPool(processes=1, games=("connect4",))
    await pool.start(wait_ready=True, timeout=120)
    async with running(port=0, store=store, pool=pool) as server:
        _, token = await Admins(store.engine).create("Ann")
        problems: list[str] = []
        context = await browser.new_context(viewport={"width": 1280, "height": 1400})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        await page.goto(f"http://127.0.0.1:{server.port}/admin")

        await page.fill("#token", "discus_admin_not-a-real-token")
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#login-error")).to_contain_text("not valid")
        await page.fill("#token", token)
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#desk")).to_be_visible()
        await expect(page.locator("#who")).to_have_text("Ann")

        version = page.locator("#levels-version")
        await expect(version).to_have_text(re.compile(r"version \d+"))
        before = int((await version.inner_text()).split()[-1])
        easy = page.locator('#levels tr[data-level="easy"]')
        await expect(easy.locator('[data-field="max_depth"]')).to_have_value("4")
        # An impossible edit is refused and says which fields are wrong.
        await easy.locator('[data-field="soft_time"]').fill("5")
        await easy.locator("[data-save]").click()
        refused = page.locator("#levels tr.problems:not([hidden])")
        await expect(refused).to_contain_text("soft_time must not exceed hard_time")
        await expect(easy.locator('[data-field="soft_time"]')).to_have_attribute(
            "aria-invalid", "true")
        await expect(page.locator("#audit tbody")).to_contain_text("No changes yet.")

        # A player's lobby, open meanwhile, shows the edited description without a reload.
        lobby = await context.new_page()
        lobby.on("pageerror", lambda exc: problems.append(f"lobby page error: {exc}"))
        await lobby.goto(f"http://127.0.0.1:{server.port}/")
        await lobby.wait_for_function(ONLINE)
        await lobby.select_option("#ai-level", "easy")
        await easy.locator('[data-field="soft_time"]').fill("0.1")
        await easy.locator('[data-field="max_depth"]').fill("2")
        await easy.locator('[data-field="description"]').fill("Looks two moves ahead.")
        await easy.locator("[data-save]").click()
        await expect(page.locator("#toast")).to_contain_text("easy: saved")
        await expect(lobby.locator("#level-note")).to_have_text("Looks two moves ahead.")
        await expect(lobby.locator("#ai-level")).to_have_value("easy")
        await lobby.close()
        await expect(page.locator("#audit tbody tr").first).to_contain_text("Max depth: 4 → 2")
        await expect(page.locator("#audit tbody tr").first).to_contain_text("Ann")
        await expect(page.locator("#levels tr.problems:not([hidden])")).to_have_count(0)
        assert server.app.levels.current["connect4"][1].max_depth == 2  # the server plays it now
        await expect(version).to_have_text(f"version {before + 1}")  # without a reload
        # At once, not at the figures' next five-second poll.
        await expect(page.locator("#stats")).to_contain_text(f"Levels version{before + 1}",
                                                              timeout=1500)

        await page.fill("#cal-levels", "beginner,easy")
        await page.fill("#cal-games", "2")
        await page.fill("#cal-scale", "0.1")
        await page.click("#cal-start")
        await expect(page.locator("#cal-elo tbody tr")).to_have_count(2, timeout=90_000)
        # Each level's cost a move beside its rating: what an operator sizes workers by.
        for row in await page.locator("#cal-elo tbody tr").all():
            await expect(row.locator("td").nth(5)).to_have_text(re.compile(r"^\d+ ms$"))
        await expect(page.locator("#cal-progress")).to_have_attribute("value", "2")
        await expect(page.locator("#cal-results tbody")).to_contain_text("beginner vs easy")
        await expect(page.locator("#cal-runs li")).to_have_count(1)
        await page.click("#stats-refresh")
        await expect(page.locator("#stats")).to_contain_text("busy of 1")

        # A bot made on the page: its token shown once, its live connection counted, and
        # revoking it (after the confirmation) closes that connection.
        await page.fill("#bot-name", "PageBot")
        await page.click("#bot-create")
        await expect(page.locator("#bot-token")).to_be_visible()
        bot_token = await page.input_value("#bot-token-value")
        bot = await Client.open(f"ws://127.0.0.1:{server.port}/ws", hello=False)
        await bot.send(type="hello", version=1, token=bot_token)
        assert (await bot.recv())["player"]["name"] == "PageBot"
        await page.click("#bots-refresh")
        row = page.locator('#bots tr[data-bot="PageBot"]')
        await expect(row.locator("td").nth(3)).to_have_text("1")
        page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await row.get_by_role("button", name="Revoke bot PageBot").click()
        await expect(row.locator("td").nth(4)).to_contain_text("revoked")
        await expect(row.locator("td").nth(3)).to_have_text("0")
        assert (await bot.expect("error"))["code"] == "revoked_token"
        await bot.ws.wait_closed()
        assert bot.ws.close_code == 1008

        folder = Path(os.environ.get("DISCUS_SCREENSHOTS") or tmp_path)
        folder.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(folder / "admin.png"), full_page=True)
        await context.close()
        assert problems == []
