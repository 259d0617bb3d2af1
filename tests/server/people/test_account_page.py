"""The account card of the page, in Debian's headless Chromium against a real server on a
SQLite file: sign up, reload, still signed in (also after the server restarts), sign out."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import ONLINE, free_port, open_page
from people import CHEAP_HASHER, PASSWORD
from playwright.async_api import Browser, Page, expect

from server.app import Settings, running
from server.people.accounts import hash_session
from server.people.sign_in_limits import SignInLimits
from server.storage import open_store
from server.storage.memory import MemoryStore

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]



async def resume_token(page: Page) -> str:
    return str(await page.evaluate("localStorage.getItem('discus.resume')"))


async def test_a_person_signs_up_stays_signed_in_across_reloads_and_restarts_then_signs_out(
    browser: Browser, tmp_path: Path
) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    port = free_port()  # the same origin after the restart, so the same localStorage
    url = f"http://127.0.0.1:{port}/"
    problems: list[str] = []
    context = await browser.new_context()
    async with running(port=port, store=open_store(database)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        page = await open_page(context, url, problems)
        guest_id = (await resume_token(page)).split(".")[0]
        await expect(page.locator("#signed-in")).to_be_hidden()
        await page.fill("#account-name", "Ann_Lee")
        await page.fill("#account-password", PASSWORD)
        await page.click("#sign-up")
        await expect(page.locator("#account-who")).to_have_text("Ann_Lee")
        await expect(page.locator("#account-form")).to_be_hidden()
        session = await resume_token(page)
        assert session.startswith("discus_session_")
        assert (await srv.app.store.find_account("ann_lee")).player_id == guest_id  # type: ignore[union-attr]

        await page.reload()
        await page.wait_for_function(ONLINE)
        await expect(page.locator("#account-who")).to_have_text("Ann_Lee")

    async with running(port=port, store=open_store(database)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        await page.reload()
        await page.wait_for_function(ONLINE)
        await expect(page.locator("#account-who")).to_have_text("Ann_Lee")
        assert await resume_token(page) == session

        await page.click("#sign-out")
        await expect(page.locator("#account-form")).to_be_visible()
        await expect(page.locator("#signed-in")).to_be_hidden()
        await page.wait_for_function(ONLINE)
        assert not (await resume_token(page)).startswith("discus_session_")
        stored = await srv.app.store.find_session(hash_session(session))
        assert stored is not None and stored.revoked_at is not None

        # Signing in again on the same browser brings the account back.
        await page.fill("#account-name", "ANN_LEE")
        await page.fill("#account-password", PASSWORD)
        await page.click("#sign-in")
        await expect(page.locator("#account-who")).to_have_text("Ann_Lee")
        await page.screenshot(path=str(tmp_path / "signed-in.png"), full_page=True)
    assert problems == []
    await context.close()


async def test_changing_the_password_signs_the_other_browser_out_and_the_new_one_signs_in(
    browser: Browser, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    problems: list[str] = []
    here_ctx, there_ctx = await browser.new_context(), await browser.new_context()
    database = f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
    async with running(port=port, store=open_store(database)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        here = await open_page(here_ctx, url, problems)
        there = await open_page(there_ctx, url, problems)
        await here.fill("#account-name", "Ann_Lee")
        await here.fill("#account-password", PASSWORD)
        await here.click("#sign-up")
        await expect(here.locator("#account-who")).to_have_text("Ann_Lee")
        await there.fill("#account-name", "ann_lee")
        await there.fill("#account-password", PASSWORD)
        await there.click("#sign-in")
        await expect(there.locator("#account-who")).to_have_text("Ann_Lee")
        await expect(here.locator("#password-change")).to_be_visible()

        await here.click("#password-change summary")
        await here.fill("#current-password", PASSWORD)
        await here.fill("#new-password", "a new secret")
        await here.click("#change-password")
        await expect(here.locator("#toast")).to_contain_text(
            "Password changed; 1 other browser signed out.")
        await expect(there.locator("#account-form")).to_be_visible()
        await expect(here.locator("#account-who")).to_have_text("Ann_Lee")

        await there.wait_for_function(ONLINE)
        await there.fill("#account-name", "Ann_Lee")
        await there.fill("#account-password", "a new secret")
        await there.click("#sign-in")
        await expect(there.locator("#account-who")).to_have_text("Ann_Lee")
    assert problems == []
    await here_ctx.close()
    await there_ctx.close()


@pytest.mark.parametrize(("locale", "said"), [
    ("en-GB", "too many accounts made from this address; try again in 60 minutes"),
    ("ja-JP", "操作が多すぎます。60分後にやり直してください。"),
])
async def test_a_sign_up_past_the_addresss_limit_says_how_long_to_wait(
        browser: Browser, locale: str, said: str) -> None:
    problems: list[str] = []
    settings = Settings(sign_in=SignInLimits(sign_ups_per_source=1))
    async with running(port=0, store=MemoryStore(), settings=settings) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        url = f"http://{srv.host}:{srv.port}/"
        for name in ("Ann_Lee", "Bo_Ito"):
            page = await open_page(await browser.new_context(locale=locale), url, problems)
            await page.fill("#account-name", name)
            await page.fill("#account-password", PASSWORD)
            await page.click("#sign-up")
        await expect(page.locator("#toast")).to_have_text(said)
        await expect(page.locator("#signed-in")).to_be_hidden()
    assert problems == []
