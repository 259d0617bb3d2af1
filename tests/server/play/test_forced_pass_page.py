"""The page announces a pass the server played: the opponent of a player with no move reads
who passed, in Debian's headless Chromium against a real server."""

from __future__ import annotations

import pytest
from pages import open_page
from playwright.async_api import Browser, expect
from scripted_engines import OTHELLO_LINE
from wsclient import Client

from server.app import running
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


async def test_the_opponent_of_a_player_with_no_move_reads_that_it_passed(
        browser: Browser) -> None:
    async with running(port=0, store=MemoryStore()) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="othello", opponent={"kind": "friend"}, seat=0)
        room = (await ann.expect("room_state"))["room"]["id"]
        problems: list[str] = []
        page = await open_page(await browser.new_context(),
                               f"http://127.0.0.1:{server.port}/#{room}", problems)
        await ann.expect("room_event", event="joined")  # the page's player took seat 1
        for ply, move in enumerate(OTHELLO_LINE):
            if ply % 2 == 0:
                await ann.send(type="move", room=room, ply=ply, move=move)
            else:
                await page.wait_for_selector(f"#board-wrap[data-ply='{ply}']")
                await page.click(f"#board-wrap .cell[data-move='{move}']")
            await ann.expect("move_made", ply=ply)
        await ann.expect("move_made", ply=8)  # Ann's pass, played for her
        await page.wait_for_selector("#board-wrap[data-ply='9']")
        await expect(page.locator("#offer-note")).to_have_text("Ann had no move and passed.")
        assert problems == []
