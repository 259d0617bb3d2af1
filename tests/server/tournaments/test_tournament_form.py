"""The lobby's form to make a tournament, in Debian's headless Chromium against a real server:
a click on "Make it" is never lost while the list of tournaments above keeps changing (other
people make theirs meanwhile), and a refused creation says why beside the form."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from pages import open_page
from people import CHEAP_HASHER, MANY_SIGN_UPS, PASSWORD, account
from playwright.async_api import Browser, Page, expect

from server.app import running
from server.settings import Settings
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(120)]

REACH = 0.35
"""Seconds between a person seeing the button and pressing it: a list update in between
used to push the button from under the pointer."""


async def sign_up_on(page: Page, name: str) -> None:
    await page.fill("#account-name", name)
    await page.fill("#account-password", PASSWORD)
    await page.click("#sign-up")
    await expect(page.locator("#account-who")).to_have_text(name)


async def press(page: Page, selector: str) -> None:
    """Click ``selector`` as a hand does: look where it is, reach, press, release. (Playwright's
    own click re-aims until the element is hit, which a person cannot do.)"""
    await page.locator(selector).scroll_into_view_if_needed()
    box = await page.locator(selector).bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    await page.mouse.move(x, y)
    await asyncio.sleep(REACH)
    await page.mouse.down()
    await asyncio.sleep(0.08)
    await page.mouse.up()


async def test_make_it_is_never_lost_while_others_make_tournaments_and_the_list_updates(
        browser: Browser) -> None:
    problems: list[str] = []
    settings = Settings(sign_in=MANY_SIGN_UPS)
    async with running(port=0, store=MemoryStore(), settings=settings) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        makers = srv.app.tournaments.makers
        makers.per_account = makers.per_address = 1000
        base = f"http://{srv.host}:{srv.port}/"
        ws = f"ws://{srv.host}:{srv.port}/ws"
        # A screen tall enough for the whole lobby: the page is not scrolled (where the
        # browser's scroll anchoring would keep what is on screen in place).
        page = await open_page(await browser.new_context(viewport={"width": 1280, "height": 2000}),
                               base, problems)
        await sign_up_on(page, "Ann")
        others = [await account(ws, f"Maker{k}") for k in range(3)]
        made = [0]  # theirs made so far

        async def make_theirs() -> None:
            while True:
                for other in others:
                    await other.send(type="create_tournament", game="connect4",
                                     name=f"Theirs {made[0]}", time_control="3+2",
                                     starts_in=600, minutes=30)
                    made[0] += 1
                    await asyncio.sleep(0.5)

        busy = asyncio.create_task(make_theirs())
        # The list asks again far more often than every 8 s, so a test sees many updates.
        await page.evaluate(
            "setInterval(() => document.getElementById('tournaments-refresh').click(), 200)")
        try:
            for k in range(6):
                # Two of theirs made since the last round at least: the list keeps changing
                # under the form however quickly the page is used.
                deadline = time.monotonic() + 10
                while made[0] < 2 * (k + 1):
                    assert time.monotonic() < deadline, "nobody else made a tournament"
                    await asyncio.sleep(0.05)
                if not await page.locator("#tournament-form").is_visible():
                    await page.click("#tournament-create summary")
                await page.fill("#tournament-name", f"Mine {k}")
                await expect(page.locator("#tournament-list li[data-tournament]").first
                             ).to_be_attached()
                await press(page, "#tournament-make")
                # Each click makes the tournament (its page opens) or says why not.
                await expect(page.locator("#t-name:visible, #tournament-refusal:visible")
                             ).to_have_count(1, timeout=5000)
                if await page.locator("#tournament").is_visible():
                    await expect(page.locator("#t-name")).to_have_text(f"Mine {k}")
                    await page.click("#t-lobby")
                    await expect(page.locator("#lobby")).to_be_visible()
        finally:
            busy.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await busy
        assert made[0] > 8  # the list did change while the form was used
    assert problems == []


async def test_a_refused_tournament_says_why_beside_the_form_in_english_and_japanese(
        browser: Browser) -> None:
    problems: list[str] = []
    async with running(port=0, store=MemoryStore()) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        srv.app.tournaments.makers.per_account = 1
        base = f"http://{srv.host}:{srv.port}/"
        en = await open_page(await browser.new_context(), base, problems)
        ja = await open_page(await browser.new_context(locale="ja-JP"), base, problems)
        await sign_up_on(en, "Ann")
        await sign_up_on(ja, "Mi_7")
        for page in (en, ja):
            await page.click("#tournament-create summary")
            refusal = page.locator("#tournament-refusal")
            await expect(refusal).to_be_hidden()
            # A name of spaces only is no name: the server refuses the empty name.
            await page.fill("#tournament-name", "   ")
            await page.click("#tournament-make")
            await expect(refusal).to_be_visible()
            await expect(page.locator("#lobby")).to_be_visible()
            await page.fill("#tournament-name", "First")
            await expect(refusal).to_be_hidden()  # an edit clears the old reason
            await page.click("#tournament-make")
            await expect(page.locator("#tournament")).to_be_visible()
            await page.click("#t-lobby")
            await page.click("#tournament-create summary")
            await page.fill("#tournament-name", "Second")
            await page.click("#tournament-make")
            await expect(refusal).to_be_visible()
            await expect(page.locator("#lobby")).to_be_visible()
        await expect(en.locator("#tournament-refusal")).to_contain_text(
            "1 tournaments upcoming or running")
        await expect(ja.locator("#tournament-refusal")).to_have_text(
            "予定中・開催中のトーナメントが上限に達しています（アカウントまたは接続元ごと）。")
        await ja.fill("#tournament-name", " ")
        await ja.click("#tournament-make")
        await expect(ja.locator("#tournament-refusal")).to_contain_text("名前")
        await expect(ja.locator("#tournament-refusal")).not_to_contain_text("String")
    assert problems == []
