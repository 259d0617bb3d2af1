"""Rooms without sockets: commands in, messages and effects out, errors before any change."""

from __future__ import annotations

import itertools
import random

import pytest
from endings import CONNECT4_DRAW, FOUR_IN_COLUMN_ONE, OTHELLO_WIPEOUT, random_game

from server import errors
from server import protocol as p
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.outcome import AiTurn, Outcome
from server.play.rooms import Room
from server.play.seats import level_key
from server.storage.store import GameRecord, MoveRecord

ANN = Player("ann", "Ann")
RATING = p.SeatRating(rating=1500, provisional=True)
"""A rated player's seat rating (an account's or a bot's; guests have none)."""
BOB = Player("bob", "Bob")
CY = Player("cy", "Cy")
GRACE = 30.0

# A Connect Four game where the first player wins with a vertical four in column 1.
VERTICAL_WIN = ["1", "2", "1", "2", "1", "2", "1"]


def make_lobby(max_rooms: int = 10) -> Lobby:
    counter = itertools.count()
    return Lobby(
        levels={"connect4": ["easy", "hard"], "othello": ["easy"]},
        ids=lambda: f"id{next(counter)}",
        grace=GRACE,
        max_rooms=max_rooms,
        rng=random.Random(1),
    )


def friend_room(lobby: Lobby, seat: int | None = 0) -> Room:
    room, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), seat, now=0.0)
    lobby.join(BOB, room.id, now=1.0)
    return room


def play(room: Room, player: Player, text: str, now: float = 2.0) -> Outcome:
    plan = room.check_move(player.id, len(room.moves), text, now)
    return room.apply_move(plan, now)


def play_line(room: Room, moves: list[str]) -> Outcome:
    out = Outcome()
    for text in moves:
        seat = room.state.to_move
        player = room.seats[seat].player
        assert player is not None
        out = play(room, player, text)
    return out


def messages(out: Outcome, kind: type) -> list:
    return [s.message for s in out.sends if isinstance(s.message, kind)]


def snapshot(room: Room) -> object:
    return room.view().model_dump(), room.round, room.game_id


# --- creating and joining -----------------------------------------------------------------


def test_creating_a_friend_room_seats_the_creator_and_waits_for_a_second_player() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    state = messages(out, p.RoomState)[0]
    assert out.sends[0].to == ("ann",)
    assert state.you == 0 and state.room.status == "waiting"
    assert state.room.seats[0].player == p.PlayerView(id="ann", name="Ann")
    assert state.room.seats[1].kind == "empty"
    assert out.save_game and out.ai is None


def test_joining_sends_the_full_state_to_the_joiner_first_and_the_event_to_the_others() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 1, now=0.0)
    out = lobby.join(BOB, room.id, now=1.0)
    assert out.sends[0].to == ("bob",)
    first = out.sends[0].message
    assert isinstance(first, p.RoomState) and first.you == 0 and first.room.status == "active"
    event = out.sends[1].message
    assert isinstance(event, p.RoomEvent) and event.event == "joined" and event.seat == 0
    assert out.sends[1].to == ("ann",)


def test_a_third_player_cannot_join_a_full_room_but_may_spectate() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    before = snapshot(room)
    with pytest.raises(errors.RoomFull):
        lobby.join(CY, room.id, now=2.0)
    assert snapshot(room) == before
    out = lobby.spectate(CY, room.id)
    state = messages(out, p.RoomState)[0]
    assert state.you is None and state.room.spectators == 1
    assert "cy" in room.members()


def test_a_seated_player_cannot_join_again() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    with pytest.raises(errors.AlreadySeated):
        lobby.join(ANN, room.id, now=1.0)


def test_unknown_games_levels_and_rooms_are_refused_by_their_own_errors() -> None:
    lobby = make_lobby()
    with pytest.raises(errors.UnknownGame):
        lobby.create(ANN, "chess", p.FriendOpponent(), 0, now=0.0)
    with pytest.raises(errors.UnknownLevel):
        lobby.create(ANN, "connect4", p.AiOpponent(level="godlike"), 0, now=0.0)
    with pytest.raises(errors.UnknownRoom):
        lobby.join(ANN, "nope", now=0.0)
    with pytest.raises(errors.UnknownRoom):
        lobby.spectate(ANN, "nope")
    assert lobby.rooms == {}


