"""Clocks without sockets: the room measures each move with the ``now`` it is given, adds the
increment, ends the game when a flag falls, and keeps the clocks through take-backs and
restarts."""

from __future__ import annotations

import itertools
import random

import pytest

from server import errors
from server import protocol as p
from server.connections.player import Player
from server.play.clocks import (
    FIRST_MOVE_SECONDS,
    TIME_CONTROLS,
    Clocks,
    TimeControl,
    elapsed_ms,
)
from server.play.lobby import Lobby
from server.play.outcome import Outcome
from server.play.rooms import Room

ANN = Player("ann", "Ann")
BOB = Player("bob", "Bob")
QUICK = TimeControl("quick", 1000, 100)
"""A second a side and 0.1 s a move: a test-only control, offered by the lobby below."""

# Othello: after these eight plies Black (seat 0) has no move but to pass.
BLACK_MUST_PASS = ["e6", "f6", "d3", "e7", "e8", "d8", "g6", "f8"]


def make_lobby() -> Lobby:
    counter = itertools.count()
    return Lobby(levels={"connect4": ["easy"], "othello": ["easy"]},
                 ids=lambda: f"id{next(counter)}", grace=30.0, rng=random.Random(1),
                 time_controls={**TIME_CONTROLS, QUICK.name: QUICK})


def timed_room(control: str, game: str = "connect4", joined_at: float = 0.0) -> Room:
    """Ann (seat 0) and Bob (seat 1) in a timed game that began at ``joined_at``."""
    lobby = make_lobby()
    room, _ = lobby.create(ANN, game, p.FriendOpponent(), 0, now=joined_at - 5.0,
                           time_control=control)
    lobby.join(BOB, room.id, now=joined_at)
    return room


def play(room: Room, text: str, now: float) -> Outcome:
    player = room.seats[room.state.to_move].player
    assert player is not None
    plan = room.check_move(player.id, len(room.moves), text, now)
    return room.apply_move(plan, now)


def sent(out: Outcome, kind: type) -> list:
    return [s.message for s in out.sends if isinstance(s.message, kind)]


def test_the_offered_time_controls_are_minutes_plus_seconds_a_move() -> None:
    assert list(TIME_CONTROLS) == ["1+0", "3+2", "5+3", "10+5"]
    assert TIME_CONTROLS["3+2"] == TimeControl("3+2", 180_000, 2_000)


def test_a_moves_time_is_rounded_up_to_the_millisecond() -> None:
    assert elapsed_ms(10.0, 10.25) == 250
    assert elapsed_ms(0.0, 0.0001) == 1
    assert elapsed_ms(5.0, 4.0) == 0


def test_an_untimed_room_has_no_clock_and_no_flag_to_fall() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    lobby.join(BOB, room.id, now=1.0)
    assert sent(out, p.RoomState)[0].room.clock is None
    assert room.deadline() is None and not room.check_flag(1e9).sends
    assert room.record().time_control is None
    assert sent(play(room, "4", 2.0), p.MoveMade)[0].clock is None


def test_no_clock_runs_until_the_second_player_sits_down() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0, time_control="1+0")
    waiting = sent(out, p.RoomState)[0].room
    assert waiting.clock is not None and waiting.clock.running is None
    assert waiting.clock.remaining_ms == [60_000, 60_000]
    assert lobby.open_rooms().rooms[0].time_control == "1+0"
    out = lobby.join(BOB, room.id, now=40.0)
    joined = sent(out, p.RoomState)[0].room
    assert joined.clock is not None and joined.clock.running == 0
    heard = sent(out, p.RoomEvent)[0]  # the creator learns that its clock runs
    assert heard.event == "joined" and heard.clock == joined.clock
    assert room.clocks is not None and room.clocks.deadline() == 100.0
    assert room.deadline() == 70.0  # Ann's first-move time ends before her clock


def test_a_move_spends_the_time_since_the_turn_began_and_then_gains_the_increment() -> None:
    room = timed_room("3+2", joined_at=100.0)
    made = sent(play(room, "4", 110.25), p.MoveMade)[0]
    assert made.clock.remaining_ms == [180_000 - 10_250 + 2_000, 180_000]
    assert made.clock.running == 1
    made = sent(play(room, "4", 114.0), p.MoveMade)[0]
    assert made.clock.remaining_ms == [171_750, 180_000 - 3_750 + 2_000]
    assert made.clock.running == 0


def test_each_move_is_stored_with_both_clocks_after_it() -> None:
    room = timed_room("3+2", joined_at=0.0)
    plan = room.check_move("ann", 0, "4", 1.5)
    assert (plan.record.clock0_ms, plan.record.clock1_ms) == (180_500, 180_000)
    record = room.record()
    assert (record.time_control, record.clock_initial_ms, record.clock_increment_ms) == (
        "3+2", 180_000, 2_000)


