"""The Connect Four engine: same values as the textbook searches, Pons' scores, its limits."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

import ai
from ai.connect4 import engine
from ai.connect4.evaluation import WIN
from ai.limits import Limits
from ai.reference import minimax, negamax
from games.connect4 import GAME
from games.connect4.rules import Connect4State

# (set, first lines checked): all six of Pons' sets. The hard openings (L1_R3) take seconds
# a position, so the suite holds one (marked slow) and bench/connect4.py a larger sample.
PONS_SAMPLES = [
    ("Test_L3_R1", 50),
    ("Test_L2_R1", 50),
    ("Test_L2_R2", 10),
    ("Test_L1_R1", 30),
    ("Test_L1_R2", 4),
    pytest.param("Test_L1_R3", 1, marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("connect4")


def random_positions(seed: int, count: int, max_plies: int = 36) -> list[Connect4State]:
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = GAME.initial()
        for _ in range(rng.randrange(0, max_plies)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_over():
            found.append(state)
    return found


def pons_units(score: int) -> int:
    """A search score with a proven win or loss written the way exact results are."""
    if score >= WIN:
        return score - WIN
    if score <= -WIN:
        return score + WIN
    return score


@pytest.mark.slow
def test_compiled_alphabeta_equals_plain_minimax_on_hundreds_of_random_positions() -> None:
    rng = random.Random(99)
    for state in random_positions(1, 300):
        depth = rng.randrange(1, 5)
        value = negamax(state, depth, engine.leaf_value)
        assert engine.fixed_depth_value(state, depth, use_table=False) == value, (
            GAME.format_position(state),
            depth,
        )
        assert engine.fixed_depth_value(state, depth, use_table=True) == value


def test_two_function_minimax_gives_the_same_values_as_the_compiled_search() -> None:
    for i, state in enumerate(random_positions(2, 40)):
        depth = 1 + i % 3
        assert engine.fixed_depth_value(state, depth, True) == minimax(
            state, depth, engine.leaf_value
        )


def test_the_engine_at_a_fixed_depth_reports_the_minimax_value() -> None:
    rng = random.Random(5)
    for state in random_positions(3, 60):
        depth = rng.randrange(2, 5)
        engine.clear()
        last = ai.best(state, Limits(depth=depth))
        value = negamax(state, depth, engine.leaf_value)
        assert last.score == (pons_units(value) if last.exact else value)
        assert last.move in state.legal_moves()


def end_games(seed: int, count: int, empties: int) -> list[Connect4State]:
    """Positions ``empties`` short of a full board, reached by random moves that avoid wins."""
    rng = random.Random(seed)
    found: list[Connect4State] = []
    while len(found) < count:
        state = GAME.initial()
        while state.ply < 42 - empties and not state.is_over():
            moves = state.legal_moves()
            quiet = [m for m in moves if not state.play(m).is_over()]
            state = state.play(rng.choice(quiet or moves))
        if not state.is_over():
            found.append(state)
    return found


def test_with_the_table_small_end_games_get_the_exact_minimax_value() -> None:
    for i, state in enumerate(end_games(4, 30, empties=7)):
        if i % 2:
            state = GAME.parse_moves(GAME.format_position(state)[:-1])  # 8 empties
        empties = 42 - state.ply
        value = negamax(state, empties, engine.leaf_value)
        assert engine.fixed_depth_value(state, empties, use_table=True) == value
        solved = ai.best(state, Limits(exact=True))
        assert solved.exact and solved.score == pons_units(value)
        assert ai.best(state, Limits(depth=empties)).score == pons_units(value)


@pytest.mark.parametrize("name, count", PONS_SAMPLES)
def test_exact_mode_gives_pons_score_for_the_first_lines_of_each_set(
    name: str, count: int, shared_data: Path
) -> None:
    lines = (shared_data / "connect4" / name).read_text().splitlines()[:count]
    for line in lines:
        moves, score = line.split()
        state = GAME.parse_position(moves)
        result = ai.best(state, Limits(exact=True))
        assert result.exact and result.score == int(score), line
        assert result.pv[0] == result.move and result.move in state.legal_moves()


def test_the_exact_move_keeps_the_score(shared_data: Path) -> None:
    for line in (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()[50:60]:
        moves, score = line.split()
        state = GAME.parse_position(moves)
        move = ai.best(state, Limits(exact=True)).move
        child = state.play(move)
        if child.is_over():
            assert child.winner() is not None and int(score) > 0
        else:
            assert ai.best(child, Limits(exact=True)).score == -int(score)


def test_multipv_in_exact_mode_scores_every_move_best_first(shared_data: Path) -> None:
    moves, score = (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()[3].split()
    state = GAME.parse_position(moves)
    result = ai.best(state, Limits(exact=True, multipv=7))
    scores = [s for _, s in result.root_scores]
    assert sorted(col for col, _ in result.root_scores) == state.legal_moves()
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == result.score == int(score)
    for col, value in result.root_scores[:3]:
        child = state.play(col)
        if not child.is_over():
            assert ai.best(child, Limits(exact=True)).score == -value


def test_multipv_at_a_fixed_depth_scores_every_root_move_exactly() -> None:
    state = GAME.parse_moves("4453")
    engine.clear()
    result = ai.best(state, Limits(depth=3, multipv=7))
    assert sorted(col for col, _ in result.root_scores) == list(range(7))
    for col, value in result.root_scores:
        assert value == -negamax(state.play(col), 2, engine.leaf_value)


def test_an_immediate_win_is_taken_and_scored_at_once() -> None:
    # X to move with three in column 1: "1" wins with 4 stones, Pons score 22 - 4.
    state = GAME.parse_moves("121212")
    for limits in (Limits(depth=1), Limits(depth=6), Limits(exact=True)):
        result = ai.best(state, limits)
        assert (result.move, result.score, result.exact) == (0, 18, True)


def test_a_threat_is_blocked_even_at_depth_one() -> None:
    # O to move; X has three in column 1 and wins there next unless O drops a disc on it.
    state = GAME.parse_moves("12121")
    for depth in (1, 2, 5):
        assert ai.best(state, Limits(depth=depth)).move == 0


def test_never_plays_a_move_that_hands_over_a_win_at_once() -> None:
    # On random positions: whenever some move leaves the opponent no win at once, the
    # engine's move (at any depth, even 1) is such a move.
    for state in random_positions(6, 120, max_plies=30):
        children = [state.play(m) for m in state.legal_moves()]

        def hands_over(child: Connect4State) -> bool:
            return not child.is_over() and any(
                child.play(r).winner() is not None for r in child.legal_moves()
            )

        if all(hands_over(child) for child in children):
            continue
        for depth in (1, 2, 3):
            assert not hands_over(state.play(ai.best(state, Limits(depth=depth)).move))


def test_iterations_deepen_one_ply_at_a_time_up_to_the_depth_limit() -> None:
    iterations = list(ai.search(GAME.initial(), Limits(depth=6)))
    assert [i.depth for i in iterations] == [1, 2, 3, 4, 5, 6]
    assert all(not i.exact for i in iterations)
    assert all(0 < len(i.pv) <= i.depth and i.pv[0] == i.move for i in iterations)
    assert [i.nodes for i in iterations] == sorted(i.nodes for i in iterations)


def test_the_hard_deadline_ends_an_exact_search_with_a_move() -> None:
    started = time.perf_counter()
    # Off both book files (they answer every position of the first four plies at once):
    # minutes to solve (not solved in 8 s, 34 M nodes).
    result = ai.best(GAME.parse_moves("11771"), Limits(exact=True, hard_time=0.3))
    elapsed = time.perf_counter() - started
    assert elapsed < 2.0
    assert result.exact is False and result.move in range(7)


def test_the_hard_deadline_ends_deepening_and_the_last_finished_iteration_stands() -> None:
    started = time.perf_counter()
    iterations = list(ai.search(GAME.initial(), Limits(hard_time=0.3)))
    assert time.perf_counter() - started < 2.0
    assert iterations and iterations[-1].move in range(7)
    assert iterations[-1].depth < 42


def test_a_deadline_already_past_still_gives_the_first_iteration() -> None:
    iterations = list(ai.search(GAME.parse_moves("4453"), Limits(hard_time=1e-9)))
    assert len(iterations) >= 1 and iterations[0].depth == 1


def test_no_iteration_starts_after_the_soft_time() -> None:
    # A depth bound as well: bounded by time alone, the opening book would answer at once.
    iterations = list(ai.search(GAME.initial(), Limits(depth=30, soft_time=1e-9)))
    assert [i.depth for i in iterations] == [1]


def test_the_node_budget_stops_the_search_soon_after_it_runs_out() -> None:
    budget = 20_000
    iterations = list(ai.search(GAME.initial(), Limits(nodes=budget)))
    assert iterations and iterations[-1].nodes <= budget + 4096  # polled every 4096 nodes
    assert not iterations[-1].exact and iterations[-1].depth < 20
    exact = ai.best(GAME.parse_moves("11771"), Limits(exact=True, nodes=budget))  # off the book
    assert exact.exact is False and exact.nodes <= budget + 2 * 4096


def test_a_finished_game_is_refused() -> None:
    with pytest.raises(ValueError, match="over"):
        ai.best(GAME.parse_moves("1212121"), Limits(depth=2))


def test_a_proven_multi_move_search_reports_only_proven_scores_in_pons_units() -> None:
    # At depth 5 the search proves a win with column 2 and once reported column 3's
    # heuristic 19 beside it as if it were Pons' score of a quicker win.
    import numpy as np

    from ai import tt
    from ai.connect4 import solver as exact_solver

    state = GAME.parse_moves("44532671444")
    it = ai.best(state, Limits(depth=5, multipv=3))
    assert it.exact
    for move, score in it.root_scores:
        child = state.play(move)
        cells, scores = exact_solver.new_buffers()
        truth = -int(exact_solver.solve(
            np.uint64(child.current), np.uint64(child.mask), tt.new_table(16), 0,
            exact_solver.new_control(), np.zeros(1, dtype=np.int64), cells, scores))
        assert score == truth, (move, score, truth)
    assert it.root_scores[0] == (it.move, it.score)
