"""The engine ladder, sans-I/O: which entrants play next, and the rating list.

Entrants are bot accounts and AI levels of one game, named by id. The ladder plays games
between them under one clock from a fixed set of openings, each opening once with each
entrant moving first (``next_games``), and rates everyone from every game it has played
(``fit``).

The rating list is the maximum-likelihood Bradley-Terry fit the level calibration uses
(``ai.calibrate.fit_elo``: draws are half points, a virtual draw per pair keeps a perfect
score finite, errors from the likelihood's curvature), so the ladder and the calibration
cannot disagree on method. The fit alone fixes only differences; the ladder's numbers are
put on the people's scale by the AI levels among its entrants whose calibrated rating is
known (``server.ratings.glicko.level_rating``): the whole list is shifted so that those levels sit,
on average, at their calibrated ratings. A bot's number then means what a person's does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ai.calibrate import PairRecord, fit_elo


@dataclass(frozen=True)
class LadderGame:
    """A finished ladder game: ``first`` moved first; ``score`` is ``first``'s (1, 0.5, 0)."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class LadderRating:
    """An entrant's place on the list: ``rating`` on the people's scale with one standard
    error, both None while no game links it to an anchored level."""

    id: str
    rating: float | None
    error: float | None
    games: int
    score: float
    anchored: bool


@dataclass(frozen=True)
class Scheduled:
    """A ladder game to start: ``first`` moves first after ``opening`` (game notation)."""

    first: str
    second: str
    opening: str


def fit(entrants: Sequence[str], games: Iterable[LadderGame],
        anchors: Mapping[str, float]) -> list[LadderRating]:
    """The rating list of ``entrants`` from ``games``, best first (unrated last).
    ``anchors`` maps the AI levels among the entrants to their calibrated ratings; at least
    one must be an entrant (``ValueError`` else). Each error is one standard error of the
    entrant's difference from the anchored level with the most games (whose own error so
    reads 0); the levels' calibration errors are not added. As in the calibration, a pair
    one side always won is pulled together by its virtual draw: its gap is a lower bound."""
    fixed = [name for name in entrants if name in anchors]
    if not fixed:
        raise ValueError("a ladder needs an AI level with a known rating among its entrants")
    if len(set(entrants)) != len(entrants):
        raise ValueError("each entrant may be named once")
    known = set(entrants)
    played = list(games)
    for game in played:
        if {game.first, game.second} - known or game.first == game.second:
            raise ValueError(f"a game between {game.first} and {game.second}: not two entrants")
        if game.score not in (0.0, 0.5, 1.0):
            raise ValueError("a ladder game scores 1, 0.5 or 0")
    counts = {name: sum(1 for g in played if name in (g.first, g.second)) for name in fixed}
    pivot = max(fixed, key=lambda name: counts[name])  # the fit's own zero
    names = [pivot, *(name for name in entrants if name != pivot)]
    index = {name: k for k, name in enumerate(names)}
    records: dict[tuple[str, str], PairRecord] = {}
    for game in played:
        a, b = sorted((game.first, game.second), key=index.__getitem__)
        record = records.setdefault((a, b), PairRecord(a, b))
        points = game.score if a == game.first else 1.0 - game.score
        if points == 1.0:
            record.wins += 1
        elif points == 0.5:
            record.draws += 1
        else:
            record.losses += 1
        record.a_first += game.first == a
    relative = {r.level: r for r in fit_elo(names, list(records.values()))}
    offsets = [anchors[name] - relative[name].elo for name in fixed
               if not math.isnan(relative[name].elo)]
    shift = sum(offsets) / len(offsets)
    out = []
    for name in entrants:
        r = relative[name]
        rated = not math.isnan(r.elo)
        out.append(LadderRating(name, r.elo + shift if rated else None,
                                r.error if rated else None, r.games, r.score,
                                name in anchors))
    return sorted(out, key=lambda r: (r.rating is None, -(r.rating or 0.0), r.id))


def next_games(entrants: Sequence[str], played: Iterable[LadderGame],
               openings: Sequence[str], busy: Iterable[str] = ()) -> list[Scheduled]:
    """The games to start now among the entrants not ``busy``: each free entrant meets the
    free one it has played least (ties: the order of ``entrants``), so every pair comes
    round as often as every other. A pair's games go through ``openings`` in order, each
    twice with the seats swapped, so no entrant has the better side of an opening more
    often."""
    if not openings:
        raise ValueError("a ladder needs at least one opening (it may be empty: '')")
    between: dict[frozenset[str], int] = {}
    for game in played:
        key = frozenset((game.first, game.second))
        between[key] = between.get(key, 0) + 1
    taken = set(busy)
    free = [name for name in entrants if name not in taken]
    made: list[Scheduled] = []
    while len(free) >= 2:
        candidates = [(between.get(frozenset((free[i], free[j])), 0), i, j)
                      for i in range(len(free)) for j in range(i + 1, len(free))]
        count, i, j = min(candidates)
        a, b = free[i], free[j]
        opening = openings[(count // 2) % len(openings)]
        first, second = (a, b) if count % 2 == 0 else (b, a)
        made.append(Scheduled(first, second, opening))
        between[frozenset((a, b))] = count + 1
        free = [name for name in free if name not in (a, b)]
    return made


@dataclass(frozen=True)
class RatingPoint:
    """The rating list as it stood after the first ``played`` games (in the order they
    finished), the last of them finished at ``at``: the rated entrants' ratings."""

    played: int
    at: float
    ratings: Mapping[str, float]


HISTORY_POINTS = 30
"""At most this many points in ``history``: a chart has no use for one per game, and each
point is a whole fit."""


def history(entrants: Sequence[str], games: Sequence[tuple[float, LadderGame]],
            anchors: Mapping[str, float], points: int = HISTORY_POINTS) -> list[RatingPoint]:
    """How the rating list moved: ``fit`` over the first k games, for up to ``points``
    values of k spread evenly up to all of them. ``games`` are (finished at, game) in the
    order they finished. The fit over a prefix is what the list said then (the same
    method, the same anchors as now), so the chart and the list cannot disagree at the
    end. An entrant no game of the prefix links to an anchored level is left out of its
    point (unrated then)."""
    if points < 1:
        raise ValueError("a history needs at least one point")
    n = len(games)
    cuts = sorted({math.ceil(n * k / points) for k in range(1, points + 1)} - {0})
    out = []
    for cut in cuts:
        try:
            listed = fit(entrants, [g for _, g in games[:cut]], anchors)
        except (ValueError, ZeroDivisionError):
            continue
        rated = {r.id: r.rating for r in listed if r.rating is not None}
        if rated:
            out.append(RatingPoint(cut, games[cut - 1][0], rated))
    return out


@dataclass(frozen=True)
class HeadToHead:
    """Every finished game between ``a`` and ``b``, counted from ``a``'s side."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


def head_to_head(games: Iterable[LadderGame]) -> list[HeadToHead]:
    """The score of every pair that has met, ``a`` the one of the two that sorts first."""
    tally: dict[tuple[str, str], list[int]] = {}
    for game in games:
        a, b = sorted((game.first, game.second))
        points = game.score if a == game.first else 1.0 - game.score
        row = tally.setdefault((a, b), [0, 0, 0])
        row[0 if points == 1.0 else 1 if points == 0.5 else 2] += 1
    return [HeadToHead(a, b, *row) for (a, b), row in sorted(tally.items())]
