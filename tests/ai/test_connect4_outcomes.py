"""The book's outcomes file: win, draw or loss and a move that keeps it, for the plies where
the weak solve does not fit the expert's clock, so that the expert keeps the game's value
there too (the builder checked against Pons' scores, the engine's use with a short clock)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import ai
from ai.connect4 import book, engine
from ai.connect4.book_build import build_outcomes, derive_outcomes, every_position, verify_outcomes
from ai.limits import Limits
from games.connect4 import GAME
from games.connect4.rules import Connect4State


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("connect4")


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


def mirrored(state: Connect4State) -> Connect4State:
    return GAME.parse_moves("".join(str(8 - int(c)) for c in GAME.format_moves(state.moves)))


def keeps(state: Connect4State, column: int, outcome: int) -> bool:
    """Whether playing ``column`` keeps ``outcome`` for the side to move (weak solve)."""
    child = state.play(column)
    if child.is_over():
        return (0 if child.winner() is None else 1) == outcome
    found = engine.outcome_value(child, from_book=False)
    assert found is not None
    return -found[0] == outcome


def test_the_builder_gives_pons_outcomes_with_a_keeping_move_and_resumes(
    shared_data: Path, tmp_path: Path
) -> None:
    lines = (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()[:34]
    lines = lines[:10] + lines[28:34]  # its first two draws are lines 29 and 34
    samples = [(GAME.parse_position(moves), int(score))
               for moves, score in (line.split() for line in lines)]
    out = tmp_path / "outcomes.txt"
    report = io.StringIO()
    states = [state for state, _ in samples]
    assert build_outcomes(out, states, report=report) == len(samples)
    assert build_outcomes(out, states, report=report) == 0  # resumed: nothing left to do
    outcomes = set()
    for state, score in samples:
        where = GAME.format_position(state)
        entry = book.outcome(state, out)
        assert entry is not None and entry[1] == sign(score), where
        column, outcome = entry
        outcomes.add(outcome)
        if outcome >= 0:
            assert keeps(state, column, outcome), where
        # One line serves a position and its mirror image.
        assert book.outcome(mirrored(state), out) == (6 - column, outcome), where
    assert outcomes == {-1, 0, 1}


def test_a_position_whose_children_are_all_held_is_derived_from_them_without_a_search(
    shared_data: Path, tmp_path: Path
) -> None:
    lines = (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()
    samples = [(GAME.parse_position(moves), int(score))
               for moves, score in (line.split() for line in (lines[0], lines[28], lines[1]))]
    out = tmp_path / "outcomes.txt"
    report = io.StringIO()
    # The children of the first two (a win and a draw) are solved; the third's are not.
    children = [s.play(col) for s, _ in samples[:2] for col in s.legal_moves()]
    build_outcomes(out, children, report=report)
    states = [state for state, _ in samples]
    assert derive_outcomes(out, states, report=report) == 2
    assert derive_outcomes(out, states, report=report) == 0
    for state, score in samples[:2]:
        entry = book.outcome(state, out)
        assert entry is not None and entry[1] == sign(score), GAME.format_position(state)
        assert keeps(state, *entry)
    assert book.outcome(samples[2][0], out) is None


@pytest.mark.slow
def test_with_its_outcome_on_file_a_clock_too_short_to_prove_still_keeps_the_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_c4_outcomes: None,
) -> None:
    # The weak solve proves this win in about a second; the clock gives a tenth of that.
    state = GAME.parse_moves("64171")
    short = Limits(soft_time=0.05, hard_time=0.1)
    engine.clear()
    assert book.lookup(state) is None and ai.best(state, short).outcome is None
    out = tmp_path / "outcomes.txt"
    assert build_outcomes(out, [state], report=io.StringIO()) == 1
    monkeypatch.setattr(book, "OUTCOMES_FILE", out)
    engine.clear()
    answer = ai.best(state, short)
    assert answer.outcome == 1 and keeps(state, answer.move, 1)
    assert engine.outcome_value(state)[0] == 1  # type: ignore[index]


@pytest.mark.slow
def test_the_shipped_outcomes_are_of_the_ply_they_are_built_for_and_check_out() -> None:
    entries = book.load_outcomes(book.OUTCOMES_FILE)
    if not entries:
        pytest.skip("no outcomes shipped yet")
    layers = every_position(book.OUTCOMES_PLY + 1)

    def keys(plies: range) -> set[int]:
        return {book.canonical(s)[0] for ply in plies for s in layers[ply]}

    complete = keys(range(book.EVERY_PLY + 1, book.OUTCOMES_PLY + 1))
    exact = set(book._shipped())
    assert complete - exact <= set(entries), "a position of the complete plies is missing"
    assert set(entries) <= complete | keys(range(book.OUTCOMES_PLY + 1, book.OUTCOMES_PLY + 2))
    assert not set(entries) & exact
    # One entry solved again from an empty table (a ply-7 weak solve takes a second or so).
    assert verify_outcomes(book.OUTCOMES_FILE, book.OUTCOMES_PLY, count=1, seed=3) == 0
