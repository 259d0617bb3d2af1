"""A busy computer, shown on the page (headless Chromium): one engine process whose every
search takes 0.8 s (``scripted_engines:unhurried``), and other people's games asking it
first, so the page's own AI move waits its turn."""

from __future__ import annotations

import pytest
from pages import open_page
from playwright.async_api import Browser, expect
from wsclient import Client

from server.app import running
from server.engines import AiPool
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

OTHERS = 8
"""Games whose AI opens, asked just before the page's move: about 6 s of searches ahead. The
lobby asks for its stats once when it opens (again only while busy); with 4 (3 s) a slow
machine opening the page late once saw the wait already under the lobby's 2 s mark."""


async def test_the_lobby_and_the_game_say_the_computer_is_busy_and_the_move_still_comes(
    browser: Browser,
) -> None:
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:unhurried",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    problems: list[str] = []
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as srv:
            url = f"http://127.0.0.1:{srv.port}/"
            game_ctx = await browser.new_context()
            page = await open_page(game_ctx, url, problems)
            await page.click("#ai-form label:has-text('Connect Four')")
            await page.locator("#ai-level option").first.wait_for(state="attached")
            await page.click("#play-ai")
            await page.locator("#board-wrap .cell[data-move='4']").wait_for()
            others = [await Client.open(srv.url, f"P{i}") for i in range(OTHERS)]
            for other in others:
                await other.send(type="create_room", game="connect4", seat=1,
                                 opponent={"kind": "ai", "level": "expert"})
                await other.expect("room_state")
            await page.click("#board-wrap .cell[data-move='4']")
            lobby_ctx = await browser.new_context()
            lobby = await open_page(lobby_ctx, url, problems)
            await expect(lobby.locator("#engines-note")).to_contain_text("The computer is busy")
            busy = page.locator("#status .busy")
            await expect(busy).to_contain_text("The computer is busy", timeout=10_000)
            await expect(busy).to_contain_text("waits for a free engine")
            # Then an engine takes it and its move lands, searched as ever.
            await page.wait_for_function(
                "document.querySelectorAll('#board-wrap .disc.s1').length === 1",
                timeout=20_000)
            await expect(busy).to_have_count(0)
            assert pool.snapshot().fallbacks == 0
            for other in others:
                await other.close()
            await game_ctx.close()
            await lobby_ctx.close()
    finally:
        await pool.close()
    assert problems == []
