"""Difficulty levels are sound data, and ``choose_move`` weakens only within its bounds."""

from __future__ import annotations

import dataclasses
import random

import pytest
from pydantic import ValidationError

import ai
import games
from ai.levels import (
    DEFAULT_LEVELS,
    BadLevel,
    Level,
    choose_move,
    find,
    levels_of,
    loses_in_one,
    win_in_one,
)
from ai.limits import Iteration, Limits

C4 = games.load("connect4")


def iteration(move: int, root_scores: list[tuple[int, int]]) -> Iteration:
    return Iteration(
        depth=4,
        score=root_scores[0][1] if root_scores else 0,
        move=move,
        pv=(move,),
        nodes=100,
        seconds=0.01,
        root_scores=tuple(root_scores),
    )


def level(**changes: object) -> Level:
    return dataclasses.replace(find("connect4", "medium"), **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("game", ["connect4", "othello"])
def test_every_game_has_at_least_five_levels_ordered_weakest_first(game: str) -> None:
    levels = levels_of(game)
    assert len(levels) >= 5
    assert [lv.order for lv in levels] == list(range(len(levels)))
    assert len({lv.name for lv in levels}) == len(levels)
    # Stronger levels get at least as much time and no more freedom to stray.
    for weaker, stronger in zip(levels, levels[1:], strict=False):
        assert stronger.hard_time >= weaker.hard_time
        assert stronger.margin <= weaker.margin
        assert stronger.candidates <= weaker.candidates
    assert levels[-1].candidates == 1 and levels[-1].margin == 0 and levels[-1].rails


def test_levels_round_trip_through_plain_dicts_and_give_matching_limits() -> None:
    for levels in DEFAULT_LEVELS.values():
        for lv in levels:
            assert Level.from_dict(lv.to_dict()) == lv
            limits = lv.limits()
            assert (limits.depth, limits.hard_time, limits.multipv) == (
                lv.max_depth,
                lv.hard_time,
                lv.candidates,
            )


def test_impossible_levels_are_refused_with_every_reason_by_field() -> None:
    with pytest.raises(ValidationError) as caught:
        level(soft_time=2.0, hard_time=1.0)
    (error,) = caught.value.errors()
    assert error["msg"] == "soft_time must not exceed hard_time"
    assert error["ctx"] == {"fields": ("soft_time", "hard_time")}
    with pytest.raises(ValidationError) as caught:
        level(candidates=65, margin=5000, nodes=10**12, rails="yes")
    assert {error["loc"] for error in caught.value.errors()} == {
        ("candidates",), ("margin",), ("nodes",), ("rails",)
    }


def test_settings_from_a_dict_are_refused_in_sentences_per_field() -> None:
    with pytest.raises(BadLevel) as caught:
        Level.from_dict({**level().to_dict(), "candidates": 0, "margin": 2.0, "speed": 3})
    assert caught.value.problems == {
        "candidates": ["candidates must be a whole number between 1 and 64"],
        "margin": ["margin must be a whole number between 0 and 1,000"],
        "speed": ["speed is not a level field"],
    }
    with pytest.raises(BadLevel, match="soft_time must not exceed hard_time") as caught:
        Level.from_dict({**level().to_dict(), "soft_time": 5.0})
    assert set(caught.value.problems) == {"soft_time", "hard_time"}
    with pytest.raises(BadLevel) as caught:
        Level.from_dict({**level().to_dict(), "max_depth": 0, "hard_time": float("nan")})
    assert caught.value.problems == {
        "max_depth": ["max_depth must be a whole number between 1 and 64, or null (no limit)"],
        "hard_time": ["hard_time must be a number above 0 and at most 60"],
    }


def test_a_time_may_be_given_in_whole_seconds() -> None:
    assert Level.from_dict({**level().to_dict(), "hard_time": 2}).hard_time == 2.0


def test_a_level_with_one_candidate_plays_the_engines_best_move() -> None:
    state = C4.initial()
    it = iteration(3, [(3, 2), (2, 1), (4, 1)])
    for seed in range(20):
        assert choose_move(state, level(candidates=1, margin=5), seed, [it]) == 3


def test_a_weak_level_varies_among_good_moves_but_never_beyond_its_margin() -> None:
    state = C4.initial()
    it = iteration(3, [(3, 5), (2, 4), (4, 3), (1, -2), (5, -9)])
    chosen = {
        choose_move(state, level(candidates=5, margin=2, rails=False), s, [it]) for s in range(200)
    }
    assert chosen == {3, 2, 4}


def test_the_same_seed_gives_the_same_move() -> None:
    state = C4.initial()
    it = iteration(3, [(3, 5), (2, 5), (4, 5), (1, 5)])
    weak = level(candidates=4, margin=3, rails=False)
    assert len({choose_move(state, weak, 7, [it]) for _ in range(10)}) == 1


def test_tied_scores_choose_the_same_move_in_whatever_order_they_arrive() -> None:
    # A search lists tied moves in the order it tried them; the position cache cannot keep
    # that order, so the choice must not depend on it (exact scores first, as both give).
    state = C4.initial()
    weak = level(candidates=4, margin=5)
    scores = [(3, 4), (2, 4), (4, 4), (1, 1), (5, -2), (6, -2)]
    for seed in range(30):
        first = choose_move(state, weak, seed, [iteration(3, scores)])
        again = choose_move(
            state, weak, seed, [iteration(2, [scores[i] for i in (1, 2, 0, 3, 5, 4)])]
        )
        assert first == again


def test_a_bound_is_never_played_over_an_exact_score_it_only_equals() -> None:
    # Two candidates: 3 and 4 are exact; 2 is only known to be worth at most 1, so it may be
    # far worse than 4 although the numbers tie (and 2 is the lower column).
    state = C4.initial()
    two = level(candidates=2, margin=5, rails=False)
    it = iteration(3, [(3, 5), (4, 1), (2, 1)])
    assert {choose_move(state, two, seed, [it]) for seed in range(100)} == {3, 4}
    one = level(candidates=1, margin=0, rails=False)
    assert choose_move(state, one, 0, [iteration(3, [(3, 1), (0, 1), (1, 1)])]) == 3


@pytest.mark.parametrize("game, depth", [("othello", 4), ("connect4", 8)])
def test_expert_plays_its_own_searchs_best_move_unless_a_rail_overrules_it(
    game: str, depth: int
) -> None:
    rules = games.load(game)
    expert = find(game, "expert")
    rng = random.Random(11)
    checked = 0
    while checked < 80:
        state = rules.initial()
        for _ in range(rng.randint(6, 40 if game == "othello" else 24)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if state.is_over() or len(state.legal_moves()) < 2:
            continue
        found = ai.best(state, Limits(depth=depth, multipv=expert.candidates))
        chosen = choose_move(state, expert, checked, [found])
        checked += 1
        if win_in_one(state) is not None:
            assert chosen == win_in_one(state)
        elif loses_in_one(state, found.move) and any(
            not loses_in_one(state, m) for m in state.legal_moves()
        ):
            assert not loses_in_one(state, chosen)
        else:
            assert chosen == found.move, (state, found.root_scores)


def test_only_the_last_iteration_counts() -> None:
    state = C4.initial()
    early = iteration(0, [(0, 9)])
    late = iteration(6, [(6, 9)])
    assert choose_move(state, level(candidates=1), 1, [early, late]) == 6


def test_rails_take_a_win_in_one_even_when_the_search_says_otherwise() -> None:
    state = C4.parse_moves("121212")  # first player has three in column 1
    assert win_in_one(state) == 0
    wrong = iteration(4, [(4, 3)])
    assert choose_move(state, level(rails=True), 1, [wrong]) == 0
    assert choose_move(state, level(rails=False, candidates=1), 1, [wrong]) == 4


def test_rails_stop_a_loss_in_one_when_some_move_does() -> None:
    state = C4.parse_moves("12121")  # second player must block column 1
    assert loses_in_one(state, 3) and not loses_in_one(state, 0)
    careless = iteration(3, [(3, 1), (0, 0)])
    assert choose_move(state, level(rails=True, candidates=2, margin=5), 1, [careless]) == 0


def test_with_no_iteration_at_all_a_legal_move_is_still_chosen() -> None:
    state = C4.parse_moves("12121")
    assert choose_move(state, level(rails=True), 1, []) == 0
    assert choose_move(C4.initial(), level(rails=False), 1, []) in C4.initial().legal_moves()


def test_a_forced_move_is_played_without_looking_at_the_search() -> None:
    state = C4.parse_moves("4427612253772523425455634741753716666313")
    assert state.legal_moves() == [0]
    assert choose_move(state, level(), 3, [iteration(5, [(5, 9)])]) == 0


def test_selective_search_follows_the_depth_unless_an_admin_sets_it() -> None:
    """Left out, the knob is on exactly for the levels bounded by time alone; set, it wins;
    a level stored before the knob existed gets the rule."""
    for game in ("othello", "connect4"):
        for level in DEFAULT_LEVELS[game]:
            assert level.selective is (level.max_depth is None), level.name
            assert level.limits().selective is (level.max_depth is None)
    expert = DEFAULT_LEVELS["othello"][-1]
    stored = {k: v for k, v in expert.to_dict().items() if k != "selective"}
    assert Level.from_dict(stored).selective is True
    full_width = Level.from_dict({**expert.to_dict(), "selective": False})
    assert full_width.limits().selective is False
    hard = DEFAULT_LEVELS["othello"][-2]
    assert Level.from_dict({**hard.to_dict(), "selective": True}).limits().selective is True
