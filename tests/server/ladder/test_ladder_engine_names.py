"""The ladder page names the program behind a bot as the bot said it (``enter_ladder``
``engine``), beside the bot's name, verbatim; in Debian's headless Chromium."""

from __future__ import annotations

import pytest
from pages import ONLINE
from playwright.async_api import Browser, expect

from server import protocol as p
from server.app import running
from server.storage.memory import MemoryStore
from server.storage.store import EntrantRecord, PairingRecord, TournamentRecord

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


async def test_the_ladder_page_shows_each_bots_engine_and_version(browser: Browser) -> None:
    store = MemoryStore()
    tid = "ladder-othello"
    await store.save_tournament(TournamentRecord(tid, "ladder", "othello", "othello ladder",
                                                 "3+2", True, None, 1000.0, 1000.0,
                                                 status="running"))
    for pid, name in (("pEdax", "EdaxBot"), ("pRandy", "Randy")):
        await store.save_entrant(EntrantRecord(tid, pid, name, 0.0, "active", 1000.0))
    await store.save_pairing(PairingRecord(tid, "g1", 0, 0, "pEdax", "pRandy", 1000.0, None,
                                           result=1.0, finished_at=1030.0))
    async with running(port=0, store=store) as srv:
        srv.app.ladder.engines[("othello", "pEdax")] = p.EngineView(name="Edax", version="4.4")
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(20_000)
        await page.goto(f"http://{srv.host}:{srv.port}/#ladder/othello")
        await page.wait_for_function(ONLINE)
        edax = page.locator('#l-list tr[data-entrant="pEdax"]')
        await expect(edax.locator(".engine")).to_have_text(" Edax 4.4")
        assert await edax.locator(".engine").get_attribute("data-verbatim") == ""
        await expect(page.locator('#l-list tr[data-entrant="pRandy"] .engine')).to_have_count(0)
        await context.close()
