"""Difficulty levels: the one named place for every knob that makes an AI weaker or stronger.

A ``Level`` is plain data (it round-trips through ``to_dict``/``from_dict``, so the admin
issue can keep levels in the database and edit them live). ``choose_move`` turns a level, a
position, the search's iterations and a seed into the move the AI plays; it is pure, so the
same inputs always give the same move and tests need no engine.

How weaker levels weaken, as strong engines do for their skill levels: they search shallower
and for less time, and then pick at random (seeded) among the ``candidates`` best root moves
whose scores are at most ``margin`` below the best, better moves more likely. They never
choose wildly: a move outside the margin is never played. Safety rails, on every level with
``rails`` set (all shipped levels above the weakest): always take a win in one, never leave
the opponent a win in one when some move avoids it.
"""

from __future__ import annotations

import dataclasses
import random
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, model_validator
from pydantic.dataclasses import dataclass
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from ai.limits import Iteration, Limits
from ai.views import EngineView
from games.base import State

MAX_DEPTH = 64
"""No game here lasts more plies than its board has cells."""
MAX_TIME = 60.0
"""Seconds: the longest a level may think about one move."""
MAX_NODES = 10_000_000_000
"""More nodes than the longest allowed move (60 s) can search at any engine's speed."""
MAX_CANDIDATES = 64
"""No position of either game has more moves than the board has cells."""
MAX_MARGIN = 1000
"""Connect Four's win score: a wider margin would let a level throw away won games."""
MAX_ORDER = 99
"""Places in one game's ladder: far more levels than anyone offers, and small enough that the
guessed rating of an uncalibrated level (``server.ratings.glicko.guessed_level_rating``) stays on
the rating scale."""
MAX_NAME = 32
"""Characters of a level's name: it is shown on the page and sent in every room."""
MAX_DESCRIPTION = 200
"""Characters: a line on the page, not an essay."""


