"""The admin page speaks the player page's languages: in a Japanese browser an admin walks
every view of the admin page (the login, the levels of both games with a refused and an
accepted edit, the audit log, a calibration run, the figures, a bot made and revoked, live
rooms, a game's chat moderated) and no visible text holds English that bypassed the
catalogues; what the server holds (level names, a description, players' names, chat lines)
stays as written. The switch's English choice is kept across a reload.

The server runs on an SQLite file of its own; the AI worker is a scripted engine, so the
calibration's games take a moment, not minutes.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from catalogues import english_left, untranslated_patterns
from pages import ONLINE
from playwright.async_api import Browser, Dialog, expect
from wsclient import friends_game

from server.admin.tokens import Admins
from server.app import Running, running
from server.engines import AiPool
from server.storage import SqlStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

NAMES = {"Discus", "English", "Elo", "LRU", "SQLite", "Redis", "PostgreSQL", "Ann", "PageBot"}
"""English a Japanese admin page still shows: the site's name, English named in itself in
the switch, Elo's name, the cache's tiers (products), and the names of the player and the bot
this test makes where a sentence names them."""


def level_names(server: Running) -> set[str]:
    return {level.name for levels in server.app.levels.current.values() for level in levels}


async def test_in_japanese_the_admin_page_shows_no_english_that_bypassed_the_catalogue(
    browser: Browser, tmp_path: Path
) -> None:
    patterns = untranslated_patterns()
    assert sum(key.startswith("admin.") for key, _ in patterns) > 100  # the admin's own
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    problems: list[str] = []
    async with running(port=0, store=store, pool=pool) as server:
        names = NAMES | level_names(server)
        _, token = await Admins(store.engine).create("Moderator")
        # A live room whose player has written in its chat, for the rooms and the chat.
        url = f"ws://127.0.0.1:{server.port}/ws"
        ann, bob, room = await friends_game(url)
        await ann.send(type="get_chat", game_id=f"{room}-1")
        await ann.expect("chat_history")
        await ann.send(type="chat", game_id=f"{room}-1", text="good luck, have fun")
        await ann.expect("chat_line")

        context = await browser.new_context(locale="ja-JP", viewport={"width": 1280,
                                                                      "height": 1400})
        page = await context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        asked: list[str] = []

        def accept(dialog: Dialog) -> None:
            asked.append(dialog.message)
            asyncio.ensure_future(dialog.accept())

        page.on("dialog", accept)

        async def nothing_english(where: str) -> None:
            assert await english_left(page, patterns, names) == [], where

        # The login, and a wrong token refused in Japanese.
        await page.goto(f"http://127.0.0.1:{server.port}/admin")
        await page.wait_for_function(ONLINE)
        assert await page.get_attribute("html", "lang") == "ja"
        await expect(page.locator("#lang")).to_have_value("ja")
        await expect(page.locator("#h-login")).to_have_text("管理者ログイン")
        await nothing_english("login")
        await page.fill("#token", "discus_admin_not-a-real-token")
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#login-error")).to_have_text("その管理者トークンは無効です。")
        await nothing_english("login refused")

        # The desk: levels, calibration, audit, figures, bots, rooms, the lobby's chat.
        await page.fill("#token", token)
        await page.click("#login-form button[type=submit]")
        await expect(page.locator("#desk")).to_be_visible()
        await expect(page.locator("#who")).to_have_text("Moderator")
        await expect(page.locator("#h-levels")).to_contain_text("難易度レベル")
        await expect(page.locator("#levels-version")).to_contain_text("バージョン")
        await expect(page.locator("#rooms tbody")).to_contain_text("Bob")
        await expect(page.locator("#stats")).to_contain_text("稼働中")
        await expect(page.locator("#chat-lines")).to_have_text("発言はありません。")
        await nothing_english("the desk")
        await page.click("#levels-game label:has-text('オセロ')")
        await expect(page.locator("#levels tbody tr[data-level]").first).to_be_visible()
        await nothing_english("Othello's levels")
        await page.click("#levels-game label:has-text('コネクトフォー')")

        # A refused edit says why per field (the server's sentence, as sent), then a saved one
        # (its description as written) in the toast and the audit log.
        easy = page.locator('#levels tr[data-level="easy"]')
        await easy.locator('[data-field="soft_time"]').fill("5")
        await easy.locator("[data-save]").click()
        refused = page.locator("#levels tr.problems:not([hidden])")
        await expect(refused).to_contain_text("保存できませんでした")
        await expect(refused).to_contain_text("目安時間: soft_time must not exceed hard_time")
        await nothing_english("a refused edit")
        await easy.locator('[data-field="soft_time"]').fill("0.1")
        await easy.locator('[data-field="description"]').fill("Looks two moves ahead.")
        await easy.locator("[data-save]").click()
        await expect(page.locator("#toast")).to_contain_text("easy：保存しました")
        await expect(page.locator("#audit tbody tr").first).to_contain_text(
            '説明: "Sees simple threats, still makes mistakes." → "Looks two moves ahead."')
        await nothing_english("a saved edit")

        # A calibration run and its tables.
        await page.fill("#cal-levels", "beginner,easy")
        await page.fill("#cal-games", "2")
        await page.click("#cal-start")
        await expect(page.locator("#cal-elo tbody tr")).to_have_count(2, timeout=60_000)
        await expect(page.locator("#cal-text")).to_contain_text("秒で終了しました")
        await expect(page.locator("#cal-runs li")).to_have_count(1)
        await nothing_english("a calibration")

        # A bot made (its token shown once) and revoked after a confirmation in Japanese.
        await page.fill("#bot-name", "PageBot")
        await page.click("#bot-create")
        await expect(page.locator("#bot-token")).to_be_visible()
        await expect(page.locator('#bots tr[data-bot="PageBot"]')).to_contain_text("未使用")
        await nothing_english("a new bot")
        await page.get_by_role("button", name="ボットPageBotを無効化").click()
        await expect(page.locator("#bots-note")).to_contain_text("PageBotを無効化しました")
        assert asked == ["PageBotを無効化しますか？"
                         "接続はすぐに切断され、トークンは使えなくなります。"]
        await nothing_english("a revoked bot")

        # The game's chat: its line as written, the channel named; its author silenced.
        await page.fill("#chat-game", f"{room}-1")
        await page.click("#chat-open")
        await expect(page.locator("#chat-admin .chat-text")).to_have_text(["good luck, have fun"])
        await expect(page.locator("#chat-admin .chat-line")).to_contain_text("対局者")
        await nothing_english("a game's chat")
        await page.locator("#chat-admin [data-silence]").click()
        await expect(page.locator("#toast")).to_contain_text("Annさんは")
        await expect(page.locator("#toast")).to_contain_text("まで発言禁止です。")
        await nothing_english("a silence")
        await page.locator("#chat-admin [data-delete]").click()
        await expect(page.locator("#chat-lines")).to_have_text("発言はありません。")
        folder = Path(os.environ.get("DISCUS_SCREENSHOTS") or tmp_path)
        folder.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(folder / "admin-ja.png"), full_page=True)

        # English chosen on the switch, kept across a reload (the token is kept in the tab).
        async with page.expect_navigation():
            await page.select_option("#lang", "en")
        await expect(page.locator("#h-levels")).to_contain_text("Difficulty levels")
        await page.reload()
        await expect(page.locator("#desk")).to_be_visible()
        assert await page.get_attribute("html", "lang") == "en"
        await expect(page.locator("#h-levels")).to_contain_text("Difficulty levels")
        await expect(page.locator("#conn")).to_have_text("online")
        await context.close()
        for client in (ann, bob):
            await client.close()
    assert problems == []
