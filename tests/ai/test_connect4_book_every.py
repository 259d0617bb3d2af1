"""The book's second file: every position up to ``book.EVERY_PLY``, so the analysis board
answers every move of the first plies of any game from the shipped data, with no proof."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

import ai
from ai import review
from ai.analyse import analyse
from ai.connect4 import book
from ai.connect4.book_build import build_every, every_position, from_children
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.rules import Connect4State

HELD = {**book.load.__wrapped__(book.EVERY_FILE), **book.load()}
COVERED = [s for layer in every_position(book.EVERY_PLY - 1) for s in layer
           if review.analyse_known(s) is not None]
"""The positions before the last ply whose every move the shipped files value."""


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("connect4")


def _moves(state: Connect4State) -> str:
    return GAME.format_moves(state.moves) or "-"


def test_the_first_two_plies_are_covered_in_full() -> None:
    # Every move of the empty board and of each first move: the plies the book's builder
    # shipped in full (the second file's ply-2 entries).
    covered = {book.canonical(s)[0] for s in COVERED}
    for layer in every_position(1):
        for state in layer:
            assert book.canonical(state)[0] in covered, _moves(state)


def test_every_position_before_the_last_ply_is_covered() -> None:
    missing = [_moves(s) for layer in every_position(book.EVERY_PLY - 1) for s in layer
               if review.analyse_known(s) is None]
    assert not missing, f"resume book_build --every-ply {book.EVERY_PLY}: {missing}"


def test_covered_positions_are_analysed_from_the_shipped_data_without_a_proof() -> None:
    # ``check`` is called before each proof and once at the end; the budget is far too short
    # for any proof of these plies (the solver stops within its first few thousand nodes).
    assert len(COVERED) >= 5
    for state in COVERED:
        calls: list[int] = []
        values = review.analyse(state, check=functools.partial(calls.append, 1), seconds=1e-9)
        assert calls == [1], f"{_moves(state)}: a proof was started"
        assert len(values) == len(state.legal_moves())
        assert all(v.exact and v.value is not None for v in values), _moves(state)
        assert values == review.analyse_known(state)
        assert values[0].value == book.lookup(state)[1], _moves(state)  # type: ignore[index]


def test_the_command_line_answers_every_held_early_position_with_no_node_searched() -> None:
    for layer in every_position(book.EVERY_PLY):
        for state in layer:
            if book.canonical(state)[0] not in HELD:
                continue
            answer = analyse(GAME, _moves(state).strip("-"), Limits(exact=True))
            assert answer["exact"] and answer["nodes"] == 0, answer


def test_each_value_agrees_with_its_childrens_from_either_file() -> None:
    # The files were solved apart: book.txt by the book's builder, the second by
    # --every-ply. A position whose children are all held must be their negamax: book.txt's
    # ply-1 values check the second file's ply-2 solves, and so on.
    checked = 0
    for layer in every_position(book.EVERY_PLY - 1):
        for state in layer:
            found = from_children(state, HELD)
            if found is None:
                continue
            assert found[1] == book.lookup(state)[1], _moves(state)  # type: ignore[index]
            checked += 1
    assert checked >= 5


def test_the_builder_takes_a_position_from_its_children_and_resumes_without_repeating(
    tmp_path: Path,
) -> None:
    # Leave two positions whose children the shipped files hold out of what is held: the
    # builder writes them from their children (no proof), and nothing the second time.
    layers = every_position(2)
    twins = [s for s in layers[1] + layers[2] if from_children(s, HELD) is not None][:2]
    keys = [book.canonical(s)[0] for s in twins]
    held = {k: v for k, v in HELD.items() if k not in keys}
    log = tmp_path / "log"
    out = tmp_path / "every.txt"
    with log.open("w") as report:
        written = build_every(out, 2, report=report, held=held, solve=False)
        assert build_every(out, 2, report=report, held=held, solve=False) == 0
    entries = book.load.__wrapped__(out)
    assert len(entries) == written >= 2  # and any the build in progress has not reached
    assert all(entries[k] == HELD[k] for k in keys)
    assert log.read_text().count("children") == written