# The one schema of a level: every bound is declared here and checked by pydantic whenever a
# Level is made (built-in, from the database, or from an admin's edit), and the sentences
# that explain a refusal are derived from these declarations (``_rule``), not written twice.
# Strict: an admin's ``"yes"`` is not a bool nor ``2.0`` a whole number.
@dataclass(frozen=True, config=ConfigDict(strict=True, extra="forbid", allow_inf_nan=False))
class Level:
    """One difficulty level of one game.

    - ``name``: stable identifier used by the protocol (``create_room.opponent.level``).
    - ``order``: 0 for the weakest; levels are listed and calibrated in this order.
    - ``max_depth``: deepest iteration, in plies (None: as deep as time allows).
    - ``soft_time`` / ``hard_time``: seconds; no new iteration after soft, abandon at hard.
    - ``nodes``: node budget (None: unbounded).
    - ``candidates``: how many of the best root moves may be chosen (1 = always the best);
      the search is asked for exact scores of that many (``Limits.multipv``).
    - ``margin``: how far below the best score, in the engine's score units, a chosen move
      may be (0 = only moves as good as the best).
    - ``rails``: take wins in one and stop losses in one (the strong levels have it).

    - ``selective``: search selectively (``Limits.selective``: Othello's Multi-ProbCut). Left
      out (None), it follows ``max_depth``: on for the levels bounded by time alone (the
      expert levels), where it buys depth in the same time, off for every level with a depth,
      whose strength was calibrated on full-width searches of that depth. An admin may set it
      either way; a level stored before the knob existed gets the rule.

    Making one checks every bound and raises pydantic's ``ValidationError`` (a
    ``ValueError``) whose errors each name their field; ``from_dict`` turns them into
    ``BadLevel`` sentences per field.
    """

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$", max_length=MAX_NAME)]
    order: Annotated[int, Field(ge=0, le=MAX_ORDER)]
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION)]
    max_depth: Annotated[int | None, Field(ge=1, le=MAX_DEPTH)]
    soft_time: Annotated[float, Field(gt=0, le=MAX_TIME)]
    hard_time: Annotated[float, Field(gt=0, le=MAX_TIME)]
    nodes: Annotated[int | None, Field(ge=1, le=MAX_NODES)]
    candidates: Annotated[int, Field(ge=1, le=MAX_CANDIDATES)]
    margin: Annotated[int, Field(ge=0, le=MAX_MARGIN)]
    rails: bool
    selective: bool | None = None

    @model_validator(mode="after")
    def _selective_follows_the_depth_unless_set(self) -> Level:
        if self.selective is None:
            object.__setattr__(self, "selective", self.max_depth is None)
        return self

    @model_validator(mode="after")
    def _soft_time_within_hard_time(self) -> Level:
        if self.soft_time > self.hard_time:
            # Both fields are to blame; pydantic gives a model-wide error no location, so the
            # fields travel in its context.
            raise PydanticCustomError(
                "soft_after_hard", "soft_time must not exceed hard_time",
                {"fields": ("soft_time", "hard_time")},
            )  # fmt: skip
        return self

    def limits(self) -> Limits:
        """The search bounds for one move at this level."""
        return Limits(
            depth=self.max_depth,
            soft_time=self.soft_time,
            hard_time=self.hard_time,
            nodes=self.nodes,
            multipv=self.candidates,
            selective=bool(self.selective),
        )

    def to_dict(self) -> dict[str, Any]:
        # Shallow: every field is a plain value. Sent with every AI job, where
        # ``dataclasses.asdict``'s recursive deep copy showed up in the server's profile.
        return {f.name: getattr(self, f.name) for f in _FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Level:
        """A level from ``to_dict`` output (or an edited copy of it). Raises ``BadLevel``
        naming every problem by its field; unknown keys are problems too, so typos are
        caught."""
        try:
            return cls(**data)
        except ValidationError as exc:
            raise BadLevel(_problems(exc)) from None


class BadLevel(ValueError):
    """Settings that make no possible level. ``problems`` maps each offending field to the
    sentences saying what is wrong with it."""

    def __init__(self, problems: Mapping[str, Sequence[str]]) -> None:
        self.problems = {field: list(sentences) for field, sentences in problems.items()}
        every = dict.fromkeys(s for sentences in self.problems.values() for s in sentences)
        super().__init__("; ".join(every))


_FIELDS = dataclasses.fields(Level)
_SCHEMA: dict[str, FieldInfo] = Level.__pydantic_fields__  # type: ignore[attr-defined]
_KINDS: dict[Any, str] = {
    int: "a whole number", float: "a number", str: "text", bool: "true or false"
}


def _problems(error: ValidationError) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in error.errors():
        loc, kind = problem["loc"], problem["type"]
        if kind == "soft_after_hard":
            fields, sentence = problem["ctx"]["fields"], problem["msg"]
        elif loc and kind == "unexpected_keyword_argument":
            fields, sentence = loc[:1], f"{loc[0]} is not a level field"
        elif loc and kind == "missing_argument":
            fields, sentence = loc[:1], f"{loc[0]} is missing"
        elif loc and str(loc[0]) in _SCHEMA:
            fields, sentence = loc[:1], _rule(str(loc[0]))
        else:
            fields, sentence = ("level",), problem["msg"]
        for field in fields:
            if sentence not in found.setdefault(str(field), []):
                found[str(field)].append(sentence)
    return found


def _rule(field: str) -> str:
    """What ``field`` must be, in words, read off its type and bounds in ``Level``."""
    info = _SCHEMA[field]
    kinds = [k for k in typing.get_args(info.annotation) if k is not type(None)]
    optional = bool(kinds)  # ``int | None``: None means no limit
    kind = kinds[0] if optional else info.annotation
    bound = {key: getattr(item, key) for item in info.metadata
             for key in ("ge", "gt", "le", "max_length", "pattern") if hasattr(item, key)}
    words = f"{field} must be {_KINDS[kind]}"
    if "ge" in bound and "le" in bound:
        words += f" between {bound['ge']:,} and {bound['le']:,}"
    elif "gt" in bound and "le" in bound:
        words += f" above {bound['gt']:g} and at most {bound['le']:g}"
    elif "ge" in bound:
        words += f" of {bound['ge']} or more"
    if "max_length" in bound:
        words += f" of at most {bound['max_length']} characters"
    if "pattern" in bound:
        words += " of letters, digits, '-' and '_'"  # the one pattern: names
    return words + (", or null (no limit)" if optional else "")


def _level(name: str, order: int, description: str, depth: int | None, soft: float,
           hard: float, candidates: int, margin: int, rails: bool,
           nodes: int | None = None) -> Level:
    return Level(name, order, description, depth, soft, hard, nodes, candidates, margin, rails)


# Score units are each engine's: Connect Four scores follow Pons (a win is worth 1..21, more
# for a quicker one), Othello scores are the evaluation's disc-like units.
CONNECT4_LEVELS = (
        # Depth alone barely separates the weak levels (pure depth 2 scored 55% against pure
        # depth 8 over 20 games: shallow searches reach the same parity-decided endings), so
        # their margins, in evaluation units (a threat is worth 10), do most of the weakening.
        _level("beginner", 0, "Looks two moves ahead and often picks a lesser move.",
               2, 0.05, 0.2, candidates=7, margin=60, rails=False),
        _level("easy", 1, "Sees simple threats, still makes mistakes.",
               4, 0.1, 0.3, candidates=4, margin=25, rails=True),
        _level("medium", 2, "Plays solid moves with a little variety.",
               8, 0.2, 0.6, candidates=3, margin=8, rails=True),
        _level("hard", 3, "Searches deep; rarely strays from the best move.",
               16, 0.5, 1.5, candidates=2, margin=2, rails=True),
        _level("expert", 4, "Best move found in its time, solving endgames exactly.",
               None, 1.5, 3.0, candidates=1, margin=0, rails=True),
)
"""Connect Four's default levels (its entry in ``ai``)."""

OTHELLO_LEVELS = (
        _level("beginner", 0, "Looks one move ahead and often picks a lesser move.",
               1, 0.05, 0.2, candidates=8, margin=12, rails=False),
        _level("easy", 1, "A short look ahead with plenty of variety.",
               3, 0.1, 0.3, candidates=4, margin=6, rails=True),
        _level("medium", 2, "Plays solid moves with a little variety.",
               6, 0.3, 0.8, candidates=3, margin=3, rails=True),
        _level("hard", 3, "Searches deep; rarely strays from the best move.",
               10, 0.8, 2.0, candidates=2, margin=1, rails=True),
        _level("expert", 4, "Best move found in its time, solving endgames exactly.",
               None, 2.0, 4.0, candidates=1, margin=0, rails=True),
)
"""Othello's default levels (its entry in ``ai``)."""

# What ``discus calibrate`` found for the levels above on the project's 2-core machine: Elo
# relative to the game's weakest level and its standard error (``server.ratings.level_calibration``
# says when they stand). Measure again whenever the default levels or the engines change:
#     discus calibrate connect4 --pairs all --games-per-pair 24 --seed 7
#     discus calibrate othello --games-per-pair 16 --seed 7
CONNECT4_MEASURED: Mapping[str, tuple[float, float]] = {
    # 240 games (every pair) in 5.5 min, 2026-11-26.
    "beginner": (0.0, 0.0), "easy": (451.0, 115.0), "medium": (641.0, 123.0),
    "hard": (931.0, 134.0), "expert": (1130.0, 142.0),
}
OTHELLO_MEASURED: Mapping[str, tuple[float, float]] = {
    # 64 games (adjacent pairs) in 7.3 min, 2026-11-29, both cores. Mean CPU seconds of a
    # searched move (what a worker spends on it): beginner 0.000, easy 0.001, medium 0.005,
    # hard 0.294, expert 1.313. Hard-expert went 0-1-15 and medium-hard 1-1-14, so the upper
    # levels' figures rest on wide errors.
    "beginner": (0.0, 0.0), "easy": (607.0, 249.0), "medium": (957.0, 282.0),
    "hard": (1307.0, 310.0), "expert": (1789.0, 358.0),
}


DEFAULT_LEVELS: Mapping[str, tuple[Level, ...]] = EngineView("levels")
"""The levels a fresh server offers, by game (each engine's ``ai.Engine.levels``); the
storage layer seeds its table from these."""


def levels_of(game: str, table: Mapping[str, Sequence[Level]] = DEFAULT_LEVELS) -> list[Level]:
    """The levels of ``game``, weakest first."""
    return sorted(table.get(game, ()), key=lambda level: level.order)


def find(game: str, name: str, table: Mapping[str, Sequence[Level]] = DEFAULT_LEVELS) -> Level:
    """The level called ``name`` of ``game``; ``KeyError`` if there is none."""
    for level in table.get(game, ()):
        if level.name == name:
            return level
    raise KeyError(f"{game} has no level {name!r}")


def win_in_one(state: State) -> int | None:
    """A move that ends the game won by the side to move, if any (lowest move first)."""
    for move in state.legal_moves():
        after = state.play(move)
        if after.is_over() and _won_by(after, state.to_move):
            return move
    return None


def _won_by(finished: State, seat: int) -> bool:
    result = finished.result()
    return result > 0 if seat == 0 else result < 0


def loses_in_one(state: State, move: int) -> bool:
    """True when after ``move`` the opponent can win at once."""
    after = state.play(move)
    if after.is_over():
        return False
    return win_in_one(after) is not None


def choose_move(state: State, level: Level, rng_seed: int,
                iterations: Iterable[Iteration]) -> int:
    """The move ``level`` plays in ``state`` given its search's iterations (the last counts).

    Only exact scores compete: by the ``Iteration`` contract the first ``level.candidates``
    root scores are exact and the rest are upper bounds, so a bound is never played over an
    exact score it merely equals (it may be far worse). A level with one candidate therefore
    plays the search's own best move, unless its rails overrule it. Deterministic for a given
    ``rng_seed``. With no iteration at all (the search was cut off before its first), it
    still returns a legal move: the rails' choice or the first legal move that does not lose
    at once.
    """
    legal = state.legal_moves()
    if not legal:
        raise ValueError("the game is over: there is no move to choose")
    if len(legal) == 1:
        return legal[0]
    if level.rails:
        winning = win_in_one(state)
        if winning is not None:
            return winning
    last: Iteration | None = None
    for iteration in iterations:
        last = iteration
    if last is not None and last.book:
        # An opening book's moves are all good: any of them, by the seed, so games vary.
        booked = sorted(m for m, _ in last.root_scores if m in legal)
        if level.rails:
            booked = [m for m in booked if not loses_in_one(state, m)]
        if booked:
            return random.Random(rng_seed).choice(booked)
    exact, bounded = _root_scores(last, legal, level.candidates)
    if level.rails:
        safe_exact = [(m, s) for m, s in exact if not loses_in_one(state, m)]
        safe_bounded = [(m, s) for m, s in bounded if not loses_in_one(state, m)]
        if safe_exact or safe_bounded:
            exact, bounded = safe_exact, safe_bounded
        else:  # every scored move loses at once (or none was scored): any safe move instead
            safe = [(m, 0) for m in legal if not loses_in_one(state, m)][: level.candidates]
            if safe:
                exact, bounded = safe, []
    if not exact:
        if not bounded:
            return legal[0]
        # Every exact move was ruled out: the best bound stands in, as nothing better is known.
        exact = bounded[:1]
    best = max(score for _, score in exact)
    # By move number, not arrival order: the position cache keeps scores but not the order
    # the engine tried moves in, and the same scores must give the same choice for a seed.
    pool = sorted((m, best - s) for m, s in exact if best - s <= level.margin)
    if len(pool) == 1:
        return pool[0][0]
    # Better moves are likelier: weight falls linearly with the gap to the best.
    weights = [level.margin - gap + 1 for _, gap in pool]
    return random.Random(rng_seed).choices([m for m, _ in pool], weights=weights)[0]


def _root_scores(last: Iteration | None, legal: Sequence[int], candidates: int
                 ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The legal root moves split into (exact scores, upper bounds), each in the search's
    order; the engine's move alone when it gave no list."""
    if last is None:
        return [], []
    scores = [(m, s) for m, s in last.root_scores if m in legal]
    if not scores:
        return ([(last.move, last.score)] if last.move in legal else []), []
    exact, bounded = scores[:candidates], scores[candidates:]
    if last.move in legal and all(m != last.move for m, _ in exact):
        # The engine's own move is exact by contract, wherever a list put it.
        mine = next((pair for pair in bounded if pair[0] == last.move), (last.move, last.score))
        bounded = [pair for pair in bounded if pair[0] != last.move]
        exact = [mine, *exact]
    return exact, bounded
