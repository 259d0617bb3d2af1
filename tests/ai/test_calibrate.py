"""Calibration's pure parts: fair schedules, a consistent table, and an Elo fit that finds
known answers."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

import games
from ai.calibrate import (
    OPENINGS,
    GameResult,
    MatchGame,
    PairRecord,
    cpu_per_move,
    fit_elo,
    pairings,
    schedule,
    tabulate,
)

NAMES = ["beginner", "easy", "medium", "hard", "expert"]


@pytest.mark.parametrize("game", sorted(OPENINGS))
def test_every_opening_is_legal_and_leaves_the_game_open(game: str) -> None:
    rules = games.load(game)
    for line in OPENINGS[game]:
        state = rules.parse_moves(line)
        assert not state.is_over()
    assert len(set(OPENINGS[game])) == len(OPENINGS[game]) >= 6


def test_adjacent_pairs_are_neighbours_and_all_pairs_are_every_pair() -> None:
    assert pairings(NAMES, "adjacent") == [
        ("beginner", "easy"), ("easy", "medium"), ("medium", "hard"), ("hard", "expert")
    ]  # fmt: skip
    assert len(pairings(NAMES, "all")) == 10


def test_each_pair_plays_each_opening_once_with_each_colour() -> None:
    planned = schedule(NAMES, 6, OPENINGS["connect4"], seed=5, mode="all")
    assert [g.index for g in planned] == list(range(10 * 6))
    by_pair: dict[frozenset[str], list[MatchGame]] = {}
    for g in planned:
        by_pair.setdefault(frozenset((g.first, g.second)), []).append(g)
    assert len(by_pair) == 10
    for pair_games in by_pair.values():
        assert len(pair_games) == 6
        firsts = Counter(g.first for g in pair_games)
        assert sorted(firsts.values()) == [3, 3]
        # Consecutive games share an opening with the colours swapped.
        for one, two in zip(pair_games[::2], pair_games[1::2], strict=True):
            assert one.opening == two.opening and (one.first, one.second) == (two.second, two.first)
        assert len({g.opening for g in pair_games}) == 3


def test_openings_vary_between_pairs_and_seeds_make_schedules_repeatable() -> None:
    one = schedule(NAMES, 2, OPENINGS["othello"], seed=1)
    assert one == schedule(NAMES, 2, OPENINGS["othello"], seed=1)
    assert one != schedule(NAMES, 2, OPENINGS["othello"], seed=2)
    assert len({g.opening for g in one}) > 1
    assert len({g.seed for g in one}) == len(one)


def test_impossible_schedules_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        schedule(NAMES, 0, ["44"], 1)
    with pytest.raises(ValueError, match="two levels"):
        schedule(["easy"], 2, ["44"], 1)
    with pytest.raises(ValueError, match="once"):
        schedule(["easy", "easy"], 2, ["44"], 1)


def result(first: str, second: str, outcome: int) -> GameResult:
    return GameResult(MatchGame(0, first, second, "", 0), outcome, "", 0, 0.0)


def test_the_table_counts_from_the_weaker_levels_side_whoever_moved_first() -> None:
    results = [
        result("easy", "medium", 3),  # easy (first) wins
        result("medium", "easy", 5),  # medium (first) wins
        result("medium", "easy", 0),  # draw
        result("easy", "medium", -1),  # medium (second) wins
    ]
    (pair,) = tabulate(results, ["easy", "medium"])
    assert (pair.a, pair.b, pair.wins, pair.draws, pair.losses) == ("easy", "medium", 1, 1, 2)
    assert (pair.games, pair.score, pair.a_first) == (4, 1.5, 2)


def test_a_75_percent_score_is_the_textbook_191_elo_gap() -> None:
    # 1 / (1 + 10^(-d/400)) = 0.75  <=>  d = 400 log10(3) = 190.85
    ratings = fit_elo(["a", "b"], [PairRecord("a", "b", wins=25, draws=0, losses=75)], 0)
    assert ratings[0].elo == 0 and ratings[0].error == 0
    assert ratings[1].elo == pytest.approx(400 * math.log10(3), abs=0.01)
    assert 0 < ratings[1].error < 100


def test_draws_count_half_and_an_even_score_is_no_gap() -> None:
    ratings = fit_elo(["a", "b"], [PairRecord("a", "b", wins=10, draws=20, losses=10)])
    assert ratings[1].elo == pytest.approx(0, abs=1e-6)


def test_the_fit_recovers_the_order_and_gaps_of_synthetic_players() -> None:
    true = {"a": 0.0, "b": 150.0, "c": 250.0, "d": 500.0}
    rng = random.Random(7)
    records = []
    for x, y in pairings(list(true), "all"):
        p = 1 / (1 + 10 ** (-(true[x] - true[y]) / 400))
        record = PairRecord(x, y)
        for _ in range(400):
            if rng.random() < p:
                record.wins += 1
            else:
                record.losses += 1
        records.append(record)
    ratings = {r.level: r for r in fit_elo(list(true), records, prior_draws=0)}
    assert [r for r in sorted(ratings, key=lambda n: ratings[n].elo)] == ["a", "b", "c", "d"]
    for name, elo in true.items():
        assert abs(ratings[name].elo - elo) < 3 * ratings[name].error + 1
    assert ratings["d"].games == 1200


def test_a_clean_sweep_stays_finite_and_positive() -> None:
    ratings = fit_elo(["a", "b"], [PairRecord("a", "b", wins=0, draws=0, losses=8)])
    assert math.isfinite(ratings[1].elo) and ratings[1].elo > 300


def test_a_level_that_played_nobody_has_no_rating() -> None:
    ratings = fit_elo(["a", "b", "c"], [PairRecord("a", "b", wins=3, draws=0, losses=3)])
    assert math.isnan(ratings[2].elo) and ratings[2].games == 0


def test_cpu_per_move_is_each_levels_own_cpu_over_its_own_searched_moves() -> None:
    def game(first: str, second: str, cpu: tuple[float, float], searched: tuple[int, int]
             ) -> GameResult:
        return GameResult(MatchGame(0, first, second, "", 0), 0, "", 0, 0.0, cpu, searched)

    results = [game("a", "b", (0.2, 3.0), (10, 10)), game("b", "a", (1.0, 0.4), (5, 10)),
               game("a", "c", (0.0, 0.0), (0, 0))]
    cost = cpu_per_move(results)
    assert cost == pytest.approx({"a": 0.6 / 20, "b": 4.0 / 15})
    assert "c" not in cost  # it searched nothing: no figure rather than 0
