"""The bot's sans-I/O core: protocol messages in, actions out, no sockets."""

from __future__ import annotations

import json
import random

import pytest

from clients.bot import (
    QUIET_TICKS_AFTER_DECLINE,
    SYNC_ID,
    Backoff,
    BotCore,
    CreateSpec,
    Later,
    Think,
    engine_from,
)
from clients.bot import parse_server_message as parse_frame
from server import protocol as p

LIMITS = p.ServerLimits(max_message_bytes=4096, messages_per_second=20, burst=40,
                        grace_seconds=60, max_rooms=10)
ALL = ["1", "2", "3", "4", "5", "6", "7"]


def welcome(player: str = "bot1", resume: str = "r" * 32) -> p.Welcome:
    return p.Welcome(version=1, player=p.PlayerView(id=player, name="Bot"), resume=resume,
                     limits=LIMITS, games=[])


def seats(you: int, me: str = "bot1") -> list[p.SeatView]:
    mine = p.SeatView(seat=you, colour="Red", kind="human",  # type: ignore[arg-type]
                      player=p.PlayerView(id=me, name="Bot"), connected=True)
    ai = p.SeatView(seat=1 - you, colour="Yellow", kind="ai", level="beginner",  # type: ignore[arg-type]
                    connected=True)
    return sorted([mine, ai], key=lambda s: s.seat)


def position(moves: list[str], to_move: int | None) -> p.Position:
    return p.Position(ply=len(moves), position="".join(moves), cells=[None] * 42,
                      to_move=to_move, legal_moves=ALL if to_move is not None else [],  # type: ignore[arg-type]
                      last_move=moves[-1] if moves else None)


def room_state(room: str, moves: list[str], you: int = 0,
               status: p.RoomStatus = "active") -> p.RoomState:
    to_move = len(moves) % 2 if status != "finished" else None
    view = p.RoomView(id=room, game="connect4", rows=6, cols=7, opponent="ai",
                      seats=seats(you), spectators=0, status=status, moves=moves,
                      boards=["-" * 42] * (len(moves) + 1),
                      position=position(moves, to_move), ai_thinking=False, round=1)
    return p.RoomState(room=view, you=you)  # type: ignore[arg-type]


def move_made(room: str, moves_before: list[str], move: str) -> p.MoveMade:
    after = [*moves_before, move]
    return p.MoveMade(room=room, ply=len(moves_before), move=move,
                      seat=len(moves_before) % 2,  # type: ignore[arg-type]
                      position=position(after, len(after) % 2), status="active")


def started(core: BotCore) -> list[object]:
    """Connect, welcome, sync: the actions the bot takes once it is in."""
    core.connected()
    core.receive(welcome())
    return list(core.receive(p.Pong(id=SYNC_ID)))


def test_hello_carries_the_token_and_then_asks_for_the_sync_pong() -> None:
    core = BotCore(token="discus_bot_x", name="Bot")
    hello, ping = core.connected()
    assert isinstance(hello, p.Hello) and hello.token == "discus_bot_x"
    assert hello.version == p.PROTOCOL_VERSION and hello.resume is None
    assert isinstance(ping, p.Ping) and ping.id == SYNC_ID


def test_once_synced_a_creating_bot_opens_as_many_rooms_as_games_at_once() -> None:
    core = BotCore(games=2, create=CreateSpec.parse("connect4/beginner"))
    actions = started(core)
    assert len(actions) == 2
    for action in actions:
        assert isinstance(action, p.CreateRoom)
        assert action.game == "connect4" and action.opponent == p.AiOpponent(level="beginner")
    assert core.tick() == []  # the creates are pending: no more


def test_on_its_turn_the_bot_thinks_then_sends_the_move_with_the_ply() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    (think,) = core.receive(room_state("r1", ["4"], you=1))
    assert isinstance(think, Think) and think.ply == 1 and think.moves == ("4",)
    assert think.legal == tuple(ALL)
    (move,) = core.thought("r1", 1, "3")
    assert isinstance(move, p.Move) and (move.room, move.ply, move.move) == ("r1", 1, "3")
    assert core.thought("r1", 1, "3") == []  # never sent twice


def test_the_opponents_move_starts_the_next_search_and_an_old_answer_is_dropped() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    core.receive(room_state("r1", []))
    core.thought("r1", 0, "4")
    assert core.receive(move_made("r1", [], "4")) == []  # our own move: the AI is to move
    (think,) = core.receive(move_made("r1", ["4"], "5"))
    assert isinstance(think, Think) and think.ply == 2
    assert core.receive(move_made("r1", ["4"], "5")) == []  # a repeat changes nothing
    assert core.thought("r1", 0, "1") == []


