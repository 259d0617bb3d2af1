"""Tournaments and the engine ladder on the page, in Debian's headless Chromium against a real
server: a person makes an arena from the lobby, a second (another browser) finds it in the
list and joins, both are taken into the game they are paired in, a third watches it in one
click from the tournament's page; when the game ends the standings the server pushes show the
score (the players' pages never ask for them again, nor does a fourth who only keeps the
tournament's page open), and when the arena ends the podium shows. The ladder's page shows
the rating list with error bars, the chart of the ratings over time and an entrant's
head-to-head scores, for a ladder restored from the store.
Screenshots are left in the test's tmp_path."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from pages import ONLINE
from people import CHEAP_HASHER, PASSWORD
from playwright.async_api import Browser, BrowserContext, Page, expect

from server.app import Running, running
from server.storage.memory import MemoryStore
from server.storage.store import EntrantRecord, PairingRecord, TournamentRecord

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]


async def open_watched(context: BrowserContext, url: str, problems: list[str],
                       sent: list[str]) -> Page:
    """``pages.open_page``, keeping the type of every message the page sends in ``sent``."""
    page = await context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))

    def frames(ws: object) -> None:
        ws.on("framesent", lambda payload: sent.append(  # type: ignore[attr-defined]
            json.loads(payload).get("type", "") if isinstance(payload, str) else ""))

    page.on("websocket", frames)
    await page.goto(url)
    await page.wait_for_function(ONLINE)
    return page


async def sign_up_on(page: Page, name: str) -> None:
    """The page's guest signs up as ``name`` (tournaments take accounts and bots)."""
    await page.fill("#account-name", name)
    await page.fill("#account-password", PASSWORD)
    await page.click("#sign-up")
    await expect(page.locator("#account-who")).to_have_text(name)


def end_soon(srv: Running, tid: str, seconds: float) -> None:
    """Bring the arena's end forward to ``seconds`` from now, with the timer the desk sets
    for an end (an arena lasts 5 minutes at least: too long to wait for in a test)."""
    desk = srv.app.tournaments
    ends_at = desk.held.now() + seconds
    desk.arenas.arenas[tid].ends_at = ends_at
    desk.held.records[tid] = dataclasses.replace(desk.held.records[tid], ends_at=ends_at)
    desk.arenas.set_timers(desk.held.records[tid])


