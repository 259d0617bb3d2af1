"""People's accounts over real websockets: sign up, sign in, sessions, sign out, limits."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from argon2 import PasswordHasher
from people import CHEAP_HASHER, PASSWORD
from websockets.exceptions import ConnectionClosed
from wsclient import Client

from server import errors
from server.app import Running, Settings, running
from server.people.accounts import SESSION_PREFIX, AttemptLimiter, check_name
from server.people.shared_counts import SharedCounts
from server.people.sign_in_limits import LocalCounts, SignInLimits
from server.storage import keys, open_store
from server.storage.memory import MemoryStore
from server.storage.store import PlayerRecord, Store
from tests.server.storage.conftest import REDIS_URL


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}"


@pytest.fixture(params=["memory", "sqlite"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Running]:
    store: Store = MemoryStore() if request.param == "memory" else open_store(sqlite_url(tmp_path))
    async with running(port=0, store=store, settings=Settings(grace_seconds=0.5)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def ask(client: Client, kind: str, answer: str, **message: object) -> dict:
    await client.send(type=kind, **message)
    return await client.expect(answer)


async def refused(client: Client, kind: str, **message: object) -> dict:
    return await ask(client, kind, "error", **message)


async def signed_up(url: str, name: str) -> tuple[Client, str]:
    guest = await Client.open(url, "someone")
    answer = await ask(guest, "sign_up", "signed_in", name=name, password=PASSWORD)
    return guest, answer["session"]


async def test_a_guest_that_signs_up_keeps_its_id_and_its_finished_games(
    server: Running,
) -> None:
    guest = await Client.open(server.url, "Guest 1")
    await guest.send(type="create_room", game="connect4",
                     opponent={"kind": "ai", "level": "easy"}, seat=0)
    room = (await guest.expect("room_state"))["room"]["id"]
    await guest.send(type="move", room=room, ply=0, move="4")
    await guest.expect("move_made", ply=1)
    await guest.send(type="resign", room=room)
    await guest.expect("game_over")

    answer = await ask(guest, "sign_up", "signed_in", name="Ann_Lee", password=PASSWORD)
    assert answer["player"] == {"id": guest.player_id, "name": "Ann_Lee", "bot": False}
    assert answer["session"].startswith(SESSION_PREFIX)

    again = await Client.open(server.url, name=None, resume=answer["session"])
    assert again.welcome["player"] == answer["player"]
    games = (await ask(again, "list_history", "history"))["games"]
    assert [g["id"] for g in games] == [f"{room}-1"]
    stored = await server.app.store.load_player(guest.player_id)
    assert stored is not None and (stored.name, stored.kind) == ("Ann_Lee", "account")


async def test_signing_in_gives_a_session_that_says_hello_as_the_account(
    server: Running,
) -> None:
    ann, _ = await signed_up(server.url, "Ann")
    other = await Client.open(server.url, "Guest 2")
    answer = await ask(other, "sign_in", "signed_in", name="aNN", password=PASSWORD)
    assert answer["player"]["id"] == ann.player_id
    back = await Client.open(server.url, name="Not Ann", resume=answer["session"])
    assert back.welcome["player"] == {"id": ann.player_id, "name": "Ann", "bot": False}
    assert back.welcome["resume"] == answer["session"]


async def test_a_wrong_password_and_an_unknown_name_get_the_same_error(
    server: Running,
) -> None:
    await signed_up(server.url, "Ann")
    guest = await Client.open(server.url, "Guest 3")
    wrong = await refused(guest, "sign_in", name="Ann", password="not the password")
    unknown = await refused(guest, "sign_in", name="Nobody", password=PASSWORD)
    assert wrong["code"] == unknown["code"] == "wrong_name_or_password"
    assert wrong["message"] == unknown["message"] == "wrong name or password"
    assert wrong.get("detail") == unknown.get("detail")


async def test_the_owner_signs_in_at_once_from_another_address_after_eight_wrong_guesses(
    server: Running,
) -> None:
    await signed_up(server.url, "Ann")
    answers = []
    for n in range(8):  # a new connection each time: the guesser's address is what counts
        guesser = await Client.open(server.url, f"Attacker {n}", source="127.0.0.2")
        answers.append(await refused(guesser, "sign_in", name="ann",
                                     password="guess" * 2 + str(n)))
    codes = [answer["code"] for answer in answers]
    assert codes[:3] == ["wrong_name_or_password"] * 3
    assert codes[3:] == ["rate_limited"] * 5, "the guesser waits a growing delay"
    assert all(a["detail"]["limit"] == "sign_in" and a["detail"]["retry_after"] > 0
               for a in answers[3:])
    # The owner, from an address with no failures for the name, is not held up at all.
    owner = await Client.open(server.url, "Ann's phone", source="127.0.0.3")
    assert (await ask(owner, "sign_in", "signed_in", name="Ann", password=PASSWORD)
            )["player"]["name"] == "Ann"
    # The guesser still waits, even with the right password, and other names are not
    # held up by Ann's.
    guesser = await Client.open(server.url, "Attacker 9", source="127.0.0.2")
    assert (await refused(guesser, "sign_in", name="Ann", password=PASSWORD)
            )["code"] == "rate_limited"
    await signed_up(server.url, "Bob")
    await ask(guesser, "sign_in", "signed_in", name="Bob", password=PASSWORD)


async def test_one_address_spraying_many_names_is_stopped_and_sign_ups_per_address_are_limited(
    tmp_path: Path,
) -> None:
    limits = SignInLimits(per_source=4, sign_ups_per_source=2)
    async with running(port=0, store=MemoryStore(),
                       settings=Settings(sign_in=limits)) as server:
        server.app.accounts.hasher = CHEAP_HASHER
        codes = []
        for n in range(6):
            sprayer = await Client.open(server.url, f"Sprayer {n}", source="127.0.0.2")
            answer = await refused(sprayer, "sign_in", name=f"Name{n}", password=PASSWORD)
            codes.append((answer["code"], answer.get("detail", {}).get("limit")))
        assert codes[:4] == [("wrong_name_or_password", None)] * 4
        assert codes[4:] == [("rate_limited", "sign_in_source")] * 2
        for n in range(2):
            maker = await Client.open(server.url, f"Maker {n}", source="127.0.0.4")
            await ask(maker, "sign_up", "signed_in", name=f"Made{n}", password=PASSWORD)
        maker = await Client.open(server.url, "Maker 2", source="127.0.0.4")
        answer = await refused(maker, "sign_up", name="Made2", password=PASSWORD)
        assert (answer["code"], answer["detail"]["limit"]) == ("rate_limited", "sign_up_source")
        # The wait is said as it is: the first sign-up counts for an hour, so about 60 min.
        assert answer["detail"]["retry_after"] > 3500
        assert answer["message"] == ("too many accounts made from this address; try again in "
                                     "60 minutes")
        assert await server.app.store.find_account("Made2") is None
        other = await Client.open(server.url, "Someone", source="127.0.0.5")
        await ask(other, "sign_up", "signed_in", name="Made2", password=PASSWORD)


async def test_a_spray_of_sign_ins_from_one_address_gets_busy_and_never_delays_another(
) -> None:
    """30 connections from one address spraying ``sign_in`` (before: a real sign-in waited
    behind all of their hashes, 11.8 s with the real hasher); the queue serves addresses in
    turn and refuses the sprayer's surplus at once with ``busy``."""
    hasher = PasswordHasher(time_cost=3, memory_cost=8192, parallelism=1)
    # The machine may be loaded by others: shedding new connections for a late event loop
    # is not what this test is about.
    async with running(port=0, store=MemoryStore(),
                       settings=Settings(shed_lag_seconds=30.0)) as server:
        server.app.accounts.hasher = hasher
        await signed_up(server.url, "Ann")
        owner = await Client.open(server.url, "Ann's laptop", source="127.0.0.3")
        sprayers = [await Client.open(server.url, f"Sprayer {n}", source="127.0.0.2")
                    for n in range(30)]

        async def spray(client: Client, n: int) -> list[str]:
            for k in range(10):
                await client.send(type="sign_in", name=f"Name{n}x{k}", password=PASSWORD)
            return [(await client.expect("error", timeout=60))["code"] for _ in range(10)]

        spraying = [asyncio.create_task(spray(c, n)) for n, c in enumerate(sprayers)]
        for _ in range(500):  # until the queue is full (or at most 5 s)
            if any(m.get("code") == "busy" for c in sprayers for m in c.seen):
                break
            await asyncio.sleep(0.01)
        started = time.perf_counter()
        await ask(owner, "sign_in", "signed_in", name="Ann", password=PASSWORD)
        took = time.perf_counter() - started
        codes = [code for codes in await asyncio.gather(*spraying) for code in codes]
        hash_seconds = server.app.accounts.hashes.seconds
        assert codes.count("busy") > 250, codes
        assert took < max(1.0, 8 * hash_seconds), (took, hash_seconds)
    busy = next(m for c in sprayers for m in c.seen if m.get("code") == "busy")
    assert busy["detail"]["retry_after"] > 0 and busy["detail"]["limit"] == "hash_source"