def test_a_room_code_is_found_whatever_the_case_and_spaces_it_is_typed_with() -> None:
    codes = iter(["TQ7XMPSK", "Old_Mixed"])
    lobby = Lobby(levels={}, ids=lambda: next(codes))
    new, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    old, _ = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    assert lobby.room(" tq7xmpsk ") is new
    assert lobby.room("old_mixed") is old and lobby.room("OLD_MIXED") is old
    lobby.join(BOB, "tq7xmPSK\n", now=1.0)
    assert new.seat_of(BOB.id) == 1


def test_a_player_may_sit_in_at_most_max_rooms_unfinished_rooms() -> None:
    lobby = make_lobby(max_rooms=2)
    lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0)
    with pytest.raises(errors.TooManyRooms):
        lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0)
    assert len(lobby.rooms) == 2


def test_only_open_waiting_rooms_are_listed() -> None:
    lobby = make_lobby()
    open_room, _ = lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0)
    lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=1.0)
    lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=2.0)
    assert [r.id for r in lobby.open_rooms().rooms] == [open_room.id]
    lobby.join(BOB, open_room.id, now=3.0)
    assert lobby.open_rooms().rooms == []


def test_a_random_seat_choice_gives_either_seat() -> None:
    lobby = make_lobby()
    seats = {lobby.create(ANN, "connect4", p.OpenOpponent(), None, now=0.0)[0].seat_of("ann")
             for _ in range(8)}
    assert seats == {0, 1}


# --- moves ----------------------------------------------------------------------------------


def test_a_move_is_checked_without_change_and_applied_only_when_asked() -> None:
    room = friend_room(make_lobby())
    before = snapshot(room)
    plan = room.check_move("ann", 0, "4", now=5.0)
    assert snapshot(room) == before
    assert (plan.record.ply, plan.record.move, plan.record.seat) == (0, "4", 0)
    assert plan.record.game_id == room.game_id
    out = room.apply_move(plan, now=5.0)
    made = messages(out, p.MoveMade)[0]
    assert (made.ply, made.move, made.seat, made.position.ply) == (0, "4", 0, 1)
    assert made.position.to_move == 1 and made.position.last_move == "4"
    assert set(out.sends[0].to) == {"ann", "bob"}
    assert room.view().moves == ["4"]


def test_a_repeated_move_at_the_same_ply_is_refused_not_played_again() -> None:
    room = friend_room(make_lobby())
    play(room, ANN, "4")
    before = snapshot(room)
    with pytest.raises(errors.StalePly) as caught:
        room.check_move("ann", 0, "4", now=3.0)
    assert caught.value.detail == {"expected": 1}
    assert snapshot(room) == before


def test_a_move_from_the_future_is_also_stale() -> None:
    room = friend_room(make_lobby())
    with pytest.raises(errors.StalePly):
        room.check_move("ann", 5, "4", now=3.0)


def test_a_plan_that_went_stale_before_it_was_applied_is_refused() -> None:
    room = friend_room(make_lobby())
    plan = room.check_move("ann", 0, "4", now=3.0)
    play(room, ANN, "3")
    with pytest.raises(errors.StalePly):
        room.apply_move(plan, now=4.0)
    assert room.view().moves == ["3"]


def test_out_of_turn_illegal_and_garbled_moves_each_get_their_own_error() -> None:
    room = friend_room(make_lobby())
    before = snapshot(room)
    with pytest.raises(errors.NotYourTurn):
        room.check_move("bob", 0, "4", now=3.0)
    with pytest.raises(errors.InvalidNotation):
        room.check_move("ann", 0, "x", now=3.0)
    with pytest.raises(errors.InvalidNotation):
        room.check_move("ann", 0, "8", now=3.0)
    assert snapshot(room) == before
    play_line(room, ["1"] * 6)
    with pytest.raises(errors.IllegalMove):
        room.check_move("ann", 6, "1", now=3.0)


def test_spectators_and_strangers_cannot_move() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    lobby.spectate(CY, room.id)
    with pytest.raises(errors.NotSeated):
        room.check_move("cy", 0, "4", now=3.0)
    with pytest.raises(errors.NotSeated):
        room.check_move("zed", 0, "4", now=3.0)


def test_no_move_before_the_second_player_arrives() -> None:
    room, _ = make_lobby().create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0)
    with pytest.raises(errors.GameNotStarted):
        room.check_move("ann", 0, "4", now=1.0)