async def test_an_arena_made_on_the_page_pairs_two_people_pushes_standings_and_ends_on_a_podium(
        browser: Browser, tmp_path: Path) -> None:
    problems: list[str] = []
    async with running(port=0, store=MemoryStore()) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        base = f"http://{srv.host}:{srv.port}/"
        ann_sent: list[str] = []
        bob_sent: list[str] = []
        ann = await open_watched(await browser.new_context(), base, problems, ann_sent)
        bob = await open_watched(await browser.new_context(), base, problems, bob_sent)
        await sign_up_on(bob, "Bob")

        # A guest may not make one; Ann signs up and makes a 5-minute arena.
        await ann.click("#tournament-create summary")
        await expect(ann.locator("#tournament-guest-note")).to_be_visible()
        await expect(ann.locator("#tournament-form")).to_be_hidden()
        await ann.fill("#account-name", "Ann")
        await ann.fill("#account-password", PASSWORD)
        await ann.click("#sign-up")
        await expect(ann.locator("#account-who")).to_have_text("Ann")
        await expect(ann.locator("#tournament-form")).to_be_visible()
        await ann.fill("#tournament-name", "Quick arena")
        await ann.select_option("#tournament-clock", "3+2")
        await ann.fill("#tournament-minutes", "5")
        await expect(ann.locator("#tournament-rated")).to_be_checked()  # rated by default
        await ann.click("#tournament-make")
        await expect(ann.locator("#tournament")).to_be_visible()
        tid = re.fullmatch(r"#tournament/(t\w+)", await ann.evaluate("location.hash"))
        assert tid is not None
        await expect(ann.locator("#t-name")).to_have_text("Quick arena")
        await expect(ann.locator("#t-games-file")).to_have_attribute(
            "href", f"/tournaments/{tid[1]}/games.txt")
        await expect(ann.locator("#t-what")).to_contain_text("Arena · Connect Four · 3+2")
        await expect(ann.locator("#t-what")).not_to_contain_text("casual")  # rated by default
        await expect(ann.locator("#t-countdown")).to_have_text(re.compile(r"^Ends in [45]:\d\d$"))
        await expect(ann.locator("#t-standings")).to_contain_text("Nobody has joined yet.")
        ann_joined_at = len(ann_sent)
        await ann.click("#t-join")
        await expect(ann.locator("#t-standings tr.you")).to_contain_text("Ann")
        await expect(ann.locator("#t-you")).to_have_text("You: #1, 0 points after 0 games")
        await expect(ann.locator("#t-join")).to_be_hidden()

        # Bob finds it in the lobby's list, opens it and joins: both are taken into their game.
        listed = bob.locator(f'#tournament-list li[data-tournament="{tid[1]}"]')
        await bob.click("#tournaments-refresh")
        await expect(listed).to_contain_text("Quick arena")
        await expect(listed).to_contain_text("1 player · Ends in")
        await listed.get_by_role("button", name="Open the tournament Quick arena").click()
        await expect(bob.locator("#t-name")).to_have_text("Quick arena")
        await expect(bob.locator("#t-refresh")).to_have_count(0)  # pushed: nothing to ask
        joined_at = len(bob_sent)
        await bob.click("#t-join")
        for page in (ann, bob):
            await expect(page.locator("#game")).to_be_visible()
            await expect(page.locator("#tournament-back")).to_be_visible()
            await expect(page.locator("#players .clock")).to_have_count(2)
        room = await ann.evaluate("location.hash")
        assert re.fullmatch(r"#\w{8}", room) and await bob.evaluate("location.hash") == room

        # Cy, a guest, may watch but not play: where Join would be, the page says to sign up.
        cy = await open_watched(await browser.new_context(), f"{base}#tournament/{tid[1]}",
                                problems, [])
        await expect(cy.locator("#t-guest-join")).to_contain_text("Sign up")
        await expect(cy.locator("#t-join")).to_be_hidden()
        await expect(ann.locator("#t-guest-join")).to_be_hidden()
        game = cy.locator(f'#t-games li[data-room="{room[1:]}"]')
        await expect(game).to_contain_text(re.compile("Ann vs Bob|Bob vs Ann"))
        await game.get_by_role("button", name="Watch").click()
        await expect(cy.locator("#watching")).to_be_visible()
        assert await cy.evaluate("location.hash") == room

        # Dee never joins: it keeps the tournament's page open and is pushed its changes.
        dee_sent: list[str] = []
        dee = await open_watched(await browser.new_context(), f"{base}#tournament/{tid[1]}",
                                 problems, dee_sent)
        await expect(dee.locator("#t-standings tr[data-player]")).to_have_count(2)
        await expect(dee.locator("#t-standings td.score").first).to_have_text("0")

        # Two moves, then the second player resigns: the first wins.
        legal = "#board-wrap .cell[data-move]"
        first, second = (ann, bob) if await ann.locator(legal).count() else (bob, ann)
        await first.click("#board-wrap .cell[data-move='1']")
        await second.click("#board-wrap .cell[data-move='2']")
        await expect(first.locator(legal).first).to_be_attached()
        await second.click("#resign")
        await second.click("#resign")
        await expect(first.locator("#status")).to_contain_text("You win")
        await ann.screenshot(path=str(tmp_path / "arena-game.png"))

        # Back on the tournament's page: the pushed standings hold the result.
        winner = "Ann" if first is ann else "Bob"
        for page in (ann, bob):
            await page.click("#tournament-back")
            await expect(page.locator("#tournament")).to_be_visible()
            top = page.locator("#t-standings tr[data-player]").first
            await expect(top).to_contain_text(winner)
            await expect(top.locator("td.score")).to_have_text("2")
            await expect(top.locator("td.sheet")).to_have_text("2")
        await expect(first.locator("#t-you")).to_have_text("You: #1, 2 points after 1 game")
        await expect(second.locator("#t-you")).to_have_text("You: #2, 0 points after 1 game")
        await expect(ann.locator("#t-podium")).to_be_hidden()
        dee_top = dee.locator("#t-standings tr[data-player]").first
        await expect(dee_top).to_contain_text(winner)
        await expect(dee_top.locator("td.score")).to_have_text("2")
        await expect(dee.locator("#t-you")).to_have_text("")

        # The arena ends: the podium comes to both, pushed.
        end_soon(srv, tid[1], 0.5)
        for page in (ann, bob, dee):
            await expect(page.locator("#t-podium")).to_be_visible()
            await expect(page.locator("#t-countdown")).to_have_text("Finished")
            await expect(page.locator("#t-podium .p1")).to_contain_text(winner)
            await expect(page.locator("#t-podium .p1")).to_contain_text("2 points")
            await expect(page.locator("#t-join")).to_be_hidden()
        await ann.screenshot(path=str(tmp_path / "arena-podium.png"), full_page=True)
        # A link to a tournament there is not says so.
        await cy.evaluate("location.hash = '#tournament/tnothing'")
        await expect(cy.locator("#t-name")).to_have_text("There is no such tournament here.")
        await expect(cy.locator("#t-actions")).to_be_hidden()
        # Neither player's page asked for the standings after joining: all were pushed.
        assert "join_tournament" in ann_sent[ann_joined_at:]
        assert "get_tournament" not in ann_sent[ann_joined_at:]
        assert "get_tournament" not in bob_sent[joined_at:]
        assert dee_sent.count("get_tournament") == 1 and "join_tournament" not in dee_sent
    assert problems == []


