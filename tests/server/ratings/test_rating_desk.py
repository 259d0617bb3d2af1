"""Ratings over real websockets: a rated game moves both accounts' ratings by Glicko-2 and
tells them after ``game_over``; guests' games are not rated; a game is rated once; the
leaderboard and profiles; AI levels rated from their calibration."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator

import pytest
from people import CHEAP_HASHER, sign_up
from wsclient import Client, friends_game

from ai.levels import find
from server.app import Running, running
from server.ratings.desk import plan_changes
from server.ratings.glicko import (
    DEFAULT_DEVIATION,
    LEVEL_ANCHOR,
    LEVEL_MIN_RD,
    MAX_RATING,
    MIN_RATING,
    Outcome,
    Rating,
    update,
)
from server.ratings.level_calibration import MEASURED, shipped_measure
from server.storage import SqlStore
from server.storage import repository as repo
from server.storage.memory import MemoryStore
from server.storage.store import GameRecord, RatingChangeRecord, RatingRecord
from tests.server.storage.conftest import pg_url, sql_url, sqlite_url  # noqa: F401 - fixtures

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: seat 0 wins at its fourth move."""


@pytest.fixture
async def server(sql_url: str) -> AsyncIterator[Running]:  # noqa: F811 - fixture
    async with running(store=SqlStore(sql_url)) as srv:
        srv.app.accounts.hasher = CHEAP_HASHER
        yield srv


async def play(seats: tuple[Client, Client], room: str, moves: list[str]) -> None:
    for ply, move in enumerate(moves):
        await seats[ply % 2].send(type="move", room=room, ply=ply, move=move)
        for client in seats:
            await client.expect("move_made", ply=ply)


def glicko(change: RatingChangeRecord, opponent: Rating) -> Rating:
    """The change's rating after, computed here from its stored before-values."""
    before = Rating(change.rating_before, change.rd_before, change.volatility_before)
    return update(before, [Outcome(opponent, change.score)])


def before(change: RatingChangeRecord) -> Rating:
    return Rating(change.rating_before, change.rd_before, change.volatility_before)


async def test_a_game_between_accounts_moves_both_ratings_by_glicko2_and_says_so_after_game_over(
    server: Running,
) -> None:
    ann, bob, room = await friends_game(server.url)
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await play((ann, bob), room, FOUR_IN_COLUMN_ONE)

    told = {}
    for client in (ann, bob):
        await client.expect("game_over", room=room)
        told[client.player_id] = await client.expect("rating_change", room=room)
        kinds = [m["type"] for m in client.seen]
        assert kinds.index("game_over") < kinds.index("rating_change")
    store = server.app.store
    (won,) = await store.rating_history(ann.player_id)
    (lost,) = await store.rating_history(bob.player_id)
    assert (won.score, lost.score) == (1.0, 0.0)
    assert (won.opponent_id, lost.opponent_id) == (bob.player_id, ann.player_id)
    for mine, theirs in ((won, lost), (lost, won)):
        expected = glicko(mine, before(theirs))
        (stored,) = await store.ratings_of(mine.player_id)
        assert (stored.rating, stored.rd, stored.volatility, stored.games) == pytest.approx(
            (expected.rating, expected.rd, expected.volatility, 1))
        message = told[mine.player_id]
        assert message["game_id"] == f"{room}-1" and message["game"] == "connect4"
        assert message["before"] == {"rating": 1500.0, "rd": 350.0, "provisional": True}
        assert message["after"]["rating"] == round(expected.rating, 1)
        assert message["delta"] == round(expected.rating - 1500.0, 1)
    assert won.rating_after > 1500.0 > lost.rating_after


async def test_a_finish_carried_again_rates_the_game_once(server: Running) -> None:
    ann, bob, room = await friends_game(server.url)
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await play((ann, bob), room, FOUR_IN_COLUMN_ONE)
    await ann.expect("rating_change")
    rated = await server.app.store.ratings_of(ann.player_id)
    loaded = await server.app.store.load_game(f"{room}-1")
    assert loaded is not None

    again = await server.app.ratings.rate(room, loaded[0])  # as after a restart or takeover

    assert [c.game_id for c in again] == [f"{room}-1", f"{room}-1"]
    assert await server.app.store.ratings_of(ann.player_id) == rated
    await ann.send(type="ping", id="after")
    await ann.expect("pong")
    assert [m["type"] for m in ann.seen].count("rating_change") == 1


async def test_a_game_with_a_guest_changes_no_rating(server: Running) -> None:
    ann, guest, room = await friends_game(server.url)
    await sign_up(ann, "Ann")
    await play((ann, guest), room, FOUR_IN_COLUMN_ONE)
    await ann.expect("game_over")
    await ann.send(type="ping", id="after")
    await ann.expect("pong")

    assert "rating_change" not in [m["type"] for m in ann.seen + guest.seen]
    assert await server.app.store.ratings_of(ann.player_id) == []
    assert await server.app.store.ratings_of(guest.player_id) == []


