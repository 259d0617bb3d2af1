"""The page's languages: every string of the page goes through the message catalogues
(server/web/static/i18n/*.json), English and Japanese hold the same keys, the browser's language
is chosen by default and the switch's choice is kept across reloads.

The page test walks the main views in Japanese (the lobby, a game against the computer, the
finished game) and fails on any visible text that still holds an English catalogue string which
has a Japanese translation: a string that bypassed the catalogue. The computer is a scripted
engine, so the computer answers at once; the game ends by the player's resignation.
"""

from __future__ import annotations

import re

import pytest
from catalogues import PLACEHOLDER, catalogue, forms, untranslated_patterns
from catalogues import english_left as english_in
from pages import ONLINE, open_page
from playwright.async_api import Browser, Page, expect

from server.app import running
from server.engines import AiPool
from server.storage.memory import MemoryStore


def test_english_and_japanese_hold_the_same_keys_with_the_same_placeholders() -> None:
    en, ja = catalogue("en"), catalogue("ja")
    assert sorted(set(en) - set(ja)) == [], "keys missing in ja"
    assert sorted(set(ja) - set(en)) == [], "keys missing in en"
    for key, entry in en.items():
        names = {frozenset(PLACEHOLDER.findall(text)) for text in forms(entry)}
        # A plural's forms may leave out the count ("A challenge for you"), never add names.
        allowed = frozenset().union(*names)
        for text in forms(ja[key]):
            assert set(PLACEHOLDER.findall(text)) <= allowed, key
        for lang_entry in (entry, ja[key]):
            if isinstance(lang_entry, dict):
                assert "other" in lang_entry, f"{key}: a plural needs its 'other' form"


NAMES = {"Discus", "Guest", "English", "txt", "ggf", "GGF"}
"""English words a Japanese page still shows: the site's name, a guest's default name,
English named in itself in the language switch, the export's file types."""


async def english_left(page: Page, patterns: list[tuple[str, re.Pattern[str]]]) -> list[str]:
    """What the page shows in English: a catalogue string, or any word of three letters or
    more that is not a name (the site's, a guest's, the levels' own names), which catches a
    string that never went into the catalogue at all."""
    levels = set(await page.eval_on_selector_all("#ai-level option", "os => os.map(o => o.value)"))
    return await english_in(page, patterns, NAMES | levels)


@pytest.mark.browser
@pytest.mark.timeout(120)
async def test_in_japanese_no_visible_string_bypasses_the_catalogue_and_the_switch_is_kept(
    browser: Browser,
) -> None:
    patterns = untranslated_patterns()
    assert len(patterns) > 200  # the check has teeth
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    problems: list[str] = []
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as srv:
            context = await browser.new_context(locale="ja-JP")
            page = await open_page(context, f"http://127.0.0.1:{srv.port}/", problems)
            # The browser's language chose Japanese.
            assert await page.get_attribute("html", "lang") == "ja"
            await expect(page.locator("#lang")).to_have_value("ja")
            await expect(page.locator("#h-ai")).to_have_text("コンピューターと対局")
            await page.locator("#ai-level option").first.wait_for(state="attached")
            assert await english_left(page, patterns) == []

            # A game against the computer: the player's turn, the computer's answer.
            await page.click("#play-ai")
            await page.click("#board-wrap .cell[data-move='1']")
            await page.wait_for_function(
                "document.querySelectorAll('#board-wrap .disc.s1').length === 1")
            await expect(page.locator("#status")).to_contain_text("あなたの手番")
            assert await english_left(page, patterns) == []

            # A second move (no longer abortable), then resigning it: the finished game.
            await page.click("#board-wrap .cell[data-move='1']")
            await page.wait_for_function(
                "document.querySelectorAll('#board-wrap .disc.s1').length === 2")
            await expect(page.locator("#resign")).to_have_text("投了")
            await page.click("#resign")
            await expect(page.locator("#resign")).to_have_text("本当に投了しますか？")
            assert await english_left(page, patterns) == []
            await page.click("#resign")
            resigned = "終局：あなたの負け — あなたが投了しました"
            await expect(page.locator("#status")).to_have_text(resigned)
            await expect(page.locator("#review")).to_be_visible()
            assert await english_left(page, patterns) == []

            # Back in the lobby: the past game is listed in Japanese, plural-free ("4手").
            await page.click("#lobby-btn")
            past = page.locator("#history li").first
            await expect(past).to_contain_text("あなたの負け（投了） · 4手")
            assert await english_left(page, patterns) == []

            # The leaderboard and the player's own profile, in their dialog.
            for opener in ("#leaders-connect4", "#my-profile"):
                await page.click(opener)
                await expect(page.locator("#standings")).to_be_visible()
                await expect(page.locator("#standings-body")).not_to_be_empty()
                assert await english_left(page, patterns) == []
                await page.click("#standings-close")
                await expect(page.locator("#standings")).to_be_hidden()

            # The switch: English, kept across a reload although the browser asks for Japanese.
            async with page.expect_navigation():
                await page.select_option("#lang", "en")
            await page.wait_for_function(ONLINE)
            await expect(page.locator("#h-ai")).to_have_text("Play the computer")
            await expect(past).to_contain_text("You lost (resigned) · 4 moves")
            await page.reload()
            await page.wait_for_function(ONLINE)
            assert await page.get_attribute("html", "lang") == "en"
            await expect(page.locator("#lang")).to_have_value("en")
            await expect(page.locator("#conn")).to_have_text("online")
            await context.close()
    finally:
        await pool.close()
    assert problems == []
