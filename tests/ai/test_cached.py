"""What a search leaves for the position cache, and when a cached result stands in for a
search (``ai.cached``: pure, no cache needed)."""

from __future__ import annotations

import dataclasses

import pytest

import games
from ai.cached import (
    EXACT,
    FLOOR_DEPTH,
    LOWER,
    PROVEN_DEPTH,
    CachedResult,
    cached_iteration,
    known_limits,
    known_outcome,
    learned,
    not_lost_result,
    outcome_result,
    pv_results,
    usable_answer,
)
from ai.limits import Iteration, Limits

C4 = games.load("connect4")


def test_a_finished_search_teaches_the_root_and_its_principal_variation() -> None:
    root = C4.parse_moves("4453")
    pv = tuple(C4.parse_move(root, c) for c in "2")  # first move of the PV
    after = root.play(pv[0])
    pv = pv + (C4.parse_move(after, "6"), )
    it = Iteration(depth=14, score=3, move=pv[0], pv=pv, nodes=1000, seconds=0.1)
    taught = pv_results(root, it)
    assert [s for s, _ in taught] == [root, after]
    assert [(r.depth, r.score, r.move) for _, r in taught] == [(14, 3, pv[0]), (13, -3, pv[1])]
    assert all(r.bound == 3 and not r.exact for _, r in taught)


def test_an_iteration_the_clock_cut_teaches_its_root_as_a_lower_bound() -> None:
    root = C4.parse_moves("4453")
    first = C4.parse_move(root, "2")
    after = root.play(first)
    pv = (first, C4.parse_move(after, "6"))
    it = Iteration(depth=14, score=3, move=first, pv=pv, nodes=1000, seconds=0.1, cut=True)
    taught = pv_results(root, it)
    # Moves the clock left unsearched may be better: the root is worth at least 3 at depth
    # 14; the move's own line was searched whole, so its child's value stays exact.
    assert [(r.depth, r.score, r.bound, r.move) for _, r in taught] == [
        (14, 3, LOWER, first), (13, -3, EXACT, pv[1])]
    assert usable_answer(taught[0][1], Limits(depth=14)) is None


def test_a_cached_answer_replaces_a_search_only_when_it_is_as_good() -> None:
    deep = CachedResult(12, 5, 3, 2)
    assert usable_answer(deep, Limits(depth=12)) == deep
    assert usable_answer(deep, Limits(depth=13)) is None  # the search would go deeper
    assert usable_answer(deep, Limits(soft_time=1.0)) is None  # depth unknown in advance
    assert usable_answer(deep, Limits(depth=4, multipv=3)) is None  # needs several scores
    assert usable_answer(CachedResult(12, 5, 1, 2), Limits(depth=4)) is None  # a bound
    solved = CachedResult(3, -4, 3, 1, exact=True)
    assert usable_answer(solved, Limits(soft_time=1.0, exact=True)) == solved
    assert usable_answer(None, Limits(depth=1)) is None


def test_a_root_whose_children_are_all_solved_is_solved_with_its_best_move() -> None:
    state = C4.parse_moves("4453")
    legal = state.legal_moves()
    scores = {m: 5 - i for i, m in enumerate(legal)}  # the child's score: lowest is best
    children = [CachedResult(20, scores[m], 3, None, exact=True) for m in legal]
    found = cached_iteration(state, Limits(depth=12), None, children)
    assert found is not None and found.exact
    assert found.move == legal[-1] and found.score == -scores[legal[-1]]
    assert found.depth == 21
    # One unknown child, or a level that wants several scores: no answer, search instead.
    assert cached_iteration(state, Limits(depth=12), None, [None, *children[1:]]) is None
    assert cached_iteration(state, Limits(depth=12, multipv=2), None, children) is None