def test_a_game_played_to_a_win_ends_with_the_rules_score_and_refuses_more_moves() -> None:
    room = friend_room(make_lobby())
    out = play_line(room, VERTICAL_WIN)
    made = messages(out, p.MoveMade)[0]
    assert made.status == "finished" and made.position.to_move is None
    assert made.position.legal_moves == []
    over = messages(out, p.GameOver)[0]
    # Pons' convention: 22 minus the winner's 4 stones, from the first player's side.
    assert over.result == p.Result(winner=0, score=18, reason="end")
    assert out.save_game
    assert room.record().status == "finished" and room.record().result == 18
    with pytest.raises(errors.GameFinished):
        room.check_move("bob", 7, "3", now=9.0)


def test_the_move_record_times_the_thinking_since_the_previous_move() -> None:
    room = friend_room(make_lobby())
    play(room, ANN, "4", now=10.0)
    plan = room.check_move("bob", 1, "4", now=13.5)
    assert plan.record.seconds == pytest.approx(3.5)


# --- resign, leave, disconnect, claim ---------------------------------------------------


def test_resigning_gives_the_game_to_the_other_seat() -> None:
    room = friend_room(make_lobby())
    out = room.resign("bob", now=3.0)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=0, reason="resigned")
    with pytest.raises(errors.GameFinished):
        room.resign("ann", now=4.0)


def test_leaving_an_active_game_loses_it_and_tells_the_others() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    play_line(room, ["4", "4"])
    out = lobby.leave("ann", room.id, now=3.0)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=1, reason="left")
    event = messages(out, p.RoomEvent)[0]
    assert event.event == "left" and event.seat == 0
    assert room.seat_of("ann") is None
    assert room.id in lobby.rooms  # Bob is still there to see the result


def test_leaving_a_waiting_room_closes_it() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0)
    lobby.leave("ann", room.id, now=1.0)
    assert room.id not in lobby.rooms
    with pytest.raises(errors.UnknownRoom):
        lobby.join(BOB, room.id, now=2.0)


def test_a_spectator_leaving_a_waiting_room_leaves_it_open_for_a_player() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.OpenOpponent(), 0, now=0.0)
    lobby.spectate(CY, room.id)
    out = lobby.leave("cy", room.id, now=1.0)
    assert messages(out, p.RoomEvent)[0].event == "spectator_left"
    assert "cy" not in room.members()
    assert room.id in lobby.rooms and room.status == "waiting"
    assert [r.id for r in lobby.open_rooms().rooms] == [room.id]
    lobby.join(BOB, room.id, now=2.0)
    assert room.status == "active"


def test_leaving_a_room_you_are_not_in_is_refused() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    with pytest.raises(errors.NotInRoom):
        lobby.leave("cy", room.id, now=2.0)


def test_a_dropped_player_keeps_the_seat_and_comes_back_to_the_full_state() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    play(room, ANN, "4")
    out = lobby.disconnect("bob", now=10.0)
    event = messages(out, p.RoomEvent)[0]
    assert event.event == "disconnected" and event.seat == 1 and event.grace_seconds == GRACE
    assert out.sends[0].to == ("ann",)
    assert room.seat_views()[1].connected is False
    back = lobby.reconnect("bob")
    assert isinstance(back.sends[0].message, p.RoomState)
    assert back.sends[0].to == ("bob",)
    assert back.sends[0].message.room.moves == ["4"]
    assert back.sends[0].message.you == 1
    assert messages(back, p.RoomEvent)[0].event == "reconnected"
    assert room.seat_views()[1].connected is True


def test_the_opponent_can_claim_only_after_the_grace_period() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    play_line(room, ["4", "4"])
    with pytest.raises(errors.CannotClaim):
        room.claim("ann", now=5.0)
    lobby.disconnect("bob", now=10.0)
    with pytest.raises(errors.CannotClaim) as caught:
        room.claim("ann", now=10.0 + GRACE - 5)
    assert caught.value.detail["retry_after"] == pytest.approx(5.0)
    assert room.status == "active"
    out = room.claim("ann", now=10.0 + GRACE)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=0, reason="abandoned")


