"""What players notice on the page, in Debian's headless Chromium: a challenge with a chosen
side, names beside clocks on a phone, draw and rematch offers said to both sides, a visible
focus ring on the Connect Four board, the move keys after a game ended by a click, the flip
button (kept per game across a reload), the review buttons apart; drawn icons, the Ratings
note clear of its buttons, and a game left through "Lobby" asked about and ended, not left
running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pages import ONLINE, open_page
from playwright.async_api import Browser, Page, expect

from server.app import Running, Settings, running
from server.engines import AiPool
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

PHONE = {"width": 390, "height": 760}
ANN = "Annabelle_Featherstone"
BOB = "Bartholomew_Fitzgerald2"


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(port=0, store=MemoryStore(), settings=Settings(grace_seconds=5)) as srv:
        yield srv


async def call_myself(page: Page, name: str) -> None:
    await page.fill("#name", name)
    await page.click("#name-form button")
    await page.wait_for_function(ONLINE)
    await expect(page.locator("#name")).to_have_value(name)


async def at_ply(page: Page, ply: int) -> None:
    await page.wait_for_selector(f"#board-wrap[data-ply='{ply}']")


async def box(page: Page, selector: str) -> dict[str, float]:
    found = await page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not drawn"
    return found


async def test_two_players_see_their_offers_names_focus_keys_and_a_flipped_board(
    browser: Browser, server: Running
) -> None:
    url = f"http://127.0.0.1:{server.port}/"
    problems: list[str] = []
    ann = await open_page(await browser.new_context(), url, problems)
    bob = await open_page(await browser.new_context(viewport=PHONE), url, problems)
    await call_myself(ann, ANN)
    await call_myself(bob, BOB)

    # Ann challenges Bob to a timed game and chooses to move second.
    await ann.fill("#challenge-player", BOB)
    await ann.check('#challenge-form input[name="seat"][value="1"]', force=True)
    await ann.select_option("#challenge-clock", "3+2")
    await ann.click("#challenge-send")
    offer = bob.locator("#challenge-list li.offer")
    await expect(offer).to_contain_text("you move first")
    await offer.get_by_role("button", name="Accept").first.click()
    for page in (ann, bob):
        await expect(page.locator("#game")).to_be_visible()
        await expect(page.locator("#players .clock")).to_have_count(2)
    # Long names beside the clocks, on a phone too: shown whole, not cut off.
    for page in (ann, bob):
        whole = await page.eval_on_selector_all(
            "#players .who", "els => els.map(e => e.scrollWidth <= e.clientWidth + 1)")
        assert whole == [True, True]
        await expect(page.locator("#players")).to_contain_text(ANN)
        await expect(page.locator("#players")).to_contain_text(BOB)

    # Bob (first) moves; Ann offers a draw: Bob is told, and Ann is told he declined.
    await bob.click("#board-wrap .cell[data-move='1']")
    await at_ply(ann, 1)
    await ann.click("#draw")
    await expect(bob.locator("#offer-note")).to_contain_text(f"{ANN} offers a draw")
    await expect(ann.locator("#offer-note")).to_contain_text("You offered a draw")
    await bob.click("#draw-decline")
    await expect(ann.locator("#offer-note")).to_have_text("Your draw offer was declined.")

    # The focus ring on the blue board is white (the page's blue one would not show).
    await ann.keyboard.press("Shift")
    await ann.focus("#board-wrap .cell[data-move='2']")
    ring = await ann.eval_on_selector(
        "#board-wrap .cell[data-move='2']", "c => getComputedStyle(c).outlineColor")
    assert ring == "rgb(255, 255, 255)"

    # Bob wins by a click in column 1; the keys then step through the moves at once.
    for ply, (page, column) in enumerate([(ann, 2), (bob, 1), (ann, 2), (bob, 1), (ann, 2),
                                          (bob, 1)], start=1):
        await page.click(f"#board-wrap .cell[data-move='{column}']")
        await at_ply(bob, ply + 1)
    await expect(bob.locator("#status")).to_contain_text("Game over")
    assert await bob.evaluate("!!document.activeElement.closest('.grid')"), "focus on the board"
    for key, ply in (("Home", 0), ("End", 7), ("ArrowLeft", 6), ("ArrowRight", 7)):
        await bob.keyboard.press(key)
        await at_ply(bob, ply)

    # The flip button turns the board round (Connect Four: mirrored).
    first, last = await box(ann, ".cell[data-col='1']"), await box(ann, ".cell[data-col='7']")
    assert first["x"] < last["x"]
    await ann.click("#flip")
    await expect(ann.locator("#flip")).to_have_attribute("aria-pressed", "true")
    first, last = await box(ann, ".cell[data-col='1']"), await box(ann, ".cell[data-col='7']")
    assert first["x"] > last["x"]
    # The review's buttons do not touch.
    review, analyse = await box(ann, "#review-btn"), await box(ann, "#analyse-btn")
    assert analyse["y"] - (review["y"] + review["height"]) >= 4

    # Ann offers a rematch and Bob leaves instead: Ann is told.
    await ann.click("#rematch")
    await expect(ann.locator("#offer-note")).to_contain_text("You offered a rematch")
    await bob.click("#lobby-btn")
    await expect(ann.locator("#offer-note")).to_contain_text("rematch offer was declined")
    assert problems == []


async def test_one_player_sees_drawn_icons_a_clear_note_and_is_asked_before_leaving_a_game(
    browser: Browser, server: Running
) -> None:
    problems: list[str] = []
    page = await open_page(await browser.new_context(), f"http://127.0.0.1:{server.port}/",
                           problems)
    for button in ("#sound", "#theme"):
        await expect(page.locator(f"{button} svg")).to_have_count(1)
        assert (await page.locator(button).inner_text()).strip() == "", "no emoji"
    # The Ratings note sits below its buttons, clear of them.
    buttons = await page.eval_on_selector_all(
        "#leaders-connect4, #leaders-othello, #my-profile",
        "bs => Math.max(...bs.map(b => b.getBoundingClientRect().bottom))")
    note = await page.eval_on_selector(
        "section[aria-labelledby='h-ratings'] .note", "n => n.getBoundingClientRect().top")
    assert note >= buttons
    await expect(page.locator("#engines-note")).to_be_hidden()  # no workers to warm here

    # A game against the computer, which opens: "Lobby" asks first; no keeps the game.
    await page.check('#ai-form input[name="seat"][value="1"]', force=True)
    await page.click("#play-ai")
    await at_ply(page, 1)
    asked: list[str] = []

    async def answer(dialog: object, accept: bool) -> None:
        asked.append(dialog.message)  # type: ignore[attr-defined]
        await (dialog.accept() if accept else dialog.dismiss())  # type: ignore[attr-defined]

    page.once("dialog", lambda d: asyncio.ensure_future(answer(d, False)))
    await page.click("#lobby-btn")
    await expect(page.locator("#game")).to_be_visible()
    page.once("dialog", lambda d: asyncio.ensure_future(answer(d, True)))
    await page.click("#lobby-btn")
    await expect(page.locator("#lobby")).to_be_visible()
    assert len(asked) == 2 and "aborts it" in asked[0]
    await expect(page.locator("#toast")).to_contain_text("aborted")
    past = page.locator("#history li")
    await expect(past).to_have_count(1)
    await expect(past.first).to_contain_text("1 move ·")
    await expect(page.locator("#mine-card")).to_be_hidden()  # nothing left running
    assert problems == []


async def test_while_the_engines_warm_up_the_lobby_says_so_and_the_computer_answers_at_once(
    browser: Browser,
) -> None:
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:slow_warm_up")
    await pool.start()
    problems: list[str] = []
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as srv:
            page = await open_page(await browser.new_context(),
                                   f"http://127.0.0.1:{srv.port}/", problems)
            note = page.locator("#engines-note")
            # Compiled or loaded from numba's cache, as the cache's files here say a start does.
            doing = "compiling" if srv.app.gauge.compiling else "loading"
            await expect(note).to_contain_text(f"The engines are {doing}")
            await page.check('#ai-form input[name="seat"][value="1"]', force=True)
            await page.click("#play-ai")
            await at_ply(page, 1)  # the computer's opening, before its engine is ready
            page.once("dialog", lambda d: asyncio.ensure_future(d.accept()))
            await page.click("#lobby-btn")  # one ply: leaving aborts it
            await expect(note).to_be_hidden(timeout=15_000)  # once the worker is ready
    finally:
        await pool.close()
    assert problems == []


async def columns_mirrored(page: Page) -> bool:
    """Whether the Connect Four board is drawn flipped: column 1 right of column 7."""
    first, last = await box(page, ".cell[data-col='1']"), await box(page, ".cell[data-col='7']")
    return first["x"] > last["x"]


async def test_a_flipped_board_stays_flipped_after_a_reload_and_the_next_game_is_not(
    browser: Browser, server: Running
) -> None:
    problems: list[str] = []
    page = await open_page(await browser.new_context(), f"http://127.0.0.1:{server.port}/",
                           problems)
    await page.click("#play-ai")
    await page.click("#board-wrap .cell[data-move='1']")
    await at_ply(page, 2)
    assert not await columns_mirrored(page)
    await page.click("#flip")
    await expect(page.locator("#flip")).to_have_attribute("aria-pressed", "true")
    assert await columns_mirrored(page)

    # A reload brings the same game back, still turned round.
    await page.reload()
    await page.wait_for_function(ONLINE)
    await at_ply(page, 2)
    await expect(page.locator("#flip")).to_have_attribute("aria-pressed", "true")
    assert await columns_mirrored(page)

    # Another game starts the usual way round.
    page.once("dialog", lambda d: asyncio.ensure_future(d.accept()))
    await page.click("#lobby-btn")
    await expect(page.locator("#lobby")).to_be_visible()
    await page.click("#play-ai")
    await page.click("#board-wrap .cell[data-move='1']")
    await at_ply(page, 2)
    await expect(page.locator("#flip")).to_have_attribute("aria-pressed", "false")
    assert not await columns_mirrored(page)
    assert problems == []
