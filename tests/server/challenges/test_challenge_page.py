"""Challenges on the page, in Debian's headless Chromium against a real server: one person
challenges another by name, the other sees the offers with their clocks and accepts one, both
are taken into the same timed game, a declined challenge shows the decline to the challenger,
a challenge from a profile is shown again after a reload and goes once it has expired, and a
bad name is refused in words.
Screenshots (a desktop and a phone-sized page) are left in the test's tmp_path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pages import ONLINE, open_page
from playwright.async_api import Browser, Page, expect

from server.app import running
from server.storage import open_store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

PHONE = {"width": 390, "height": 760}


async def call_myself(page: Page, name: str) -> None:
    await page.fill("#name", name)
    await page.click("#name-form button")
    await page.wait_for_function(ONLINE)
    await expect(page.locator("#name")).to_have_value(name)


async def challenge(page: Page, who: str, game: str, clock: str) -> None:
    await page.fill("#challenge-player", who)
    await page.check(f'#challenge-form input[name="game"][value="{game}"]', force=True)
    await page.select_option("#challenge-clock", clock)
    await page.click("#challenge-send")


async def test_a_challenge_by_name_is_accepted_into_a_timed_game_and_another_is_declined(
    browser: Browser, tmp_path: Path
) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    problems: list[str] = []
    async with running(port=0, store=open_store(database)) as srv:
        base = f"http://{srv.host}:{srv.port}/"
        ann = await open_page(await browser.new_context(), base, problems)
        bob = await open_page(await browser.new_context(viewport=PHONE), base, problems)
        await call_myself(ann, "Ann")
        await call_myself(bob, "Bob")

        # Ann asks Bob for two games; she sees both waiting, he sees both offers with the clocks.
        await challenge(ann, "Bob", "connect4", "3+2")
        sent = ann.locator("#challenge-list li.sent")
        await expect(sent).to_have_count(1)
        await expect(sent.first).to_contain_text("Waiting for Bob to answer")
        await expect(sent.first).to_contain_text("Connect Four · 3+2 (3 min + 2 s a move)")
        await expect(ann.locator("#challenge-player")).to_have_value("")
        await challenge(ann, "Bob", "othello", "")
        await expect(sent).to_have_count(2)

        offers = bob.locator("#challenge-list li.offer")
        await expect(offers).to_have_count(2)
        await expect(bob.locator("#challenges-title")).to_have_text("2 challenges for you")
        timed = offers.filter(has_text="Connect Four")
        await expect(timed).to_contain_text("Ann challenges you")
        await expect(timed).to_contain_text("3+2 (3 min + 2 s a move)")
        await expect(offers.filter(has_text="Othello")).to_contain_text("untimed")
        await ann.screenshot(path=str(tmp_path / "challenges-sent.png"))
        await bob.screenshot(path=str(tmp_path / "offers-phone.png"))

        # Bob accepts the timed one: both are in the same game, each with two clocks.
        await timed.get_by_role("button", name=re.compile("^Accept")).click()
        await expect(bob.locator("#game")).to_be_visible()
        await expect(ann.locator("#game")).to_be_visible()
        room = await bob.evaluate("location.hash")
        assert re.fullmatch(r"#\w{8}", room)
        assert await ann.evaluate("location.hash") == room
        for page in (ann, bob):
            await expect(page.locator("#players .clock")).to_have_count(2)
            await expect(page.locator("#players .clock.running")).to_have_count(1)
            await expect(page.locator("#players")).to_contain_text("Ann")
            await expect(page.locator("#players")).to_contain_text("Bob")
        await expect(ann.locator("#challenge-list li.sent")).to_have_count(1)  # the Othello one
        await expect(offers).to_have_count(1)
        await bob.screenshot(path=str(tmp_path / "game-with-offer-phone.png"))

        # Bob declines the Othello one; Ann, in the game, is told.
        await offers.first.get_by_role("button", name=re.compile("^Decline")).click()
        await expect(bob.locator("#challenges")).to_be_hidden()
        declined = ann.locator("#challenge-list li.declined")
        await expect(declined).to_have_text(re.compile("Bob declined your Othello challenge"))
        await ann.screenshot(path=str(tmp_path / "declined.png"))
        await declined.get_by_role("button", name="Dismiss").click()
        await expect(ann.locator("#challenges")).to_be_hidden()

        # From Ann's profile Bob challenges her again; after a reload she still has the offer.
        await bob.click('#players [data-player]:has-text("Ann")')
        box = bob.locator("#standings form.challenge-box")
        await expect(box).to_be_visible()
        await box.locator('select[name="game"]').select_option("othello")
        await expect(box.locator('select[name="time_control"] option')).to_have_count(5)
        await bob.screenshot(path=str(tmp_path / "profile-challenge-phone.png"))
        await box.get_by_role("button", name="Challenge Ann").click()
        await expect(bob.locator("#standings")).to_be_hidden()
        await expect(bob.locator("#challenge-list li.sent")).to_contain_text("Waiting for Ann")
        offer = ann.locator("#challenge-list li.offer")
        await expect(offer).to_contain_text("Bob challenges you")
        await ann.reload()
        await ann.wait_for_function(ONLINE)
        await expect(offer).to_have_count(1)
        await expect(offer).to_contain_text("Othello · untimed")

        # The server sends nothing when a challenge expires: answering it then says so, and
        # the offer goes.
        book = srv.app.challenges.challenges
        book.expire(srv.app.runner.now() + book.ttl)
        await offer.get_by_role("button", name=re.compile("^Accept")).click()
        await expect(ann.locator("#toast")).to_contain_text("expired")
        await expect(ann.locator("#toast")).to_have_attribute("data-code", "unknown_challenge")
        await expect(ann.locator("#challenges")).to_be_hidden()
        await expect(ann.locator("#game")).to_be_visible()  # still in the game she was in

        # A name nobody has is refused in words. (Leaving her game asks first: yes.)
        ann.once("dialog", lambda dialog: dialog.accept())
        await ann.click("#lobby-btn")
        await challenge(ann, "Nobody", "connect4", "")
        await expect(ann.locator("#toast")).to_contain_text("nobody here is called 'Nobody'")
        await expect(ann.locator("#toast")).to_have_attribute("data-code", "unknown_player")
        await ann.screenshot(path=str(tmp_path / "unknown-player.png"), full_page=True)
    assert problems == []