def test_rooms_everyone_left_are_swept_after_the_grace_period() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    out = play(room, ANN, "4")
    assert out.ai is not None
    room.apply_move(room.check_ai_move(out.ai.round, out.ai.ply, 3, now=3.0), now=3.0)
    lobby.disconnect("ann", now=4.0)
    assert lobby.sweep(now=4.0 + GRACE - 1) == []
    [(closed, out)] = lobby.sweep(now=4.0 + GRACE)
    assert closed is room and room.id not in lobby.rooms
    assert messages(out, p.GameOver)[0].result == p.Result(winner=1, reason="abandoned")
    assert room.record().status == "finished"


def test_an_ai_game_left_before_any_move_is_aborted_not_lost() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    out = lobby.leave("ann", room.id, now=2.0)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=None, reason="aborted")
    record = room.record()
    assert (record.status, record.result, record.reason) == ("aborted", None, "aborted")
    assert room.id not in lobby.rooms


def test_an_ai_game_abandoned_before_the_player_moved_is_aborted_when_swept() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 1, now=0.0)
    assert out.ai is not None  # the AI opens; the person never answers
    room.apply_move(room.check_ai_move(out.ai.round, out.ai.ply, 3, now=1.0), now=1.0)
    lobby.disconnect("ann", now=2.0)
    [(closed, out)] = lobby.sweep(now=2.0 + GRACE)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=None, reason="aborted")
    assert closed.record().status == "aborted"


def test_a_game_between_people_is_aborted_if_left_or_claimed_before_both_moved() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    play(room, ANN, "4")
    out = lobby.leave("bob", room.id, now=3.0)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=None, reason="aborted")
    other = friend_room(lobby)
    play(other, ANN, "4")
    lobby.disconnect("bob", now=10.0)
    out = other.claim("ann", now=10.0 + GRACE)
    assert messages(out, p.GameOver)[0].result == p.Result(winner=None, reason="aborted")


def test_a_spectator_who_drops_stops_watching() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    lobby.spectate(CY, room.id)
    out = lobby.disconnect("cy", now=3.0)
    assert messages(out, p.RoomEvent)[0].event == "spectator_left"
    assert "cy" not in room.members()


# --- the AI seat ------------------------------------------------------------------------------


def test_an_ai_room_starts_at_once_and_asks_the_ai_when_it_moves_first() -> None:
    room, out = make_lobby().create(ANN, "connect4", p.AiOpponent(level="hard"), 1, now=0.0)
    assert room.status == "active"
    assert isinstance(out.ai, AiTurn)
    assert (out.ai.seat, out.ai.ply, out.ai.level, out.ai.round) == (0, 0, "hard", 1)
    assert room.ai_thinking and messages(out, p.RoomState)[0].room.ai_thinking


def test_the_ai_answers_the_human_move_and_its_move_carries_its_figures() -> None:
    room, out = make_lobby().create(ANN, "connect4", p.AiOpponent(level="easy", evaluation=True),
                                    0, now=0.0)
    assert out.ai is None
    out = play(room, ANN, "4")
    assert out.ai is not None and out.ai.ply == 1 and room.view().ai_thinking
    with pytest.raises(errors.NotYourTurn):
        room.check_move("ann", 1, "4", now=3.0)
    thinking = room.ai_progress(out.ai.round, 1, depth=3, score=5, nodes=99, seconds=0.01)
    assert messages(thinking, p.AiThinking)[0].depth == 3
    thought = p.AiThought(depth=3, score=5, nodes=99, seconds=0.01)
    plan = room.check_ai_move(out.ai.round, 1, 3, now=3.0, thought=thought)
    assert (plan.record.ai_depth, plan.record.ai_score, plan.record.ai_nodes) == (3, 5, 99)
    done = room.apply_move(plan, now=3.0)
    made = messages(done, p.MoveMade)[0]
    assert made.seat == 1 and made.thought == thought
    assert not room.ai_thinking and done.ai is None


def test_the_ai_search_goes_out_without_its_score_unless_a_casual_room_shows_it() -> None:
    thought = p.AiThought(depth=3, score=5, nodes=99, seconds=0.01, exact=True, win_in=2)
    for evaluation, rating, shown in [(False, None, False), (True, None, True),
                                      (True, RATING, False)]:
        lobby = make_lobby()
        room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
        room.evaluation = evaluation
        room.note_ratings({} if rating is None else {ANN.id: rating})
        out = play(room, ANN, "4")
        assert out.ai is not None
        thinking = messages(room.ai_progress(out.ai.round, 1, depth=3, score=5, nodes=99,
                                             seconds=0.01, exact=True, win_in=2), p.AiThinking)[0]
        made = messages(room.apply_move(room.check_ai_move(out.ai.round, 1, 3, now=3.0,
                                                           thought=thought), now=3.0),
                        p.MoveMade)[0]
        for seen in (thinking, made.thought):
            assert seen is not None and seen.depth == 3 and seen.nodes == 99
            assert (seen.score, seen.exact, seen.win_in) == ((5, True, 2) if shown
                                                             else (None, False, None))


