"""Othello rules: perft against the shared counts, hand-built edge cases, notation.

Boards in comments are drawn as Othello boards are: row 1 at the top, column a on the left,
``X`` black, ``O`` white, ``-`` empty. ``board()`` takes exactly that drawing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import games
from games.othello import GAME, PASS, OthelloState


def board(drawing: str, side: str) -> OthelloState:
    """The position drawn row 1 first (as in the comments), ``side`` X or O to move."""
    rows = drawing.split()
    assert len(rows) == 8 and all(len(row) == 8 for row in rows)
    return GAME.parse_position("".join(rows) + " " + side)


def sq(name: str) -> int:
    """Square index of ``"f5"``: row * 8 + column, a1 = 0."""
    return (int(name[1]) - 1) * 8 + "abcdefgh".index(name[0])


@pytest.mark.parametrize("depth", range(1, 10))
def test_perft_from_the_start_matches_the_shared_counts(
    depth: int, othello_perft: dict[int, int]
) -> None:
    assert GAME.perft(GAME.initial(), depth) == othello_perft[depth]


def test_the_start_has_four_discs_and_black_to_move_with_four_moves() -> None:
    start = GAME.initial()
    assert start.to_move == 0 and start.ply == 0
    assert sorted(GAME.format_move(m) for m in start.legal_moves()) == ["c4", "d3", "e6", "f5"]
    cells = GAME.cells(start)
    # Row 1 is the top row, so d4 is the 28th cell: white; e4 black; d5 black; e5 white.
    assert (cells[27], cells[28], cells[35], cells[36]) == (1, 0, 0, 1)
    assert cells.count(None) == 60


def test_a_move_flips_in_all_eight_directions_at_once() -> None:
    # d4 is surrounded by white; every ray ends on a black disc.
    #   a b c d e f g h
    # 1 - - - - - - - -
    # 2 - X - X - X - -
    # 3 - - O O O - - -
    # 4 - X O . O X - -
    # 5 - - O O O - - -
    # 6 - X - X - X - -
    state = board(
        """
        --------
        -X-X-X--
        --OOO---
        -XO-OX--
        --OOO---
        -X-X-X--
        --------
        --------
        """,
        "X",
    )
    after = state.play(sq("d4"))
    assert after.white == 0
    assert after.black == state.black | state.white | 1 << sq("d4")
    assert after.black.bit_count() == 8 + 8 + 1
    assert after.to_move == 1


def test_a_run_that_ends_on_an_empty_square_or_the_edge_flips_nothing() -> None:
    # From a1: white b1..h1 runs into the edge, white a2 a3 stop at the empty a4, and b2 is
    # black with nothing between.
    #   a b c d e f g h
    # 1 . O O O O O O O
    # 2 O X - - - - - -
    # 3 O - - - - - - -
    # 8 - - - - - - - X
    state = board(
        """
        -OOOOOOO
        OX------
        O-------
        --------
        --------
        --------
        --------
        -------X
        """,
        "X",
    )
    with pytest.raises(games.IllegalMove, match="a1 flips nothing"):
        state.play(sq("a1"))


def test_a_move_that_flips_nothing_or_lands_on_a_disc_is_illegal_and_changes_nothing() -> None:
    start = GAME.initial()
    key = start.key()
    with pytest.raises(games.IllegalMove, match="a1 flips nothing"):
        start.play(sq("a1"))
    with pytest.raises(games.IllegalMove, match="d4 is not empty"):
        start.play(sq("d4"))
    with pytest.raises(games.IllegalMove, match="cannot pass"):
        start.play(PASS)
    with pytest.raises(games.IllegalMove):
        start.play(65)
    assert start.key() == key


def test_a_player_without_a_move_must_pass_and_the_game_goes_on() -> None:
    # Black's only disc b1 cannot outflank the white corner; white can take c1.
    #   a b c d e f g h
    # 1 O X - - - - - -
    state = board("OX------ " + "-------- " * 7, "X")
    assert state.legal_moves() == [PASS]
    assert not state.is_over()
    assert GAME.perft(state, 1) == 1
    passed = state.play(PASS)
    assert passed.to_move == 1 and passed.black == state.black and passed.white == state.white
    assert passed.legal_moves() == [sq("c1")]
    # White takes c1, black has no disc left: the game ends, all 61 empties go to white.
    end = passed.play(sq("c1"))
    assert end.is_over() and end.legal_moves() == []
    assert end.result() == -64
    assert GAME.perft(end, 5) == 1


def test_a_move_list_infers_the_forced_pass() -> None:
    state = board("OX------ " + "-------- " * 7, "X")
    assert GAME.parse_moves("c1", state) == GAME.parse_moves("passc1", state)
    assert GAME.parse_moves("c1", state).result() == -64


def test_the_game_ends_when_neither_side_can_move_and_empties_go_to_the_winner() -> None:
    # Both sides pass (a double pass) with 61 empty squares: black 2, white 1.
    #   a b c d e f g h
    # 1 X X - - - - - -
    # 8 - - - - - - - O
    state = board("XX------ " + "-------- " * 6 + "-------O", "O")
    assert state.is_over() and state.legal_moves() == []
    assert state.result() == 2 - 1 + 61
    with pytest.raises(games.IllegalMove, match="the game is over"):
        state.play(PASS)
    drawn = board("X------- " + "-------- " * 6 + "-------O", "X")
    assert drawn.is_over() and drawn.result() == 0


def test_a_full_board_scores_the_plain_disc_difference_from_blacks_side() -> None:
    state = GAME.parse_position("O" * 40 + "X" * 24 + " X")
    assert state.is_over()
    assert state.result() == 24 - 40


def test_result_is_refused_while_moves_remain() -> None:
    with pytest.raises(ValueError, match="not over"):
        GAME.initial().result()


def test_moves_read_in_any_case_and_write_in_lower_case() -> None:
    start = GAME.initial()
    assert GAME.parse_move(start, "F5") == GAME.parse_move(start, "f5") == sq("f5") == 37
    assert GAME.format_move(37) == "f5"
    assert GAME.format_move(PASS) == "pass"
    assert GAME.format_move(0) == "a1" and GAME.format_move(7) == "h1"
    assert GAME.format_move(56) == "a8"
    state = GAME.parse_moves("F5D6c3")
    assert GAME.format_moves([sq("f5"), sq("d6"), sq("c3")]) == "f5d6c3"
    assert state == GAME.parse_moves("f5 d6 c3") and state.ply == 3


@pytest.mark.parametrize("text", ["z9", "i1", "a0", "f", "55", "f5x"])
def test_bad_move_text_is_invalid_notation_naming_it(text: str) -> None:
    with pytest.raises(games.InvalidNotation, match="bad move"):
        GAME.parse_moves(text)
    with pytest.raises(games.InvalidNotation, match=f"bad move {text!r}"):
        GAME.parse_move(GAME.initial(), text)


def test_an_illegal_move_in_a_list_names_its_number_and_square() -> None:
    with pytest.raises(games.IllegalMove, match=r"move 2 \(f5\).*f5 is not empty"):
        GAME.parse_moves("f5f5")


def test_ffo_positions_round_trip_through_the_board_string(shared_data: Path) -> None:
    for line in (shared_data / "othello" / "ffo_40_59.obf").read_text().splitlines():
        state = GAME.parse_position(line)
        assert GAME.format_position(state) == line.split(";")[0].strip()
        assert GAME.parse_position(GAME.format_position(state)).key() == state.key()


def test_a_board_string_states_black_and_white_and_the_side_to_move() -> None:
    text = "-" * 27 + "OX------XO" + "-" * 27 + " X"
    assert GAME.parse_position(text) == GAME.initial()
    white = GAME.parse_position(text[:-1] + "o")
    assert white.to_move == 1 and white != GAME.initial()
    assert GAME.format_position(white).endswith(" O")


@pytest.mark.parametrize(
    "text",
    ["", "-" * 63 + " X", "-" * 64 + " Z", "-" * 64, "-" * 63 + "Q X"],
)
def test_a_malformed_board_string_is_invalid_notation(text: str) -> None:
    with pytest.raises(games.InvalidNotation):
        GAME.parse_position(text)
