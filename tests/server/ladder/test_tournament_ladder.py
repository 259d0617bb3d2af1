"""The engine ladder without sockets: its schedule and its rating list."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from server.ladder.rules import LadderGame, fit, head_to_head, history, next_games
from server.ratings.glicko import level_rating
from server.ratings.level_calibration import MEASURED

LEVELS = list(MEASURED["connect4"])  # weakest first, as calibrated


def calibrated() -> dict[str, float]:
    return {name: level_rating(*MEASURED["connect4"][name]).rating for name in LEVELS}


def simulate(truth: dict[str, float], rounds: int, seed: int,
             draw_share: float = 0.2) -> list[LadderGame]:
    """Games as the ladder would schedule them, decided by the Elo model at ``truth``."""
    rng = random.Random(seed)
    games: list[LadderGame] = []
    names = list(truth)
    for _ in range(rounds):
        for game in next_games(names, games, ["", "4", "44"]):
            expected = 1 / (1 + 10 ** ((truth[game.second] - truth[game.first]) / 400))
            # Draws take equally from wins and losses: the expected score stays the model's.
            draw = draw_share * 2 * min(expected, 1 - expected)
            roll = rng.random()
            score = 1.0 if roll < expected - draw / 2 else 0.5 if roll < expected + draw / 2 \
                else 0.0
            games.append(LadderGame(game.first, game.second, score))
    return games


def test_a_ladder_of_the_connect_four_levels_orders_them_as_their_calibration_does() -> None:
    truth = calibrated()
    games = simulate(truth, rounds=120, seed=1)
    ratings = fit(LEVELS, games, calibrated())
    assert [r.id for r in ratings] == LEVELS[::-1]
    # Anchored on average: the levels' mean is their calibrated mean.
    fitted = [r.rating for r in ratings if r.rating is not None]
    assert sum(fitted) / len(fitted) == pytest.approx(sum(truth.values()) / len(truth))
    assert all(r.anchored and r.games == 96 for r in ratings)


@pytest.mark.parametrize("seed", range(4))
def test_a_bot_on_the_ladder_is_rated_on_the_levels_scale_within_its_error(seed: int) -> None:
    rng = random.Random(seed)
    truth = calibrated()
    bots = {f"bot{k}": rng.uniform(900, 2300) for k in range(3)}
    games = simulate({**truth, **bots}, rounds=100, seed=seed)
    ratings = {r.id: r for r in fit([*LEVELS, *bots], games, calibrated())}
    for bot, strength in bots.items():
        found = ratings[bot]
        assert found.rating is not None and found.error is not None and not found.anchored
        assert 0 < found.error < 150
        assert abs(found.rating - strength) < 3 * found.error + 30, (bot, strength, found)


def test_one_anchored_level_sits_exactly_at_its_rating() -> None:
    games = simulate({"easy": 1451.0, "bot": 1700.0}, rounds=30, seed=2)
    ratings = {r.id: r for r in fit(["easy", "bot"], games, {"easy": 1451.0})}
    assert ratings["easy"].rating == pytest.approx(1451.0)
    assert ratings["bot"].rating is not None and ratings["bot"].rating > 1451.0


def test_an_entrant_no_game_links_to_a_level_is_listed_unrated_and_last() -> None:
    games = [LadderGame("easy", "bot", 1.0), LadderGame("bot", "easy", 0.5),
             LadderGame("loner", "other", 1.0)]
    ratings = fit(["loner", "easy", "bot", "other"], games, {"easy": 1451.0})
    assert [r.id for r in ratings][-2:] == ["loner", "other"]
    assert ratings[-1].rating is None and ratings[-1].error is None
    assert ratings[0].rating is not None and not math.isnan(ratings[0].rating)


def test_a_ladder_fit_refuses_what_it_cannot_rate() -> None:
    with pytest.raises(ValueError, match="AI level"):
        fit(["a", "b"], [LadderGame("a", "b", 1.0)], {})
    with pytest.raises(ValueError):
        fit(["easy", "b"], [LadderGame("easy", "zed", 1.0)], {"easy": 1000.0})
    with pytest.raises(ValueError):
        fit(["easy", "b"], [LadderGame("easy", "b", 0.7)], {"easy": 1000.0})
    with pytest.raises(ValueError):
        fit(["easy", "easy"], [], {"easy": 1000.0})


def test_the_schedule_brings_every_pair_round_alike_with_each_opening_both_ways() -> None:
    names = ["a", "b", "c", "d", "e"]
    openings = ["x", "y", "z"]
    games: list[LadderGame] = []
    sides: dict[frozenset[str], list[tuple[str, str]]] = {}  # pair -> (opening, first)
    rng = random.Random(4)
    for _ in range(60):
        busy = set(rng.sample(names, rng.randint(0, 2)))
        batch = next_games(names, games, openings, busy)
        seated = [p for g in batch for p in (g.first, g.second)]
        assert len(seated) == len(set(seated)) and not set(seated) & busy
        assert len(batch) == (len(names) - len(busy)) // 2
        for g in batch:
            sides.setdefault(frozenset((g.first, g.second)), []).append((g.opening, g.first))
        games += [LadderGame(g.first, g.second, 0.5) for g in batch]
    per_pair = Counter(frozenset((g.first, g.second)) for g in games)
    assert len(per_pair) == 10 and max(per_pair.values()) - min(per_pair.values()) <= 3
    for pair, played in sides.items():
        for k in range(0, len(played) - 1, 2):
            (one, first), (again, other) = played[k], played[k + 1]
            assert one == again == openings[(k // 2) % 3] and {first, other} == set(pair)


def test_the_schedule_needs_an_opening() -> None:
    with pytest.raises(ValueError):
        next_games(["a", "b"], [], [])


def test_the_rating_history_refits_each_prefix_and_ends_at_the_list() -> None:
    truth = {"beginner": calibrated()["beginner"], "bot": calibrated()["beginner"] + 300}
    played = simulate(truth, rounds=40, seed=3)
    timed = [(1000.0 + k, g) for k, g in enumerate(played)]
    anchors = {"beginner": truth["beginner"]}
    points = history(list(truth), timed, anchors, points=10)
    assert [p.played for p in points] == [4 * k for k in range(1, 11)]
    assert [p.at for p in points] == [1000.0 + 4 * k - 1 for k in range(1, 11)]
    now = {r.id: r.rating for r in fit(list(truth), played, anchors)}
    assert points[-1].ratings == now
    assert all(p.ratings["beginner"] == pytest.approx(truth["beginner"]) for p in points)
    # No game, no point; entrants no game links to the level yet are left out of one.
    assert history(["beginner", "bot"], [], anchors) == []
    lone = [(1.0, LadderGame("bot", "other", 1.0))]
    (point,) = history(["beginner", "bot", "other"], lone, anchors)
    assert point.ratings == {"beginner": truth["beginner"]}
    with pytest.raises(ValueError):
        history(list(truth), timed, anchors, points=0)


def test_head_to_head_counts_each_pair_from_the_side_that_sorts_first() -> None:
    games = [LadderGame("b", "a", 1.0), LadderGame("a", "b", 0.5), LadderGame("a", "b", 1.0),
             LadderGame("c", "a", 0.0)]
    assert [(h.a, h.b, h.wins, h.draws, h.losses) for h in head_to_head(games)] == [
        ("a", "b", 1, 1, 1), ("a", "c", 1, 0, 0)]