def test_after_a_reconnect_hello_resumes_and_a_chosen_move_goes_out_at_once() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    core.receive(room_state("r1", []))
    core.disconnected()
    assert core.thought("r1", 0, "4") == []  # offline: kept for later
    hello, _ = core.connected()
    assert isinstance(hello, p.Hello) and hello.resume == "r" * 32
    core.receive(welcome())
    (move,) = core.receive(room_state("r1", []))
    assert isinstance(move, p.Move) and move.move == "4" and move.ply == 0
    assert core.receive(p.Pong(id=SYNC_ID)) == []  # still one game: nothing to top up


def test_a_move_whose_answer_was_lost_is_sent_again_with_the_same_ply() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    core.receive(room_state("r1", []))
    (first,) = core.thought("r1", 0, "4")
    core.disconnected()
    core.connected()
    core.receive(welcome())
    (again,) = core.receive(room_state("r1", []))  # the server never got it
    assert again == first


def test_a_game_without_a_room_state_before_the_sync_pong_ended_while_away() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    started(core)
    core.receive(room_state("r1", ["4", "4"]))
    core.disconnected()
    core.connected()
    core.receive(welcome())
    core.receive(p.Pong(id=SYNC_ID))
    assert core.rooms == {} and [g.outcome for g in core.finished] == ["unknown"]
    assert core.done


def test_game_over_is_recorded_the_room_left_and_a_new_game_created() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"), stop_after=2)
    started(core)
    core.receive(room_state("r1", ["4"], you=1))
    actions = core.receive(p.GameOver(room="r1", result=p.Result(winner=1, score=3,
                                                                   reason="end")))
    assert [type(a) for a in actions] == [p.Leave, p.CreateRoom]
    assert [g.outcome for g in core.finished] == ["won"] and not core.done


def test_a_rate_limited_move_is_sent_again_after_retry_after() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    core.receive(room_state("r1", []))
    (move,) = core.thought("r1", 0, "4")
    assert isinstance(move, p.Move)
    refusal = p.Error(code="rate_limited", message="slow down", ref=move.id,
                      detail={"retry_after": 0.25})
    (later,) = core.receive(refusal)
    assert isinstance(later, Later) and later.delay == 0.25 and later.message == move


def test_a_joining_bot_lists_rooms_and_joins_open_rooms_that_are_not_its_own() -> None:
    core = BotCore(games=2)
    (listing,) = started(core)
    assert isinstance(listing, p.ListRooms)
    empty = p.SeatView(seat=1, colour="Yellow", kind="empty", connected=True)

    def summary(room: str, owner: str) -> p.RoomSummary:
        host = p.SeatView(seat=0, colour="Red", kind="human",
                          player=p.PlayerView(id=owner, name="x"), connected=True)
        return p.RoomSummary(id=room, game="connect4", seats=[host, empty], status="waiting",
                             ply=0, spectators=0)

    rooms = [summary("mine", "bot1"), summary("a", "ann"), summary("b", "bob"),
             summary("c", "cy")]
    joins = core.receive(p.Rooms(rooms=rooms))
    assert [j.room for j in joins if isinstance(j, p.JoinRoom)] == ["a", "b"]
    assert core.tick() == []  # two joins pending fill both places


def test_an_open_room_starts_when_someone_joins_and_the_bot_moves_first() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/open"))
    started(core)
    assert core.receive(room_state("r1", [], status="waiting")) == []
    event = p.RoomEvent(room="r1", event="joined", seat=1, seats=seats(0), spectators=0)
    (think,) = core.receive(event)
    assert isinstance(think, Think) and think.ply == 0


def test_create_spec_reads_ai_levels_and_open_rooms() -> None:
    assert CreateSpec.parse("othello/medium") == CreateSpec("othello", "ai", "medium")
    assert CreateSpec.parse("connect4/open") == CreateSpec("connect4", "open")
    with pytest.raises(ValueError):
        CreateSpec.parse("connect4")


def test_a_challenging_bot_asks_again_only_a_few_quiet_ticks_after_a_decline() -> None:
    core = BotCore(create=CreateSpec.challenge("RandyBot/othello"))
    (challenge,) = started(core)
    assert isinstance(challenge, p.Challenge)
    assert (challenge.player, challenge.game) == ("RandyBot", "othello")
    assert core.tick() == []  # still waiting for the answer
    declined = p.ChallengeDeclined(challenge="c1", by=p.PlayerView(id="b", name="RandyBot"),
                                   reason="busy")
    assert core.receive(declined) == []
    quiet = [core.tick() for _ in range(QUIET_TICKS_AFTER_DECLINE)]
    assert quiet == [[]] * QUIET_TICKS_AFTER_DECLINE
    (again,) = core.tick()
    assert isinstance(again, p.Challenge) and again.id != challenge.id
    # Accepted: the new room's state takes the place of the pending challenge.
    core.receive(room_state("r9", [], you=1))
    assert core.tick() == []


