"""Connect Four rules: perft, wins in every direction, the full board, notation and errors."""

from __future__ import annotations

import pytest

import games
from games.connect4 import GAME

# Leaf counts from the start, a finished game counting as one leaf (issue 2).
PERFT = [7, 49, 343, 2401, 16807, 117649, 823536, 5686266]


def board(text: str) -> list[str]:
    """The position after ``text`` as rows from the top: X first player, O second, . empty."""
    cells = GAME.cells(GAME.parse_moves(text))
    marks = ["." if c is None else "XO"[c] for c in cells]
    return ["".join(marks[r * 7 : r * 7 + 7]) for r in range(6)]


@pytest.mark.parametrize("depth", range(1, 9))
def test_perft_from_the_start_matches_the_known_counts(depth: int) -> None:
    assert GAME.perft(GAME.initial(), depth) == PERFT[depth - 1]


def test_perft_counts_a_finished_game_as_one_leaf() -> None:
    won = GAME.parse_moves("1212121")
    assert won.is_over()
    assert GAME.perft(won, 3) == 1
    assert GAME.perft(GAME.parse_moves("121212"), 2) == 7 * 7 - 6  # the win at "1" ends early


def test_the_game_is_loaded_by_name() -> None:
    assert games.load("connect4") is GAME
    assert (GAME.rows, GAME.cols, GAME.num_moves) == (6, 7, 7)


def test_a_vertical_four_wins_for_the_first_player_with_pons_score() -> None:
    # .......
    # .......
    # X......
    # XO.....
    # XO.....
    # XO.....
    state = GAME.parse_moves("1212121")
    assert board("1212121")[2:] == ["X......", "XO.....", "XO.....", "XO....."]
    assert state.is_over() and state.winner() == 0
    assert state.result() == 22 - 4
    assert state.legal_moves() == []


def test_a_vertical_four_of_the_second_player_scores_negative() -> None:
    # .......
    # .......
    # .O.....
    # XO.....
    # XO.....
    # XOX....
    state = GAME.parse_moves("12121232")
    assert state.winner() == 1
    assert state.result() == -(22 - 4)


def test_a_horizontal_four_on_the_bottom_row_wins() -> None:
    # .......
    # .......
    # .......
    # .......
    # OOO....
    # XXXX...
    assert board("1122334")[4:] == ["OOO....", "XXXX..."]
    state = GAME.parse_moves("1122334")
    assert state.is_over() and state.result() == 18


def test_a_rising_diagonal_wins_and_so_does_its_mirror_image() -> None:
    # .......
    # .......
    # ...X...
    # ..XO...
    # .XOO...
    # XOOX..X
    assert board("12234334744")[2:] == ["...X...", "..XO...", ".XOO...", "XOOX..X"]
    rising = GAME.parse_moves("12234334744")
    assert rising.winner() == 0 and rising.result() == 22 - 6
    falling = GAME.parse_moves("76654554144")
    assert falling.winner() == 0 and falling.result() == 22 - 6
    assert not GAME.parse_moves("1223433474").is_over()  # one stone short


def test_a_win_on_the_last_square_is_a_win_not_a_draw() -> None:
    # The 42nd stone (O in column 2) completes four: O wins with 21 stones, score -1.
    # OOXXOOO
    # OXOOXXX
    # XXXOOXX
    # XXOXOOO
    # OOOXOXX
    # XXXOXOO
    moves = "371674536743224664352465711623117147355522"
    before = GAME.parse_moves(moves[:-1])
    assert not before.is_over() and before.legal_moves() == [1]
    state = GAME.parse_moves(moves)
    assert board(moves)[0] == "OOXXOOO"
    assert state.ply == 42 and state.winner() == 1
    assert state.result() == -1


def test_a_full_board_without_four_is_a_draw() -> None:
    # OOXXXOO
    # XXOOXXX
    # OOXXXOO
    # OXOOOXX
    # XOOXOOX
    # OXXXOOX
    state = GAME.parse_moves("413343241175423173751556345146577766662222")
    assert state.is_over() and state.winner() is None
    assert state.result() == 0
    assert None not in GAME.cells(state)


