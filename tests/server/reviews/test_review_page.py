"""The game review and the analysis board on the page, in Debian's headless Chromium: ask for
a review of a finished game, see the value chart and the verdict marks, see a bad move's best
move on the board, and try moves on the analysis board with every legal move's value."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, WebSocketRoute, expect
from wsclient import Client, friends_game

from server.app import Running, Settings, running
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

GAME = ["4", "4", "3", "3", "5", "7", "2"]
"""Red wins on the bottom row: Yellow's 3 and 7 let it."""
SLOW_MS = 90_000
"""A first review starts the server's low-priority engine process."""


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    # The analysis board's proofs get far more than their 3 s: the checker's answer below has
    # the same limit, and on a busy machine one of them could run out where the other did not.
    settings = Settings(grace_seconds=0.5, analysis_seconds=60.0)
    async with running(port=0, store=MemoryStore(), settings=settings) as srv:
        yield srv


async def finished_game(server: Running) -> str:
    ann, bob, room = await friends_game(server.url)
    for ply, text in enumerate(GAME):
        await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move=text)
        await ann.expect("move_made", ply=ply)
    await ann.expect("game_over")
    await ann.close()
    await bob.close()
    return f"{room}-1"


async def analysis_of(server: Running, moves: list[str]) -> dict[str, str]:
    """Each legal move's label in that position, asked over the protocol by another client."""
    client = await Client.open(server.url, "Checker")
    try:
        await client.send(type="analyse", game="connect4", moves=moves)
        answer = await client.expect("analysis", timeout=60)
        return {v["move"]: v["label"] for v in answer["values"]}
    finally:
        await client.close()


async def marks_on_board(page: Page) -> dict[str, str]:
    marks: dict[str, str] = await page.eval_on_selector_all(
        "#board-wrap .cell.valued",
        "cells => Object.fromEntries(cells.map("
        "c => [c.dataset.col, c.getAttribute('aria-label')]))",
    )
    return marks


async def test_a_review_shows_a_chart_marks_and_best_moves_and_the_analysis_board_values_moves(
    browser: Browser, server: Running, tmp_path: Path,
) -> None:
    shots = Path(os.environ.get("DISCUS_SCREENSHOTS") or tmp_path)
    game_id = await finished_game(server)
    problems: list[str] = []
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    await page.goto(f"http://127.0.0.1:{server.port}/#replay/{game_id}")
    await page.wait_for_function(
        "document.querySelector('#board-wrap')?.dataset.record === 'true'")

    # No review until asked; then the chart and a mark on every move.
    await expect(page.locator("#review")).to_be_visible()
    assert await page.locator(".value-chart").count() == 0
    await page.click("#review-btn")
    await expect(page.locator("#review-chart svg.value-chart")).to_be_visible(timeout=SLOW_MS)
    assert await page.locator(".value-chart polyline").count() >= 1
    verdicts = await page.eval_on_selector_all(
        "#movelist button", "bs => bs.map(b => b.dataset.verdict)")
    stored = await server.app.store.load_review(game_id)
    assert stored is not None
    assert verdicts == [m["verdict"] for m in stored.review["moves"]]
    marks = await page.eval_on_selector_all(
        "#movelist .verdict", "ms => ms.map(m => [m.className, m.textContent])")
    wanted = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
    assert marks == [[f"verdict {v}", wanted[v]] for v in verdicts if v in wanted]
    assert marks, "Yellow's moves in this game are marked"

    # A bad move selected: its verdict and the best move instead, drawn on the board. The
    # last one: from there every move's proof takes milliseconds, where after the first some
    # proofs run into the analysis board's time limit (whether they finish would vary).
    bad = [m for m in stored.review["moves"] if m["verdict"] in ("mistake", "blunder")][-1]
    await page.locator("#movelist button").nth(bad["ply"]).click()
    await expect(page.locator("#review-move")).to_contain_text(f"Best was {bad['best']}")
    best_cell = page.locator("#board-wrap .cell.best-move")
    await expect(best_cell).to_have_count(1)
    assert await best_cell.get_attribute("data-col") == bad["best"]
    await page.screenshot(path=str(shots / "review.png"), full_page=True)

    # The analysis board from that position: every legal move with the server's value.
    position = GAME[: bad["ply"] + 1]
    await page.click("#analyse-btn")
    await page.wait_for_function(
        f"document.querySelector('#board-wrap').dataset.analysis === '[{','.join(position)}]'",
        timeout=SLOW_MS)
    truth = await analysis_of(server, position)
    await expect(page.locator("#analysis-values li")).to_have_count(len(truth))
    shown = await marks_on_board(page)
    assert sorted(shown) == sorted(truth)
    for move, label in truth.items():
        assert shown[move].endswith(label)

    # Trying a move: the board gains its disc and shows the next position's values.
    discs = await page.locator("#board-wrap .disc").count()
    tried = sorted(truth)[0]
    await page.locator(f"#board-wrap .cell.valued[data-col='{tried}']").click()
    after = [*position, tried]
    await page.wait_for_function(
        f"document.querySelector('#board-wrap').dataset.analysis === '[{','.join(after)}]'",
        timeout=SLOW_MS)
    assert await page.locator("#board-wrap .disc").count() == discs + 1
    truth = await analysis_of(server, after)
    shown = await marks_on_board(page)
    assert sorted(shown) == sorted(truth)
    for move, label in truth.items():
        assert shown[move].endswith(label)

    await page.screenshot(path=str(shots / "analysis.png"), full_page=True)
    await page.click("#analysis-exit")
    await page.wait_for_function("document.querySelector('#board-wrap').dataset.analysis === ''")
    assert problems == []
    await context.close()