def test_challenge_specs_name_the_player_then_the_game() -> None:
    assert CreateSpec.challenge("Randy/Bot/connect4") == CreateSpec("connect4", "challenge",
                                                                    "Randy/Bot")
    with pytest.raises(ValueError, match="PLAYER/GAME"):
        CreateSpec.challenge("connect4")


def test_engines_are_named_random_or_ai_level() -> None:
    assert engine_from("random").name == "random"
    assert engine_from("ai:expert").name == "ai:expert"
    with pytest.raises(ValueError):
        engine_from("stockfish")


def test_the_random_engine_plays_a_legal_move() -> None:
    engine = engine_from("random")
    assert all(engine.choose("othello", [], ["d3", "c4"], seed) in ("d3", "c4")
               for seed in range(20))


def test_backoff_doubles_up_to_its_cap_and_resets() -> None:
    backoff = Backoff(first=1.0, cap=8.0, rng=random.Random(1))
    delays = [backoff.next() for _ in range(6)]
    ceilings = [1, 2, 4, 8, 8, 8]
    assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert backoff.next(cap=2.0) <= 2.0
    backoff.reset()
    assert backoff.next() <= 1.0


def test_a_server_that_forgot_the_session_gets_a_fresh_hello_and_new_games() -> None:
    core = BotCore(create=CreateSpec.parse("connect4/beginner"))
    started(core)
    core.receive(room_state("r1", ["4"]))
    core.disconnected()
    core.connected()
    refused = p.Error(code="bad_resume_token", message="unknown resume token")
    hello, ping = core.receive(refused)
    assert isinstance(hello, p.Hello) and hello.resume is None
    assert isinstance(ping, p.Ping) and ping.id == SYNC_ID
    assert core.rooms == {} and [g.outcome for g in core.finished] == ["unknown"]
    core.receive(welcome(resume="s" * 32))
    (create,) = core.receive(p.Pong(id=SYNC_ID))
    assert isinstance(create, p.CreateRoom)


def test_a_refused_token_stops_the_bot_instead_of_reconnecting_forever() -> None:
    core = BotCore(token="discus_bot_gone", create=CreateSpec.parse("connect4/beginner"))
    core.connected()
    # ``revoked_token`` is newer than these models: the runner still passes it through.
    frame = json.dumps({"type": "error", "code": "revoked_token", "message": "revoked",
                        "ref": None, "room": None, "detail": {}})
    refusal = parse_frame(frame)
    assert isinstance(refusal, p.Error)
    assert core.receive(refusal) == [] and core.done
    assert core.fatal is not None and core.fatal.code == "revoked_token"


def test_frames_the_bot_does_not_understand_are_skipped() -> None:
    assert parse_frame('{"type": "challenge_sent", "challenge": "c1"}') is None
    assert parse_frame("not json") is None
    assert isinstance(parse_frame('{"type": "pong", "id": 3}'), p.Pong)


def test_a_ladder_bot_enters_the_ladder_on_every_connect_and_looks_for_no_other_games() -> None:
    core = BotCore(token="t", ladder="othello")
    for _ in range(2):
        core.connected()
        assert core.receive(welcome()) == []
        (enter,) = core.receive(p.Pong(id=SYNC_ID))
        assert isinstance(enter, p.EnterLadder) and enter.game == "othello"
        assert core.tick() == []  # no list_rooms, no create_room
        out = core.receive(room_state("R1", ["4", "4"], you=0))
        assert [type(a) for a in out] == [Think]  # the ladder's game, opening played
        core.disconnected()


def test_an_arena_bot_joins_its_tournament_on_every_connect_and_plays_what_it_pairs() -> None:
    core = BotCore(token="t", arena="t0123456789")
    for _ in range(2):
        core.connected()
        assert core.receive(welcome()) == []
        (join,) = core.receive(p.Pong(id=SYNC_ID))
        assert isinstance(join, p.JoinTournament) and join.tournament == "t0123456789"
        assert core.tick() == []  # no list_rooms, no create_room
        out = core.receive(room_state("R1", [], you=0))
        assert [type(a) for a in out] == [Think]  # the game the arena paired it into
        core.disconnected()
