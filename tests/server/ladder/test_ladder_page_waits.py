"""The ladder page says what an unrated bot waits for: its first game against a rated
entrant when a calibrated level is on the ladder, else a level an admin must enter."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from server.app import Settings, running
from server.storage.memory import MemoryStore
from server.storage.store import EntrantRecord, TournamentRecord
from tests.server.tournaments.test_tournament_page import open_watched

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


async def a_ladder(store: MemoryStore, *entrants: tuple[str, str]) -> None:
    """A stored Connect Four ladder with these (id, name) entrants and no game yet."""
    tid = "ladder-connect4"
    await store.save_tournament(TournamentRecord(tid, "ladder", "connect4", "connect4 ladder",
                                                 "3+2", True, None, 1000.0, 1000.0,
                                                 status="running"))
    for pid, name in entrants:
        await store.save_entrant(EntrantRecord(tid, pid, name, 0.0, "active", 1000.0))


@pytest.mark.parametrize(("levels", "says"), [
    (None, "rated after its first game against a rated entrant"),
    ({}, "no computer level on the ladder: an admin must enter one"),
])
async def test_an_unrated_bots_row_says_what_it_waits_for(
        browser: Browser, levels: dict[str, tuple[str, ...]] | None, says: str) -> None:
    store = MemoryStore()
    await a_ladder(store, ("pGamma", "Gamma"))
    problems: list[str] = []
    async with running(port=0, store=store, settings=Settings(ladder_levels=levels)) as srv:
        context = await browser.new_context()
        page = await open_watched(context, f"http://{srv.host}:{srv.port}/", problems, [])
        await page.click('#ladder-links [data-ladder="connect4"]')
        gamma = page.locator('#l-list tr[data-entrant="pGamma"]')
        await expect(gamma.locator(".waits")).to_contain_text(says)
        await context.close()
    assert problems == []
