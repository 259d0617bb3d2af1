"""The Othello engine against the textbook searches and the FFO endgame suite.

The compiled alpha-beta must give exactly the plain negamax value at the same depth with the
same evaluation, and the exact solver exactly the negamax value of the game played to the end:
below ``END_TT`` empties (no table) against plain negamax, above it (the endgame table on)
against textbook alpha-beta, the solver with its table off, and the FFO suite's scores. FFO
answers come from the shared data, not from this engine.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import ai
from ai import reference
from ai.cached import LOWER, pv_results, usable_answer
from ai.limits import Limits
from ai.othello import engine
from ai.othello.alphabeta import POLL
from ai.othello.engine import exact_value, fixed_depth_value, leaf_value
from ai.othello.weights import END_TT
from games.base import State
from games.othello import GAME, PASS, OthelloState


def final_value(state: State) -> int:
    """Exact leaf value for the side to move of a finished game (disc difference)."""
    result = state.result()
    return result if state.to_move == 0 else -result


def random_position(rng: random.Random, plies: int) -> OthelloState:
    """A position ``plies`` random moves into a game (it may have ended early)."""
    state = GAME.initial()
    for _ in range(plies):
        if state.is_over():
            break
        state = state.play(rng.choice(state.legal_moves()))
    return state


def with_empties(rng: random.Random, empties: int) -> OthelloState:
    """A random position with exactly ``empties`` empty squares that is not over."""
    while True:
        state = GAME.initial()
        while 64 - (state.black | state.white).bit_count() > empties and not state.is_over():
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            return state


def ffo(shared_data: Path, number: int) -> tuple[OthelloState, list[tuple[str, int]]]:
    """FFO position ``number`` and its moves with their exact scores, best first."""
    line = (shared_data / "othello" / "ffo_40_59.obf").read_text().splitlines()[number - 40]
    board, answers = line.split(";", 1)
    scored = []
    for answer in answers.split(";"):
        if answer.strip():
            move, score = answer.strip().split(":")
            scored.append((move.lower(), int(score)))
    return GAME.parse_position(board), scored


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    ai.warm_up("othello")


@pytest.mark.slow
@pytest.mark.parametrize("evaluation", ["patterns", "classic"])
def test_compiled_alpha_beta_equals_plain_negamax_at_the_same_depth(evaluation: str) -> None:
    rng = random.Random(2026)
    checked = 0
    while checked < 250:
        state = random_position(rng, rng.randrange(0, 60))
        if state.is_over():
            continue
        depth = rng.choice((1, 2, 3))
        expected = reference.negamax(state, depth, lambda s: leaf_value(s, evaluation))
        assert fixed_depth_value(state, depth, evaluation=evaluation) == expected, (
            GAME.format_position(state))
        checked += 1


def test_compiled_alpha_beta_equals_two_function_minimax_through_passes() -> None:
    # Late positions pass and end often; minimax sees each pass as a ply, as the engine does.
    rng = random.Random(7)
    checked = 0
    while checked < 60:
        state = random_position(rng, rng.randrange(44, 60))
        if state.is_over():
            continue
        expected = reference.minimax(state, 3, leaf_value)
        assert fixed_depth_value(state, 3) == expected, GAME.format_position(state)
        checked += 1


def test_the_exact_solver_below_the_table_equals_plain_negamax_to_the_end() -> None:
    # 4..8 empties: every node is below END_TT, so these check the table-free shallow solver
    # (unrolled last moves, parity order, passes); the table is checked further down.
    assert 8 < END_TT
    rng = random.Random(11)
    for i in range(40):
        state = with_empties(rng, 4 + i % 5)  # 4..8 empties
        expected = reference.negamax(state, 64, final_value)
        last = ai.best(state, Limits(exact=True))
        assert last.exact and last.score == expected, GAME.format_position(state)
        assert last.move in state.legal_moves()


@pytest.mark.slow
def test_exact_solves_of_ten_empties_equal_textbook_alpha_beta() -> None:
    rng = random.Random(13)
    for _ in range(6):
        state = with_empties(rng, 10)
        expected = reference.alphabeta(state, 64, final_value)
        assert ai.best(state, Limits(exact=True)).score == expected


@pytest.mark.slow
def test_solves_through_the_endgame_table_equal_textbook_alpha_beta() -> None:
    # 11 empties: the root's children and grandchildren have END_TT or more empties, so they
    # read and write the endgame table; the textbook search has no table at all.
    assert 11 > END_TT + 1
    rng = random.Random(29)
    for _ in range(4):
        state = with_empties(rng, 11)
        expected = reference.alphabeta(state, 64, final_value)
        assert exact_value(state)[0] == expected, GAME.format_position(state)
        assert ai.best(state, Limits(exact=True)).score == expected


@pytest.mark.slow
def test_the_endgame_table_changes_the_work_but_never_an_exact_score() -> None:
    # 12..18 empties, too many for the textbook searches: the reference is the same solver
    # with the table off. The engine's own search (its per-thread table kept from one
    # position to the next) must agree too. The table must really be in play: it saves nodes.
    rng = random.Random(31)
    nodes_with = nodes_without = 0
    for i in range(21):
        state = with_empties(rng, 12 + i % 7)
        with_table, with_nodes = exact_value(state, use_tt=True)
        without_table, without_nodes = exact_value(state, use_tt=False)
        assert with_table == without_table, GAME.format_position(state)
        assert ai.best(state, Limits(exact=True)).score == without_table
        nodes_with += with_nodes
        nodes_without += without_nodes
    assert nodes_with < nodes_without


@pytest.mark.slow
def test_ffo_40_root_moves_get_the_suites_scores_through_the_table(shared_data: Path) -> None:
    # 20 empties: most of the solve runs through the table. The suite scores every move.
    state, scored = ffo(shared_data, 40)
    last = ai.best(state, Limits(exact=True, multipv=3))
    solved = {GAME.format_move(move): score for move, score in last.root_scores[:3]}
    assert solved == dict(scored[:3]) == {"a2": 38, "c7": 36, "d8": 34}


@pytest.mark.slow
def test_every_root_move_gets_its_exact_score_when_all_are_asked_for() -> None:
    rng = random.Random(17)
    for _ in range(8):
        state = with_empties(rng, 8)
        legal = state.legal_moves()
        last = ai.best(state, Limits(exact=True, multipv=len(legal)))
        scores = dict(last.root_scores)
        assert sorted(scores) == sorted(legal)
        for move in legal:
            assert scores[move] == -reference.negamax(state.play(move), 64, final_value)
        assert last.score == max(scores.values()) == scores[last.move]


def test_ffo_40_children_are_solved_to_the_suites_scores(shared_data: Path) -> None:
    state, scored = ffo(shared_data, 40)
    assert scored[0] == ("a2", 38)
    for move, score in scored[:2]:
        child = state.play(GAME.parse_move(state, move))
        last = ai.best(child, Limits(exact=True))
        assert last.exact and last.score == -score, move


def test_the_solvers_line_from_ffo_40_ends_with_the_suites_score(shared_data: Path) -> None:
    # After the suite's best move a2, the solver's principal variation is played to the end;
    # if every move of it is best, the game ends with black 38 discs ahead.
    state, scored = ffo(shared_data, 40)
    state = state.play(GAME.parse_move(state, scored[0][0]))
    while not state.is_over():
        state = state.play(ai.best(state, Limits(exact=True)).move)
    assert state.result() == scored[0][1]


def test_a_depth_that_reaches_the_end_of_ffo_40_solves_it(shared_data: Path) -> None:
    # FFO #40 has 20 empties: a depth of 20 or more reaches the end of the game, so the search
    # must answer as the solver does (proven score, a best move) instead of running a midgame
    # search twenty plies deep that proves nothing and costs far more.
    state, scored = ffo(shared_data, 40)
    best_moves = {move for move, score in scored if score == scored[0][1]}
    solved = ai.best(state, Limits(exact=True))
    for depth in (20, 30):
        last = ai.best(state, Limits(depth=depth))
        assert last.exact, depth
        assert last.score == solved.score == scored[0][1]
        assert GAME.format_move(last.move) in best_moves


def test_a_timed_search_never_iterates_deeper_than_the_game_can_last() -> None:
    # 17 empties (FFO #40 four plies on, a pass among them): more than the automatic solve
    # threshold, so the midgame iterates; where the next iteration would reach the end of the
    # game, the solver takes over and the answer is proven.
    state = GAME.parse_position(
        "OOXXXXXXXOXXXXXXOOXOOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X"
    )
    empties = 17
    iterations = list(ai.search(state, Limits(soft_time=20, hard_time=40)))
    assert all(it.depth < empties for it in iterations[:-1] if not it.exact)
    assert iterations[-1].exact and iterations[-1].depth == empties
    assert iterations[-1].score == ai.best(state, Limits(exact=True)).score


def test_a_hard_deadline_still_cuts_a_solve_asked_for_by_depth(shared_data: Path) -> None:
    # The solve of FFO #41 (22 empties) takes seconds; a 0.2 s deadline must end it with the
    # last midgame iteration's move, not proven.
    state, _ = ffo(shared_data, 41)
    last = ai.best(state, Limits(depth=22, hard_time=0.2))
    assert not last.exact and last.move in state.legal_moves()
    assert last.seconds < 2.0


def test_depth_limited_searches_report_every_iteration_up_to_the_depth() -> None:
    state = GAME.parse_moves("f5d6c3d3c4f4")
    iterations = list(ai.search(state, Limits(depth=4)))
    assert [it.depth for it in iterations] == [1, 2, 3, 4]
    assert all(not it.exact and it.move in state.legal_moves() for it in iterations)
    assert iterations[-1].pv[0] == iterations[-1].move
    assert all(b.nodes >= a.nodes for a, b in zip(iterations, iterations[1:], strict=False))


def test_a_move_comes_back_even_when_the_deadline_has_already_passed() -> None:
    state = GAME.parse_moves("f5d6c3d3c4f4f6f3e6e7")
    last = ai.best(state, Limits(soft_time=1e-9, hard_time=1e-9))
    assert last.move in state.legal_moves() and last.depth >= 1


def test_a_hard_deadline_stops_a_long_search_in_time() -> None:
    state = GAME.parse_moves("f5d6c3d3c4f4f6f3e6e7")
    last = ai.best(state, Limits(depth=30, hard_time=0.3))
    assert last.move in state.legal_moves()
    assert last.seconds < 3.0
    assert last.depth < 30


def test_a_node_budget_ends_the_search() -> None:
    state = GAME.parse_moves("f5d6c3d3c4f4f6f3e6e7")
    last = ai.best(state, Limits(depth=30, nodes=20_000))
    assert last.move in state.legal_moves()
    assert last.nodes < 20_000 + 2 * 4096


def test_an_iteration_cut_after_a_better_move_was_found_answers_with_that_move() -> None:
    # A position whose best move changes at the last depth; then the same search cut by node
    # budgets all through that last iteration (the searches are the same up to the cut).
    rng = random.Random(5)
    depth = 6
    while True:
        state = random_position(rng, 20)
        if state.is_over() or len(state.legal_moves()) < 4:
            continue
        engine.clear()
        full = list(ai.search(state, Limits(depth=depth)))
        searched = [move for move, _ in full[-2].root_scores]  # the last iteration's order
        if full[-1].move != full[-2].move and searched.index(full[-1].move) < len(searched) - 2:
            break
    before, whole = full[-2], full[-1]
    cut_moves, kept = set(), 0
    for budget in range(before.nodes + 1, whole.nodes - POLL, POLL + 1):
        engine.clear()
        last = list(ai.search(state, Limits(depth=depth, nodes=budget)))[-1]
        if last.depth == depth - 1:
            # Cut before a later move beat the first: the last finished iteration stands.
            assert (last.move, last.root_scores) == (before.move, before.root_scores)
            assert not last.cut
            kept += 1
            continue
        assert last.depth == depth and len(last.root_scores) < len(state.legal_moves())
        # Unsearched moves may be better still: the position cache keeps the root's score
        # as a lower bound, which answers no job.
        assert last.cut
        root = pv_results(state, last)[0][1]
        assert root.bound == LOWER and usable_answer(root, Limits(depth=depth)) is None
        # A move proven better than the first at this depth; its scores are the uncut
        # search's, for the moves searched before the cut.
        assert last.move != before.move
        assert last.root_scores[0] == (last.move, last.score)
        assert last.score > dict(last.root_scores)[before.move]
        assert set(last.root_scores) <= set(whole.root_scores)
        cut_moves.add(last.move)
    assert kept > 0 and whole.move in cut_moves


def test_a_timed_search_near_the_end_finishes_with_an_exact_solve() -> None:
    rng = random.Random(19)
    state = with_empties(rng, 12)
    last = ai.best(state, Limits(soft_time=5, hard_time=10))
    assert last.exact
    assert last.score == ai.best(state, Limits(exact=True)).score
    # A depth limit short of the end is respected: no solve.
    assert not ai.best(state, Limits(depth=3)).exact


@pytest.mark.slow
def test_a_clock_bounded_search_solves_exactly_as_soon_as_the_solve_fits_its_time() -> None:
    # 19 empties: past the automatic solve, and a midgame search cannot reach the end in a
    # second, but the solve takes a few hundredths: the level plays the proven best move.
    rng = random.Random(29)
    for _ in range(3):
        state = with_empties(rng, 19)
        iterations = list(ai.search(state, Limits(soft_time=1.0, hard_time=3.0)))
        last = iterations[-1]
        assert last.exact and last.depth == 19
        assert max(it.depth for it in iterations if not it.exact) <= 9
        solved = ai.best(state, Limits(exact=True))
        assert last.score == solved.score
        assert dict(last.root_scores)[last.move] == solved.score


def test_a_forced_pass_is_the_answer_when_there_is_no_move() -> None:
    # Black's only disc b1 cannot outflank the white corner: black must pass.
    state = GAME.parse_position("OX------" + "-" * 56 + " X")
    last = ai.best(state, Limits(depth=2))
    assert last.move == PASS
    solved = ai.best(state, Limits(exact=True))
    assert solved.exact and solved.move == PASS and solved.score == -64


def test_a_finished_game_cannot_be_searched() -> None:
    with pytest.raises(ValueError, match="over"):
        ai.best(GAME.parse_position("X" * 64 + " O"), Limits(depth=1))


def test_a_win_in_sight_is_reported_as_its_final_disc_difference() -> None:
    # White to move takes the last black disc with c1 and wins 64-0; depth 1 sees it.
    state = GAME.parse_position("OX------" + "-" * 56 + " O")
    last = ai.best(state, Limits(depth=1))
    assert GAME.format_move(last.move) == "c1" and last.score == 64


def test_a_quicker_win_scores_higher_than_a_slower_one_with_more_discs() -> None:
    from ai.othello.evaluation import terminal, to_discs
    from ai.othello.weights import WIN

    # Quick: a1 stays empty for good (row 1, column a and the long diagonal are all black, so
    # nothing can be outflanked from a1) and white owns the other 42 squares: white wins by
    # 42 - 21 + 1 = 22. Slow: the board is full and white wins 60 - 4 = 56.
    #   a b c d e f g h
    # 1 - X X X X X X X
    # 2 X X O O O O O O
    # 3 X O X O O O O O   (and so on down the diagonal to h8)
    rows = []
    for r in range(8):
        row = ["X" if r == 0 or c == 0 or r == c else "O" for c in range(8)]
        rows.append("".join(row))
    quick = GAME.parse_position("-" + "".join(rows)[1:] + " O")
    slow = GAME.parse_position("X" * 4 + "O" * 60 + " O")
    assert quick.is_over() and slow.is_over()

    def score(state: OthelloState) -> int:
        white, black = state.mover_boards()
        return int(terminal(np.uint64(white), np.uint64(black)))

    assert final_value(quick) == 22 and final_value(slow) == 56  # white to move in both
    assert score(quick) > score(slow) > WIN
    # The reported score is still the plain disc difference the rules give.
    assert to_discs(score(quick)) == final_value(quick) == -quick.result()
    assert to_discs(score(slow)) == final_value(slow)

    # And losing slowly is better than losing fast.
    def black_score(state: OthelloState) -> int:
        white, black = state.mover_boards()
        return int(terminal(np.uint64(black), np.uint64(white)))

    assert -WIN > black_score(slow) > black_score(quick)
    assert to_discs(black_score(quick)) == quick.result()


def test_stable_discs_grow_from_corners_and_full_lines_only() -> None:
    from ai.othello.alphabeta import stable_discs

    def stable(text: str) -> set[str]:
        state = GAME.parse_position(text)
        bits = int(stable_discs(np.uint64(state.black), np.uint64(state.white)))
        return {GAME.format_move(sq) for sq in range(64) if bits >> sq & 1}

    # Black a1 b1 a2 hang on the corner; c1 is white, so black's run along row 1 stops.
    #   a b c d e f g h
    # 1 X X O - - - - -
    # 2 X - - - - - - -
    assert stable("XXO-----" + "X-------" + "-" * 48 + " X") == {"a1", "b1", "a2"}
    assert stable(GAME.format_position(GAME.initial())) == set()
    # On a full board nothing can flip any more.
    assert len(stable("O" * 40 + "X" * 24 + " X")) == 24
