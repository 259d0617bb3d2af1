"""The Connect Four heuristic's score does not swing with the parity of the search depth."""

from __future__ import annotations

import ai
from bench.c4_stability import positions, swing


def test_scores_one_depth_apart_differ_by_a_few_points_not_by_the_odd_even_swing() -> None:
    ai.warm_up("connect4")
    table = swing(positions(40, seed=11), range(4, 10))
    # Without a tempo term, odd depths scored about 21 points above even ones (the side that
    # moved last looked better), every step in the same direction as the parity.
    for depth, (mean_step, signed_step, _) in table.items():
        assert mean_step < 10, (depth, mean_step)
        assert abs(signed_step) < 5, (depth, signed_step)