async def test_one_connection_is_rate_limited_across_names(server: Running) -> None:
    guest = await Client.open(server.url, "Guest 4")
    for n in range(10):
        assert (await refused(guest, "sign_in", name=f"Name{n}", password=PASSWORD)
                )["code"] == "wrong_name_or_password"
    assert (await refused(guest, "sign_in", name="Name99", password=PASSWORD)
            )["code"] == "rate_limited"
    assert (await refused(guest, "sign_up", name="Fresh", password=PASSWORD)
            )["code"] == "rate_limited"


async def test_a_revoked_session_no_longer_signs_in_and_its_connection_is_closed(
    server: Running,
) -> None:
    ann, _ = await signed_up(server.url, "Ann")
    sessions = []
    for _ in range(3):
        other = await Client.open(server.url, "x")
        sessions.append((await ask(other, "sign_in", "signed_in", name="Ann",
                                   password=PASSWORD))["session"])
    first = await Client.open(server.url, resume=sessions[0])
    second = await Client.open(server.url, resume=sessions[1])

    assert (await ask(first, "sign_out", "signed_out"))["revoked"] == 1
    with pytest.raises(ConnectionClosed):
        await first.expect("never")
    assert first.ws.close_code == 1000 and first.ws.close_reason == "signed_out"
    assert (await refused(await Client.open(server.url, hello=False), "hello", version=1,
                          resume=sessions[0]))["code"] == "bad_resume_token"
    # The other sessions still work, until signed out everywhere.
    await Client.open(server.url, resume=sessions[2])
    assert (await ask(second, "sign_out", "signed_out", everywhere=True))["revoked"] == 3
    with pytest.raises(ConnectionClosed):
        await second.expect("never")
    for session in sessions[1:]:
        late = await Client.open(server.url, hello=False)
        assert (await refused(late, "hello", version=1, resume=session)
                )["code"] == "bad_resume_token"


