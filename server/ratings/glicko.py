"""Glicko-2 ratings, as in Mark Glickman's "Example of the Glicko-2 system" (2013).

Pure: no I/O, no clock, no randomness. A ``Rating`` is a value; ``update`` gives a player's
rating after one rating period from the games played in it (none: only the deviation grows).
Ratings are on the familiar Glicko scale (1500 / 350); the arithmetic runs on Glicko-2's
internal scale (``mu``, ``phi``), which ``SCALE`` converts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178
"""Glicko scale points per Glicko-2 unit (400 / ln 10)."""
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5
"""The system constant: how much volatility may change in a period (Glickman: 0.3 to 1.2;
smaller keeps ratings from swinging on improbable results)."""
EPSILON = 1e-6
"""Convergence tolerance of the volatility iteration (step 5 of the paper)."""
MIN_RATING, MAX_RATING = 0.0, 5000.0
MIN_DEVIATION = 30.0
MIN_VOLATILITY, MAX_VOLATILITY = 0.01, 0.5
"""The range every rating taken in or given out is clamped to (``bounded``): far wider than
any person or level reaches, and narrow enough that the arithmetic below cannot overflow or
divide by zero, whatever a database row or an admin's calibration holds."""


@dataclass(frozen=True)
class Rating:
    """A player's Glicko-2 rating: ``rating`` and its deviation ``rd`` on the Glicko scale
    (a 95% interval is about ``rating ± 2 rd``), and ``volatility`` (how erratic the player's
    results are)."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY

    @property
    def mu(self) -> float:
        return (self.rating - DEFAULT_RATING) / SCALE

    @property
    def phi(self) -> float:
        return self.rd / SCALE


@dataclass(frozen=True)
class Outcome:
    """One game in a rating period: the opponent's rating at the start of the period and
    the score, 1 for a win, 0.5 for a draw, 0 for a loss."""

    opponent: Rating
    score: float


def _clamp(value: float, low: float, high: float, default: float) -> float:
    return default if not math.isfinite(value) else min(high, max(low, value))


def bounded(rating: Rating) -> Rating:
    """``rating`` within ``MIN_RATING``..``MAX_RATING``, its deviation within
    ``MIN_DEVIATION``..``DEFAULT_DEVIATION`` and its volatility within bounds (a value that is
    not a number becomes the default): what ``update`` computes with and gives."""
    return Rating(_clamp(rating.rating, MIN_RATING, MAX_RATING, DEFAULT_RATING),
                  _clamp(rating.rd, MIN_DEVIATION, DEFAULT_DEVIATION, DEFAULT_DEVIATION),
                  _clamp(rating.volatility, MIN_VOLATILITY, MAX_VOLATILITY,
                         DEFAULT_VOLATILITY))


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def update(player: Rating, games: Sequence[Outcome], tau: float = TAU) -> Rating:
    """``player``'s rating after a rating period in which it played ``games`` (all against
    opponents' ratings as they stood at the start of the period). With no games the rating
    and volatility stay and the deviation grows (step 6 alone): an idle player's rating is
    less certain. Every rating in and out is ``bounded``, so no stored value can make it
    raise."""
    player = bounded(player)
    games = [Outcome(bounded(game.opponent), game.score) for game in games]
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return bounded(Rating(player.rating, phi_star * SCALE, sigma))
    # Steps 3 and 4: the estimated variance v and improvement delta.
    inverse_v = 0.0
    total = 0.0
    for game in games:
        g = _g(game.opponent.phi)
        e = _expected(mu, game.opponent.mu, game.opponent.phi)
        inverse_v += g * g * e * (1.0 - e)
        total += g * (game.score - e)
    v = 1.0 / inverse_v
    delta = v * total
    sigma_new = _volatility(delta, phi, v, sigma, tau)
    # Steps 6 to 8: the pre-period deviation, then the new deviation and rating.
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * total
    return bounded(Rating(mu_new * SCALE + DEFAULT_RATING, phi_new * SCALE, sigma_new))


def _volatility(delta: float, phi: float, v: float, sigma: float, tau: float) -> float:
    """Step 5: the new volatility, the root of the paper's f(x) found by the Illinois
    algorithm (regula falsi that halves the stale end's value, so it cannot stall)."""
    a = math.log(sigma * sigma)
    delta2, phi2 = delta * delta, phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return (ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2)
                - (x - a) / (tau * tau))

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


# --- Discus's use of it ---------------------------------------------------------------------
# Every rated game is a rating period of its own (as lichess does): ratings move at once,
# and a player's deviation shrinks game by game instead of at the end of a calendar period.

PROVISIONAL_RD = 110.0
"""A rating whose deviation is above this is provisional (lichess's mark): shown with a
``?``, left off the leaderboard unless asked for."""

LEVEL_ANCHOR = 1000.0
"""The rating of each game's weakest AI level. ``discus calibrate`` measures the levels'
Elo relative to the weakest (0); a level's rating is this plus its Elo (Elo and Glicko share
the logistic 400 / ln 10 scale), so a level's number keeps its meaning from run to run as
long as the weakest level plays the same. 1000 puts a beginner's level below a new
account's 1500: a person who only knows the rules is about even with it."""

LEVEL_MIN_RD = 50.0
"""The least deviation a level's rating carries: its calibration's standard error when that
is larger. Small and fixed, because levels' ratings are measured, never updated by games
against people (a level does not learn, so its strength is a constant to be measured)."""

UNCALIBRATED_STEP = 200.0
"""Before any calibration, the level ``order`` places is guessed at ``LEVEL_ANCHOR +
order * UNCALIBRATED_STEP``, with ``UNCALIBRATED_RD``: a wide deviation, so games against
a guessed level move a player's rating less."""
UNCALIBRATED_RD = 150.0


def is_provisional(rating: Rating) -> bool:
    """Whether too little is known about the rating to rank it."""
    return rating.rd > PROVISIONAL_RD


def level_rating(elo: float, error: float = 0.0) -> Rating:
    """A calibrated level's rating: ``elo`` relative to the weakest level, anchored at
    ``LEVEL_ANCHOR``; deviation the calibration's ``error``, at least ``LEVEL_MIN_RD``."""
    return bounded(Rating(LEVEL_ANCHOR + elo, max(LEVEL_MIN_RD, error), DEFAULT_VOLATILITY))


def guessed_level_rating(order: int) -> Rating:
    """A level never calibrated: a guess from its place in the ladder (0 the weakest)."""
    return bounded(Rating(LEVEL_ANCHOR + order * UNCALIBRATED_STEP, UNCALIBRATED_RD,
                          DEFAULT_VOLATILITY))


def after_game(player: Rating, opponent: Rating, score: float) -> Rating:
    """``player``'s rating after one game against ``opponent`` scoring ``score`` (1 win,
    0.5 draw, 0 loss): a rating period of one game."""
    return update(player, [Outcome(opponent, score)])
