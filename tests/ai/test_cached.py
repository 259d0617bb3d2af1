"""What a search leaves for the position cache, and when a cached result stands in for a
search (``ai.cached``: pure, no cache needed)."""

from __future__ import annotations

import games
from ai.cached import CachedResult, cached_iteration, learned, pv_results, usable_answer
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