def test_a_level_choosing_among_moves_learns_every_root_child_then_its_pv() -> None:
    state = C4.parse_moves("44")
    legal = state.legal_moves()
    root_scores = tuple((m, 10 - i) for i, m in enumerate(legal))
    it = Iteration(depth=6, score=10, move=legal[0], pv=(legal[0],), nodes=1, seconds=0.1,
                   root_scores=root_scores)
    taught = learned(state, it, candidates=2)
    assert [s for s, _ in taught[:-1]] == [state.play(m) for m in legal]
    assert [r.bound for _, r in taught[:-1]] == [3, 3] + [1] * (len(legal) - 2)
    assert taught[-1] == (state, CachedResult(6, 10, 3, legal[0]))
    # The search's own answer, given back from what it left: the same root scores.
    again = cached_iteration(state, Limits(depth=6, multipv=2), taught[-1][1],
                             [r for _, r in taught[:-1]])
    assert again is not None and again.root_scores == root_scores
    assert learned(state, it, candidates=1) == [(state, CachedResult(6, 10, 3, legal[0]))]


def _weak_solved(state: games.base.State, outcome: int) -> Iteration:
    """An expert's answer where the weak solve proved ``outcome`` but not the score: the
    heuristic's depth, score and principal variation."""
    legal = state.legal_moves()
    pv = (legal[2], legal[3], legal[1])
    return Iteration(depth=18, score=37, move=pv[0], pv=pv, nodes=1, seconds=2.0,
                     outcome=outcome)


def test_a_weak_solves_win_teaches_a_proven_bound_for_the_root_and_the_child_it_keeps_it_in(
) -> None:
    state = C4.parse_moves("4453")
    it = _weak_solved(state, 1)
    child = state.play(it.pv[0])
    taught = learned(state, it, candidates=1)
    assert taught[:2] == [(state, CachedResult(PROVEN_DEPTH, 1, 1, it.move)),
                          (child, CachedResult(PROVEN_DEPTH, -1, 2, None))]
    assert [r.outcome for _, r in taught[:2]] == [1, -1]
    assert all(r.proven_bound and not r.exact for _, r in taught[:2])
    # Past the child, the heuristic's line as before: unproven, exact at its depth.
    assert taught[2] == (child.play(it.pv[1]), CachedResult(16, 37, 3, it.pv[2]))
    loss = learned(state, _weak_solved(state, -1), candidates=1)
    assert [(r.score, r.bound, r.outcome) for _, r in loss[:2]] == [(-1, 2, -1), (1, 1, 1)]
    # Without an outcome, or with a proven score, nothing changes.
    assert learned(state, dataclasses.replace(it, outcome=None), 1)[0][1].depth == 18
    solved = dataclasses.replace(it, exact=True, score=5, outcome=1)
    assert learned(state, solved, 1)[0][1] == CachedResult(18, 5, 3, it.move, True)


def test_a_proven_bound_never_answers_a_job_as_a_proven_score() -> None:
    state = C4.parse_moves("4453")
    win = outcome_result(1, state.legal_moves()[0])
    for limits in (Limits(soft_time=1.5, hard_time=3.0), Limits(depth=12), Limits(exact=True),
                   Limits(depth=4, multipv=3)):
        assert usable_answer(win, limits) is None
        assert cached_iteration(state, limits, win, [None] * 7) is None
    # Children proven lost by a weak solve prove the root won, but not by how much: no
    # solved root rebuilt from them either.
    lost = [outcome_result(-1, None)] * 7
    assert cached_iteration(state, Limits(depth=12), None, lost) is None
    # A level choosing among moves never takes a proven bound for a bound at its depth.
    root = CachedResult(PROVEN_DEPTH + 1, 4, 3, 0)
    assert cached_iteration(state, Limits(depth=PROVEN_DEPTH + 1, multipv=2), root,
                            lost) is None
    # An exact score keeps its outcome; an unproven bound or score proves none.
    assert CachedResult(20, -3, 3, 1, exact=True).outcome == -1
    assert CachedResult(20, 0, 3, 1, exact=True).outcome == 0
    assert CachedResult(PROVEN_DEPTH - 1, 1, 1, 1).outcome is None
    assert CachedResult(PROVEN_DEPTH, 0, 1, 1).outcome is None  # not a loss: no outcome


