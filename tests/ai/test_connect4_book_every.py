"""The book's second file: every position up to ``book.EVERY_PLY``, so the analysis board
answers every move of the first plies of any game from the shipped data, with no proof."""

from __future__ import annotations

from pathlib import Path

import pytest

import ai
from ai import review
from ai.analyse import analyse
from ai.connect4 import book
from ai.connect4.book_build import build_every, every_position, from_children
from ai.connect4.engine import clear, value_at_most
from ai.limits import Limits
from games.connect4 import GAME

CHEAP = ("363",)
"""Positions of the file the solver proves in seconds (the build's log says which)."""


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("connect4")


def _no_proof() -> None:
    raise AssertionError("a proof was started: the shipped data should have answered")


def test_every_move_of_the_first_plies_is_valued_from_the_shipped_data_without_a_proof(
) -> None:
    for ply, layer in enumerate(every_position(book.EVERY_PLY - 1)):
        for state in layer:
            values = review.analyse(state, check=_no_proof)
            assert len(values) == len(state.legal_moves())
            assert all(v.exact and v.value is not None for v in values), (
                GAME.format_moves(state.moves))
            assert values[0].value == book.lookup(state)[1], ply  # type: ignore[index]


def test_the_command_line_answers_every_position_up_to_the_last_ply_with_no_node_searched(
) -> None:
    for layer in every_position(book.EVERY_PLY):
        for state in layer:
            answer = analyse(GAME, GAME.format_moves(state.moves), Limits(exact=True))
            assert answer["exact"] and answer["nodes"] == 0, answer


def test_each_shipped_value_is_the_negamax_of_its_childrens_from_either_file() -> None:
    # The two files were solved apart: book.txt's early positions by the book's builder,
    # the second file's deepest ply by --every-ply. Each position whose children are held
    # must agree with them, so every ply-3 solve is checked against an independent one.
    held = {**book.load.__wrapped__(book.EVERY_FILE), **book.load()}
    checked = 0
    for layer in every_position(book.EVERY_PLY - 1):
        for state in layer:
            found = from_children(state, held)
            assert found is not None
            assert found[1] == book.lookup(state)[1], GAME.format_moves(state.moves)  # type: ignore[index]
            checked += 1
    assert checked == sum(len(layer) for layer in every_position(book.EVERY_PLY - 1))


@pytest.mark.parametrize("moves", CHEAP)
def test_a_shipped_value_is_the_solvers(moves: str) -> None:
    state = GAME.parse_moves(moves)
    score = book.lookup(state)[1]  # type: ignore[index]
    clear()  # a proof of its own, not one a builder left in the table
    assert value_at_most(state, score) and not value_at_most(state, score - 1)


def test_the_builder_writes_a_ply_from_its_children_and_resumes_without_repeating(
    tmp_path: Path,
) -> None:
    held = book.load()
    out = tmp_path / "every.txt"
    # Every ply-1 position is in book.txt: leave two out and they come from their children
    # (the shipped files hold all of them), no proof needed.
    twins = every_position(1)[1][:2]
    keys = [book.canonical(s)[0] for s in twins]
    full = {**book.load.__wrapped__(book.EVERY_FILE), **held}
    assert all(from_children(s, full) is not None for s in twins)
    written = build_every(out, 1, report=open(tmp_path / "log", "w"),  # noqa: SIM115
                          held={k: v for k, v in full.items() if k not in keys})
    assert written == 2
    assert {k: v for k, v in book.load.__wrapped__(out).items()} == {k: held[k] for k in keys}
    again = build_every(out, 1, report=open(tmp_path / "log", "w"),  # noqa: SIM115
                        held={k: v for k, v in full.items() if k not in keys})
    assert again == 0
