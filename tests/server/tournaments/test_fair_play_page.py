"""Fair play on the page, in Debian's headless Chromium against a real server: the lobby's
list of tournaments comes a page at a time behind a More button, and a player whose arena
game was aborted because it never moved reads that it is paused, and why."""

from __future__ import annotations

import pytest
from people import CHEAP_HASHER, account
from playwright.async_api import Browser, expect
from wsclient import Client

from server.app import Settings, running
from server.play.clocks import TIME_CONTROLS, TimeControl
from tests.server.tournaments.test_tournament_page import open_watched, sign_up_on

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]

QUICK = TimeControl("0.05+0", 3_000, 0)
"""A 3-second clock: the idle page's flag falls (and its game is aborted) at once."""


async def make(client: Client, name: str, **extra: object) -> str:
    await client.send(type="create_tournament", game="connect4", name=name, minutes=30,
                      **{"time_control": "3+2", **extra})
    while True:
        message = await client.expect("tournament")
        if message["tournament"]["name"] == name:
            return str(message["tournament"]["id"])


async def test_the_list_pages_behind_more_and_a_no_show_is_told_it_is_paused(
        browser: Browser) -> None:
    problems: list[str] = []
    settings = Settings(time_controls={**TIME_CONTROLS, QUICK.name: QUICK})
    async with running(port=0, settings=settings) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        srv.app.tournaments.page = 2
        ann = await account(srv.url, "Ann")
        for name in ("Later one", "Later two"):
            await make(ann, name, starts_in=3600)
        tid = await make(ann, "Quick one", time_control=QUICK.name)
        page = await open_watched(await browser.new_context(),
                                  f"http://{srv.host}:{srv.port}/", problems, [])
        items = page.locator("#tournament-list li[data-tournament]")
        await expect(items).to_have_count(2)
        await page.click("#tournaments-more")
        await expect(items).to_have_count(3)
        await expect(page.locator("#tournaments-more")).to_be_hidden()

        # The page's player joins the quick arena and is paired with Ann; it never moves.
        await sign_up_on(page, "Pagey")
        await page.evaluate(f"location.hash = '#tournament/{tid}'")
        await page.click("#t-join")
        await ann.send(type="join_tournament", tournament=tid)
        while True:
            room = (await ann.expect("room_state", timeout=10))["room"]
            if room["status"] == "active":
                break
        if room["seats"][0]["player"]["id"] == ann.player_id:
            await ann.send(type="move", room=room["id"], ply=0, move="4")
        await expect(page.locator("#game")).to_be_visible()
        await ann.expect("game_over", timeout=10)
        await page.click("#tournament-back")
        await expect(page.locator("#t-you")).to_contain_text(
            "Paused: you did not move in your last game")
        await expect(page.locator("#t-join")).to_have_text("Join again")
        await ann.close()
    assert problems == []
