"""Ratings in the page, in Debian's headless Chromium against a real server on a SQLite file:
two people sign up, see their ratings beside their names, play a game of Connect Four, see
their rating change at game over, find each other on the leaderboard, and open a profile
with its rating chart."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import ONLINE, free_port, open_page
from people import CHEAP_HASHER, PASSWORD
from playwright.async_api import Browser, Page, expect

from server.app import running
from server.storage import open_store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]



async def sign_up(page: Page, name: str) -> None:
    await page.fill("#account-name", name)
    await page.fill("#account-password", PASSWORD)
    await page.click("#sign-up")
    await expect(page.locator("#account-who")).to_have_text(name)
    await page.wait_for_function(ONLINE)


async def test_two_accounts_see_their_rating_change_the_leaderboard_and_a_profile(
    browser: Browser, tmp_path: Path
) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    problems: list[str] = []
    async with running(port=port, store=open_store(database)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await open_page(await browser.new_context(), url, problems)
        bob = await open_page(await browser.new_context(), url, problems)
        await sign_up(ann, "Ann_Lee")
        await sign_up(bob, "Bob_Ray")

        await ann.click("#friend-form label:has-text('Connect Four')")
        await ann.click("#invite")
        await ann.wait_for_selector("#share:not([hidden])")
        await bob.goto(await ann.input_value("#share-link"))
        await bob.wait_for_function(ONLINE)
        await ann.wait_for_selector("#share", state="hidden")
        # Each player box shows the rating after the name: new accounts, 1500 provisional.
        await expect(ann.locator("#players .who .rating")).to_have_text(["1500?", "1500?"])
        await expect(bob.locator("#players .who", has_text="Ann_Lee")).to_contain_text(
            "Ann_Lee 1500?")
        first = ann if await ann.locator("#board-wrap .cell[data-move]").count() else bob
        second = bob if first is ann else ann
        for ply in range(7):  # the first player fills column 1, the second column 2
            mover = first if ply % 2 == 0 else second
            column = 1 if mover is first else 2
            await mover.click(f"#board-wrap .cell[data-move='{column}']")
            await mover.wait_for_selector(f"#board-wrap[data-ply='{ply + 1}']")

        for page, won in ((first, True), (second, False)):
            change = page.locator("#rating-change")
            await expect(change).to_be_visible()
            await expect(change).to_contain_text("Connect Four rating: 1500? → ")
            delta = float(await change.get_attribute("data-delta") or "0")
            assert (delta > 0) == won
        await first.screenshot(path=str(tmp_path / "rating-change.png"), full_page=True)

        winner = "Ann_Lee" if first is ann else "Bob_Ray"
        await ann.click("#lobby-btn")
        await ann.click("#leaders-connect4")
        # One game each: both ratings are provisional, so nobody is listed yet (and a note
        # says why).
        await expect(ann.locator("#standings .provisional-note")).to_contain_text(
            "provisional")
        await expect(ann.locator("#standings .leaders li")).to_have_count(0)
        await ann.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
        await ann.keyboard.press("Escape")

        await ann.click("#my-profile")
        await expect(ann.locator("#standings-title")).to_have_text("Ann_Lee")
        section = ann.locator("#standings .profile-game[data-game='connect4']")
        await expect(section).to_contain_text("1662?" if winner == "Ann_Lee" else "1338?")
        await expect(section.locator("svg.rating-chart circle")).to_have_count(1)
        await ann.screenshot(path=str(tmp_path / "profile.png"), full_page=True)
        await ann.click("#standings button:has-text('Replay')")
        await expect(ann.locator("#standings")).to_be_hidden()
        await ann.wait_for_selector("#board-wrap[data-record='true']")
    assert problems == []
