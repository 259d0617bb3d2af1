"""The berserk button on the game page, in Debian's headless Chromium against a real server:
shown to a player of an arena game before its first move, it halves the player's clock and
goes, and the page says so."""

from __future__ import annotations

import pytest
from pages import open_page
from people import CHEAP_HASHER, sign_up
from playwright.async_api import Browser, expect
from wsclient import Client

from server.app import running
from tests.server.tournaments.test_tournament_desk import paired

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


async def test_a_player_goes_berserk_from_the_game_page(browser: Browser) -> None:
    problems: list[str] = []
    async with running(port=0) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        ann = await Client.open(srv.url, "Ann")
        await sign_up(ann, "Ann")
        await ann.send(type="create_tournament", game="connect4", name="Blitz", minutes=30,
                       time_control="3+2")
        tid = (await ann.expect("tournament"))["tournament"]["id"]
        await ann.send(type="join_tournament", tournament=tid)
        await ann.expect("tournament")
        base = f"http://{srv.host}:{srv.port}/"
        page = await open_page(await browser.new_context(), base, problems)
        # The page's player joins through a second connection of its own (the tournament
        # pages are not this test's): its room_state reaches the page too.
        token = await page.evaluate("localStorage.getItem('discus.resume')")
        twin = await Client.open(srv.url, None, resume=token)
        await sign_up(twin, "Pagey")  # tournaments take accounts, not guests
        await twin.send(type="join_tournament", tournament=tid)
        first, second, room = await paired({ann.player_id: ann, twin.player_id: twin},
                                           await twin.expect("tournament"))
        seat = 0 if first is twin else 1
        await page.evaluate(f"location.hash = '#{room}'")
        button = page.locator("#berserk")
        await expect(button).to_be_visible()
        await button.click()
        told = await ann.expect("room_event", event="berserk")
        assert told["seat"] == seat
        await expect(button).to_be_hidden()
        await expect(page.locator("#offer-note")).to_contain_text("berserk")
        assert told["clock"]["remaining_ms"][seat] <= 90_000

        for client in (ann, twin):
            await client.close()
    assert problems == []
