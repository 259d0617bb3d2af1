"""WCAG 2.1 AA on the page, checked by axe-core in Debian's headless Chromium against a real
server: the lobby, a game against the computer (its thinking line, the winner's badge), a
finished game's replay with its review panel, a tournament's page and the ladder's, each in
the light and the dark theme, with no violation of the wcag2a, wcag2aa, wcag21a and wcag21aa
rules.

axe-core's ``axe.min.js`` (MPL-2.0) comes unmodified inside the ``axe-playwright-python``
package of the dev extra (its own API is not used): the script is put in the page as is.
"""

from __future__ import annotations

import base64
import importlib.resources
import json
from typing import Any

import pytest
from pages import open_page
from people import CHEAP_HASHER, MANY_SIGN_UPS, PASSWORD, account
from playwright.async_api import Browser, Page, expect
from wsclient import friends_game

from server.app import Settings, running
from server.engines import AiPool
from server.storage.memory import MemoryStore
from tests.server.tournaments.test_tournament_page import a_ladder

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

AXE = importlib.resources.files("axe_playwright_python").joinpath("axe.min.js").read_text()
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
THEMES = ("light", "dark")
GAME = ["4", "4", "3", "3", "5", "7", "2"]
"""Red wins on the bottom row."""


async def violations(page: Page) -> list[str]:
    """axe's violations of ``TAGS`` on the page as it is, one line per element."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.add_script_tag(content=AXE)
    found: list[dict[str, Any]] = await page.evaluate(
        """async (tags) => (await axe.run(document, {runOnly: {type: 'tag', values: tags},
              // WCAG 2.5.3 (Label in Name), which axe still calls experimental
              rules: {'label-content-name-mismatch': {enabled: true}}}))
            .violations.map((v) => ({id: v.id, nodes: v.nodes.map((n) => ({
              target: n.target.join(' '), why: (n.failureSummary || '').split('\\n').slice(1, 2)
                .join(' ')}))}))""", TAGS)
    return [f"{v['id']}: {n['target']} ({n['why'].strip()})" for v in found for n in v["nodes"]]


async def in_both_themes(page: Page, where: str) -> list[str]:
    """The violations of the page in each theme, each line naming where and which theme."""
    out = []
    for theme in THEMES:
        await page.evaluate("(theme) => { document.documentElement.dataset.theme = theme; }",
                            theme)
        await page.wait_for_timeout(50)  # the transitions of the colours
        out += [f"{where} ({theme}): {line}" for line in await violations(page)]
    return out


async def test_the_lobby_a_game_a_review_a_tournament_and_the_ladder_meet_wcag_21_aa(
        browser: Browser) -> None:
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    store = MemoryStore()
    await a_ladder(store)
    problems: list[str] = []
    found: list[str] = []
    try:
        settings = Settings(sign_in=MANY_SIGN_UPS, grace_seconds=0.5)
        async with running(port=0, store=store, pool=pool, settings=settings) as srv:
            srv.app.accounts.hasher = CHEAP_HASHER
            base = f"http://{srv.host}:{srv.port}/"
            # A tournament with a player, and a finished game to replay.
            maker = await account(srv.url, "Ann")
            await maker.send(type="create_tournament", game="connect4", name="Club arena",
                             time_control="3+2", minutes=30)
            tid = (await maker.expect("tournament"))["tournament"]["id"]
            await maker.send(type="join_tournament", tournament=tid)
            await maker.expect("tournament")
            ann, bob, room = await friends_game(srv.url)
            for ply, move in enumerate(GAME):
                await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply,
                                                          move=move)
                await ann.expect("move_made", ply=ply)
            await ann.expect("game_over")

            page = await open_page(await browser.new_context(), base, problems)
            await expect(page.locator(f'#tournament-list li[data-tournament="{tid}"]')
                         ).to_be_visible()
            await page.click("#tournament-create summary")
            found += await in_both_themes(page, "lobby")

            # A game against the computer, to its end: the thinking line, the winner's badge.
            await page.click("#ai-form label:has-text('Connect Four')")
            await page.locator("#ai-level option").first.wait_for(state="attached")
            await page.select_option("#ai-level", "expert")  # plays the scripted best: column 7
            await page.check("#ai-evaluation")
            await page.click("#play-ai")
            await expect(page.locator("#game")).to_be_visible()
            await page.click("#board-wrap .cell[data-move='1']")
            await expect(page.locator("#status .thinking")).to_contain_text("60 nodes")
            found += await in_both_themes(page, "game")
            for column in "212":  # no threat to block: the computer's fourth in column 7 wins
                cell = page.locator(f"#board-wrap .cell[data-move='{column}']")
                await expect(cell).to_be_attached()
                await cell.click()
            await expect(page.locator(".player .badge")).to_be_visible()
            found += await in_both_themes(page, "game over")

            await page.evaluate(f"location.hash = '#replay/{room}-1'")
            await expect(page.locator("#review")).to_be_visible()
            found += await in_both_themes(page, "replay and review")

            await page.evaluate(f"location.hash = '#tournament/{tid}'")
            await expect(page.locator("#t-standings tr[data-player]")).to_have_count(1)
            found += await in_both_themes(page, "tournament")

            await page.evaluate("location.hash = '#ladder/connect4'")
            await expect(page.locator("#l-list tr[data-entrant]")).to_have_count(3)
            found += await in_both_themes(page, "ladder")
            for client in (maker, ann, bob):
                await client.close()
    finally:
        await pool.close()
    assert found == [], json.dumps(found, indent=1, ensure_ascii=False)
    assert problems == []


async def test_the_forms_checkboxes_are_the_size_of_their_text_and_centred_on_it(
        browser: Browser) -> None:
    problems: list[str] = []

    async def check(page: Page, selector: str) -> None:
        await expect(page.locator(selector)).to_be_visible()
        box = await page.locator(selector).bounding_box()
        text = await page.locator(f"{selector} + span").bounding_box()
        label = await page.locator(f"label:has(> {selector})").bounding_box()
        assert box is not None and text is not None and label is not None
        assert 14 <= box["height"] <= 24 and 14 <= box["width"] <= 24, (selector, box)
        centre = box["y"] + box["height"] / 2
        line = text["y"] + min(text["height"], 24) / 2  # the middle of its first line
        assert abs(centre - line) <= 3, (selector, box, text)
        assert label["height"] >= 44  # the label is the target

    async with running(port=0, store=MemoryStore()) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        page = await open_page(await browser.new_context(), f"http://{srv.host}:{srv.port}/",
                               problems)
        await check(page, "#ai-evaluation")  # a guest's
        await page.fill("#account-name", "Ann")
        await page.fill("#account-password", PASSWORD)
        await page.click("#sign-up")
        await page.click("#tournament-create summary")
        for selector in ("#tournament-rated", "#tournament-private"):
            await check(page, selector)
    assert problems == []


PIXELS = """async ([png, points]) => {
  const img = new Image();
  img.src = `data:image/png;base64,${png}`;
  await img.decode();
  const canvas = Object.assign(document.createElement("canvas"),
                               {width: img.width, height: img.height});
  const g = canvas.getContext("2d");
  g.drawImage(img, 0, 0);
  return points.map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3)));
}"""
"""Colours of a PNG's pixels at ``points``, decoded by the page's own canvas."""


def luminance(rgb: list[int]) -> float:
    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)
    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: list[int], b: list[int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def test_in_the_dark_theme_blacks_disc_is_solid_on_a_ring_that_sets_it_apart(
        browser: Browser) -> None:
    problems: list[str] = []
    async with running(port=0, store=MemoryStore()) as srv:
        page = await open_page(await browser.new_context(color_scheme="dark"),
                               f"http://{srv.host}:{srv.port}/", problems)
        await page.click("#friend-form label:has-text('Othello')")
        await page.click("#invite")
        chip = page.locator(".player .chip.s0.othello")
        await expect(chip).to_be_visible()
        box = await chip.bounding_box()
        assert box is not None
        pad = 8
        shot = await page.screenshot(clip={"x": box["x"] - pad, "y": box["y"] - pad,
                                           "width": box["width"] + 2 * pad,
                                           "height": box["height"] + 2 * pad})
        mid = pad + box["height"] / 2
        fill, ring_1, ring_2, card = await page.evaluate(PIXELS, [
            base64.b64encode(shot).decode(),
            [[pad + box["width"] / 2, mid], [pad - 1, mid], [pad - 2, mid], [1, mid]]])
        assert luminance(fill) < 0.01, fill  # black, and solid to its middle
        # Around it, at least 2 px of a colour it stands out from (3:1, WCAG 1.4.11), where a
        # thin grey line on the dark card made a hollow ring.
        for ring in (ring_1, ring_2):
            assert contrast(fill, ring) >= 3, (fill, ring, card)
    assert problems == []