async def test_changing_the_password_signs_out_every_other_browser(server: Running) -> None:
    _, session = await signed_up(server.url, "Ann")
    here = await Client.open(server.url, resume=session)
    elsewhere_session = (await ask(await Client.open(server.url, "x"), "sign_in", "signed_in",
                                   name="Ann", password=PASSWORD))["session"]
    elsewhere = await Client.open(server.url, resume=elsewhere_session)

    wrong = await refused(here, "change_password", password="not the password",
                          new_password="a new secret")
    assert wrong["code"] == "wrong_name_or_password"
    short = await refused(here, "change_password", password=PASSWORD, new_password="short")
    assert short["code"] == "bad_password"
    answer = await ask(here, "change_password", "password_changed", password=PASSWORD,
                       new_password="a new secret")
    assert answer["revoked"] == 1

    with pytest.raises(ConnectionClosed):
        await elsewhere.expect("never")
    assert elsewhere.ws.close_reason == "signed_out"
    assert (await ask(here, "ping", "pong"))["type"] == "pong"  # this browser stays in
    other = await Client.open(server.url, "y")
    assert (await refused(other, "sign_in", name="Ann", password=PASSWORD)
            )["code"] == "wrong_name_or_password"
    await ask(other, "sign_in", "signed_in", name="Ann", password="a new secret")
    guest = await Client.open(server.url, "z")
    assert (await refused(guest, "change_password", password=PASSWORD,
                          new_password="whatever it is"))["code"] == "not_signed_in"


async def test_a_guest_resume_token_does_not_bring_back_the_account_it_became(
    server: Running,
) -> None:
    guest = await Client.open(server.url, "Guest 5")
    guest_token = guest.welcome["resume"]
    await ask(guest, "sign_up", "signed_in", name="Ann", password=PASSWORD)
    late = await Client.open(server.url, hello=False)
    assert (await refused(late, "hello", version=1, resume=guest_token)
            )["code"] == "bad_resume_token"


async def test_names_clash_whatever_their_case_and_bots_names_are_refused(
    server: Running,
) -> None:
    await signed_up(server.url, "Ann")
    await server.app.store.save_player(PlayerRecord("bot1", "RoboCop", "bot", 0.0))
    guest = await Client.open(server.url, "Guest 6")
    for name in ("ANN", "robocop", "Admin"):
        error = await refused(guest, "sign_up", name=name, password=PASSWORD)
        assert error["code"] == "bad_account_name", name
    for name in ("ab", "with space", "_under", "Ännchen", "x" * 21):
        error = await refused(guest, "sign_up", name=name, password=PASSWORD)
        assert (error["code"], error["detail"]["rule"]) == ("bad_account_name", "characters")
    assert (await refused(guest, "sign_up", name="Fine", password="short")
            )["code"] == "bad_password"
    assert await server.app.store.find_account("Fine") is None


