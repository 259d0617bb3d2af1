"""Glicko-2 against the worked example of Glickman's "Example of the Glicko-2 system"."""

from __future__ import annotations

import pytest

from server.ratings.glicko import Outcome, Rating, update

PAPER_PLAYER = Rating(1500, 200, 0.06)
PAPER_GAMES = [
    Outcome(Rating(1400, 30), 1),
    Outcome(Rating(1550, 100), 0),
    Outcome(Rating(1700, 300), 0),
]


def test_the_papers_example_gives_the_papers_rating_deviation_and_volatility() -> None:
    after = update(PAPER_PLAYER, PAPER_GAMES, tau=0.5)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_the_order_of_games_within_a_period_does_not_matter() -> None:
    forward, backward = update(PAPER_PLAYER, PAPER_GAMES), update(PAPER_PLAYER, PAPER_GAMES[::-1])
    assert forward.rating == pytest.approx(backward.rating)
    assert forward.rd == pytest.approx(backward.rd)


def test_an_inactive_period_grows_the_deviation_and_keeps_the_rating() -> None:
    after = update(PAPER_PLAYER, [])
    assert after.rating == PAPER_PLAYER.rating
    assert after.volatility == PAPER_PLAYER.volatility
    # phi* = sqrt(phi^2 + sigma^2), step 6 of the paper, back on the Glicko scale.
    assert after.rd == pytest.approx(200.27, abs=0.01)
    assert update(after, []).rd > after.rd


def test_a_win_over_a_stronger_player_gains_more_than_one_over_a_weaker() -> None:
    me = Rating()
    strong = update(me, [Outcome(Rating(1800, 50), 1)])
    weak = update(me, [Outcome(Rating(1200, 50), 1)])
    assert strong.rating > weak.rating > me.rating
    assert update(me, [Outcome(Rating(1500, 50), 0.5)]).rating == pytest.approx(1500)


def test_a_surprising_run_of_results_raises_the_volatility() -> None:
    settled = Rating(1500, 50, 0.06)
    upsets = [Outcome(Rating(2300, 30), 1) for _ in range(10)]
    assert update(settled, upsets).volatility > settled.volatility
