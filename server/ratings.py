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


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def update(player: Rating, games: Sequence[Outcome], tau: float = TAU) -> Rating:
    """``player``'s rating after a rating period in which it played ``games`` (all against
    opponents' ratings as they stood at the start of the period). With no games the rating
    and volatility stay and the deviation grows (step 6 alone): an idle player's rating is
    less certain."""
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Rating(player.rating, phi_star * SCALE, sigma)
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
    return Rating(mu_new * SCALE + DEFAULT_RATING, phi_new * SCALE, sigma_new)


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