def test_the_outcome_the_cache_proves_goes_to_the_search_with_a_move_that_keeps_it() -> None:
    state = C4.parse_moves("4453")
    legal = state.legal_moves()
    expert = Limits(soft_time=1.5, hard_time=3.0)
    win = outcome_result(1, legal[4])
    hinted = known_limits(state, expert, win, [None] * 7)
    assert (hinted.outcome, hinted.outcome_move) == (1, legal[4])
    assert known_limits(state, expert, None, [None] * 7) == expert
    # A child proven lost for its side to move (a weak solve's, or an exact score below 0)
    # is a win for the root with the move to it.
    for lost in (outcome_result(-1, None), CachedResult(30, -2, 3, 0, exact=True)):
        children: list[CachedResult | None] = [None] * 7
        children[5] = lost
        assert known_outcome(state, None, children) == (1, legal[5])
    # Every child won for its side to move: a loss, with no move to name; one a draw: a draw.
    won = [outcome_result(1, None)] * 7
    assert known_outcome(state, None, won) == (-1, None)
    drawn = [*won[:3], CachedResult(37, 0, 3, 0, exact=True), *won[4:]]
    assert known_outcome(state, None, drawn) == (0, legal[3])
    assert known_outcome(state, None, [*won[:6], None]) is None
    # A proven loss at the root names no move: every move keeps it.
    assert known_outcome(state, outcome_result(-1, legal[0]), []) == (-1, None)


def test_a_position_proven_only_not_lost_teaches_a_floor_that_the_next_search_is_given(
) -> None:
    state = C4.parse_moves("4453")
    legal = state.legal_moves()
    it = dataclasses.replace(_weak_solved(state, 1), outcome=None, not_lost=True)
    child = state.play(it.pv[0])
    taught = learned(state, it, candidates=1)
    # The root a floor with the move that does not lose; the child as the heuristic found it.
    assert taught[0] == (state, not_lost_result(it.move))
    assert taught[1] == (child, CachedResult(17, -37, 3, it.pv[1]))
    floor = taught[0][1]
    assert floor.not_lost and floor.outcome is None and not floor.proven_bound
    assert floor.depth == FLOOR_DEPTH < PROVEN_DEPTH
    # It never answers a job, and the next search is told what it proves.
    expert = Limits(soft_time=1.5, hard_time=3.0)
    for limits in (expert, Limits(depth=12), Limits(exact=True), Limits(depth=4, multipv=3)):
        assert cached_iteration(state, limits, floor, [None] * 7) is None
    told = known_limits(state, expert, floor, [None] * 7)
    assert (told.not_lost, told.outcome, told.outcome_move) == (True, None, it.move)
    # A child proven drawn proves the same through the move to it; an outcome says more.
    drawn: list[CachedResult | None] = [None] * 7
    drawn[2] = CachedResult(30, 0, 3, 1, exact=True)
    told = known_limits(state, expert, None, drawn)
    assert (told.not_lost, told.outcome, told.outcome_move) == (True, None, legal[2])
    won = known_limits(state, told, outcome_result(1, legal[4]), drawn)
    assert (won.not_lost, won.outcome, won.outcome_move) == (False, 1, legal[4])
    # Unproven results prove nothing, nor does a floor of any other score or depth.
    assert known_limits(state, expert, CachedResult(20, 3, 3, 1), [None] * 7) == expert
    for other in (CachedResult(FLOOR_DEPTH, 1, 1, 1), CachedResult(FLOOR_DEPTH - 1, 0, 1, 1)):
        assert not other.not_lost
    # The limits refuse a floor beside an outcome (it says less) and a move with neither.
    with pytest.raises(ValueError, match="not_lost with an outcome"):
        Limits(soft_time=1.0, outcome=1, not_lost=True)
    with pytest.raises(ValueError, match="outcome_move without"):
        Limits(soft_time=1.0, outcome_move=3)
    # Without a floor, the heuristic's answer teaches what it always did.
    plain = dataclasses.replace(it, not_lost=False)
    assert learned(state, plain, 1)[0][1] == CachedResult(18, 37, 3, it.move)