LADDER_GAMES = [
    # (first, second, first's score): Alpha beats the level mostly, Beta loses to it mostly.
    *[("level:beginner", "pAlpha", 0.0)] * 5, ("pAlpha", "level:beginner", 0.5),
    *[("level:beginner", "pBeta", 1.0)] * 4, ("pBeta", "level:beginner", 1.0),
    *[("pAlpha", "pBeta", 1.0)] * 3, ("pBeta", "pAlpha", 0.5),
]


async def a_ladder(store: MemoryStore) -> None:
    """A Connect Four ladder as the desk keeps it: two bots and a calibrated level, with
    finished games (the desk rebuilds it from these rows at start)."""
    tid = "ladder-connect4"
    await store.save_tournament(TournamentRecord(tid, "ladder", "connect4", "connect4 ladder",
                                                 "3+2", True, None, 1000.0, 1000.0,
                                                 status="running"))
    for pid, name in (("level:beginner", "beginner"), ("pAlpha", "Alpha"), ("pBeta", "Beta")):
        await store.save_entrant(EntrantRecord(tid, pid, name, 0.0, "active", 1000.0))
    for k, (first, second, score) in enumerate(LADDER_GAMES):
        await store.save_pairing(PairingRecord(tid, f"g{k + 1}", k, 0, first, second,
                                               1000.0 + 60 * k, None, result=score,
                                               finished_at=1030.0 + 60 * k))


async def test_the_ladder_page_shows_the_rating_list_its_chart_and_head_to_head(
        browser: Browser, tmp_path: Path) -> None:
    store = MemoryStore()
    await a_ladder(store)
    problems: list[str] = []
    async with running(port=0, store=store) as srv:
        base = f"http://{srv.host}:{srv.port}/"
        context = await browser.new_context()
        page = await open_watched(context, base, problems, [])
        await page.click('#ladder-links [data-ladder="connect4"]')
        await expect(page.locator("#ladder")).to_be_visible()
        await expect(page.locator("#l-title")).to_have_text("Connect Four engine ladder")
        await expect(page.locator("#l-what")).to_contain_text(f"{len(LADDER_GAMES)} games played")
        rows = page.locator("#l-list tr[data-entrant]")
        await expect(rows).to_have_count(3)
        assert await rows.evaluate_all("rs => rs.map(r => r.dataset.entrant)") == [
            "pAlpha", "level:beginner", "pBeta"]
        level = page.locator('#l-list tr[data-entrant="level:beginner"]')
        await expect(level).to_contain_text("anchor")
        await expect(level.locator("td.error")).to_have_text("±0")
        alpha = page.locator('#l-list tr[data-entrant="pAlpha"]')
        await expect(alpha.locator("td.error")).to_have_text(re.compile(r"^±\d+ $"))
        await expect(alpha.locator("svg.error-bar")).to_have_count(1)
        # The chart: a line for each rated entrant over the games in the order they ended.
        await expect(page.locator("#l-chart polyline")).to_have_count(3)
        await expect(page.locator("#l-chart .legend li")).to_have_count(3)
        # An entrant's games and head-to-head, one click away.
        await alpha.get_by_role("button", name="Games of Alpha").click()
        h2h = page.locator("#l-h2h")
        await expect(h2h.locator('tr[data-opponent="pBeta"]')).to_contain_text("3.5/4")
        await expect(h2h.locator('tr[data-opponent="level:beginner"]')).to_contain_text("5.5/6")
        await expect(page.locator("#l-results li")).to_have_count(10)
        latest = page.locator("#l-results li").first
        await expect(latest).to_contain_text("vs Beta")
        await expect(latest).to_contain_text("draw · moved second")
        await page.screenshot(path=str(tmp_path / "ladder.png"), full_page=True)
        await context.close()
    assert problems == []