async def test_a_game_against_a_level_is_rated_against_its_calibrated_rating(
    server: Running,
) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    async with store.engine.begin() as conn:
        await repo.insert_calibration_run(conn, "run1", "connect4", "test", 2, 1, "adjacent",
                                          [], time.time())
        await repo.finish_calibration_run(conn, "run1", "finished", [], [
            {"level": "beginner", "elo": 0.0, "error": 0.0, "games": 2, "score": 1.0},
            {"level": "easy", "elo": 150.0, "error": 80.0, "games": 2, "score": 1.0},
        ], 1.0, time.time())
    ann = await Client.open(server.url, "Ann")
    await sign_up(ann, "Ann")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "ai", "level": "easy"},
                   seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await ann.send(type="move", room=room, ply=0, move="4")
    await ann.expect("move_made", ply=1)
    await ann.send(type="resign", room=room)
    change = await ann.expect("rating_change")

    (stored,) = await store.rating_history(ann.player_id)
    assert (stored.opponent_level, stored.opponent_rating) == ("easy", LEVEL_ANCHOR + 150.0)
    expected = glicko(stored, Rating(LEVEL_ANCHOR + 150.0, 80.0))
    assert stored.rating_after == pytest.approx(expected.rating)
    assert change["after"]["rating"] == round(expected.rating, 1) < 1500.0

    board = await ask(ann, "get_leaderboard", "leaderboard", game="connect4")
    levels = {lv["name"]: (lv["rating"], lv["calibrated"]) for lv in board["levels"]}
    assert levels["beginner"] == (LEVEL_ANCHOR, True)
    assert levels["easy"] == (LEVEL_ANCHOR + 150.0, True)
    assert levels["medium"][1] is False, "a level the run did not measure is a guess"
    profile = await ask(ann, "get_profile", "profile")
    assert profile["levels"] == [{"game": "connect4", "level": "easy", "wins": 0, "draws": 0,
                                  "losses": 1}]


async def test_with_no_calibration_stored_the_default_levels_have_their_shipped_measures(
    server: Running,
) -> None:
    ann = await Client.open(server.url, "Ann")
    board = await ask(ann, "get_leaderboard", "leaderboard", game="othello")
    shown = {lv["name"]: (lv["rating"], lv["rd"], lv["calibrated"]) for lv in board["levels"]}
    for name, (elo, error) in MEASURED["othello"].items():
        deviation = min(DEFAULT_DEVIATION, max(LEVEL_MIN_RD, error))  # a Glicko deviation
        assert shown[name] == (LEVEL_ANCHOR + elo, deviation, True), name
    assert len(shown) == len(MEASURED["othello"])


def test_a_shipped_measure_stands_only_for_the_unchanged_default_level() -> None:
    expert = find("connect4", "expert")
    assert shipped_measure("connect4", expert) == MEASURED["connect4"]["expert"]
    slower = dataclasses.replace(expert, soft_time=expert.soft_time * 2)
    assert shipped_measure("connect4", slower) is None
    assert shipped_measure("othello", expert) is None  # another game's level of that name


async def ask(client: Client, kind: str, answer: str, **message: object) -> dict:
    await client.send(type=kind, **message)
    return await client.expect(answer)


async def test_the_leaderboard_ranks_rated_players_and_the_profile_shows_a_players_ratings(
    server: Running,
) -> None:
    ann, bob, room = await friends_game(server.url)
    await sign_up(ann, "Ann")
    await sign_up(bob, "Bob")
    await play((ann, bob), room, FOUR_IN_COLUMN_ONE)
    await ann.expect("rating_change")
    await bob.expect("rating_change")

    certain = await ask(ann, "get_leaderboard", "leaderboard", game="connect4")
    assert certain["players"] == [], "after one game both ratings are provisional"
    board = await ask(ann, "get_leaderboard", "leaderboard", game="connect4", provisional=True)
    assert [(e["rank"], e["player"]["name"], e["rating"]["provisional"])
            for e in board["players"]] == [(1, "Ann", True), (2, "Bob", True)]
    assert (await ask(ann, "get_leaderboard", "leaderboard", game="othello"))["players"] == []

    profile = await ask(bob, "get_profile", "profile", player=ann.player_id)
    assert profile["player"]["name"] == "Ann" and profile["kind"] == "account"
    assert [r["game"] for r in profile["ratings"]] == ["connect4"]
    (point,) = profile["history"]
    assert point["game_id"] == f"{room}-1" and point["score"] == 1.0
    assert point["opponent"]["name"] == "Bob" and point["level"] is None
    assert point["rating"] == profile["ratings"][0]["rating"] > 1500.0
    assert [g["id"] for g in profile["recent"]] == [f"{room}-1"]