def test_the_winning_line_is_the_four_that_won() -> None:
    # .......
    # .......
    # .......
    # .......
    # OOO....
    # XXXX...   X's fourth disc, in column 4, wins along the bottom row
    assert GAME.winning_line(GAME.parse_moves("1122334")) == [35, 36, 37, 38]
    assert GAME.winning_line(GAME.parse_moves("112233")) == []  # not won yet


def test_one_disc_completing_two_lines_shows_both() -> None:
    # .......
    # .......
    # XXXX...   the last X, in column 4, completes this row
    # OOOX...   and column 4 from the bottom
    # XOOX...
    # OOXX..O
    state = GAME.parse_moves("41424233111332274")
    assert state.winner() == 0
    assert board("41424233111332274")[2:] == ["XXXX...", "OOOX...", "XOOX...", "OOXX..O"]
    assert GAME.winning_line(state) == [14, 15, 16, 17, 24, 31, 38]


def test_a_last_square_win_shows_the_winners_line_and_a_draw_none() -> None:
    won = GAME.parse_moves("371674536743224664352465711623117147355522")
    line = GAME.winning_line(won)
    cells = GAME.cells(won)
    assert len(line) >= 4 and 1 in line  # it runs through the last disc (column 2, top row)
    assert all(cells[i] == 1 for i in line)
    assert GAME.winning_line(GAME.parse_moves("413343241175423173751556345146577766662222")) == []


def test_a_full_column_rejects_another_disc() -> None:
    state = GAME.parse_moves("111111")
    assert 0 not in state.legal_moves()
    with pytest.raises(games.IllegalMove, match="column 1 is full"):
        state.play(0)
    with pytest.raises(games.IllegalMove, match="column 1 is full"):
        GAME.parse_move(state, "1")
    with pytest.raises(games.IllegalMove, match="move 7 of '1111111'"):
        GAME.parse_moves("1111111")


def test_no_move_is_accepted_once_the_game_is_over() -> None:
    state = GAME.parse_moves("1212121")
    with pytest.raises(games.IllegalMove, match="game is over"):
        state.play(3)
    with pytest.raises(games.IllegalMove, match="game is over"):
        GAME.parse_moves("12121214")


def test_moves_outside_the_board_are_illegal() -> None:
    with pytest.raises(games.IllegalMove, match="7"):
        GAME.initial().play(7)
    with pytest.raises(games.IllegalMove, match="-1"):
        GAME.initial().play(-1)


@pytest.mark.parametrize("text, bad", [("44a3", "'a'"), ("8", "'8'"), ("0", "'0'"), ("4-4", "'-'")])
def test_bad_characters_are_invalid_notation_naming_them(text: str, bad: str) -> None:
    with pytest.raises(games.InvalidNotation, match=bad):
        GAME.parse_moves(text)


def test_a_single_move_must_be_one_column_digit() -> None:
    for text in ("", "12", "x", "0", "8"):
        with pytest.raises(games.InvalidNotation, match="bad column"):
            GAME.parse_move(GAME.initial(), text)
    assert GAME.parse_move(GAME.initial(), "4") == 3
    assert GAME.format_move(3) == "4"


def test_positions_are_pons_move_strings_and_round_trip() -> None:
    assert GAME.parse_position("") == GAME.initial()
    state = GAME.parse_position("4453 -3")  # a line of Pons' files: the first field counts
    assert state == GAME.parse_moves("4453")
    assert GAME.format_position(state) == "4453"
    assert GAME.format_moves([3, 3, 4, 2]) == "4453"
    assert GAME.parse_position(GAME.format_position(state)).key() == state.key()


def test_bad_input_leaves_the_state_unchanged() -> None:
    state = GAME.parse_moves("111111")
    key = state.key()
    with pytest.raises(games.IllegalMove):
        state.play(0)
    with pytest.raises(games.InvalidNotation):
        GAME.parse_moves("2x", start=state)
    assert state.key() == key and state.ply == 6


def test_cells_read_row_by_row_from_the_top() -> None:
    cells = GAME.cells(GAME.parse_moves("44"))
    assert cells[5 * 7 + 3] == 0  # bottom row, centre: the first player's stone
    assert cells[4 * 7 + 3] == 1  # on top of it, the second player's
    assert sum(c is not None for c in cells) == 2