async def test_a_swiss_is_started_by_its_maker_and_ends_with_its_crosstable_as_csv(
        browser: Browser, tmp_path: Path) -> None:
    problems: list[str] = []
    async with running(port=0, store=MemoryStore()) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        base = f"http://{srv.host}:{srv.port}/"
        ann = await open_watched(await browser.new_context(accept_downloads=True), base,
                                 problems, [])
        bob = await open_watched(await browser.new_context(), base, problems, [])
        await sign_up_on(bob, "Bob")
        await ann.fill("#account-name", "Ann")
        await ann.fill("#account-password", PASSWORD)
        await ann.click("#sign-up")
        await expect(ann.locator("#account-who")).to_have_text("Ann")
        await ann.click("#tournament-create summary")
        await ann.check('#tournament-form input[name="kind"][value="swiss"]', force=True)
        await expect(ann.locator("#tournament-minutes-field")).to_be_hidden()
        await expect(ann.locator("#tournament-private-row")).to_be_hidden()
        await ann.fill("#tournament-name", "One round")
        await ann.fill("#tournament-rounds", "1")
        await ann.select_option("#tournament-starts", "600")
        await ann.locator("#tournaments-card").screenshot(path=str(tmp_path / "lobby-card.png"))
        await ann.click("#tournament-make")
        await expect(ann.locator("#t-what")).to_contain_text("Swiss · Connect Four")
        await expect(ann.locator("#t-what")).to_contain_text("1 round · 0 players")
        await expect(ann.locator("#t-countdown")).to_have_text(re.compile(r"^Starts in 9:\d\d$"))
        await ann.click("#t-join")
        link = await ann.evaluate("location.href")
        await bob.goto(link)
        await bob.wait_for_function(ONLINE)
        await expect(bob.locator("#t-start")).to_be_hidden()  # not Bob's to start
        await bob.click("#t-join")
        await expect(bob.locator("#t-standings tr[data-player]")).to_have_count(2)
        await expect(ann.locator("#t-standings tr[data-player]")).to_have_count(2)  # pushed

        # Ann starts it: round 1 pairs them into a game; two moves, then one resigns.
        await ann.click("#t-start")
        for page in (ann, bob):
            await expect(page.locator("#game")).to_be_visible()
        legal = "#board-wrap .cell[data-move]"
        first, second = (ann, bob) if await ann.locator(legal).count() else (bob, ann)
        await first.click("#board-wrap .cell[data-move='1']")
        await second.click("#board-wrap .cell[data-move='2']")
        await expect(first.locator(legal).first).to_be_attached()
        await second.click("#resign")
        await second.click("#resign")
        await expect(first.locator("#status")).to_contain_text("You win")

        # Over after its one round: standings with tie-breaks, the crosstable and its CSV.
        winner = "Ann" if first is ann else "Bob"
        await ann.click("#tournament-back")
        await expect(ann.locator("#t-countdown")).to_have_text("Finished")
        head = ann.locator("#t-standings tr").first
        await expect(head).to_contain_text("Buchholz")
        await expect(head).to_contain_text("Sonneborn-Berger")
        await expect(ann.locator("#t-standings tr[data-player]").first).to_contain_text(winner)
        await expect(ann.locator("#t-podium .p1")).to_contain_text(winner)
        await expect(ann.locator("#t-cross")).to_be_visible()
        await expect(ann.locator("#t-crosstable tr")).to_have_count(3)
        row = ann.locator("#t-crosstable tr").nth(1)
        await expect(row).to_contain_text(winner)
        await expect(row).to_contain_text(re.compile("2[fs]1"))
        async with ann.expect_download() as download:
            await ann.click("#t-csv")
        saved = tmp_path / "crosstable.csv"
        await (await download.value).save_as(saved)
        assert (await download.value).suggested_filename == "One-round-crosstable.csv"
        lines = saved.read_text().splitlines()
        assert lines[0] == "rank,name,rating,1,score,buchholz,sonneborn_berger"
        assert lines[1].startswith(f"1,{winner},") and len(lines) == 3
        await ann.screenshot(path=str(tmp_path / "swiss.png"), full_page=True)
    assert problems == []