async def test_a_guest_asking_for_an_accounts_name_is_shown_as_a_guest(
    server: Running,
) -> None:
    ann, _ = await signed_up(server.url, "Ann_Lee")
    impostor = await Client.open(server.url, "ann_lee")
    assert impostor.welcome["player"]["name"] == "ann_lee (guest)"
    other = await Client.open(server.url, "Bob")
    assert other.welcome["player"]["name"] == "Bob"
    renamed = await Client.open(server.url, "ANN_LEE", resume=other.welcome["resume"])
    assert renamed.welcome["player"] == {"id": other.player_id, "name": "ANN_LEE (guest)",
                                         "bot": False}
    known = server.app.identity.get(other.player_id)
    assert known is not None and known.name == "ANN_LEE (guest)"
    assert await server.app.store.load_player(other.player_id) is None  # no row until it plays
    again = await Client.open(server.url, name=None, resume=(
        await ask(ann, "sign_in", "signed_in", name="Ann_Lee", password=PASSWORD))["session"])
    assert again.welcome["player"]["name"] == "Ann_Lee"


async def test_look_alike_and_invisible_character_names_are_marked_as_guests(
    server: Running,
) -> None:
    await signed_up(server.url, "Victim1")
    for name in ("V\u0456ctim1",  # Cyrillic "і"
                 "Vict\u0456m1", "Victim1\u200d", "Vi\u200bctim1", "\u202eVictim1",
                 "\uff36ictim1"):  # fullwidth "V"
        impostor = await Client.open(server.url, name)
        shown = impostor.welcome["player"]["name"]
        assert shown.endswith(" (guest)"), (name, shown)
        assert not any(c in shown for c in "\u200d\u200b\u202e\uff36"), shown
    for name, shown in (("Ann\x00\x1b[31m", "Ann[31m"), ("\u200d\u200d", None),
                        ("Z\u0430ra", "Z\u0430ra")):  # a look-alike of nobody's stays
        guest = await Client.open(server.url, name)
        if shown is None:
            assert guest.welcome["player"]["name"].startswith("Guest ")
        else:
            assert guest.welcome["player"]["name"] == shown


async def test_an_account_cannot_sign_up_again_or_sign_out_without_a_session(
    server: Running,
) -> None:
    ann, session = await signed_up(server.url, "Ann")
    assert (await refused(ann, "sign_up", name="Ann2", password=PASSWORD)
            )["code"] == "not_a_guest"
    assert (await refused(ann, "sign_out"))["code"] == "not_signed_in"
    signed_in = await Client.open(server.url, resume=session)
    assert (await refused(signed_in, "sign_up", name="Ann3", password=PASSWORD)
            )["code"] == "not_a_guest"


async def test_a_session_survives_a_restart(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    async with running(port=0, store=open_store(url)) as first:
        first.app.accounts.hasher = CHEAP_HASHER
        ann, session = await signed_up(first.url, "Ann")
        player_id = ann.player_id
    async with running(port=0, store=open_store(url)) as second:
        back = await Client.open(second.url, resume=session)
        assert back.welcome["player"] == {"id": player_id, "name": "Ann", "bot": False}


def test_the_attempt_limiter_slides_its_window() -> None:
    limiter = AttemptLimiter(2, 10.0)
    limiter.note("k", 0.0)
    limiter.note("k", 4.0)
    assert limiter.wait("k", 5.0) == pytest.approx(5.0)
    assert limiter.wait("k", 10.5) == 0.0  # the first attempt is out of the window
    assert limiter.wait("other", 5.0) == 0.0


async def test_the_shared_counts_slide_the_same_window_in_redis_for_every_node() -> None:
    client = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    one, two = (SharedCounts(client, prefix) for _ in range(2))
    local = LocalCounts()
    try:
        for counts in (local, one):
            other = local if counts is local else two
            await counts.note("ann", 0.0, 10.0)
            await other.note("ann", 4.0, 10.0)
            assert await counts.recent("ann", 5.0, 10.0) == (2, 4.0)
            assert await other.oldest("ann", 5.0, 10.0) == 0.0
            assert await other.recent("ann", 10.5, 10.0) == (1, 4.0)  # the first is out
            assert await counts.recent("bob", 5.0, 10.0) == (0, 0.0)
            assert await counts.oldest("bob", 5.0, 10.0) == 5.0
            await other.forget("ann")
            assert await counts.recent("ann", 12.0, 10.0) == (0, 0.0)
    finally:
        await client.delete(keys.sign_in_counts(prefix, "ann"))
        await client.aclose()


def test_name_rules() -> None:
    assert check_name("  Ann-Lee_2 ") == "Ann-Lee_2"
    for bad in ("", "ab", "-ann", "ann lee", "аnn"):  # the last one's "а" is Cyrillic
        with pytest.raises(errors.BadAccountName):
            check_name(bad)
    with pytest.raises(errors.BadAccountName):
        check_name("DISCUS")
