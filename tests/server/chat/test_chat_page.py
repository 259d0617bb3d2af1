"""Chat on the page, in Debian's headless Chromium against a real server: the players and a
spectator of a game each talk in their own tab, a line of HTML shows as the text it is, a
muted player's lines are hidden, the lobby chat is read-only for a guest and writable once
signed up, and a line an admin deletes on the admin page leaves everyone's page, and a
player the admin silenced is told so."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import ONLINE, open_page
from people import CHEAP_HASHER, PASSWORD
from playwright.async_api import Browser, Locator, Page, expect

from server.admin.tokens import Admins
from server.app import running
from server.storage import SqlStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

HTML = "<img src=x onerror=\"window.pwned = true\"><b>bold?</b>"


async def say(page: Page, panel: str, text: str) -> None:
    await page.fill(f"#{panel}-input", text)
    await page.press(f"#{panel}-input", "Enter")


def lines(page: Page, panel: str) -> Locator:
    return page.locator(f"#{panel}-lines .chat-text")


def tab(page: Page, channel: str) -> Locator:
    return page.locator(f'#game-chat .chat-tab[data-channel="{channel}"]')


async def test_players_and_a_spectator_talk_apart_html_is_text_and_a_mute_hides_lines(
    browser: Browser, tmp_path: Path,
) -> None:
    problems: list[str] = []
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(port=0, store=SqlStore(database)) as srv:
        base = f"http://{srv.host}:{srv.port}/"
        ann = await open_page(await browser.new_context(), base, problems)
        await ann.click("#friend-form label:has-text('Connect Four')")
        await ann.click("#invite")
        await ann.wait_for_selector("#share:not([hidden])")
        link = await ann.input_value("#share-link")
        bob = await open_page(await browser.new_context(), link, problems)
        await ann.wait_for_selector("#share", state="hidden")
        eve = await open_page(await browser.new_context(), link, problems)  # seats taken: watches
        await expect(eve.locator("#watching")).to_be_visible()

        for page, mine, theirs in ((ann, "players", "spectators"), (bob, "players", "spectators"),
                                   (eve, "spectators", "players")):
            await expect(tab(page, mine)).to_have_attribute("aria-selected", "true")
            await expect(tab(page, theirs)).to_be_disabled()

        await say(ann, "game-chat", HTML)
        for page in (ann, bob):
            await expect(lines(page, "game-chat")).to_have_text([HTML])
            assert await page.locator("#game-chat img, #game-chat b").count() == 0
            assert await page.evaluate("window.pwned === undefined")
        await say(eve, "game-chat", "go Ann!")
        await expect(lines(eve, "game-chat")).to_have_text(["go Ann!"])
        await say(bob, "game-chat", "good game")
        await expect(lines(ann, "game-chat")).to_have_text([HTML, "good game"])
        await expect(lines(eve, "game-chat")).to_have_text(["go Ann!"])  # not the players' lines

        # Bob mutes Ann: her lines go from his page (and stay gone after a reload).
        await bob.locator("#game-chat .chat-line", has_text="bold?").locator(".chat-mute").click()
        await expect(lines(bob, "game-chat")).to_have_text(["good game"])
        await say(ann, "game-chat", "still there?")
        await expect(lines(ann, "game-chat")).to_have_text([HTML, "good game", "still there?"])
        await bob.reload()
        await bob.wait_for_function(ONLINE)
        await expect(lines(bob, "game-chat")).to_have_text(["good game"])
        await bob.click("#game-chat h2 button")  # unmute all
        await expect(lines(bob, "game-chat")).to_have_text([HTML, "good game", "still there?"])
    assert problems == []


async def test_a_guest_reads_the_lobby_chat_an_account_writes_and_an_admin_deletes(
    browser: Browser, tmp_path: Path,
) -> None:
    problems: list[str] = []
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(port=0, store=store) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        base = f"http://{srv.host}:{srv.port}/"
        guest = await open_page(await browser.new_context(), base, problems)
        await expect(guest.locator("#lobby-chat-input")).to_be_disabled()
        await expect(guest.locator("#lobby-chat .chat-note")).to_have_text(
            "Sign up or sign in to write in the lobby chat.")

        mia = await open_page(await browser.new_context(), base, problems)
        await mia.fill("#account-name", "Mia")
        await mia.fill("#account-password", PASSWORD)
        await mia.click("#sign-up")
        await expect(mia.locator("#account-who")).to_have_text("Mia")
        await expect(mia.locator("#lobby-chat-input")).to_be_enabled()
        await say(mia, "lobby-chat", "anyone for Othello?")
        await say(mia, "lobby-chat", "a rude line")
        for page in (guest, mia):
            await expect(lines(page, "lobby-chat")).to_have_text(
                ["anyone for Othello?", "a rude line"])
            await expect(page.locator("#lobby-chat .chat-who").first).to_have_text("Mia")

        # The admin page opens the lobby's chat, deletes a line and silences Mia.
        _, token = await Admins(store.engine).create("Root")
        admin = await (await browser.new_context()).new_page()
        admin.set_default_timeout(20_000)
        admin.on("pageerror", lambda exc: problems.append(f"admin page error: {exc}"))
        await admin.goto(f"{base}admin")
        await admin.fill("#token", token)
        await admin.click("#login-form button[type=submit]")
        await admin.click("#chat-open")
        rude = admin.locator("#chat-admin .chat-line", has_text="a rude line")
        await expect(admin.locator("#chat-admin .chat-text")).to_have_text(
            ["anyone for Othello?", "a rude line"])
        await rude.locator("[data-delete]").click()
        await expect(admin.locator("#chat-admin .chat-text")).to_have_text(["anyone for Othello?"])
        for page in (guest, mia):
            await expect(lines(page, "lobby-chat")).to_have_text(["anyone for Othello?"])
        await admin.select_option("#chat-silence-for", "600")
        await admin.locator("#chat-admin [data-silence]").first.click()
        await expect(admin.locator("#toast")).to_contain_text("Mia is silenced until")
        await say(mia, "lobby-chat", "hey!")
        await expect(mia.locator("#toast")).to_contain_text("an admin silenced your chat")
        await expect(lines(guest, "lobby-chat")).to_have_text(["anyone for Othello?"])
    assert problems == []
