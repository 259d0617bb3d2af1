"""A flood of tournaments over real websockets, on SQLite and PostgreSQL: one account may have
five upcoming or running, one address ten; bots and guests make none; the lobby's list puts
the admins' scheduled arenas and those one may join first, the rest by entrants, a page at a
time."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client

from server.admin.tokens import Admins
from server.app import Running, running
from server.bots.accounts import Accounts
from server.storage import SqlStore
from server.tournaments.makers import PER_ACCOUNT, PER_ADDRESS


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[Running]:
    async with running(store=SqlStore(database_url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def account(url: str, name: str, source: str | None = None) -> Client:
    client = await Client.open(url, name, source=source)
    await sign_up(client, name)
    return client


MADE = iter(range(1_000_000))


async def make(client: Client, kind: str = "arena", **extra: Any) -> dict[str, Any]:
    """The answer to making an arena (or a Swiss): the tournament, or an error."""
    name = f"{kind} {next(MADE)}"
    extra.setdefault("starts_in", 600)
    if kind == "arena":
        await client.send(type="create_tournament", game="connect4", name=name, minutes=720,
                          time_control="3+2", **extra)
    else:
        await client.send(type="create_round_tournament", kind="swiss", game="connect4",
                          name=name, rounds=3, time_control="3+2", **extra)
    while True:
        message = await client.recv()
        if message["type"] == "error" or (
                message["type"] in ("tournament", "round_tournament")
                and message["tournament"]["name"] == name):
            return message


async def finished(client: Client, tid: str) -> None:
    """Wait until the tournament ``tid`` is over."""
    deadline = time.monotonic() + 5
    while True:
        await client.send(type="get_tournament", tournament=tid)
        state = await client.expect("round_tournament")
        await client.send(type="unwatch_tournament")
        if state["tournament"]["status"] == "finished":
            return
        assert time.monotonic() < deadline, state


async def test_one_account_may_have_five_tournaments_upcoming_or_running(
        database_url: str) -> None:
    async with running(store=SqlStore(database_url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        spammer = await account(srv.url, "Spammer")
        # A Swiss due now with nobody in it ends at once: finished, it no longer counts.
        done = await make(spammer, "swiss", starts_in=0)
        await finished(spammer, done["tournament"]["id"])
        made = [await make(spammer, kind) for kind in ("arena", "swiss", "arena", "swiss",
                                                       "arena")]
        assert [m["type"] for m in made] == ["tournament", "round_tournament"] * 2 + [
            "tournament"]
        for kind in ("arena", "swiss"):
            refused = await make(spammer, kind)
            assert refused["code"] == "too_many_tournaments", refused
            assert refused["detail"] == {"limit": "per_account", "allowed": PER_ACCOUNT}
        listed = await spammer.request("list_tournaments")
        mine = {t["id"] for t in listed["tournaments"] if t["status"] != "finished"}
        assert mine == {m["tournament"]["id"] for m in made}
        session = next(m["session"] for m in spammer.seen if m["type"] == "signed_in")
        await spammer.close()
    async with running(store=SqlStore(database_url)) as srv:  # the store keeps the count
        again = await Client.open(srv.url, resume=session)
        assert (await make(again))["code"] == "too_many_tournaments"
        await again.close()


async def test_one_address_may_have_ten_and_another_address_is_not_held_back(
        server: Running) -> None:
    makers = [await account(server.url, f"Maker{k}") for k in range(3)]
    for maker in makers[:2]:
        for _ in range(PER_ACCOUNT):
            assert (await make(maker))["type"] == "tournament"
    assert 2 * PER_ACCOUNT == PER_ADDRESS
    refused = await make(makers[2])
    assert refused["code"] == "too_many_tournaments"
    assert refused["detail"] == {"limit": "per_address", "allowed": PER_ADDRESS}
    elsewhere = await account(server.url, "Elsewhere", source="127.0.0.2")
    assert (await make(elsewhere))["type"] == "tournament"
    for client in (*makers, elsewhere):
        await client.close()


async def test_bots_and_guests_make_no_tournaments(server: Running, database_url: str) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    bot = await Client.open(server.url, hello=False)
    await bot.send(type="hello", version=1, token=(await Accounts(store.engine).create(
        "MakerBot")).token)
    bot.welcome = await bot.expect("welcome")
    guest = await Client.open(server.url, "Guest")
    for kind in ("arena", "swiss"):
        by_bot = await make(bot, kind)
        assert by_bot["code"] == "forbidden" and by_bot["detail"]["reason"] == "bot"
        by_guest = await make(guest, kind)
        assert by_guest["code"] == "forbidden" and by_guest["detail"]["reason"] == "guest"
        assert "sign up" in by_guest["message"]
    assert (await guest.request("list_tournaments"))["tournaments"] == []
    for client in (bot, guest):
        await client.close()


async def test_the_list_puts_the_official_and_the_joinable_first_then_by_entrants_in_pages(
        server: Running) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    _, token = await Admins(store.engine).create("Root")
    admin = await Client.open(server.url, "admin page")
    assert (await admin.request("admin_login", token=token))["type"] == "admin_welcome"
    # Within the hour it is made ahead of: upcoming, starting after every flood arena.
    made = await admin.request(
        "admin_create_schedule", game="connect4", name="Official hourly", time_control="3+2",
        minutes=30, every_minutes=60, first_start=time.time() + 3000)
    official = f"{made['schedules'][0]['id']}-0"
    spammers = [await account(server.url, f"Spam{k}", source=f"127.0.0.{k + 2}")
                for k in range(2)]
    flood = [(await make(s, starts_in=0))["tournament"]["id"]
             for s in spammers for _ in range(PER_ACCOUNT)]
    club = await account(server.url, "Club")
    popular = (await make(club, starts_in=60))["tournament"]["id"]
    swiss = (await make(club, "swiss", starts_in=600))["tournament"]["id"]
    for name in ("Ann", "Bob", "Cyd"):
        player = await account(server.url, name, source="127.0.1.1")
        for tid in (popular, swiss) if name == "Ann" else (swiss,):
            await player.send(type="join_tournament", tournament=tid)
            await player.expect("tournament" if tid == popular else "round_tournament")
    await club.send(type="start_tournament", tournament=swiss)
    assert (await club.expect("round_tournament"))["tournament"]["status"] == "running"
    # The Swiss has the most entrants, but its entries are closed: the viewer may not join.
    viewer = await account(server.url, "Viewer")
    page = await viewer.request("list_tournaments")
    ids = [t["id"] for t in page["tournaments"]]
    assert ids[:2] == [official, popular]
    assert page["tournaments"][0]["official"] is True and not page["tournaments"][1]["official"]
    assert set(ids[2:12]) == set(flood) and ids[12:] == [swiss]
    assert page["next_offset"] is None
    # A page at a time: the same order, each page saying where the next begins.
    server.app.tournaments.page = 5
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        part = await viewer.request("list_tournaments", offset=offset)
        assert len(part["tournaments"]) <= 5
        seen += [t["id"] for t in part["tournaments"]]
        offset = part["next_offset"]
    assert seen == ids
    first = await viewer.request("list_tournaments")  # an old client's request: page one
    assert [t["id"] for t in first["tournaments"]] == ids[:5] and first["next_offset"] == 5
    # A guest may join none of them: only the official one stands above the rest.
    guest = await Client.open(server.url, "Guest")
    server.app.tournaments.page = 50
    as_guest = [t["id"] for t in (await guest.request("list_tournaments"))["tournaments"]]
    assert as_guest[:3] == [official, swiss, popular]
    for client in (admin, *spammers, club, viewer, guest):
        await client.close()
