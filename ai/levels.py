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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai.limits import Iteration, Limits
from games.base import State


@dataclass(frozen=True)
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
    """

    name: str
    order: int
    description: str
    max_depth: int | None
    soft_time: float
    hard_time: float
    nodes: int | None
    candidates: int
    margin: int
    rails: bool

    def __post_init__(self) -> None:
        problems = validate(self)
        if problems:
            raise ValueError(f"level {self.name!r}: " + "; ".join(problems))

    def limits(self) -> Limits:
        """The search bounds for one move at this level."""
        return Limits(
            depth=self.max_depth,
            soft_time=self.soft_time,
            hard_time=self.hard_time,
            nodes=self.nodes,
            multipv=self.candidates,
        )

    def to_dict(self) -> dict[str, Any]:
        # Shallow: every field is a plain value. Sent with every AI job, where
        # ``dataclasses.asdict``'s recursive deep copy showed up in the server's profile.
        return {f.name: getattr(self, f.name) for f in _FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Level:
        """A level from ``to_dict`` output; unknown keys are an error, so typos are caught."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"unknown level fields: {', '.join(sorted(unknown))}")
        return cls(**data)


MAX_NODES = 10_000_000_000
"""More nodes than the longest allowed move (60 s) can search at any engine's speed."""
MAX_CANDIDATES = 64
"""No position of either game has more moves than the board has cells."""
MAX_MARGIN = 1000
"""Connect Four's win score: a wider margin would let a level throw away won games."""


_FIELDS = dataclasses.fields(Level)


def validate(level: Level) -> list[str]:
    """Every reason ``level`` is impossible, as sentences (empty when it is fine)."""
    problems = []
    if not level.name or not level.name.replace("-", "").replace("_", "").isalnum():
        problems.append("name must be letters, digits, '-' or '_'")
    if level.order < 0:
        problems.append("order must be 0 or more")
    if level.max_depth is not None and not 1 <= level.max_depth <= 64:
        problems.append("max_depth must be between 1 and 64")
    if level.soft_time <= 0 or level.hard_time <= 0:
        problems.append("soft_time and hard_time must be positive")
    if level.soft_time > level.hard_time:
        problems.append("soft_time must not exceed hard_time")
    if level.hard_time > 60:
        problems.append("hard_time must be at most 60 seconds")
    if level.nodes is not None and not 1 <= level.nodes <= MAX_NODES:
        problems.append(f"nodes must be between 1 and {MAX_NODES:,}")
    if not 1 <= level.candidates <= MAX_CANDIDATES:
        problems.append(f"candidates must be between 1 and {MAX_CANDIDATES}")
    if not 0 <= level.margin <= MAX_MARGIN:
        problems.append(f"margin must be between 0 and {MAX_MARGIN}")
    return problems


def _level(name: str, order: int, description: str, depth: int | None, soft: float,
           hard: float, candidates: int, margin: int, rails: bool,
           nodes: int | None = None) -> Level:
    return Level(name, order, description, depth, soft, hard, nodes, candidates, margin, rails)


# Score units are each engine's: Connect Four scores follow Pons (a win is worth 1..21, more
# for a quicker one), Othello scores are the evaluation's disc-like units.
DEFAULT_LEVELS: Mapping[str, tuple[Level, ...]] = {
    "connect4": (
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
    ),
    "othello": (
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
    ),
}
"""The levels a fresh server offers; the storage layer seeds its table from these."""


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

    Deterministic for a given ``rng_seed``. With no iteration at all (the search was cut off
    before its first), it still returns a legal move: the rails' choice or the first legal
    move that does not lose at once.
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
    ranked = _ranked(last, legal)
    if level.rails:
        safe = [(m, s) for m, s in ranked if not loses_in_one(state, m)]
        if safe:
            ranked = safe
        else:
            safe_moves = [m for m in legal if not loses_in_one(state, m)]
            if safe_moves:
                ranked = [(m, 0) for m in safe_moves]
    if not ranked:
        return legal[0]
    best = ranked[0][1]
    # A bound above the leader's exact score is no better than it: gaps are never negative.
    gaps = [(m, max(0, best - s)) for m, s in ranked[: level.candidates]]
    pool = [(m, gap) for m, gap in gaps if gap <= level.margin]
    if len(pool) == 1:
        return pool[0][0]
    # Better moves are likelier: weight falls linearly with the gap to the best.
    weights = [level.margin - gap + 1 for _, gap in pool]
    return random.Random(rng_seed).choices([m for m, _ in pool], weights=weights)[0]


def _ranked(last: Iteration | None, legal: Sequence[int]) -> list[tuple[int, int]]:
    """Root moves with scores, best first; the engine's choice alone when it gave no list."""
    if last is None:
        return []
    scores = [(m, s) for m, s in last.root_scores if m in legal]
    if not scores:
        return [(last.move, last.score)] if last.move in legal else []
    # Ties go by move number, not by the engine's search order: the same scores then give
    # the same choice whichever way they arrived (a search, or the position cache, which
    # keeps scores but not the order the engine happened to try moves in).
    scores.sort(key=lambda pair: (-pair[1], pair[0]))
    if last.move in legal:
        best = next(((m, s) for m, s in scores if m == last.move), (last.move, last.score))
        if best[1] < scores[0][1]:
            # A bound above the engine's exact best is no better than it: its move leads.
            scores = [best, *[pair for pair in scores if pair[0] != last.move]]
    return scores
