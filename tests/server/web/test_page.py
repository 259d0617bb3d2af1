"""The web page, driven by Debian's headless Chromium against a real ``discus serve``.

The game against the AI comes last so the server's AI workers can warm up (compile or load
their kernels) while the other tests run; until a first one is ready the server answers AI
moves at once with its quick fallback over the rules alone, which is weak but never stalls.

The server runs as a subprocess (its own event loop and worker pool, as a person would start
it) on a free loopback port, in a scratch directory so its embedded database stays there. The
browser is driven with Playwright's async API inside the tests' own event loop. Chromium is
the system one: these tests never download a browser.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pages import free_port, open_page
from playwright.async_api import Browser, BrowserContext, Page, expect
from wsclient import Client

from server.app import Settings, running
from server.engines import AiPool
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[3]
STARTUP_SECONDS = 90.0
"""A cold start compiles the engines' kernels (numba caches them for the next start)."""

AI_MOVE_TIMEOUT_MS = 90_000
"""Generous: on a cold start the AI workers may still be compiling when the first move is due."""

MY_TURN_OR_OVER = """() => document.querySelector('#board-wrap .cell[data-move]')
    || document.querySelector('#board-wrap')?.dataset.status === 'finished'"""


def wait_until_serving(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"discus serve exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    tail = log.read_text()[-3000:]
    pytest.fail(f"discus serve did not answer within {STARTUP_SECONDS} s:\n{tail}")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``discus serve`` on the embedded defaults, in a scratch directory (or, to debug the page
    against a server already running, the URL in ``DISCUS_PAGE_URL``)."""
    if os.environ.get("DISCUS_PAGE_URL"):
        yield os.environ["DISCUS_PAGE_URL"]
        return
    home = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    log = home / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1",
             "--port", str(port)],
            cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_serving(url, proc, log)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def board_discs(page: Page) -> int:
    count: int = await page.locator("#board-wrap .disc").count()
    return count


DRAWN_BOARD = """cells => cells.map(c => c.querySelector('.disc.s0') ? 'X'
    : c.querySelector('.disc.s1') ? 'O' : '-').join('')"""
"""The board as drawn, in the protocol's board text ('-' empty, 'X' seat 0, 'O' seat 1)."""


async def drawn_board(page: Page) -> str:
    text: str = await page.eval_on_selector_all("#board-wrap .grid .cell", DRAWN_BOARD)
    return text


async def stored_game(server_url: str, game_id: str) -> dict[str, Any]:
    """The server's record of a game, asked for over the protocol as any client would."""
    client = await Client.open(server_url.replace("http://", "ws://") + "ws", "Checker")
    try:
        await client.send(type="get_game", game_id=game_id)
        record: dict[str, Any] = (await client.expect("game_record"))["record"]
        return record
    finally:
        await client.close()


def screenshot_dir(tmp_path: Path) -> Path:
    """Where the page's screenshots go: ``$DISCUS_SCREENSHOTS`` to keep them, else scratch."""
    folder = Path(os.environ.get("DISCUS_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_two_people_play_through_the_share_link_and_see_each_others_moves(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx = await browser.new_context()
    bob_ctx = await browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    eve_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click("#friend-form label:has-text('Connect Four')")
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    link = await ann.input_value("#share-link")
    assert "#" in link

    bob = await open_page(bob_ctx, link, problems)
    await ann.wait_for_selector("#share", state="hidden")  # the friend arrived: game on

    def disc(column: int, row: int, colour: str) -> str:
        return f"#board-wrap .cell[aria-label^='column {column}, row {row}, {colour}']"

    plies = [(ann, 4, 1, "red"), (bob, 3, 1, "yellow"), (ann, 4, 2, "red")]
    for mover, column, row, colour in plies:
        await mover.click(f"#board-wrap .cell[data-move='{column}']")
        for page in (ann, bob):
            await page.wait_for_selector(disc(column, row, colour))
    assert await bob.locator("#movelist button").count() == 3
    assert await bob.locator("#board-wrap .cell[data-move]").count() == 7, "Bob's turn, 7 columns"
    assert await ann.locator("#board-wrap .cell[data-move]").count() == 0, "not Ann's turn"

    # A third person opening the same link finds the seats taken and watches instead.
    eve = await open_page(eve_ctx, link, problems)
    await eve.wait_for_selector(disc(3, 1, "yellow"))
    assert await eve.locator("#board-wrap .cell[data-move]").count() == 0
    await bob.click("#board-wrap .cell[data-move='5']")
    await eve.wait_for_selector(disc(5, 1, "yellow"))

    # Ann's connection drops: the page comes back with its resume token and redraws it all.
    await ann.reload()
    await ann.wait_for_selector(disc(5, 1, "yellow"))
    assert await ann.locator("#board-wrap .cell[data-move]").count() == 7, "Ann's turn again"
    assert "you" in await ann.locator(".player").first.inner_text()

    assert problems == []
    for ctx in (ann_ctx, bob_ctx, eve_ctx):
        await ctx.close()


async def test_a_friend_joins_by_typing_the_code_in_lower_case_with_spaces(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx = await browser.new_context()
    bob_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    code = await ann.inner_text("#share-code")
    assert re.fullmatch(r"[2-9A-HJKMNP-Z]{8}", code), f"no look-alikes, one case: {code}"

    bob = await open_page(bob_ctx, server_url, problems)
    await bob.fill("#code", f"  {code.lower()} ")
    await bob.click("#code-form button")
    await bob.wait_for_selector("#board-wrap .board.connect4")
    await ann.wait_for_selector("#share", state="hidden")
    assert "you" in await bob.locator(".player").nth(1).inner_text()
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_an_ai_game_aborted_before_any_move_is_not_scored_and_says_so_in_history(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    page = await open_page(context, server_url, problems)
    await page.click("#ai-form label:has-text('Connect Four')")
    await page.locator("#ai-level option").first.wait_for(state="attached")
    await page.click("#play-ai")
    await page.wait_for_selector("#board-wrap .cell[data-move]")
    await expect(page.locator("#resign")).to_have_text("Abort")
    await page.click("#resign")
    await expect(page.locator("#status")).to_contain_text("aborted")
    assert await page.get_attribute("#board-wrap", "data-status") == "finished"
    await expect(page.locator("#rematch")).to_be_hidden()
    await page.click("#lobby-btn")
    past = page.locator("#history li")
    await expect(past).to_have_count(1)
    await expect(past.first).to_contain_text("Aborted")
    assert "lost" not in (await past.first.inner_text()).lower()
    assert problems == []
    await context.close()


async def test_saving_a_new_name_renames_the_player_and_keeps_its_past_games(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    page = await open_page(context, server_url, problems)
    await page.fill("#name", "Ann")
    await page.click("#name-form button")
    await page.wait_for_function("document.querySelector('#conn').dataset.state === 'online'")
    player = await page.evaluate("localStorage.getItem('discus.resume').split('.')[0]")
    await page.click("#play-ai")
    await page.wait_for_selector("#board-wrap .cell[data-move]")
    await page.click("#resign")  # "Abort": one past game, quickly
    await expect(page.locator("#status")).to_contain_text("aborted")
    await page.click("#lobby-btn")
    await expect(page.locator("#history li")).to_have_count(1)

    await page.fill("#name", "Annabel")
    await page.click("#name-form button")
    await page.wait_for_function("document.querySelector('#conn').dataset.state === 'online'")
    await expect(page.locator("#history li")).to_have_count(1)
    assert await page.evaluate("localStorage.getItem('discus.resume').split('.')[0]") == player
    await page.reload()
    await page.wait_for_function("document.querySelector('#conn').dataset.state === 'online'")
    await expect(page.locator("#name")).to_have_value("Annabel")
    await expect(page.locator("#history li")).to_have_count(1)
    record = await stored_game(server_url, await page.get_attribute("#history li", "data-game"))
    assert record["seats"][0]["player"] == {"id": player, "name": "Annabel", "bot": False}
    assert problems == []
    await context.close()


async def focused(page: Page, attribute: str) -> str | None:
    value: str | None = await page.evaluate(
        f"document.activeElement?.closest('#board-wrap') && "
        f"document.activeElement.dataset.{attribute} || null")
    return value


async def test_connect_four_by_keyboard_tab_enters_at_the_centre_arrows_go_by_column_digits_drop(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx = await browser.new_context()
    bob_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click("#friend-form label:has-text('Connect Four')")
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    bob = await open_page(bob_ctx, await ann.input_value("#share-link"), problems)
    await ann.wait_for_selector("#share", state="hidden")
    # Columns of different heights, so page order and column order differ.
    for mover, column in [(ann, 3), (bob, 3), (ann, 3), (bob, 6), (ann, 1), (bob, 1)]:
        await mover.wait_for_selector(f"#board-wrap .cell[data-move='{column}']")
        await mover.click(f"#board-wrap .cell[data-move='{column}']")
        await ann.focus("#theme")  # off the board, on the last control before it
    await ann.wait_for_selector("#board-wrap .cell[data-move]")

    await ann.keyboard.press("Tab")
    assert await focused(ann, "move") == "4", "Tab enters the board at the centre column"
    seen = []
    for _ in range(4):
        await ann.keyboard.press("ArrowRight")
        seen.append(await focused(ann, "move"))
    assert seen == ["5", "6", "7", "7"]
    for _ in range(6):
        await ann.keyboard.press("ArrowLeft")
    assert await focused(ann, "move") == "1"
    await ann.keyboard.press("2")
    await bob.wait_for_selector("#board-wrap .cell[aria-label^='column 2, row 1, red']")
    # Bob types a digit without touching the board: it drops in that column too.
    await bob.wait_for_selector("#board-wrap .cell[data-move]")
    await bob.keyboard.press("7")
    await ann.wait_for_selector("#board-wrap .cell[aria-label^='column 7, row 1, yellow']")
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_othello_by_keyboard_arrows_move_on_the_grid_and_enter_plays(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx = await browser.new_context()
    bob_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click("#friend-form label:has-text('Othello')")
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    bob = await open_page(bob_ctx, await ann.input_value("#share-link"), problems)
    await ann.wait_for_selector("#share", state="hidden")
    await ann.wait_for_selector("#board-wrap .cell[data-move]")

    await ann.focus("#theme")  # the last control before the board
    await ann.keyboard.press("Tab")
    assert await focused(ann, "move") == "d3", "Tab enters the board on a legal move"
    walk = []
    for key in ["ArrowDown", "ArrowRight", "ArrowDown", "ArrowDown", "ArrowLeft", "ArrowUp"]:
        await ann.keyboard.press(key)
        walk.append(await focused(ann, "square"))
    assert walk == ["d4", "e4", "e5", "e6", "d6", "d5"]
    for key in ["ArrowDown", "ArrowRight"]:
        await ann.keyboard.press(key)
    assert await focused(ann, "move") == "e6"
    await ann.keyboard.press("Enter")
    await bob.wait_for_selector("#board-wrap .cell[aria-label^='e6, black']")
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_the_thinking_readout_keeps_the_last_iteration_and_says_whom_the_score_favours(
    browser: Browser,
) -> None:
    """A server in this process with a scripted engine (three iterations in a few ms, scores
    +1, +2, +3 for the AI, 10, 20 and 30 nodes, always the last column): the move's
    thought, what the page must show, is known (the nodes of the whole search)."""
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    problems: list[str] = []
    try:
        settings = Settings(thinking_interval=60.0)
        async with running(port=0, store=MemoryStore(), pool=pool, settings=settings) as srv:
            context = await browser.new_context()
            page = await open_page(context, f"http://127.0.0.1:{srv.port}/", problems)
            await page.click("#ai-form label:has-text('Connect Four')")
            await page.locator("#ai-level option").first.wait_for(state="attached")
            await page.select_option("#ai-level", "expert")  # plays its best move: +3
            await page.check("#ai-evaluation")  # a guest's casual game: the engine's verdict
            await page.click("#play-ai")
            await page.click("#board-wrap .cell[data-move='4']")
            await page.wait_for_function(
                "document.querySelectorAll('#board-wrap .disc.s1').length === 1")
            readout = page.locator("#status .thinking")
            await expect(readout).to_have_text(
                re.compile(r"^· Computer \(\w+\) saw depth 3 · \+3 for Yellow · 60 nodes$"))
            await context.close()
    finally:
        await pool.close()
    assert problems == []


async def friends_on_pages(browser: Browser, server_url: str, game: str, problems: list[str]
                          ) -> tuple[BrowserContext, Page, BrowserContext, Page]:
    """Ann invites, Bob opens the link: both pages on the started game."""
    ann_ctx = await browser.new_context()
    bob_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click(f"#friend-form label:has-text('{game}')")
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    bob = await open_page(bob_ctx, await ann.input_value("#share-link"), problems)
    await ann.wait_for_selector("#share", state="hidden")
    return ann_ctx, ann, bob_ctx, bob


async def test_an_error_toast_says_it_in_words_without_the_raw_code(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    page = await open_page(context, server_url, problems)
    await page.fill("#code", "nosuchroom")
    await page.click("#code-form button")
    toast = page.locator("#toast")
    await expect(toast).to_contain_text("no room")
    assert "unknown_room" not in await toast.inner_text()
    assert await toast.get_attribute("data-code") == "unknown_room"
    assert problems == []
    await context.close()


async def test_your_own_open_room_is_under_your_games_not_under_open_rooms(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    page = await open_page(context, server_url, problems)
    other = await open_page(context, server_url, problems)  # the same player, another tab
    await page.click("#open-room")
    await page.wait_for_selector("#board-wrap .board")
    code = await page.evaluate("location.hash.slice(1)")
    await page.click("#lobby-btn")
    for tab in (page, other):
        await tab.click("#refresh")
        await expect(tab.locator("#mine li")).to_have_count(1)
        await expect(tab.locator("#mine li")).to_contain_text("Connect Four")
        await tab.wait_for_timeout(300)
        mine = tab.locator(f"#rooms button[aria-label$='room {code}']")
        assert await mine.count() == 0, "nothing to join or watch"
    # Someone else sees it among the open rooms.
    stranger_ctx = await browser.new_context()
    stranger = await open_page(stranger_ctx, server_url, problems)
    await expect(stranger.locator(f"#rooms button[aria-label$='room {code}']")).to_have_count(2)
    assert problems == []
    await context.close()
    await stranger_ctx.close()


async def test_a_finished_game_shows_its_export_without_going_to_history(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx, ann, bob_ctx, bob = await friends_on_pages(browser, server_url, "Connect Four",
                                                        problems)
    for ply, column in enumerate("1212121"):
        mover = (ann, bob)[ply % 2]
        await mover.click(f"#board-wrap .cell[data-move='{column}']")
        await ann.wait_for_function(
            f"document.querySelectorAll('#board-wrap .disc').length === {ply + 1}")
    await expect(ann.locator("#status")).to_contain_text("You win")
    await expect(ann.locator("#export")).to_be_visible()
    await expect(ann.locator("#export-text")).to_have_text("1212121")
    await expect(bob.locator("#export-text")).to_have_text("1212121")
    href = await ann.get_attribute("#downloads a", "href")
    assert href is not None and href.endswith(".txt")
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_the_claim_button_counts_down_while_the_opponent_may_come_back(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx, ann, bob_ctx, bob = await friends_on_pages(browser, server_url, "Connect Four",
                                                        problems)
    await bob_ctx.close()
    claim = ann.locator("#claim")
    await expect(claim).to_be_visible()
    await expect(claim).to_be_disabled()
    first = int(re.fullmatch(r"Claim the win in (\d+) s", await claim.inner_text())[1])  # type: ignore[index]
    await ann.wait_for_timeout(2100)
    later = int(re.fullmatch(r"Claim the win in (\d+) s", await claim.inner_text())[1])  # type: ignore[index]
    assert 0 < later < first
    assert problems == []
    await ann_ctx.close()


async def test_offline_retrying_in_counts_down_to_the_next_attempt(browser: Browser) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    async with running(port=0, store=MemoryStore()) as srv:
        page = await open_page(context, f"http://127.0.0.1:{srv.port}/", problems)
    # The server is gone: the page backs off 0.5 s, 1 s, 2 s, 4 s... between attempts.
    conn = page.locator("#conn")
    await page.wait_for_function(
        "Number((document.querySelector('#conn').textContent.match(/retrying in (\\d+) s/)"
        " || [0, 0])[1]) >= 3", timeout=30_000)
    first = int(re.search(r"retrying in (\d+) s", await conn.inner_text())[1])  # type: ignore[index]
    await page.wait_for_timeout(1100)
    later = int(re.search(r"retrying in (\d+) s", await conn.inner_text())[1])  # type: ignore[index]
    assert later < first
    await context.close()


async def test_a_saturated_server_shows_as_busy_and_the_page_gets_in_once_it_has_room(
    browser: Browser,
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    async with running(port=0, store=MemoryStore(), settings=Settings(max_connections=0)) as srv:
        page = await context.new_page()
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        await page.goto(f"http://127.0.0.1:{srv.port}/")
        conn = page.locator("#conn")
        await expect(conn).to_have_text(re.compile(r"server busy · retrying in \d+ s"),
                                        timeout=10_000)
        assert "maximum of 0 connections" in (await conn.get_attribute("title") or "")
        first = int(re.search(r"in (\d+) s", await conn.inner_text())[1])  # type: ignore[index]
        assert first >= 2  # a saturated server is given seconds, not the first 0.5 s retry
        srv.app.gauge.max_connections = 10  # room again
        await expect(conn).to_have_text("online", timeout=15_000)
        assert await conn.get_attribute("title") == ""
    assert problems == []
    await context.close()


async def test_on_a_phone_away_and_claim_stay_on_one_line_and_do_not_push_the_board(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx = await browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    bob_ctx = await browser.new_context()
    ann = await open_page(ann_ctx, server_url, problems)
    await ann.click("#friend-form label:has-text('Connect Four')")
    await ann.click("#invite")
    await ann.wait_for_selector("#share:not([hidden])")
    await open_page(bob_ctx, await ann.input_value("#share-link"), problems)
    await ann.wait_for_selector("#share", state="hidden")
    top = "(() => { const b = document.querySelector('#board-wrap'); " \
        "return b.getBoundingClientRect().top + window.scrollY; })()"  # on the page, not the view
    board_top = await ann.evaluate(top)
    await bob_ctx.close()
    await ann.wait_for_selector(".player.offline")
    await expect(ann.locator("#claim")).to_be_visible()
    # Measured in one synchronous step: the seats are drawn anew on every update, so a
    # handle taken one call earlier may already be detached.
    heights = await ann.evaluate("[...document.querySelectorAll('#players .player')]"
                                 ".map((p) => p.getBoundingClientRect().height)")
    assert len(heights) == 2, heights
    assert heights[0] == heights[1], f"'away' must not add a line: {heights}"
    assert await ann.evaluate(top) == board_top
    claim = (await ann.locator("#claim").bounding_box() or {})["height"]
    lobby = (await ann.locator("#lobby-btn").bounding_box() or {})["height"]
    assert claim == lobby, "the claim button is one line, as the others"
    assert problems == []
    await ann_ctx.close()


async def test_on_a_phone_the_winning_computers_level_is_not_cut_off_by_its_badge(
    browser: Browser,
) -> None:
    """The scripted engine at ``expert`` plays the last column unless it must block (the
    level's rails): it blocks column 1 once, then stacks column 7 to a win."""
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    problems: list[str] = []
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as srv:
            context = await browser.new_context(viewport={"width": 390, "height": 844},
                                                has_touch=True)
            page = await open_page(context, f"http://127.0.0.1:{srv.port}/", problems)
            await page.locator("#ai-level option").first.wait_for(state="attached")
            await page.select_option("#ai-level", "expert")
            await page.click("#play-ai")
            for ply, column in enumerate("11122"):
                await page.click(f"#board-wrap .cell[data-move='{column}']")
                await page.wait_for_function(
                    f"document.querySelectorAll('#board-wrap .disc').length === {2 * ply + 2}")
            await expect(page.locator("#status")).to_contain_text("You lose")
            winner = page.locator(".player.winner")
            await expect(winner.locator(".badge")).to_be_visible()
            level = winner.locator(".who small")
            await expect(level).to_contain_text("expert")
            fits = await level.evaluate("e => e.scrollWidth <= e.clientWidth")
            assert fits, "the level name is shown whole"
            await context.close()
    finally:
        await pool.close()
    assert problems == []


def test_the_page_is_served_with_its_scripts_as_javascript(server_url: str) -> None:
    """Module scripts only run when served with a JavaScript MIME type."""
    for name in ("app.js", "net.js", "board.js"):
        with urllib.request.urlopen(server_url + name, timeout=5) as answer:
            assert "javascript" in answer.headers["Content-Type"], name


async def test_a_person_plays_a_whole_connect_four_game_against_the_weakest_ai_by_clicking(
    browser: Browser, server_url: str, tmp_path: Path
) -> None:
    problems: list[str] = []
    context = await browser.new_context(viewport={"width": 1000, "height": 800})
    page = await open_page(context, server_url, problems)
    # A server error is shown as the server put it, with its stable code.
    await page.fill("#code", "nosuchroom")
    await page.click("#code-form button")
    await expect(page.locator("#toast")).to_have_attribute("data-code", "unknown_room")
    await page.click("#toast")

    await page.click("#ai-form label:has-text('Connect Four')")
    await page.locator("#ai-level option").first.wait_for(state="attached")
    levels = await page.eval_on_selector_all("#ai-level option", "os => os.map(o => o.value)")
    assert len(levels) >= 5, f"the level picker should offer the server's levels, got {levels}"
    await page.select_option("#ai-level", index=0)  # the list is ordered weakest first
    await page.click("#play-ai")
    await page.wait_for_selector("#board-wrap .board.connect4")

    clicks = 0
    while True:
        await page.wait_for_function(MY_TURN_OR_OVER, timeout=AI_MOVE_TIMEOUT_MS)
        if await page.get_attribute("#board-wrap", "data-status") == "finished":
            break
        # Play like a person would: one of the columns the page offers, centre first.
        legal = await page.eval_on_selector_all(
            "#board-wrap .cell[data-move]", "cs => cs.map(c => c.dataset.move)"
        )
        assert legal, "it is my turn, so some columns must be offered"
        column = min(legal, key=lambda c: abs(int(c) - 4))
        before = await board_discs(page)
        await page.click(f"#board-wrap .cell[data-move='{column}']")
        clicks += 1
        await page.wait_for_function(
            f"document.querySelectorAll('#board-wrap .disc').length > {before}"
        )
        assert clicks <= 21, "a Connect Four game gives one player at most 21 moves"

    status = page.locator("#status")
    await expect(status).to_contain_text("Game over")
    text = await status.inner_text()
    assert any(word in text for word in ("You win", "You lose", "Draw")), text
    moves = await page.locator("#movelist button").count()
    assert moves == await board_discs(page), "every move in the list is a disc on the board"
    assert clicks == (moves + 1) // 2, "I moved first, so I made half the moves, rounded up"
    assert await page.locator("#board-wrap .cell.last").count() == 1
    # A won game rings its four (a disc may close two lines at once); a draw rings nothing.
    ringed = await page.locator("#board-wrap .cell.win .disc").count()
    assert (ringed == 0) if "Draw" in text else (ringed >= 4), (text, ringed)
    await page.screenshot(path=str(screenshot_dir(tmp_path) / "game_over.png"))
    # Stepping back in the game just played draws the position before the last move.
    final_board = await drawn_board(page)
    await page.click("#r-prev")
    await expect(page.locator("#status")).to_contain_text("Replaying")
    before_last = await drawn_board(page)
    assert sum(a != b for a, b in zip(before_last, final_board, strict=True)) == 1
    assert await page.locator("#board-wrap .cell.win").count() == 0, "nobody had won yet"
    await page.click("#r-last")
    assert await drawn_board(page) == final_board

    # A rematch against the AI starts at once, colours swapped: the AI now moves first.
    await page.click("#rematch")
    await page.wait_for_function(
        "document.querySelector('#board-wrap').dataset.status === 'active'"
    )
    await expect(page.locator(".player").nth(1)).to_contain_text("you")
    await page.wait_for_selector("#board-wrap .cell[data-move]", timeout=AI_MOVE_TIMEOUT_MS)
    assert await board_discs(page) == 1

    # Back in the lobby (leaving the rematch, asked first, aborts it), the finished game is
    # the older of the two past games.
    shots = screenshot_dir(tmp_path)
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.click("#lobby-btn")
    past = page.locator("#history li")
    await expect(past).to_have_count(2)
    await expect(past.first).to_contain_text("Aborted")
    await expect(past.nth(1)).to_contain_text(f"{moves} moves")
    await expect(past.nth(1)).to_contain_text("vs Computer")
    game_id = await past.nth(1).get_attribute("data-game")
    assert game_id
    await page.screenshot(path=str(shots / "history.png"), full_page=True)
    record = await stored_game(server_url, game_id)
    assert len(record["moves"]) == moves and len(record["boards"]) == moves + 1
    assert record["boards"][-2:] == [before_last, final_board]

    # The replay opens at the final position; from the start each step draws the server's
    # next board.
    await past.nth(1).get_by_role("button", name="Replay").click()
    await page.wait_for_function(
        "document.querySelector('#board-wrap').dataset.record === 'true'"
    )
    assert await page.get_attribute("#board-wrap", "data-ply") == str(moves)
    assert await drawn_board(page) == record["boards"][-1]
    await page.click("#r-first")
    assert await drawn_board(page) == record["boards"][0] == "-" * 42
    assert await page.locator("#board-wrap .cell[data-move]").count() == 0, "nothing to play"
    for ply in range(1, moves + 1):
        await page.click("#r-next")
        await page.wait_for_function(
            f"document.querySelector('#board-wrap').dataset.ply === '{ply}'"
        )
        assert await drawn_board(page) == record["boards"][ply], f"after ply {ply}"
        assert await page.locator("#board-wrap .cell.last").count() == 1
        if ply == moves // 2:
            await expect(page.locator("#status")).to_contain_text("Replaying")
            await page.screenshot(path=str(shots / "replay.png"), full_page=True)
    await expect(page.locator("#status")).to_contain_text("Game over")
    assert await page.locator("#board-wrap .cell.win").count() == len(record["winning"])
    await page.click("#r-first")
    assert await drawn_board(page) == record["boards"][0]
    await expect(page.locator("#export-text")).to_have_text(record["exports"]["columns"])
    href = await page.get_attribute("#downloads a", "href")
    assert href == f"/games/{game_id}.txt"
    with urllib.request.urlopen(server_url.rstrip("/") + href, timeout=5) as answer:
        assert answer.read().decode().strip() == record["exports"]["columns"]

    # A replay link opens the same game on a phone, for someone who did not play it.
    phone = await browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    other = await open_page(phone, f"{server_url}#replay/{game_id}", problems)
    await other.wait_for_function(
        "document.querySelector('#board-wrap')?.dataset.record === 'true'"
    )
    assert await drawn_board(other) == record["boards"][-1]  # it opens at the end
    width = await other.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the replay fits a phone's width"
    await other.click("#r-prev")
    await other.screenshot(path=str(shots / "replay-phone.png"), full_page=True)
    await other.click("#lobby-btn")
    await expect(other.locator("#lobby")).to_be_visible()
    assert problems == []
    await context.close()
    await phone.close()


async def test_a_move_against_the_computer_is_taken_back_with_its_reply(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context()
    page = await open_page(context, server_url, problems)
    await page.click("#ai-form label:has-text('Connect Four')")
    await page.locator("#ai-level option").first.wait_for(state="attached")
    await page.click("#ai-form label:has(input[name='seat'][value='0'])")
    await page.click("#play-ai")
    await page.wait_for_selector("#board-wrap .cell[data-move]")
    take_back = page.locator("#take-back")
    await expect(take_back).to_be_visible()
    await expect(take_back).to_be_disabled()  # nothing of ours to take back yet
    await expect(page.locator("#draw")).to_be_hidden()  # the computer is offered no draws
    await page.click("#board-wrap .cell[data-move='4']")
    await page.wait_for_function("document.querySelectorAll('#board-wrap .disc').length === 2",
                                 timeout=AI_MOVE_TIMEOUT_MS)
    await page.wait_for_selector("#board-wrap .cell[data-move]")  # our turn again
    await take_back.click()
    await page.wait_for_function("document.querySelectorAll('#board-wrap .disc').length === 0")
    await expect(page.locator("#movelist button")).to_have_count(0)
    await expect(take_back).to_be_disabled()
    # From there the game goes on along another line.
    await page.click("#board-wrap .cell[data-move='1']")
    await page.wait_for_function("document.querySelectorAll('#board-wrap .disc').length === 2",
                                 timeout=AI_MOVE_TIMEOUT_MS)
    await expect(page.locator("#movelist button").first).to_have_text(re.compile("1"))
    assert problems == []
    await context.close()


async def test_a_draw_offered_on_one_page_is_accepted_on_the_other(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx, ann, bob_ctx, bob = await friends_on_pages(browser, server_url, "Othello",
                                                        problems)
    await expect(ann.locator("#take-back")).to_be_hidden()  # no take-backs between people
    await ann.click("#draw")
    await expect(ann.locator("#draw")).to_have_text("Draw offered…")
    await expect(bob.locator("#draw")).to_have_text("Accept draw")
    await expect(bob.locator("#draw-decline")).to_be_visible()
    await bob.click("#draw")
    for page in (ann, bob):
        await expect(page.locator("#status")).to_contain_text("Draw — agreed")
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_a_spectator_is_told_so_and_players_are_not(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx, ann, bob_ctx, bob = await friends_on_pages(browser, server_url, "Connect Four",
                                                        problems)
    eve_ctx = await browser.new_context()
    eve = await open_page(eve_ctx, ann.url, problems)
    await expect(eve.locator("#watching")).to_be_visible()
    await expect(eve.locator("#watching")).to_have_text("You are watching this game")
    await expect(ann.locator("#watching")).to_be_hidden()
    await expect(bob.locator("#watching")).to_be_hidden()
    assert problems == []
    for ctx in (ann_ctx, bob_ctx, eve_ctx):
        await ctx.close()


async def test_sounds_say_whose_turn_it_is_and_the_mute_switch_is_remembered(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    ann_ctx, ann, bob_ctx, bob = await friends_on_pages(browser, server_url, "Connect Four",
                                                        problems)
    sound = ann.locator("#sound")
    await expect(sound).to_have_attribute("aria-pressed", "true")
    await sound.click()
    await expect(sound).to_have_attribute("aria-pressed", "false")
    await ann.click("#board-wrap .cell[data-move='4']")
    await bob.wait_for_function("document.body.dataset.sound === 'turn'")  # Bob's move now
    await ann.wait_for_function("document.body.dataset.sound === undefined")  # Ann muted
    await bob.click("#board-wrap .cell[data-move='4']")
    await ann.wait_for_function("document.querySelectorAll('#board-wrap .disc').length === 2")
    assert await ann.evaluate("document.body.dataset.sound") is None
    await ann.reload()
    await ann.wait_for_function("document.querySelector('#conn').dataset.state === 'online'")
    await expect(ann.locator("#sound")).to_have_attribute("aria-pressed", "false")
    assert problems == []
    for ctx in (ann_ctx, bob_ctx):
        await ctx.close()


async def test_the_dark_mode_switch_darkens_the_page_and_is_remembered(
    browser: Browser, server_url: str
) -> None:
    problems: list[str] = []
    context = await browser.new_context(color_scheme="light")
    page = await open_page(context, server_url, problems)
    background = "getComputedStyle(document.body).backgroundColor"
    light = await page.evaluate(background)
    await page.click("#theme")
    assert await page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark = await page.evaluate(background)
    assert dark != light
    channels = [int(c) for c in re.findall(r"\d+", dark)[:3]]
    assert max(channels) < 64, dark  # a dark background indeed
    await page.reload()
    await page.wait_for_function("document.querySelector('#conn').dataset.state === 'online'")
    assert await page.evaluate(background) == dark
    await page.click("#theme")
    assert await page.evaluate(background) == light
    assert problems == []
    await context.close()