def test_the_room_state_shows_the_running_clock_as_of_when_it_is_sent() -> None:
    room = timed_room("1+0", joined_at=0.0)
    state = room.state_for("bob", now=12.5).message
    assert isinstance(state, p.RoomState) and state.room.clock is not None
    assert state.room.clock.remaining_ms == [47_500, 60_000]
    assert state.room.clock.running == 0


def test_the_flag_falls_when_the_side_to_move_runs_out_and_the_other_seat_wins() -> None:
    room = timed_room("quick", joined_at=0.0)
    play(room, "4", 0.3)  # Ann: 1000 - 300 + 100
    play(room, "4", 0.5)  # Bob: 1000 - 200 + 100
    assert room.deadline() == pytest.approx(0.5 + 0.8)
    assert not room.check_flag(1.29).sends and room.status == "active"
    out = room.check_flag(1.3)
    over = sent(out, p.GameOver)[0]
    assert over.result == p.Result(winner=1, reason="timeout")
    assert over.clock is not None and over.clock.remaining_ms == [0, 900]
    assert over.clock.running is None
    assert out.save_game and room.status == "finished"
    assert (room.record().status, room.record().result, room.record().reason) == (
        "finished", -1, "timeout")
    assert room.deadline() is None


def test_a_move_sent_after_the_flag_fell_is_refused_and_changes_nothing() -> None:
    room = timed_room("quick", joined_at=0.0)
    play(room, "4", 0.3)
    with pytest.raises(errors.GameFinished, match="time"):
        room.check_move("bob", 1, "4", 1.5)
    assert len(room.moves) == 1 and room.status == "active"


def test_running_out_before_both_sides_have_moved_aborts_the_game() -> None:
    room = timed_room("quick", joined_at=0.0)
    over = sent(room.check_flag(1.0), p.GameOver)[0]
    assert over.result == p.Result(winner=None, reason="aborted")


def test_the_lobby_lists_the_rooms_whose_flag_has_fallen() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0,
                           time_control="quick")
    lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0, time_control="1+0")
    lobby.join(BOB, room.id, now=0.0)
    assert lobby.overdue(0.5) == []
    assert lobby.overdue(1.0) == [room]


def test_an_unknown_time_control_is_refused_and_makes_no_room() -> None:
    lobby = make_lobby()
    with pytest.raises(errors.UnknownTimeControl, match="1\\+0, 3\\+2"):
        lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0, time_control="2+1")
    assert lobby.rooms == {} and lobby.rooms_of("ann") == []


def test_against_the_ai_only_the_persons_clock_runs() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 1, now=0.0,
                             time_control="1+0")
    clock = sent(out, p.RoomState)[0].room.clock
    assert clock.remaining_ms == [None, 60_000] and clock.running is None  # the AI opens
    assert out.ai is not None and room.deadline() is None
    plan = room.check_ai_move(out.ai.round, 0, 3, now=30.0)
    assert (plan.record.clock0_ms, plan.record.clock1_ms) == (None, 60_000)
    made = sent(room.apply_move(plan, 30.0), p.MoveMade)[0]
    assert made.clock.remaining_ms == [None, 60_000] and made.clock.running == 1
    made = sent(play(room, "4", 32.0), p.MoveMade)[0]
    assert made.clock.remaining_ms == [None, 58_000] and made.clock.running is None


def test_a_forced_othello_pass_is_played_by_the_server_and_costs_no_time() -> None:
    room = timed_room("3+2", game="othello", joined_at=0.0)
    now = 0.0
    out = Outcome()
    for text in BLACK_MUST_PASS:
        now += 1.0
        out = play(room, text, now)
    forced = out.forced
    assert forced is not None and forced.record.move == "pass" and forced.seat == 0
    assert room.deadline() is None  # nobody's clock runs while the pass is pending
    black_before = room.clocks.remaining_ms[0] if room.clocks else None
    made = sent(room.apply_move(forced, now + 0.2), p.MoveMade)[0]
    assert made.move == "pass" and made.clock.remaining_ms[0] == black_before
    white = 180.0 + 4 * (2.0 - 1.0)  # four moves of a second each, two seconds back each
    assert made.clock.running == 1 and room.deadline() == pytest.approx(now + 0.2 + white)


def test_an_untimed_othello_pass_is_the_servers_to_play_too() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "othello", p.FriendOpponent(), 0, now=0.0)
    lobby.join(BOB, room.id, now=0.0)
    out = Outcome()
    for text in BLACK_MUST_PASS:
        out = play(room, text, 1.0)
    assert out.forced is not None and out.forced.record.move == "pass"
    assert out.forced.seat == 0 and out.ai is None
    made = sent(room.apply_move(out.forced, 1.0), p.MoveMade)[0]
    assert made.forced and made.clock is None and room.state.to_move == 1


