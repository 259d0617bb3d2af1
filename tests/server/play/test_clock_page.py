"""Clocks on the page, in Debian's headless Chromium against a real server on a SQLite file:
two people start a timed game, watch the clock of the side to move run down, the game ends on
time with the page saying whose time ran out, and its replay shows the stored clocks."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from pages import open_page
from playwright.async_api import Browser, Page, expect

from server.app import Settings, running
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import open_store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

RUNNING = re.compile(r"\brunning\b")
QUICK = TimeControl("quick", 6000, 1000)
"""Six seconds a side and one a move: offered by this test's server only."""


def clock(page: Page, seat: int) -> str:
    return f'#players .clock[data-seat="{seat}"]'


def tenths(text: str) -> float:
    """Seconds shown by a clock face: "0:05.4" or "1:00"."""
    minutes, seconds = text.split(":")
    return 60 * int(minutes) + float(seconds)


async def test_a_timed_game_shows_both_clocks_running_down_and_ends_on_time(
    browser: Browser, tmp_path: Path
) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    settings = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK})
    problems: list[str] = []
    async with running(port=0, store=open_store(database), settings=settings) as srv:
        base = f"http://{srv.host}:{srv.port}/"
        ann = await open_page(await browser.new_context(), base, problems)
        await expect(ann.locator("#friend-clock option")).to_have_count(1 + len(TIME_CONTROLS) + 1)
        await ann.select_option("#friend-clock", "quick")
        await ann.click("#invite")
        await expect(ann.locator("#share-code")).to_have_text(re.compile(r"^\w{8}$"))
        code = await ann.locator("#share-code").text_content()
        assert code
        await expect(ann.locator(clock(ann, 0))).to_have_text("0:06.0")  # waiting: not running

        bob = await open_page(await browser.new_context(), f"{base}#{code}", problems)
        await expect(bob.locator(clock(bob, 0))).to_have_class(RUNNING)
        await expect(ann.locator(clock(ann, 0))).to_have_class(RUNNING)
        first = tenths(await ann.locator(clock(ann, 0)).inner_text())
        await asyncio.sleep(1.0)
        later = tenths(await ann.locator(clock(ann, 0)).inner_text())
        assert 0.5 <= first - later <= 2.0  # counting down on the side to move
        assert await bob.locator(clock(bob, 1)).inner_text() == "0:06.0"
        await ann.screenshot(path=str(tmp_path / "clocks-running.png"))

        await ann.click('#board-wrap .cell[data-move="4"]')
        await expect(bob.locator(clock(bob, 1))).to_have_class(RUNNING)
        await bob.click('#board-wrap .cell[data-move="4"]')
        await expect(ann.locator(clock(ann, 0))).to_have_class(RUNNING)
        stored = await srv.app.store.load_game(f"{code}-1")
        assert stored is not None
        ann_after_move = stored[1][0].clock0_ms
        assert ann_after_move is not None and ann_after_move > 1000  # the increment is there

        # Ann sends nothing more: the server ends the game when her time runs out.
        await expect(ann.locator("#status")).to_contain_text("your time ran out",
                                                             timeout=15_000)
        await expect(bob.locator("#status")).to_contain_text("You win")
        await expect(ann.locator(clock(ann, 0))).to_have_text("0:00.0")
        await ann.screenshot(path=str(tmp_path / "lost-on-time.png"))

        # The replay shows the clocks stored with each move.
        await ann.evaluate(f"location.hash = '#replay/{code}-1'")
        await expect(ann.locator("#board-wrap")).to_have_attribute("data-record", "true")
        await ann.click("#r-first")  # a replay opens at the final position
        await expect(ann.locator(clock(ann, 0))).to_have_text("0:06.0")
        await ann.click("#r-last")
        shown = f"0:0{(ann_after_move // 100) / 10:.1f}"
        await expect(ann.locator(clock(ann, 0))).to_have_text(shown)
    assert problems == []
