"""Multi-ProbCut: the shipped fit is sane, a selective search prunes yet still plays legal
moves and solves endgames exactly, and searches without it are the full-width search."""

from __future__ import annotations

import dataclasses
import io
import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import ai
from ai import tt
from ai.levels import OTHELLO_LEVELS, find
from ai.limits import Limits
from ai.othello import alphabeta as kernels
from ai.othello import engine, probcut
from ai.othello.evaluation import to_discs
from ai.othello.probcut_fit import MIN_POSITIONS, measure
from ai.othello.weights import DISC, EVALUATION, PROBCUT_T
from games.othello import GAME, OthelloState
from tests.ai.test_othello_engine import ffo, with_empties


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    ai.warm_up("othello")


def midgame(count: int, empties: int, seed: int) -> list[OthelloState]:
    rng = random.Random(seed)
    return [with_empties(rng, empties) for _ in range(count)]


@pytest.mark.slow
def test_the_shipped_table_loads_and_every_fit_is_sane() -> None:
    rows = probcut.read()
    assert {row.depth for row in rows} >= set(range(probcut.MIN_DEPTH, 11))
    for row in rows:
        assert row.sigma > 0 and row.n >= MIN_POSITIONS, row
        assert 0.8 <= row.a <= 1.25, row  # a deep search mostly agrees with a shallow one
        assert abs(row.b) < 3 * DISC and row.sigma < 12 * DISC, row
        assert row.shallow == probcut.shallow_depth(row.depth) < row.depth
    table = probcut.kernel_table(PROBCUT_T)
    row = rows[-1]
    assert tuple(table[row.high, row.depth]) == (row.shallow, row.a, row.b,
                                                 PROBCUT_T * row.sigma)
    assert table[:, :probcut.MIN_DEPTH, 0].sum() == 0  # no cut with few plies left
    # Every stage a midgame search passes through is fitted, from the fit's fewest empties.
    assert all(table[e, 8, 0] > 0 for e in range(rows[0].low, 60))


def test_depths_beyond_the_fit_borrow_its_deepest_row_of_the_same_parity() -> None:
    rows = probcut.read()
    deepest = max(row.depth for row in rows)
    table = probcut.kernel_table(PROBCUT_T)
    for row in rows:
        if row.depth < deepest - 1:
            continue
        for depth in range(row.depth + 2, probcut.KERNEL_DEPTH + 1, 2):
            assert tuple(table[row.low, depth]) == (probcut.shallow_depth(depth), row.a,
                                                    row.b, PROBCUT_T * row.sigma)
    assert all(table[40, depth, 0] > 0 for depth in range(probcut.MIN_DEPTH,
                                                          probcut.KERNEL_DEPTH + 1))


def test_a_selective_search_plays_legal_moves_and_searches_fewer_nodes() -> None:
    full_nodes = selective_nodes = 0
    for state in midgame(4, 36, seed=3):
        engine.clear()
        chosen = ai.best(state, Limits(depth=4, selective=True))
        assert chosen.move in state.legal_moves() and not chosen.exact
        engine.clear()
        selective_nodes += ai.best(state, Limits(depth=8, selective=True)).nodes
        engine.clear()
        full_nodes += ai.best(state, Limits(depth=8)).nodes
    assert selective_nodes < full_nodes


@pytest.mark.slow
@pytest.mark.parametrize("number", [40])
def test_a_selective_search_still_solves_ffo_exactly(shared_data: Path, number: int) -> None:
    # The midgame iterations that order the root before the solve prune selectively; the
    # solve never does, so the suite's scores come out exact all the same.
    state, scored = ffo(shared_data, number)
    expert = dataclasses.replace(find("othello", "expert").limits(), soft_time=None,
                                 hard_time=None, exact=True)
    assert expert.selective
    engine.clear()
    solved = ai.best(state, expert)
    assert solved.exact and (GAME.format_move(solved.move), solved.score) == scored[0]
    for move, score in scored[:2]:
        child = state.play(GAME.parse_move(state, move))
        answer = ai.best(child, Limits(depth=30, selective=True))
        assert answer.exact and answer.score == -score, move


def test_levels_with_a_depth_search_full_width_as_before() -> None:
    for level in OTHELLO_LEVELS:
        assert level.limits().selective == (level.max_depth is None), level.name
    medium = dataclasses.replace(find("othello", "medium").limits(), soft_time=None,
                                 hard_time=None)
    for state in midgame(4, 40, seed=5):
        engine.clear()
        answer = ai.best(state, medium)
        assert to_discs(engine.fixed_depth_value(state, medium.depth or 0)) == answer.score


def test_a_selective_search_keeps_its_results_apart_in_the_table() -> None:
    # A full-width search sharing the thread's table (another level's move) must never take
    # a selective score for its own: the root's result is stored under the selective key.
    state = midgame(1, 40, seed=7)[0]
    P, O = (np.uint64(board) for board in state.mover_boards())
    plain = kernels.hash_key(P, O)
    for selective in (True, False):
        engine.clear()
        ai.best(state, Limits(depth=7, selective=selective))
        table, _, _ = engine._TABLES.get(EVALUATION)
        mine = plain ^ kernels._MPC_SALT if selective else plain
        other = plain if selective else plain ^ kernels._MPC_SALT
        assert tt.entry_depth(tt.probe(table, mine)) == 7
        assert tt.probe(table, other) == 0


def test_a_search_given_another_table_cuts_by_that_table(tmp_path: Path) -> None:
    # A benchmark judges a refitted table against the shipped one: the search must use the
    # table it is given. Rows three times as wide cut less, so the same depth costs more.
    data = json.loads(probcut.TABLE_FILE.read_text())
    for row in data["rows"]:
        row["sigma"] *= 3
    wide = tmp_path / "wide.json"
    wide.write_text(json.dumps(data))
    nodes = {}
    for table in (None, wide):
        nodes[table] = 0
        for state in midgame(3, 36, seed=11):
            engine.clear()
            *_, last = engine.search(state, Limits(depth=8, selective=True), probcut_table=table)
            nodes[table] += last.nodes
    assert nodes[wide] > nodes[None]


@pytest.mark.slow
def test_the_fits_values_are_the_same_on_a_pool_and_when_resumed(tmp_path: Path) -> None:
    # Same seed, same values, however the games were spread or the run was cut.
    report = io.StringIO()
    alone = measure(tmp_path / "alone", games=3, seed=4, depth=4, report=report)
    with ThreadPoolExecutor(2) as pool:
        measure(tmp_path / "pool", games=1, seed=4, depth=4, report=report, pool=pool)
        resumed = measure(tmp_path / "pool", games=3, seed=4, depth=4, report=report, pool=pool)
    assert len(set(alone["game"])) == 3
    for key in ("empties", "values", "game"):
        assert np.array_equal(alone[key], resumed[key]), key
