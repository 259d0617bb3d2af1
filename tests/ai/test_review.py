"""Game reviews and the analysis board against independent exact solves.

The truth here is the solvers run directly on each position with fresh tables (and, for
Connect Four, Pascal Pons' benchmark scores), never the review's own values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import games
from ai import review, tt
from ai.connect4 import book, solver
from ai.connect4 import engine as c4_engine
from ai.othello import engine as othello_engine
from games.connect4 import GAME as C4
from games.connect4.rules import Connect4State
from games.othello import PASS

DATA = Path(__file__).resolve().parents[1] / "data"

C4_GAME = "555422433323451176441511524332"
"""A recorded game: the first 25 plies are a position of Pons' middle-game set (Test_L2_R1,
score 4 for the side to move); then both sides blundered, and Yellow won."""

OTHELLO_GAME = ("d3c3c4e3f2e2b2a1f3b4d1e1f1g2h1f5d2g1f4c5g3c2e6f6d6d7e7c6d8e8b6h2h3g5g4h5f7"
                "c8b5f8h4b3h6b7a8g6a7b8g8c7a5a6h7a3a4g7h8a2b1c1")
"""A 60-ply game between a shallow search and random moves, passes inferred."""


def pons_truth(state: games.State) -> int:
    """The exact value of a Connect Four position from its side to move, solved from an
    empty table (or read off a finished game)."""
    if state.is_over():
        result = state.result()
        return result if state.to_move == 0 else -result
    current, mask = np.uint64(state.current), np.uint64(state.mask)  # type: ignore[attr-defined]
    cells, scores = solver.new_buffers()
    return int(solver.solve(current, mask, tt.new_table(16), 0, solver.new_control(),
                            np.zeros(1, dtype=np.int64), cells, scores))


def connect4_verdict(before: int, after: int) -> str:
    """The documented Connect Four verdicts, written out again: by the outcome, then units."""
    if before == after:
        return "best"
    drop = (before > 0) - (before < 0) - ((after > 0) - (after < 0))
    if drop == 2:
        return "blunder"
    if drop == 1:
        return "mistake"
    return "good" if before - after <= 2 else "inaccuracy"


def test_the_recorded_game_starts_from_a_position_of_pons_set() -> None:
    line = (DATA / "connect4" / "Test_L2_R1").read_text().splitlines()[0].split()
    assert C4_GAME.startswith(line[0]) and int(line[1]) == 4
    game = games.load("connect4")
    assert pons_truth(game.parse_moves(line[0])) == 4


@pytest.fixture(scope="module")
def c4_review() -> review.Review:
    # One second a position: the first plies, off the book's main lines, may stay unvalued
    # (today the book's later files value every one of them; the tests allow either).
    return review.review("connect4", [int(c) - 1 for c in C4_GAME], solve_seconds=1.0)


@pytest.mark.slow
def test_a_connect4_review_gives_the_values_and_verdicts_of_separate_exact_solves(
    c4_review: review.Review,
) -> None:
    game = games.load("connect4")
    start = game.parse_moves(C4_GAME[:20])
    found = c4_review
    assert len(found.moves) == len(C4_GAME)
    state = start
    for mv in found.moves[20:]:
        child = state.play(mv.move)
        before, after = pons_truth(state), -pons_truth(child)
        assert (mv.before, mv.after, mv.exact) == (before, after, True), mv
        assert mv.verdict == connect4_verdict(before, after), mv
        assert mv.best is not None and -pons_truth(state.play(mv.best)) == before
        state = child
    for mv in found.moves[:20]:  # early plies off the book's lines may take the solver long
        assert (mv.verdict is None) == (mv.before is None or mv.after is None)
        assert mv.verdict is None or mv.exact
    assert {m.verdict for m in found.moves} >= {"best", "blunder"}, "the game has both"


def test_review_values_for_the_chart_are_from_the_first_players_side(
    c4_review: review.Review,
) -> None:
    game = games.load("connect4")
    found = c4_review
    state = game.parse_moves(C4_GAME[:25])
    assert found.values[25] == (4 if state.to_move == 0 else -4)
    final = game.parse_moves(C4_GAME)
    assert found.values[-1] == final.result() and found.values_exact[-1]


@pytest.mark.parametrize(("ply", "value", "mover", "text"), [
    (0, 1, True, "win in 21"),  # the empty board: the first player wins with its last stone
    (5, -18, True, "loss in 1"),
    (6, 18, False, "win in 1"),
    (7, 19, False, "won"),
    (10, 0, True, "draw"),
])
def test_connect4_values_read_as_wins_and_losses_in_own_moves(ply: int, value: int,
                                                                mover: bool, text: str) -> None:
    assert review.label("connect4", ply, value, True, mover=mover) == text


@pytest.mark.slow
def test_an_othello_review_is_exact_near_the_end_as_a_separate_solve_says() -> None:
    game = games.load("othello")
    state = game.initial()
    states = [state]
    moves = []
    for text in (OTHELLO_GAME[i:i + 2] for i in range(0, len(OTHELLO_GAME), 2)):
        while state.legal_moves() == [PASS]:
            moves.append(state.legal_moves()[0])
            state = state.play(moves[-1])
            states.append(state)
        moves.append(game.parse_move(state, text))
        state = state.play(moves[-1])
        states.append(state)
    found = review.review("othello", moves)
    checked = 0
    for mv in found.moves:
        here, there = states[mv.ply], states[mv.ply + 1]
        empties = 64 - (here.mover_boards()[0] | here.mover_boards()[1]).bit_count()
        if empties > 14:
            assert not mv.exact or empties <= review.OTHELLO_EXACT_EMPTIES
            continue
        truth_before = othello_engine.exact_value(here)[0]
        truth_after = (-othello_engine.exact_value(there)[0] if not there.is_over()
                       else (there.result() if mv.seat == 0 else -there.result()))
        if len(here.legal_moves()) == 1:
            truth_before = truth_after
        assert (mv.before, mv.after, mv.exact) == (truth_before, truth_after, True), mv
        loss = truth_before - truth_after
        expected = ("best" if loss == 0 else "good" if loss <= 2 else "inaccuracy"
                    if loss <= 6 else "mistake" if loss <= 12 else "blunder")
        assert mv.verdict == expected
        checked += 1
    assert checked >= 14
    assert all(m.verdict is not None for m in found.moves)


@pytest.mark.slow
def test_the_analysis_board_gives_every_connect4_move_its_exact_value() -> None:
    # The multi-root search once mixed units here and left out moves that lose at once.
    state = games.load("connect4").parse_moves("44532671444")
    values = review.analyse(state)
    assert sorted(v.move for v in values) == state.legal_moves()
    for v in values:
        assert v.exact and v.value == -pons_truth(state.play(v.move)), v
    assert [v.value for v in values] == sorted((v.value for v in values), reverse=True)


def test_an_analysis_move_whose_proof_outlasts_its_seconds_is_left_unvalued() -> None:
    # Off the book's lines five plies in: every reply's proof takes minutes.
    state = games.load("connect4").parse_moves("11771")
    values = review.analyse(state, seconds=0.05)
    assert sorted(v.move for v in values) == state.legal_moves()
    assert all(v.value is None and not v.exact for v in values), values


def _after_the_books_move(line: str) -> tuple[Connect4State, int, int]:
    """A position the book holds, its best move and score; the position that move leads to is
    in neither book file and far too hard to prove in a hundredth of a second."""
    parent = C4.parse_moves(line)
    found = book.lookup(parent)
    assert found is not None
    best, score = found
    child = parent.play(best)
    assert book.lookup(child) is None and c4_engine.exact_value(child, 0.01) is None
    return parent, best, score


def test_the_position_a_known_best_move_leads_to_is_reviewed_without_a_proof() -> None:
    # Every ply-4 position is in the book's second file; "1177"'s best move leads five plies
    # in, off both files: its value is the book's, negated, with no proof.
    parent, best, score = _after_the_books_move("1177")
    found = review.review("connect4", [*parent.moves, best], solve_seconds=0.01)
    assert all(found.values_exact), found.values_exact
    assert found.values[4] == found.values[5] == score  # the first player's side both times
    last = found.moves[-1]
    assert (last.before, last.after, last.loss, last.verdict) == (score, score, 0, "best")


def test_the_analysis_board_values_the_known_best_move_without_a_proof() -> None:
    parent, best, score = _after_the_books_move("1177")
    values = review.analyse(parent, seconds=0.01)
    assert review.MoveValue(best, score, True) in values
    assert all(v.value is None or v.value <= score for v in values), values


def test_the_first_hard_position_gets_the_time_the_easy_ones_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Five and six plies in, off both book files: neither proves in a fraction of a second,
    # so each proof runs to the seconds it was given (recorded on the way to the solver).
    given: list[float] = []

    def spy(name: str) -> None:
        real = getattr(c4_engine, name)

        def recorded(state: games.State, *args: object) -> object:
            seconds = args[1] if name == "value_at_most" else args[0]  # after the bound
            assert isinstance(seconds, float)
            given.append(seconds)
            return real(state, *args)
        monkeypatch.setattr(c4_engine, name, recorded)

    spy("exact_value")
    spy("value_at_most")
    solve = 0.2
    found = review.review("connect4", [int(c) - 1 for c in "117712"], solve_seconds=solve)
    assert found.values_exact[:5] == (True,) * 5 and not any(found.values_exact[5:])
    assert len(given) == 2, given  # plies 6 and 5; the first five are the book's
    assert review.REVIEW_SHARE * solve - 0.05 < given[0] <= review.REVIEW_SHARE * solve
    assert given[1] == solve, "the spare time was spent: the next proof gets its own seconds"


@pytest.mark.slow
def test_the_analysis_board_solves_othello_moves_near_the_end() -> None:
    line = (DATA / "othello" / "ffo_40_59.obf").read_text().splitlines()[0]
    position, _, answers = line.partition(";")
    state = games.load("othello").parse_position(position.strip())
    values = review.analyse(state)
    game = games.load("othello")
    truth = {}
    for answer in answers.split(";"):
        if answer.strip():
            square, score = answer.strip().split(":")
            truth[square.lower()] = int(score)
    assert all(v.exact for v in values)
    assert {game.format_move(v.move): v.value for v in values} == truth


def test_analysing_a_finished_game_is_refused() -> None:
    state = games.load("connect4").parse_moves("1212121")
    with pytest.raises(ValueError):
        review.analyse(state)