def test_a_rated_player_cannot_ask_for_the_engines_evaluation() -> None:
    lobby = make_lobby()
    with pytest.raises(errors.Forbidden):
        lobby.create(ANN, "connect4", p.AiOpponent(level="easy", evaluation=True), 0, now=0.0,
                     ratings={ANN.id: RATING})
    assert not lobby.rooms


def test_a_late_ai_answer_for_an_old_ply_or_round_is_refused_and_its_progress_dropped() -> None:
    room, _ = make_lobby().create(ANN, "connect4", p.AiOpponent(level="easy"), 1, now=0.0)
    with pytest.raises(errors.StalePly):
        room.check_ai_move(round=2, ply=0, move=3, now=1.0)
    with pytest.raises(errors.StalePly):
        room.check_ai_move(round=1, ply=1, move=3, now=1.0)
    with pytest.raises(errors.IllegalMove):
        room.check_ai_move(round=1, ply=0, move=9, now=1.0)
    assert room.ai_progress(2, 0, 1, 0, 1, 0.0).sends == []


# --- ratings beside the names -----------------------------------------------------------------


def test_seats_show_the_ratings_handed_in_and_they_follow_the_players_into_a_rematch() -> None:
    lobby = make_lobby()
    ann = p.SeatRating(rating=1662, provisional=True)
    room, out = lobby.create(ANN, "connect4", p.FriendOpponent(), 0, now=0.0,
                             ratings={"ann": ann})
    assert [s.rating for s in messages(out, p.RoomState)[0].room.seats] == [ann, None]
    bob = p.SeatRating(rating=1480, provisional=False)
    out = lobby.join(BOB, room.id, now=1.0, rating=bob)
    (joined,) = messages(out, p.RoomEvent)
    assert [s.rating for s in joined.seats] == [ann, bob]

    play_line(room, VERTICAL_WIN)
    room.note_ratings({"ann": p.SeatRating(rating=1700, provisional=True)})
    room.offer_rematch("ann", "g2", now=3.0)
    out = room.accept_rematch("bob", "g2", now=4.0)
    seats = messages(out, p.RoomState)[0].room.seats
    assert [(s.player and s.player.id, s.rating and s.rating.rating) for s in seats] == [
        ("bob", 1480), ("ann", 1700)]


def test_an_ai_seat_shows_its_levels_rating_and_a_guest_none() -> None:
    lobby = make_lobby()
    level = p.SeatRating(rating=1200, provisional=True)
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0,
                             ratings={"ann": None, level_key("easy"): level})
    assert [s.rating for s in messages(out, p.RoomState)[0].room.seats] == [None, level]
    room.note_ratings({level_key("easy"): None})
    assert room.seat_views()[1].rating is None


# --- rematch --------------------------------------------------------------------------------


def test_a_rematch_needs_a_finished_game_and_an_offer_from_the_other_seat() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    with pytest.raises(errors.GameNotFinished):
        room.offer_rematch("ann", "g2", now=1.0)
    room.resign("bob", now=2.0)
    with pytest.raises(errors.NoRematchOffer):
        room.accept_rematch("ann", "g2", now=3.0)
    out = room.offer_rematch("ann", "g2", now=3.0)
    assert messages(out, p.RoomEvent)[0].event == "rematch_offered"
    with pytest.raises(errors.NoRematchOffer):
        room.accept_rematch("ann", "g2", now=3.0)
    out = room.accept_rematch("bob", "g2", now=4.0)
    states = {s.to[0]: s.message for s in out.sends if isinstance(s.message, p.RoomState)}
    assert states["ann"].you == 1 and states["bob"].you == 0  # colours swapped
    assert states["ann"].room.round == 2 and states["ann"].room.moves == []
    assert room.game_id == "g2" and room.status == "active"


