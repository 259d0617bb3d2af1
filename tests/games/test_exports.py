"""Each game's exports in the formats people use (``Game.exports``), read back and replayed
through the game's rules; Othello's GGF (``games.othello.ggf``) written and read."""

from __future__ import annotations

import random

import pytest

import games
from games.base import PlayedGame, State
from games.othello.ggf import START_BOARD, board_from_cells, parse_ggf, write_ggf

T0 = 1_763_769_600.0  # 2025-11-22 00:00:00 UTC


def played(name: str, moves: list[str], result: int | None = None,
           reason: str | None = None, names: tuple[str, str] = ("a", "b")) -> PlayedGame:
    return PlayedGame(names=names, started_at=T0, start=games.load(name).initial(),
                      moves=tuple(moves), seconds=tuple(0.5 for _ in moves), result=result,
                      reason=reason)


def random_game(name: str, seed: int) -> tuple[list[str], State]:
    game = games.load(name)
    rng = random.Random(seed)
    state = game.initial()
    moves = []
    while not state.is_over():
        move = rng.choice(state.legal_moves())
        moves.append(game.format_move(move))
        state = state.play(move)
    return moves, state


@pytest.mark.parametrize("seed", range(5))
def test_a_connect_four_game_replays_from_its_column_string(seed: int) -> None:
    c4 = games.load("connect4")
    moves, final = random_game("connect4", seed)
    text = c4.exports(played("connect4", moves))["columns"]
    assert c4.parse_moves(text) == final
    assert list(text) == moves


def test_a_column_string_is_pons_notation() -> None:
    c4 = games.load("connect4")
    assert c4.exports(played("connect4", ["4", "4", "5", "3"])) == {"columns": "4453"}
    with pytest.raises(games.InvalidNotation):
        c4.exports(played("connect4", ["8"]))
    with pytest.raises(games.InvalidNotation):
        c4.parse_moves("4480")


def test_an_othello_move_list_leaves_passes_out() -> None:
    othello = games.load("othello")
    assert othello.exports(played("othello", ["f5", "d6", "pass", "C3"]))["moves"] == "f5d6c3"
    assert othello.parse_moves("F5 d6c3") == othello.parse_moves("f5d6c3")
    with pytest.raises(games.InvalidNotation):
        othello.parse_moves("f5d")


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
    game = PlayedGame(names=("Ada", "level-3 [AI]"), started_at=T0,
                      start=games.load("othello").initial(),
                      moves=("f5", "d6", "c3", "pass", "d3"), seconds=(1.25,) * 5,
                      result=64, reason="resign")
    text = write_ggf(game)
    assert text.startswith("(;GM[Othello]") and text.endswith(";)")
    assert "DT[2025.11.22_00:00:00.UTC]" in text and "W[PA//1.25]" in text
    parsed = parse_ggf(text)
    assert parsed.moves == ["f5", "d6", "c3", "pass", "d3"]
    assert (parsed.black, parsed.white) == ("Ada", "level-3  AI ")
    assert (parsed.result, parsed.result_flag) == (64.0, "r")
    assert parsed.board == START_BOARD and parsed.to_move == 0


def test_things_that_are_not_ggf_othello_are_refused() -> None:
    with pytest.raises(games.InvalidNotation):
        parse_ggf("GM[Othello]")
    with pytest.raises(games.InvalidNotation):
        parse_ggf("(;GM[Amazons]BO[8 " + START_BOARD + " *];)")
    with pytest.raises(games.InvalidNotation):
        parse_ggf("(;GM[Othello]BO[8 " + START_BOARD[:-1] + " *];)")


@pytest.mark.parametrize("seed", range(3))
def test_an_othello_game_replays_from_its_ggf_and_its_move_list(seed: int) -> None:
    othello = games.load("othello")
    moves, final = random_game("othello", seed)
    out = othello.exports(played("othello", moves, final.result()))
    parsed = parse_ggf(out["ggf"])
    assert parsed.board == board_from_cells(othello.cells(othello.initial()))
    assert parsed.result == final.result()

    state = othello.initial()
    for square in parsed.moves:
        state = state.play(othello.parse_move(state, square))
    assert state == final

    # The move list has no passes: the rules infer the forced ones when reading it back.
    assert othello.parse_moves(out["moves"]) == final


@pytest.mark.parametrize("name", games.names())
def test_every_download_names_one_of_the_games_exports(name: str) -> None:
    game = games.load(name)
    moves, final = random_game(name, 1)
    out = game.exports(played(name, moves, final.result()))
    assert "txt" in game.downloads
    assert set(game.downloads.values()) <= set(out)
