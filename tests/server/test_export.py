"""Exports in the formats people use, read back and replayed through the game rules."""

from __future__ import annotations

import random

import pytest

import games
from server.export import (
    START_BOARD,
    ExportError,
    board_from_cells,
    connect4_columns,
    export_formats,
    othello_ggf,
    othello_moves,
    parse_connect4_columns,
    parse_ggf,
    parse_othello_moves,
)
from server.store import GameRecord, MoveRecord

T0 = 1_763_769_600.0  # 2025-11-22 00:00:00 UTC

def record(game: str, result: int | None = None, reason: str | None = None) -> GameRecord:
    return GameRecord(
        id="g1",
        game=game,
        players=("p1", None),
        ai_level="level-3",
        ai_seat=1,
        status="finished" if result is not None else "active",
        start_position="",
        created_at=T0,
        result=result,
        reason=reason,
        finished_at=None if result is None else T0 + 100,
    )


def random_game(name: str, seed: int) -> tuple[list[MoveRecord], object]:
    game = games.load(name)
    rng = random.Random(seed)
    state = game.initial()
    moves = []
    while not state.is_over():
        move = rng.choice(state.legal_moves())
        moves.append(
            MoveRecord("g1", state.ply, game.format_move(move), state.to_move, 0.5, T0)
        )
        state = state.play(move)
    return moves, state


@pytest.mark.parametrize("seed", range(5))
def test_a_connect_four_game_replays_from_its_column_string(seed: int) -> None:
    c4 = games.load("connect4")
    moves, final = random_game("connect4", seed)
    text = connect4_columns(moves)
    assert c4.parse_moves(text) == final
    assert parse_connect4_columns(text) == [m.move for m in moves]


def test_a_column_string_is_pons_notation() -> None:
    assert connect4_columns(["4", "4", "5", "3"]) == "4453"
    with pytest.raises(ExportError):
        connect4_columns(["8"])
    with pytest.raises(ExportError):
        parse_connect4_columns("4480")


def test_an_othello_move_list_leaves_passes_out() -> None:
    assert othello_moves(["f5", "d6", "pass", "C3"]) == "f5d6c3"
    assert parse_othello_moves("F5 d6c3") == ["f5", "d6", "c3"]
    with pytest.raises(ExportError):
        parse_othello_moves("f5d")


# A record written the way GGS writes them (format at skatgame.net/mburo/ggsa/ggf).
GGS_RECORD = (
    "(;GM[Othello]PC[GGS/os]DT[2003.12.15_13:24:03.MST]PB[alpha]PW[beta]RB[2150.00]"
    "RW[2010.41]TI[05:00//02:00]TY[8]RE[+18.000:r]BO[8 -------- -------- -------- "
    "---O*--- ---*O--- -------- -------- -------- *]B[f5//0.01]W[d6/-1.50/2.31]"
    "B[C3//0.54]W[PA]B[d3];)"
)


def test_a_ggs_record_is_read() -> None:
    parsed = parse_ggf(GGS_RECORD)
    assert (parsed.black, parsed.white) == ("alpha", "beta")
    assert parsed.board == START_BOARD and parsed.to_move == 0
    assert parsed.moves == ["f5", "d6", "c3", "pass", "d3"]
    assert parsed.seconds == [0.01, 2.31, 0.54, None, None]
    assert (parsed.result, parsed.result_flag) == (18.0, "r")


def test_ggf_written_here_reads_back_the_same_game() -> None:
    moves = [
        MoveRecord("g1", ply, text, ply % 2, 1.25, T0)
        for ply, text in enumerate(["f5", "d6", "c3", "pass", "d3"])
    ]
    text = othello_ggf(record("othello", 64, "resign"), moves, ("Ada", "level-3 [AI]"))
    assert text.startswith("(;GM[Othello]") and text.endswith(";)")
    assert "DT[2025.11.22_00:00:00.UTC]" in text and "W[PA//1.25]" in text
    parsed = parse_ggf(text)
    assert parsed.moves == ["f5", "d6", "c3", "pass", "d3"]
    assert (parsed.black, parsed.white) == ("Ada", "level-3  AI ")
    assert (parsed.result, parsed.result_flag) == (64.0, "r")
    assert parsed.board == START_BOARD and parsed.to_move == 0


def test_things_that_are_not_ggf_othello_are_refused() -> None:
    with pytest.raises(ExportError):
        parse_ggf("GM[Othello]")
    with pytest.raises(ExportError):
        parse_ggf("(;GM[Amazons]BO[8 " + START_BOARD + " *];)")
    with pytest.raises(ExportError):
        parse_ggf("(;GM[Othello]BO[8 " + START_BOARD[:-1] + " *];)")


def test_export_formats_offers_each_games_formats() -> None:
    c4 = [MoveRecord("g1", i, m, i % 2, 0.1, T0) for i, m in enumerate("4453")]
    assert export_formats(record("connect4"), c4, ("a", "b")) == {"columns": "4453"}
    assert set(export_formats(record("othello"), [], ("a", "b"))) == {"moves", "ggf"}


@pytest.mark.parametrize("seed", range(3))
def test_an_othello_game_replays_from_its_ggf_and_its_move_list(seed: int) -> None:
    othello = games.load("othello")
    moves, final = random_game("othello", seed)
    text = othello_ggf(record("othello", final.result()), moves, ("a", "b"))  # type: ignore[attr-defined]
    parsed = parse_ggf(text)
    assert parsed.board == board_from_cells(othello.cells(othello.initial()))
    assert parsed.result == final.result()  # type: ignore[attr-defined]

    state = othello.initial()
    for square in parsed.moves:
        state = state.play(othello.parse_move(state, square))
    assert state == final

    # The move list has no passes: the rules infer the forced ones when reading it back.
    assert othello.parse_moves(othello_moves(moves)) == final