async def test_a_profile_of_nobody_and_a_leaderboard_of_no_game_are_refused() -> None:
    async with running(store=MemoryStore()) as server:
        client = await Client.open(server.url, "Ann")
        nobody = await ask(client, "get_profile", "error", id=7, player="nobody")
        assert (nobody["code"], nobody["ref"]) == ("unknown_player", 7)
        no_game = await ask(client, "get_leaderboard", "error", game="chess")
        assert no_game["code"] == "unknown_game"
        mine = await ask(client, "get_profile", "profile")
        assert (mine["kind"], mine["ratings"], mine["history"]) == ("guest", [], [])


def current(player: str, kind: str = "account") -> tuple[str, RatingRecord]:
    return kind, RatingRecord(player, "connect4", 1500.0, 350.0, 0.06)


def game(players: tuple[str | None, str | None], result: int = 1,
         level: str | None = None) -> GameRecord:
    return GameRecord("g", "connect4", players, level, None if level is None else 1,
                      "finished", "", 0.0, result, "end", 1.0)


def test_bots_are_rated_like_accounts_and_a_guest_or_admin_makes_a_game_unrated() -> None:
    bot_game = plan_changes(game(("ann", "robo")),
                            {"ann": current("ann"), "robo": current("robo", "bot")}, None, 1.0)
    assert [c.player_id for c in bot_game] == ["ann", "robo"]
    for other in ("guest", "admin"):
        assert plan_changes(game(("ann", "x")), {"ann": current("ann"),
                                                 "x": current("x", other)}, None, 1.0) == []
    assert plan_changes(game(("ann", None), level="easy"), {"ann": current("ann", "guest")},
                        Rating(1200.0, 50.0), 1.0) == []


def test_a_draw_scores_a_half_and_an_aborted_game_is_not_rated() -> None:
    drawn = plan_changes(game(("ann", "bob"), result=0),
                         {"ann": current("ann"), "bob": current("bob")}, None, 1.0)
    assert [c.score for c in drawn] == [0.5, 0.5]
    aborted = GameRecord("g", "connect4", ("ann", "bob"), None, None, "aborted", "", 0.0,
                         None, "aborted", 1.0)
    assert plan_changes(aborted, {"ann": current("ann"), "bob": current("bob")}, None,
                        1.0) == []


async def test_an_absurd_stored_level_rating_is_clamped_and_the_game_is_still_rated(
    server: Running,
) -> None:
    """A calibration (or a hand-edited row) may hold any number: rating a game against the
    level clamps it to the rating scale instead of overflowing while the game is stored."""
    store = server.app.store
    assert isinstance(store, SqlStore)
    async with store.engine.begin() as conn:
        await repo.insert_calibration_run(conn, "run1", "connect4", "test", 2, 1, "adjacent",
                                          [], time.time())
        await repo.finish_calibration_run(conn, "run1", "finished", [], [
            {"level": "beginner", "elo": 0.0, "error": 0.0, "games": 2, "score": 1.0},
            {"level": "easy", "elo": 2e11, "error": 1e300, "games": 2, "score": 1.0},
        ], 1.0, time.time())
    ann = await Client.open(server.url, "Ann")
    await sign_up(ann, "Ann")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "ai", "level": "easy"},
                   seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await ann.send(type="move", room=room, ply=0, move="4")
    await ann.expect("move_made", ply=1)
    await ann.send(type="resign", room=room)
    change = await ann.expect("rating_change")
    (stored,) = await store.rating_history(ann.player_id)
    assert (stored.opponent_level, stored.opponent_rating) == ("easy", MAX_RATING)
    assert MIN_RATING <= stored.rating_after < 1500.0
    assert change["after"]["rating"] == round(stored.rating_after, 1)
    board = await ask(ann, "get_leaderboard", "leaderboard", game="connect4")
    levels = {lv["name"]: lv["rating"] for lv in board["levels"]}
    assert levels["easy"] == MAX_RATING


def test_the_rating_math_clamps_any_stored_value_instead_of_raising() -> None:
    for absurd in (Rating(2e11, 1e-9, 50.0), Rating(float("nan"), float("inf"), 0.0),
                   Rating(-1e300, 0.0, -1.0)):
        for score in (0.0, 0.5, 1.0):
            after = update(Rating(), [Outcome(absurd, score)])
            assert MIN_RATING <= after.rating <= MAX_RATING, (absurd, score)
            mine = update(absurd, [Outcome(Rating(), score)])
            assert MIN_RATING <= mine.rating <= MAX_RATING and mine.rd > 0, (absurd, score)