async def test_in_japanese_the_tournament_and_ladder_pages_show_no_english(
        browser: Browser) -> None:
    from tests.server.web.test_i18n_page import english_left, untranslated_patterns

    patterns = untranslated_patterns()
    store = MemoryStore()
    await a_ladder(store)
    problems: list[str] = []
    async with running(port=0, store=store) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        base = f"http://{srv.host}:{srv.port}/"
        page = await open_watched(await browser.new_context(locale="ja-JP"), base, problems, [])
        await page.fill("#account-name", "Mi_7")  # no English word for the check to find
        await page.fill("#account-password", PASSWORD)
        await page.click("#sign-up")
        await expect(page.locator("#account-who")).to_have_text("Mi_7")
        await page.click("#tournament-create summary")
        await expect(page.locator("#h-tournaments")).to_have_text("トーナメント ⟳")
        assert await english_left(page, patterns) == []
        await page.fill("#tournament-name", "早指し")
        await page.click("#tournament-make")
        await expect(page.locator("#tournament")).to_be_visible()
        await page.click("#t-join")
        await expect(page.locator("#t-you")).to_have_text("あなた：1位、0局で0点")
        assert await english_left(page, patterns) == []
        tid = (await page.evaluate("location.hash")).split("/")[1]
        end_soon(srv, tid, 0.2)
        await expect(page.locator("#t-podium")).to_be_visible()
        await expect(page.locator("#t-countdown")).to_have_text("終了")
        assert await english_left(page, patterns) == []
        await page.click("#t-lobby")
        await expect(page.locator(f'#tournament-list li[data-tournament="{tid}"]')
                     ).to_contain_text("アリーナ")
        assert await english_left(page, patterns) == []
        await page.click('#ladder-links [data-ladder="connect4"]')
        await expect(page.locator("#l-list tr[data-entrant]")).to_have_count(3)
        await page.locator('#l-list tr[data-entrant="pAlpha"] button').click()
        await expect(page.locator("#l-entrant")).to_be_visible()
        assert await english_left(page, patterns) == []
    assert problems == []


async def test_the_crosstable_shows_names_as_they_are_not_as_the_csv_guards_them(
        browser: Browser) -> None:
    """Bots may be named ``=Bob, "Jr"`` or ``@Eve``: the CSV guards such names for
    spreadsheets (a leading ``'``) and quotes the comma; the page shows the names as is."""
    store = MemoryStore()
    tid = "tcsvguard1"
    await store.save_tournament(TournamentRecord(tid, "swiss", "connect4", "Guarded", "3+2",
                                                 True, None, 1000.0, 1000.0, rounds=1,
                                                 status="finished"))
    bob, eve = '=Bob, "Jr"', "@Eve"
    for pid, name in (("pBob", bob), ("pEve", eve)):
        await store.save_entrant(EntrantRecord(tid, pid, name, 1500.0, "active", 1000.0))
    await store.save_pairing(PairingRecord(tid, "r1-pBob", 0, 1, "pBob", "pEve", 1000.0,
                                           "g1", result=1.0, finished_at=1060.0))
    problems: list[str] = []
    async with running(port=0, store=store) as srv:
        base = f"http://{srv.host}:{srv.port}/"
        page = await open_watched(await browser.new_context(), base + f"#tournament/{tid}",
                                  problems, [])
        await expect(page.locator("#t-cross")).to_be_visible()
        rows = page.locator("#t-crosstable tr")
        await expect(rows).to_have_count(3)
        assert await rows.nth(1).locator("td").all_inner_texts() == [
            "1", bob, "1500", "2f1", "1", "0", "0"]
        assert (await rows.nth(2).locator("td").all_inner_texts())[:4] == [
            "2", eve, "1500", "1s0"]
        csv = srv.app.tournaments.rounds.events[tid].crosstable_csv()
        assert "'@Eve" in csv and '"\'=Bob, ""Jr"""' in csv  # the download stays guarded
    assert problems == []