async def test_a_game_ending_analysis_move_shows_the_result_and_a_refusal_leaves_the_board_usable(
    browser: Browser, tmp_path: Path,
) -> None:
    settings = Settings(grace_seconds=0.5, analysis_seconds=1.0)
    async with running(port=0, store=MemoryStore(), settings=settings) as server:
        game_id = await finished_game(server)
        spoil = [False]  # the next analyse the page sends is made illegal on its way

        async def relay(ws: WebSocketRoute) -> None:
            upstream = ws.connect_to_server()

            def outgoing(text: str | bytes) -> None:
                message = json.loads(text)
                if message.get("type") == "analyse" and spoil[0]:
                    spoil[0] = False
                    message["moves"] = [*message["moves"][:-1], "9"]
                upstream.send(json.dumps(message))

            ws.on_message(outgoing)

        problems: list[str] = []
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        await page.route_web_socket("**/ws", relay)
        await page.goto(f"http://127.0.0.1:{server.port}/#replay/{game_id}")
        await page.wait_for_function(
            "document.querySelector('#board-wrap')?.dataset.record === 'true'")
        before_last = GAME[:-1]
        await page.click("#analyse-btn")
        await page.wait_for_function(
            "document.querySelector('#board-wrap').dataset.analysis === "
            f"'[{','.join(before_last)}]'", timeout=SLOW_MS)

        # Red's winning move: the game is over there, and its result is the value.
        await page.locator(f"#board-wrap .cell[data-col='{GAME[-1]}']").first.click()
        await page.wait_for_function(
            f"document.querySelector('#board-wrap').dataset.analysis === '[{','.join(GAME)}]'")
        await expect(page.locator("#analysis-values")).to_have_text("Game over: Red wins")
        await expect(page.locator("#analysis-undo")).to_be_enabled()
        await page.click("#analysis-undo")
        await page.wait_for_function(
            "document.querySelector('#board-wrap').dataset.analysis === "
            f"'[{','.join(before_last)}]'", timeout=SLOW_MS)
        legal = await page.locator("#analysis-values li").count()
        assert legal == 7

        # A refused analysis: the board goes back to the position it showed, still usable.
        spoil[0] = True
        await page.locator("#board-wrap .cell[data-col='1']").first.click()
        await expect(page.locator("#analysis-values li")).to_have_count(legal)
        assert await page.locator("#board-wrap").get_attribute("data-analysis") == \
            f"[{','.join(before_last)}]"
        await expect(page.locator("#analysis-undo")).to_be_enabled()
        await page.click("#analysis-undo")
        await page.wait_for_function(
            "document.querySelector('#board-wrap').dataset.analysis === "
            f"'[{','.join(before_last[:-1])}]'", timeout=SLOW_MS)
        assert problems == []
        await context.close()