def test_a_rematch_against_the_ai_starts_at_once_and_the_ai_opens_it() -> None:
    room, _ = make_lobby().create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    room.resign("ann", now=1.0)
    out = room.offer_rematch("ann", "g2", now=2.0)
    assert out.ai is not None and out.ai.seat == 0 and out.ai.round == 2
    assert room.seat_of("ann") == 1


def test_no_rematch_once_the_opponent_has_left() -> None:
    lobby = make_lobby()
    room = friend_room(lobby)
    lobby.leave("bob", room.id, now=2.0)
    with pytest.raises(errors.NoRematchOffer):
        room.offer_rematch("ann", "g2", now=3.0)


# --- two AI seats ----------------------------------------------------------------------------


def test_two_levels_play_each_other_turn_by_turn_with_nobody_seated() -> None:
    lobby = make_lobby()
    room, out = lobby.create_match("connect4", ("easy", "hard"), now=0.0)
    assert room.ai_only and room.status == "active" and room.members() == ()
    assert out.save_game and out.ai is not None
    assert (out.ai.seat, out.ai.level, out.ai.ply) == (0, "easy", 0)
    lobby.spectate(CY, room.id, now=0.5)
    out = ai_plays(room, out.ai, "4")
    assert [s.to for s in out.sends] == [("cy",)]  # the spectator sees every move
    assert out.ai is not None and (out.ai.seat, out.ai.level, out.ai.ply) == (1, "hard", 1)
    with pytest.raises(errors.NotSeated):
        room.check_move("cy", 1, "4", now=3.0)
    for text in FOUR_IN_COLUMN_ONE:  # a line both sides play legally from 4
        if out.ai is None:
            break
        out = ai_plays(room, out.ai, text)
    assert room.status == "finished" and out.save_game and out.ai is None
    record = room.record()
    assert (record.ai_seat, record.ai_level, record.other_ai_level) == (0, "easy", "hard")
    assert (record.level_of(0), record.level_of(1), record.players) == ("easy", "hard",
                                                                         (None, None))


def test_a_game_between_two_levels_is_restored_with_both_and_the_ai_to_move_asked() -> None:
    lobby = make_lobby()
    room, out = lobby.create_match("connect4", ("hard", "easy"), now=0.0)
    rows = []
    for text in ("4", "4", "3"):
        assert out.ai is not None
        plan = room.check_ai_move(out.ai.round, out.ai.ply,
                                  room.game.parse_move(room.state, text), now=1.0)
        rows.append(plan.record)
        out = room.apply_move(plan, now=1.0)
    restored, out = make_lobby().restore(room.record(), rows, {}, now=500.0)
    assert [s.level for s in restored.seats] == ["hard", "easy"] and restored.ai_only
    assert out.ai is not None and (out.ai.seat, out.ai.level, out.ai.ply) == (1, "easy", 3)
    assert restored.record() == room.record()


def test_a_room_of_two_levels_is_never_swept_while_they_play_only_after_its_end() -> None:
    lobby = make_lobby()
    room, out = lobby.create_match("connect4", ("easy", "easy"), now=0.0)
    assert lobby.sweep(now=10 * GRACE) == [] and room.status == "active"
    for text in VERTICAL_WIN:
        out = ai_plays(room, out.ai, text, now=100.0)
    assert room.status == "finished"
    assert lobby.sweep(now=100.0 + GRACE - 1) == []
    [(closed, out)] = lobby.sweep(now=100.0 + GRACE)
    assert closed is room and room.id not in lobby.rooms and not out.sends


def test_a_match_between_unknown_levels_is_refused_and_makes_no_room() -> None:
    lobby = make_lobby()
    with pytest.raises(errors.UnknownLevel):
        lobby.create_match("connect4", ("easy", "grandmaster"), now=0.0)
    with pytest.raises(errors.UnknownGame):
        lobby.create_match("chess", ("easy", "easy"), now=0.0)
    assert lobby.rooms == {}


# --- take-back and draws ----------------------------------------------------------------


def ai_plays(room: Room, turn: AiTurn | None, text: str, now: float = 3.0) -> Outcome:
    assert turn is not None
    move = room.game.parse_move(room.state, text)
    plan = room.check_ai_move(turn.round, turn.ply, move, now, line=turn.line)
    return room.apply_move(plan, now)


