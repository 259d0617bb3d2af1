"""Othello reviews and analyses agree with the board: the opening book's values come first,
symmetric moves carry one value (in one position and across symmetric positions, whatever
the engine's table kept from earlier searches), and a move's loss is measured against its
siblings' values from the same search, so a book opening's first move is never marked."""

from __future__ import annotations

import pytest

import ai
import games
from ai import review
from ai.limits import Limits
from ai.othello import book
from games.base import State

MARKED = ("inaccuracy", "mistake", "blunder")
FIRST_MOVES = ("d3", "c4", "f5", "e6")


def d3_game(plies: int = 24) -> list[int]:
    """A game opened with d3, went on by a 4-ply search for both sides (as against a level)."""
    game = games.load("othello")
    state = game.initial()
    moves = [game.parse_move(state, "d3")]
    state = state.play(moves[0])
    while len(moves) < plies and not state.is_over():
        move = ai.best(state, Limits(depth=4)).move
        moves.append(move)
        state = state.play(move)
    return moves


def after(texts: list[str]) -> State:
    game = games.load("othello")
    state = game.initial()
    for text in texts:
        state = state.play(game.parse_move(state, text))
    return state


def values(state: State) -> dict[str, int | None]:
    game = games.load("othello")
    return {game.format_move(v.move): v.value for v in review.analyse(state)}


@pytest.fixture(scope="module")
def reviewed() -> review.Review:
    """The d3 game's review: it also fills the engine's table with its own searches, as a
    worker's is after a review, before the analyses below."""
    return review.review("othello", d3_game())


@pytest.mark.slow
def test_a_d3_openings_first_move_is_unmarked_and_valued_by_the_book(
        reviewed: review.Review) -> None:
    first = reviewed.moves[0]
    held = book.lookup(after([]))
    assert held is not None
    assert first.book and first.verdict not in MARKED and first.loss == 0
    assert first.before == first.after == dict(held)[first.move]
    assert review.label("othello", 0, first.after, first.exact, book=first.book).endswith(
        " book")
    for move in reviewed.moves:  # every book move of the review: within the book's margin
        if move.book:
            assert move.loss is not None and move.loss <= book.MARGIN
            assert move.verdict not in MARKED


def test_the_four_first_moves_carry_one_value_after_a_review(
        reviewed: review.Review) -> None:
    start = values(after([]))
    assert set(start) == set(FIRST_MOVES)
    assert len(set(start.values())) == 1, start
    assert start["d3"] == reviewed.values[0]  # the review's start agrees with the analysis


def test_mirrored_positions_past_the_book_give_mirrored_replies_one_value(
        reviewed: review.Review) -> None:
    game = games.load("othello")
    line = ["d3", "c5", "e6", "e3", "d6", "c3", "d2", "c1", "b6", "e7"]  # the review's
    mine = values(after(line))
    checked = 0
    for symmetry in range(1, game.symmetries):
        if {game.transform_move(m, symmetry) for m in FIRST_MOVES} != set(FIRST_MOVES):
            continue  # it maps the start to its colour-swapped twin: no game's mirror
        mirrored = [game.transform_move(m, symmetry) for m in line]
        theirs = values(after(mirrored))
        assert {game.transform_move(m, symmetry): v for m, v in mine.items()} == theirs, (
            symmetry, mine, theirs)
        checked += 1
    assert checked == 3  # the start's own symmetries besides the identity