def test_a_take_back_puts_the_clocks_back_as_stored_with_the_last_ply_kept() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0,
                             time_control="1+0")
    play(room, "4", 10.0)  # 50 s left
    assert room.clock_log[-1] == (50_000, None)
    plan = room.check_ai_move(room.round, 1, 3, now=11.0)
    room.apply_move(plan, 11.0)
    play(room, "4", 31.0)  # 30 s left
    room.take_back(room.check_take_back("ann"), now=40.0)
    assert len(room.moves) == 2 and room.clocks is not None
    assert room.clocks.remaining_ms[0] == 50_000 and room.clocks.running == 0
    assert room.deadline() == 90.0


def test_a_restored_timed_game_keeps_its_clocks_and_starts_the_turn_again() -> None:
    room = timed_room("3+2", joined_at=0.0)
    plans = []
    for ply, (text, now) in enumerate([("4", 10.0), ("4", 15.0), ("3", 16.0)]):
        plan = room.check_move(("ann", "bob")[ply % 2], ply, text, now)
        plans.append(plan.record)
        room.apply_move(plan, now)
    record = room.record()

    restored, _ = make_lobby().restore(record, plans, {"ann": ANN, "bob": BOB}, now=500.0)
    assert restored.time_control == TIME_CONTROLS["3+2"]
    view = restored.clock_view(now=500.0)
    ann, bob = 180_000 - 10_000 + 2_000 - 1_000 + 2_000, 180_000 - 5_000 + 2_000
    assert view is not None and view.remaining_ms == [ann, bob] and view.running == 1
    assert restored.deadline() == 500.0 + 177.0


def test_clocks_charge_the_running_seat_only_when_stopped_or_switched() -> None:
    clocks = Clocks.fresh(QUICK)
    clocks.run(0, 10.0)
    assert clocks.left(0, 10.4) == 600 and clocks.left(1, 10.4) == 1000
    clocks.run(1, 10.4)
    assert clocks.remaining_ms == [600, 1000] and clocks.flagged(11.4) == 1


def test_a_side_that_never_makes_its_first_move_aborts_the_game_after_its_first_move_time(
) -> None:
    room = timed_room("10+5", joined_at=100.0)
    assert room.first_move_seconds == FIRST_MOVE_SECONDS == 30.0
    assert room.deadline() == 130.0  # not the ten minutes of Ann's clock
    assert not room.check_flag(129.99).sends and room.status == "active"
    out = room.check_flag(130.0)
    over = sent(out, p.GameOver)[0]
    assert over.result == p.Result(winner=None, reason="aborted")
    assert out.save_game and room.record().status == "aborted"
    assert {m for s in out.sends for m in s.to} == {"ann", "bob"}  # both are told


def test_the_second_player_has_its_own_first_move_time_from_the_first_move() -> None:
    room = timed_room("10+5", joined_at=0.0)
    play(room, "4", 29.0)
    assert room.deadline() == 59.0
    room.check_move("bob", 1, "4", 58.9)  # still in time
    assert sent(room.check_flag(59.0), p.GameOver)[0].result.reason == "aborted"
    with pytest.raises(errors.GameFinished):  # a move after it comes too late
        room.check_move("bob", 1, "4", 59.1)


def test_once_both_sides_have_moved_only_the_clock_counts() -> None:
    room = timed_room("10+5", joined_at=0.0)
    play(room, "4", 20.0)
    play(room, "4", 45.0)
    assert room.first_move_due() is None
    assert room.deadline() == pytest.approx(45.0 + 585.0)
    assert not room.check_flag(200.0).sends


def test_untimed_games_and_games_against_the_ai_have_no_first_move_time() -> None:
    lobby = make_lobby()
    untimed, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    lobby.join(BOB, untimed.id, now=0.0)
    against_ai, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0,
                                 time_control="1+0")
    for room in (untimed, against_ai):
        assert room.first_move_due() is None and not room.check_flag(59.0).sends


def test_the_lobby_gives_its_rooms_the_settings_first_move_time_and_0_turns_it_off() -> None:
    lobby = make_lobby()
    lobby.first_move_seconds = 0.0
    room, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0,
                           time_control="1+0")
    lobby.join(BOB, room.id, now=0.0)
    assert room.first_move_due() is None and room.deadline() == 60.0


def test_a_restored_game_gives_the_side_to_move_its_first_move_time_from_the_restart(
) -> None:
    room = timed_room("10+5", joined_at=0.0)
    plan = room.check_move("ann", 0, "4", 10.0)
    room.apply_move(plan, 10.0)
    restored, _ = make_lobby().restore(room.record(), [plan.record],
                                       {"ann": ANN, "bob": BOB}, now=500.0)
    assert restored.deadline() == 530.0
    over = sent(restored.check_flag(530.0), p.GameOver)[0]
    assert over.result == p.Result(winner=None, reason="aborted")
