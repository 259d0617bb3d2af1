"""Stored games written out by their own game's exports (``server.reviews.export``)."""

from __future__ import annotations

import pytest

from games.othello.ggf import parse_ggf
from server.reviews.export import ExportError, export_formats, played_game
from server.storage.store import GameRecord, MoveRecord

T0 = 1_763_769_600.0  # 2025-11-22 00:00:00 UTC


def record(game: str, result: int | None = None, reason: str | None = None,
           start_position: str = "") -> GameRecord:
    return GameRecord(
        id="g1",
        game=game,
        players=("p1", None),
        ai_level="level-3",
        ai_seat=1,
        status="finished" if result is not None else "active",
        start_position=start_position,
        created_at=T0,
        result=result,
        reason=reason,
        finished_at=None if result is None else T0 + 100,
    )


def test_export_formats_offers_each_games_formats() -> None:
    c4 = [MoveRecord("g1", i, m, i % 2, 0.1, T0) for i, m in enumerate("4453")]
    assert export_formats(record("connect4"), c4, ("a", "b")) == {"columns": "4453"}
    assert set(export_formats(record("othello"), [], ("a", "b"))) == {"moves", "ggf"}


def test_a_stored_game_is_written_in_ply_order_with_its_names_result_and_times() -> None:
    moves = [MoveRecord("g1", ply, text, ply % 2, 1.25, T0)
             for ply, text in reversed(list(enumerate(["f5", "d6", "c3"])))]
    out = export_formats(record("othello", 64, "resign"), moves, ("Ada", "Bob"))
    assert out["moves"] == "f5d6c3"
    parsed = parse_ggf(out["ggf"])
    assert parsed.moves == ["f5", "d6", "c3"] and parsed.seconds == [1.25] * 3
    assert (parsed.black, parsed.white, parsed.result, parsed.result_flag) == (
        "Ada", "Bob", 64.0, "r")


def test_a_game_from_a_set_up_position_is_written_from_it() -> None:
    board = "-" * 27 + "OX" + "-" * 6 + "XO" + "-" * 27 + " O"
    game = played_game(record("othello", start_position=board), [], ("a", "b"))
    assert game.start.to_move == 1
    assert parse_ggf(export_formats(record("othello", start_position=board), [],
                                    ("a", "b"))["ggf"]).to_move == 1


def test_an_unknown_game_or_a_bad_move_cannot_be_exported() -> None:
    with pytest.raises(ExportError):
        export_formats(record("chess"), [], ("a", "b"))
    with pytest.raises(ExportError):
        export_formats(record("connect4"), [MoveRecord("g1", 0, "9", 0, 0.1, T0)], ("a", "b"))