def test_a_take_back_against_the_ai_removes_the_persons_move_and_the_ais_reply() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    turn = play(room, ANN, "4").ai
    turn = ai_plays(room, turn, "3").ai
    assert turn is None and room.moves == [3, 2]  # Ann to move again
    before = room.boards[0]
    assert room.check_take_back(ANN.id) == 2
    out = room.take_back(2, now=4.0)
    assert room.moves == [] and room.boards == [before] and room.line == 1
    assert messages(out, p.RoomState)[0].room.position.ply == 0
    assert messages(out, p.RoomEvent)[-1].event == "took_back"
    assert out.ai is None  # Ann moves first: her turn again


def test_a_take_back_while_the_ai_thinks_drops_its_late_answer() -> None:
    lobby = make_lobby()
    room, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    stale = play(room, ANN, "4").ai
    assert stale is not None and room.ai_thinking
    assert room.check_take_back(ANN.id) == 1
    room.take_back(1, now=3.0)
    assert not room.ai_thinking
    fresh = play(room, ANN, "4").ai  # the same ply again, on a new line
    assert fresh is not None and (fresh.ply, fresh.line) == (stale.ply, stale.line + 1)
    with pytest.raises(errors.StalePly):
        room.check_ai_move(stale.round, stale.ply, 2, 4.0, line=stale.line)
    assert not room.ai_progress(stale.round, stale.ply, 3, 0, 10, 0.1, line=stale.line).sends
    ai_plays(room, fresh, "4")
    assert room.moves == [3, 3]


def test_when_the_ai_moved_first_its_first_move_stays_after_a_take_back() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 1, now=0.0)
    assert ai_plays(room, out.ai, "4").ai is None
    with pytest.raises(errors.CannotTakeBack):
        room.check_take_back(ANN.id)  # only the AI has moved
    turn = play(room, ANN, "4").ai
    ai_plays(room, turn, "5")
    again = room.take_back(room.check_take_back(ANN.id), now=5.0)
    assert room.moves == [3] and again.ai is None and room.state.to_move == 1


def test_take_backs_are_refused_between_people_and_before_a_move() -> None:
    room = friend_room(make_lobby())
    play(room, ANN, "4")
    with pytest.raises(errors.CannotTakeBack):
        room.check_take_back(ANN.id)
    lobby = make_lobby()
    ai_room, _ = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    with pytest.raises(errors.CannotTakeBack):
        ai_room.check_take_back(ANN.id)


def test_a_draw_offer_is_heard_by_the_other_seat_and_ends_the_game_when_accepted() -> None:
    room = friend_room(make_lobby())
    play(room, ANN, "4")
    out = room.offer_draw(BOB.id, now=3.0)
    assert messages(out, p.RoomEvent)[0].event == "draw_offered" and room.draw_offered_by == 1
    with pytest.raises(errors.NoDrawOffer):
        room.answer_draw(BOB.id, True, now=3.5)  # one's own offer
    over = room.answer_draw(ANN.id, True, now=4.0)
    result = messages(over, p.GameOver)[0].result
    assert (result.winner, result.reason) == (None, "agreed")
    assert over.save_game and room.record().result == 0


def test_a_draw_offer_lapses_when_the_other_seat_moves_and_may_be_declined() -> None:
    room = friend_room(make_lobby())
    room.offer_draw(ANN.id, now=2.0)
    play(room, ANN, "4")  # the offerer's own move keeps it
    assert room.draw_offered_by == 0
    play(room, BOB, "4")  # the other seat moves: declined
    assert room.draw_offered_by is None
    room.offer_draw(ANN.id, now=3.0)
    declined = room.answer_draw(BOB.id, False, now=4.0)
    assert messages(declined, p.RoomEvent)[0].event == "draw_declined"
    assert room.status == "active" and room.draw_offered_by is None


def test_the_computer_is_not_offered_draws() -> None:
    room, _ = make_lobby().create(ANN, "connect4", p.AiOpponent(level="easy"), 0, now=0.0)
    with pytest.raises(errors.CannotOfferDraw):
        room.offer_draw(ANN.id, now=1.0)


def test_a_draw_offer_is_not_repeated_while_it_stands_or_right_after_a_decline() -> None:
    room = friend_room(make_lobby())
    play(room, ANN, "4")
    room.offer_draw(BOB.id, now=3.0)
    with pytest.raises(errors.CannotOfferDraw):
        room.offer_draw(BOB.id, now=3.1)  # it stands
    room.answer_draw(ANN.id, False, now=3.2)
    with pytest.raises(errors.CannotOfferDraw):
        room.offer_draw(BOB.id, now=3.3)  # declined, nothing played since
    play(room, BOB, "4")
    assert messages(room.offer_draw(BOB.id, now=4.0), p.RoomEvent)[0].event == "draw_offered"


