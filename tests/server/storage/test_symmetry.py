"""Canonical keys: every symmetric image of a position shares one key, and a move carried
into the canonical orientation and back lands on the matching square."""

from __future__ import annotations

import random

import pytest

from games.othello.symmetry import othello_transform
from server.storage.symmetry import (
    bitboards,
    canonical,
    move_from_canonical,
    move_to_canonical,
)

SQUARES = [f"{c}{r}" for r in "12345678" for c in "abcdefgh"]


def image_square(square: str, symmetry: int) -> str:
    """The square's image, straight from the definition (transpose, flip rows, flip columns)."""
    row, col = int(square[1]) - 1, ord(square[0]) - ord("a")
    if symmetry & 1:
        row, col = col, row
    if symmetry & 2:
        row = 7 - row
    if symmetry & 4:
        col = 7 - col
    return f"{chr(ord('a') + col)}{row + 1}"


def othello_cells(black: set[str], white: set[str]) -> list[int | None]:
    return [0 if sq in black else 1 if sq in white else None for sq in SQUARES]


def image_cells(cells: list[int | None], symmetry: int) -> list[int | None]:
    out: list[int | None] = [None] * 64
    for i, owner in enumerate(cells):
        out[SQUARES.index(image_square(SQUARES[i], symmetry))] = owner
    return out


START_BLACK, START_WHITE = {"e4", "d5"}, {"d4", "e5"}


@pytest.mark.parametrize("symmetry", range(8))
def test_othello_bitboard_transforms_move_every_square_where_the_definition_says(
    symmetry: int,
) -> None:
    for i, square in enumerate(SQUARES):
        assert othello_transform(1 << i, symmetry) == 1 << SQUARES.index(
            image_square(square, symmetry)
        )


def test_the_eight_othello_transforms_are_distinct() -> None:
    rng = random.Random(5)
    x = rng.getrandbits(64)
    assert len({othello_transform(x, s) for s in range(8)}) == 8


@pytest.mark.parametrize("symmetry", range(8))
def test_every_symmetric_image_of_an_othello_position_has_one_key(symmetry: int) -> None:
    # After f5 d6 c3: no symmetry of its own, so every image is a different board.
    black = {"e4", "f5", "e5", "c3"}
    white = {"d4", "d5", "d6"}
    cells = othello_cells(black, white)
    assert canonical("othello", image_cells(cells, symmetry), 1).key == canonical(
        "othello", cells, 1
    ).key


def test_othello_positions_that_are_not_symmetric_get_different_keys() -> None:
    start = othello_cells(START_BLACK, START_WHITE)
    after_f5 = othello_cells(START_BLACK | {"f5", "e5"}, START_WHITE - {"e5"})
    assert canonical("othello", start, 0).key != canonical("othello", after_f5, 1).key


def test_a_key_is_relative_to_the_side_to_move() -> None:
    cells = othello_cells(START_BLACK | {"f5", "e5"}, START_WHITE - {"e5"})
    swapped = [None if c is None else 1 - c for c in cells]
    assert canonical("othello", cells, 1).key == canonical("othello", swapped, 0).key
    assert canonical("othello", cells, 1).key != canonical("othello", cells, 0).key


@pytest.mark.parametrize("symmetry", range(8))
def test_an_othello_move_stored_canonically_comes_back_on_the_matching_square(
    symmetry: int,
) -> None:
    black = {"e4", "f5", "e5", "c3"}
    white = {"d4", "d5", "d6"}
    asked = canonical("othello", image_cells(othello_cells(black, white), symmetry), 1)
    original = canonical("othello", othello_cells(black, white), 1)
    # The best move was found in the original orientation ("c5"), stored canonically ...
    stored = move_to_canonical("othello", "c5", original.symmetry)
    # ... and read back from the image, where the same move is c5's image.
    assert move_from_canonical("othello", stored, asked.symmetry) == image_square("c5", symmetry)


def test_a_pass_is_the_same_in_every_orientation() -> None:
    assert {move_from_canonical("othello", "pass", s) for s in range(8)} == {"pass"}


def test_connect_four_mirror_images_share_a_key_and_mirror_their_columns() -> None:
    def drop(columns: str) -> list[int | None]:
        cells: list[int | None] = [None] * 42
        heights = [0] * 7
        for i, ch in enumerate(columns):
            col = int(ch) - 1
            cells[(5 - heights[col]) * 7 + col] = i % 2
            heights[col] += 1
        return cells

    left, right = canonical("connect4", drop("1123"), 0), canonical("connect4", drop("7765"), 0)
    assert left.key == right.key and left.symmetry != right.symmetry
    stored = move_to_canonical("connect4", "2", left.symmetry)
    assert move_from_canonical("connect4", stored, right.symmetry) == "6"
    assert canonical("connect4", drop("1123"), 0).key != canonical("connect4", drop("1124"), 0).key


def test_bitboards_split_cells_by_the_side_to_move() -> None:
    assert bitboards([0, 1, None, 0], to_move=0) == (0b1001, 0b0010)
    assert bitboards([0, 1, None, 0], to_move=1) == (0b0010, 0b1001)


def test_bad_moves_and_unknown_games_are_refused() -> None:
    with pytest.raises(ValueError):
        move_to_canonical("othello", "z9", 1)
    with pytest.raises(ValueError):
        move_to_canonical("connect4", "8", 1)
    with pytest.raises(ValueError):
        canonical("chess", [None] * 64, 0)