# --- restoring from storage -----------------------------------------------------------------


def played_to_the_end(game: str, moves: list[str]
                      ) -> tuple[Room, Outcome, GameRecord, list[MoveRecord]]:
    """A friends' game of ``game`` played through ``moves`` (ply n at 10 + n s), which end
    it: the room, the last move's outcome, and the store as a server killed between storing
    that move and storing the finished game leaves it (the row still active, every move)."""
    lobby = make_lobby()
    room, _ = lobby.create(ANN, game, p.FriendOpponent(), 0, now=0.0)
    lobby.join(BOB, room.id, now=1.0)
    rows: list[MoveRecord] = []
    out = Outcome()
    for ply, text in enumerate(moves):
        player = room.seats[room.state.to_move].player
        assert player is not None
        plan = room.check_move(player.id, ply, text, now=10.0 + ply)
        rows.append(plan.record)
        before = room.record()
        out = room.apply_move(plan, now=10.0 + ply)
    assert room.status == "finished" and before.status == "active"
    return room, out, before, rows


ENDINGS = {
    "connect4 four in a row": ("connect4", FOUR_IN_COLUMN_ONE),
    "connect4 full board draw": ("connect4", CONNECT4_DRAW),
    "othello full board": ("othello", random_game("othello", 0)),
    "othello neither side can move": ("othello", OTHELLO_WIPEOUT),
}


@pytest.mark.parametrize("game, moves", ENDINGS.values(), ids=ENDINGS.keys())
def test_a_game_its_last_stored_move_ended_is_restored_finished_as_that_move_finished_it(
    game: str, moves: list[str],
) -> None:
    played, live, record, rows = played_to_the_end(game, moves)
    room, out = make_lobby().restore(record, rows, {"ann": ANN, "bob": BOB}, now=500.0)
    assert room.status == "finished" and out.save_game
    assert room.record() == played.record()  # status, result, reason, finished at its move
    assert room.record().finished_at == rows[-1].created_at
    over = messages(out, p.GameOver)
    assert over == messages(live, p.GameOver) and over[0].result.reason == "end"
    assert [s.to for s in out.sends] == [("ann", "bob")]
    assert out.ai is None and out.forced is None
    position = room.view().position
    assert position.to_move is None and position.legal_moves == []
    with pytest.raises(errors.GameFinished):
        room.check_move(room.seats[room.state.to_move].player.id,  # type: ignore[union-attr]
                        len(moves), "1", now=501.0)


def test_a_restored_game_its_stored_moves_do_not_end_goes_on_with_nothing_to_save() -> None:
    _, _, record, rows = played_to_the_end("connect4", FOUR_IN_COLUMN_ONE)
    room, out = make_lobby().restore(record, rows[:-1], {"ann": ANN, "bob": BOB}, now=500.0)
    assert room.status == "active" and not out.save_game and not out.sends
    assert room.record().status == "active" and room.record().finished_at is None


def test_a_game_the_ais_last_stored_move_won_is_restored_won_without_asking_the_ai() -> None:
    lobby = make_lobby()
    room, out = lobby.create(ANN, "connect4", p.AiOpponent(level="easy"), 1, now=0.0)
    rows = []
    for ply, text in enumerate(FOUR_IN_COLUMN_ONE):
        if ply % 2 == 0:
            assert out.ai is not None
            move = room.game.parse_move(room.state, text)
            plan = room.check_ai_move(out.ai.round, ply, move, now=10.0 + ply)
        else:
            plan = room.check_move(ANN.id, ply, text, now=10.0 + ply)
        rows.append(plan.record)
        record = room.record()
        out = room.apply_move(plan, now=10.0 + ply)
    assert record.status == "active"
    restored, out = make_lobby().restore(record, rows, {"ann": ANN}, now=500.0)
    assert out.ai is None and not restored.ai_thinking and out.save_game
    assert messages(out, p.GameOver)[0].result == p.Result(winner=0, score=18, reason="end")
    assert restored.record() == room.record() and restored.record().status == "finished"
