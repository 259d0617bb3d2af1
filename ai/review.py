"""Game review and the analysis board: the engine's value of every move of a game.

Sans-I/O: moves in, values out; the server runs it on its AI workers and stores the result.

A position's *value* is from the side to move, in the game's units: Connect Four in Pons'
(22 minus the winner's stones, signed, always exact: the opening book, else the solver);
Othello in discs, the exact final disc difference once ``OTHELLO_EXACT_EMPTIES`` or fewer
squares are empty, else a search of ``OTHELLO_DEPTH`` plies (``ai.othello`` midgame units,
converted to discs).

Each move of a game gets the mover's value *before* it (the best the mover could get) and
*after* it (what the move played keeps), the engine's best move, the difference (``loss``,
never negative) and a verdict by that difference. A game's positions are valued from the
last backwards, so the proofs of the later positions sit in the solver's table when the
earlier ones are solved.

Proven values outlive a review: in an AI worker process (``use_store``) a review or an
analysis of a game with a solver first looks every position up in the position cache, takes
the proven values it finds, and keeps there what it proves, so the same positions are never
proved twice, by any review, analysis or move (the expert plays a proven position from the
cache).
"""

from __future__ import annotations

import importlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

import ai
import games
from ai.cached import EXACT, CachedResult, outcome_result
from ai.limits import Limits
from games.base import State

VERDICTS = ("best", "good", "inaccuracy", "mistake", "blunder")
"""From no loss to the worst; the page marks the last three ``?!``, ``?`` and ``??``."""

C4_GOOD_UNITS = 2
"""Connect Four: a move that keeps the outcome (win, draw or loss) but loses at most this many
units of Pons' score (a win two own moves later, a loss two own moves sooner) is ``good``;
more is an ``inaccuracy``. A move that turns a win into a draw, or a draw into a loss, is a
``mistake``; a win into a loss, a ``blunder``."""

OTHELLO_THRESHOLDS = (2, 6, 12)
"""Othello: the most discs a ``good`` move, an ``inaccuracy`` and a ``mistake`` may lose;
more than the last is a ``blunder``. A move that loses nothing is ``best``."""

OTHELLO_EXACT_EMPTIES = 20
"""Othello positions with at most this many empty squares are solved exactly."""

OTHELLO_DEPTH = 8
"""Plies of the search that values an Othello position with more empty squares, every root
move searched to the same depth so that the moves' scores compare."""

C4_SOLVE_SECONDS = 10.0
"""Most a review spends proving one Connect Four position the book does not hold; past it
the position is left unvalued (``exact`` false, no verdict). Positions from a dozen plies on
take milliseconds; the first plies off the book's lines can take minutes."""

REVIEW_SHARE = 2.5
"""A review may spend ``REVIEW_SHARE`` times its per-position seconds in all, and a position
gets whatever of that is left when it is more than its own seconds. Most positions of a game
prove in milliseconds and a review proves the last plies first, so the one hard position of a
game, the first off the book's lines, can have most of 25 s instead of giving up at 10 (a
casual game's ply-5 position took 10.6 s: exact, or unvalued, by the load of the moment)."""

ANALYSIS_SOLVE_SECONDS = 3.0
"""Most the analysis board spends proving one Connect Four move's position."""


@dataclass(frozen=True)
class MoveReview:
    """One move of a reviewed game. Values are the mover's (``seat``), in the game's units.

    ``before``: the value of the position the move was played in (the best the mover could
    get); ``after``: the value the move played keeps; ``loss``: ``before - after``, at least 0.
    ``best``: a move of the engine's that keeps ``before``. ``exact``: both values are proven.
    ``verdict``: one of ``VERDICTS``, None when the position could not be valued in time.
    """

    ply: int
    move: int
    seat: int
    before: int | None
    after: int | None
    best: int | None
    loss: int | None
    exact: bool
    verdict: str | None
    book: bool = False
    """Both values are the opening book's: the move played is one of its moves."""


@dataclass(frozen=True)
class Review:
    """Every move's review, and the value of each position from the first player's side
    (``values[i]`` before ply ``i``; the last is the finished game's result), for a chart.
    ``values_exact[i]`` says whether ``values[i]`` is proven (None: not valued in time)."""

    game: str
    moves: tuple[MoveReview, ...]
    values: tuple[int | None, ...]
    values_exact: tuple[bool, ...]


@dataclass(frozen=True)
class MoveValue:
    """One legal move on the analysis board: the value it keeps for the side to move."""

    move: int
    value: int | None
    exact: bool
    book: bool = False
    """The value is the opening book's (``ReviewRules.book``)."""


@dataclass(frozen=True)
class _Valued:
    """A position's value from its side to move, a best move, and whether it is proven."""

    value: int | None
    best: int | None
    exact: bool
    scores: dict[int, int] | None = None
    """Every root move's value when one search gave them all (Othello's midgame), or the
    opening book's moves' values (``book``)."""
    book: bool = False
    """The value and ``scores`` are the opening book's (``ReviewRules.book``)."""


class ProvenStore(Protocol):
    """Where proven values outlive a review: the position cache of an AI worker process
    (``server.storage.SyncPositionCache`` fits, wrapped by the worker). ``lookup`` gives one
    result or None per state; ``save`` keeps (state, result) pairs. Either may fail quietly
    (a miss, nothing kept): the review then proves as without a store."""

    def lookup(self, states: Sequence[State]) -> list[CachedResult | None]: ...

    def save(self, results: Sequence[tuple[State, CachedResult]]) -> None: ...


_store: ProvenStore | None = None


def use_store(store: ProvenStore | None) -> None:
    """Read proven values from ``store`` before proving, and keep there what is proven
    (reviews and the analysis board of games with a solver); None: prove everything."""
    global _store
    _store = store


def _known_values(solver: str | None) -> Callable[[State], tuple[int, int] | None] | None:
    """The solver module's ``known_value`` (values it holds without a search), if it has one."""
    return getattr(importlib.import_module(solver), "known_value", None) if solver else None


class _Proven:
    """The proven values a review or an analysis found without a proof (the ``solver``
    module's ``known_value``, the shipped book, then the store), and the ones it proved (kept
    at the end, in one call)."""

    def __init__(self, states: Sequence[State], solver: str | None = None) -> None:
        self.found: dict[State, _Valued] = {}
        self.outcomes: dict[State, int] = {}
        """Outcomes the store holds proven for positions whose value it does not hold."""
        self.learned: list[tuple[State, CachedResult]] = []
        known = _known_values(solver)
        if known is not None:
            for state in states:
                held = None if state.is_over() else known(state)
                if held is not None:
                    self.found[state] = _Valued(held[0], held[1], True)
        if _store is None:
            return
        wanted = [s for s in states if not s.is_over() and s not in self.found]
        try:
            hits = _store.lookup(wanted) if wanted else []
        except Exception:  # a store that fails is a store that holds nothing
            hits = [None] * len(wanted)
        for state, hit in zip(wanted, hits, strict=True):
            if hit is not None and hit.exact and hit.bound == EXACT:
                self.found[state] = _Valued(hit.score, hit.move, True)
            elif hit is not None and hit.outcome is not None:
                self.outcomes[state] = hit.outcome

    def get(self, state: State) -> _Valued | None:
        return self.found.get(state)

    def derive(self, parent: State, move: int, child: State) -> None:
        """Value ``child`` without a proof when ``parent``'s proven value names ``move`` as
        the move that achieves it: the child's value is then exactly the parent's, negated.
        A book or a stored proof holds the positions where a player is to move on its lines,
        not the ones its moves lead to; this values those at no cost (the first positions
        off the book that a review meets are the ones that take minutes to prove). The
        child's own best move stays unknown."""
        here = self.found.get(parent)
        if (child in self.found or child.is_over() or here is None or not here.exact
                or here.value is None or here.best != move):
            return
        self.found[child] = _Valued(-here.value, None, True)

    def learn(self, state: State, valued: _Valued) -> None:
        """Keep ``valued`` for ``state`` when proven and not already in the store."""
        if (_store is None or not valued.exact or valued.value is None or state.is_over()
                or state in self.found):
            return
        result = CachedResult(_cells_left(state), valued.value, EXACT, valued.best, True)
        self.learned.append((state, result))

    def learn_outcome(self, state: State, outcome: int, move: int | None) -> None:
        """Keep a proven win or loss of ``state`` whose size is not known (a draw is a value:
        ``learn`` it) when the store does not hold it already."""
        if _store is None or state in self.outcomes or outcome == 0:
            return
        self.outcomes[state] = outcome
        self.learned.append((state, outcome_result(outcome, move)))

    def keep(self) -> None:
        if _store is None or not self.learned:
            return
        try:
            _store.save(self.learned)
        except Exception:  # kept or not, the review's answer stands
            pass


def _cells_left(state: State) -> int:
    """Plies left at most (the depth a proven entry is stored at): the empty cells."""
    cells = games.load(state.game_name).cells(state)
    return sum(1 for c in cells if c is None)


Check = Callable[[], None]
"""Called between two positions valued; may raise to stop the work there (the AI worker's
way to take its process back for a live move)."""


def _no_check() -> None:
    return None


@dataclass(frozen=True)
class ReviewRules:
    """How one game's positions are valued and its moves judged: part of its engine's entry
    in ``ai`` (``ai.Engine.review``). The defaults suit a small game its engine solves
    outright: every position searched exactly, values shown as signed numbers, a move
    judged by the outcome it gives away.

    - ``solver``: a module proving positions (``exact_value(state, seconds, stop)`` and
      ``value_at_most(state, value, seconds, stop)``; Connect Four's), used instead of search.
    - ``exact``: whether ``ai.best(state, Limits(exact=True))`` solves ``state`` in good time.
    - ``depth``: plies of the search that values a position ``exact`` refuses, every root
      move searched alike so their scores compare.
    - ``label``: ``(ply, value, exact, mover)`` as people read it (see ``label``).
    - ``verdict``: ``(before, after)``, ``after < before``, to a verdict past ``best``.
    - ``win_in``: ``(ply, score, exact)`` of a search to the ``ai_thinking`` message's
      ``win_in`` (None: nothing proven, or the game gives no length).
    - ``book``: a searched game's opening book: (move, value) pairs, best first, of the moves
      it holds for a position, or None. Its values come first, as a solver's book does for
      Connect Four: deeper than the review's search, and one value for symmetric positions.
    """

    solver: str | None = None
    exact: Callable[[State], bool] = lambda state: True
    depth: Callable[[State], int] = lambda state: 1
    label: Callable[[int, int, bool, bool], str] = (
        lambda ply, value, exact, mover: f"{value:+d}" + (" exact" if exact else ""))
    verdict: Callable[[int, int], str] = lambda before, after: _verdict_by_outcome(
        before, after, 0)
    win_in: Callable[[int, int, bool], int | None] = lambda ply, score, exact: None
    book: Callable[[State], Sequence[tuple[int, int]] | None] = lambda state: None


def rules_of(game_name: str) -> ReviewRules:
    """The review rules of ``game_name``'s engine; ``ValueError`` if it has no engine."""
    return ai.engine(game_name).review


def review(game_name: str, moves: Sequence[int], solve_seconds: float = C4_SOLVE_SECONDS,
           check: Check = _no_check, stop: np.ndarray | None = None) -> Review:
    """Review the game reached by ``moves`` (ints) from the start; it need not be finished.
    ``solve_seconds`` bounds the proof of each Connect Four position the book lacks (more
    while the review has not spent ``REVIEW_SHARE`` times it in all);
    ``check`` is called before each position is valued and at the end; ``stop``, a stop
    array the Connect Four solver polls, may be raised by another thread to end a proof at
    once (``check`` must then raise: the review is being given up).

    ``ValueError`` for an unknown game, ``games.IllegalMove`` for an illegal move."""
    game = games.load(game_name)
    states = [game.initial()]
    for move in moves:
        states.append(states[-1].play(move))
    solver = rules_of(game_name).solver
    proven = _Proven(states if solver is not None else [], solver)
    for ply, move in enumerate(moves):
        proven.derive(states[ply], move, states[ply + 1])
    valued: list[_Valued] = [_terminal(states[-1])] if states[-1].is_over() else []
    last = len(states) - (1 if valued else 0)
    spare_until = time.perf_counter() + REVIEW_SHARE * solve_seconds

    def budget() -> float:
        return max(solve_seconds, spare_until - time.perf_counter())

    for ply in range(last - 1, -1, -1):  # valued[0] is the value of states[ply + 1]
        known = proven.get(states[ply])
        if known is not None:
            valued.insert(0, known)
            continue
        _ready(check, stop)
        found = (_kept(states[ply], moves[ply], valued[0], budget(), stop) if valued
                 else None)
        played = moves[ply] if ply < len(moves) else None
        valued.insert(0, found or _value(states[ply], budget(), stop, played))
        proven.learn(states[ply], valued[0])
    check()  # a proof stopped from outside is no unvalued position: give the review up
    proven.keep()
    # valued[i] is now the value of states[i]
    reviews = []
    for ply, move in enumerate(moves):
        reviews.append(_review_move(game_name, ply, move, states[ply], valued[ply],
                                    valued[ply + 1]))
    values = tuple(
        None if v.value is None else (v.value if s.to_move == 0 else -v.value)
        for s, v in zip(states, valued, strict=True)
    )
    return Review(game_name, tuple(reviews), values, tuple(v.exact for v in valued))


def analyse(state: State, check: Check = _no_check, stop: np.ndarray | None = None,
            seconds: float = ANALYSIS_SOLVE_SECONDS) -> list[MoveValue]:
    """The value of every legal move of ``state`` for its side to move, best first (ties in
    the order of ``legal_moves``). ``ValueError`` if the game is over. ``check`` and
    ``stop`` as for ``review`` (around each Connect Four move's proof); a Connect Four move
    whose proof takes longer than ``seconds`` is left unvalued."""
    legal = state.legal_moves()
    if not legal:
        raise ValueError("the game is over: there is no move to analyse")
    rules = rules_of(state.game_name)
    if rules.solver is not None:
        children = [state.play(move) for move in legal]
        proven = _Proven([state, *children], rules.solver)
        found = []
        for move, child in zip(legal, children, strict=True):
            proven.derive(state, move, child)
            known = proven.get(child)
            if known is not None and known.value is not None:
                found.append(MoveValue(move, -known.value, True))
                continue
            _ready(check, stop)
            value = _child_value(rules.solver, child, move, seconds, stop)
            found.append(value)
            if value.value is not None:
                proven.learn(child, _Valued(-value.value, None, True))
        check()
        proven.keep()
    else:
        found = _book_moves(rules, state, legal) or _searched_moves(rules, state, legal)
    return _best_first(found, legal)


def _book_moves(rules: ReviewRules, state: State, legal: list[int]) -> list[MoveValue] | None:
    """Every legal move of a position the opening book holds: its moves at the book's values,
    the others from the review's search, each put below every book move (the book holds
    every move its deeper search found near the best, so one it left out is worse than all
    it kept, whatever a shallower search says). None when the book does not hold it."""
    held = rules.book(state)
    if not held:
        return None
    values = dict(held)
    found = [MoveValue(m, v, False, book=True) for m, v in held]
    rest = [m for m in legal if m not in values]
    if rest:
        below = min(values.values()) - 1
        searched = _searched_scores(rules, state, legal)
        found += [MoveValue(m, min(searched[m], below), False) for m in rest]
    return found


def analyse_known(state: State) -> list[MoveValue] | None:
    """``analyse``'s answer where it needs no proof and no store: every move's value known
    to the game's solver module without a search (``known_value``: Connect Four's shipped
    book, which holds every position of the first plies), best first; None if one is not
    known (or the game has no such module). Cheap enough for the server's own process, so the
    first plies of any game are answered without waiting for a worker."""
    legal = state.legal_moves()
    solver = rules_of(state.game_name).solver if legal else None
    known = _known_values(solver)
    if known is None:
        return None
    found = []
    for move in legal:
        child = state.play(move)
        if child.is_over():
            done = _terminal(child).value
            assert done is not None
            found.append(MoveValue(move, -done, True))
            continue
        hit = known(child)
        if hit is None:
            return None
        found.append(MoveValue(move, -hit[0], True))
    return _best_first(found, legal)


def _best_first(found: list[MoveValue], legal: list[int]) -> list[MoveValue]:
    """Valued moves first, best first; ties in the order of ``legal``."""
    order = {m: i for i, m in enumerate(legal)}
    return sorted(found, key=lambda mv: (mv.value is None, -(mv.value or 0), order[mv.move]))


@dataclass(frozen=True)
class Proved:
    """What ``prove_positions`` did with each position it was given (indices into them):
    ``proved`` now (and kept in the store), ``known`` already (the book, the store, or a
    finished game), ``unproved`` within its budget; ``outcomes``: those of ``unproved``
    whose win or loss (not its size) was proven now and kept."""

    proved: tuple[int, ...]
    known: tuple[int, ...]
    unproved: tuple[int, ...]
    outcomes: tuple[int, ...] = ()


def prove_positions(game_name: str, positions: Sequence[Sequence[int]],
                    seconds: float = C4_SOLVE_SECONDS, check: Check = _no_check,
                    stop: np.ndarray | None = None) -> Proved:
    """Prove the positions reached by each of ``positions`` (moves from the start), in order,
    each within ``seconds``, keeping each proof in the store as soon as it is made (so a task
    given back part way loses nothing it proved). An idle worker's task: the server hands it
    the positions people reach most that it has not seen proven. ``check`` and ``stop`` as for
    ``review``. ``ValueError`` for a game without a solver.

    Where the solver module proves outcomes (``outcome_value``: Connect Four's weak solve),
    a position's outcome is proven first and kept at once (the store's, if it holds one, is
    taken instead), then its exact score within what the outcome allows, in the rest of the
    budget: a position too hard for the exact proof still leaves its win or loss in the
    store for the expert (``ai.cached.known_limits``)."""
    solver = rules_of(game_name).solver
    if solver is None:
        raise ValueError(f"{game_name} has no solver to prove positions with")
    engine = importlib.import_module(solver)
    game = games.load(game_name)
    states = []
    for moves in positions:
        state = game.initial()
        for move in moves:
            state = state.play(move)
        states.append(state)
    proven = _Proven(states, solver)
    proved, known, unproved, outcomes = [], [], [], []
    for index, state in enumerate(states):
        if state.is_over() or proven.get(state) is not None:
            known.append(index)
            continue
        _ready(check, stop)
        found, kept = _prove(engine, state, seconds, check, stop, proven)
        if kept:
            outcomes.append(index)
        if found is None:
            unproved.append(index)
            continue
        proven.learn(state, _Valued(found[0], found[1], True))
        proven.keep()
        proven.learned.clear()
        proved.append(index)
    check()  # a proof stopped from outside is no position too hard: give the task up
    return Proved(tuple(proved), tuple(known), tuple(unproved),
                  tuple(i for i in outcomes if i in unproved))


def _prove(engine: Any, state: State, seconds: float, check: Check, stop: np.ndarray | None,
           proven: _Proven) -> tuple[tuple[int, int] | None, bool]:
    """(exact value and a move achieving it, or None: not within ``seconds``; whether a win
    or a loss was proven and kept on the way) of ``state``: the solver module's
    ``exact_value``, after its ``outcome_value`` where it has one (see
    ``prove_positions``)."""
    weak = getattr(engine, "outcome_value", None)
    if weak is None:
        return engine.exact_value(state, seconds, stop), False
    deadline = time.perf_counter() + seconds
    outcome, kept = proven.outcomes.get(state), False
    if outcome is None:
        weakly = weak(state, seconds, stop)
        if weakly is None:
            return None, False
        outcome, move = weakly
        if outcome == 0 and move is not None:
            return (0, move), False  # a draw is an exact score, its move proven with it
        proven.learn_outcome(state, outcome, move)
        if proven.learned:
            proven.keep()
            proven.learned.clear()
            kept = True
        _ready(check, stop)
    left = deadline - time.perf_counter()
    if left <= 0:
        return None, kept
    return engine.exact_value(state, left, stop, outcome), kept


def label(game_name: str, ply: int, value: int | None, exact: bool, mover: bool = True,
          book: bool = False) -> str:
    """A value as people read it: Connect Four ``win in 7`` (the winner's seventh own move
    from here wins, as ``ai_thinking.win_in`` counts), ``draw``, ``loss in 12``, ``won``,
    ``lost``; Othello ``+6`` (discs), ``+6 exact`` when proven, ``+1 book`` when the opening
    book's. ``value`` is from the side to move at ``ply``, or with ``mover`` false from the
    other side (the one that just moved)."""
    if value is None:
        return "unknown"
    shown = rules_of(game_name).label(ply, value, exact, mover)
    return f"{shown} book" if book and not exact else shown


def connect4_label(ply: int, value: int, exact: bool, mover: bool) -> str:
    """Connect Four's ``label``: Pons' scores as wins and losses in so many own moves."""
    if value == 0:
        return "draw"
    stones = 22 - abs(value)  # the winner's stones when the game ends
    own = ply // 2 if mover else ply - ply // 2  # stones of the side whose value it is
    left = stones - own if value > 0 else stones - (ply - own)
    if left <= 0:
        return "won" if value > 0 else "lost"
    return f"{'win' if value > 0 else 'loss'} in {left}"


def verdict(game_name: str, before: int, after: int) -> str:
    """The verdict on a move that took the mover's value from ``before`` to ``after``."""
    if max(0, before - after) == 0:
        return "best"
    return rules_of(game_name).verdict(before, after)


def _verdict_by_outcome(before: int, after: int, good_units: int) -> str:
    """A win given up for a loss is a ``blunder``, for a draw (or a draw for a loss) a
    ``mistake``; a loss of at most ``good_units`` keeping the outcome is ``good``."""
    drop = _sign(before) - _sign(after)
    if drop >= 2:
        return "blunder"
    if drop == 1:
        return "mistake"
    return "good" if before - after <= good_units else "inaccuracy"


def connect4_verdict(before: int, after: int) -> str:
    """Connect Four's verdict: by the outcome given away, then by ``C4_GOOD_UNITS``."""
    return _verdict_by_outcome(before, after, C4_GOOD_UNITS)


def othello_verdict(before: int, after: int) -> str:
    """Othello's verdict: by the discs lost (``OTHELLO_THRESHOLDS``)."""
    loss = before - after
    for name, most in zip(VERDICTS[1:], OTHELLO_THRESHOLDS, strict=False):
        if loss <= most:
            return name
    return "blunder"


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _review_move(game_name: str, ply: int, move: int, state: State, here: _Valued,
                 there: _Valued) -> MoveReview:
    seat = state.to_move
    before, best = here.value, here.best
    if here.scores is not None:  # one search (or the book) scored every move: like with like
        after: int | None = here.scores.get(move)
        exact = False
    else:
        after = None if there.value is None else -there.value
        exact = here.exact and there.exact
    if before is None or after is None:
        return MoveReview(ply, move, seat, before, after, best, None, False, None)
    if len(state.legal_moves()) == 1:  # a forced move (an Othello pass, a last column)
        before = after
    if after > before and exact:
        raise AssertionError(f"ply {ply}: a move cannot keep more than the position's value")
    before = max(before, after)  # a search's best can fall short of a move it rated lower
    if before == after:
        best = move
    return MoveReview(ply, move, seat, before, after, best, before - after, exact,
                      verdict(game_name, before, after), book=here.book)


def _ready(check: Check, stop: np.ndarray | None) -> None:
    """Before a proof: ``check``, then lower ``stop`` if the last proof's deadline raised it."""
    check()
    if stop is not None:
        stop[0] = 0


def _kept(state: State, move: int, after: _Valued, solve_seconds: float,
          stop: np.ndarray | None) -> _Valued | None:
    """A Connect Four position's value when the move played kept it: the played move's value
    (known from the next position) is the position's when one null-window search shows no move
    does better, so most moves of a game cost one search, not a full solve. None: a move does
    better (solve the position); unknown when even that search ran out of time (a full solve
    would take longer still)."""
    solver = rules_of(state.game_name).solver
    if solver is None or after.value is None or not after.exact:
        return None
    engine = importlib.import_module(solver)
    kept = -after.value
    at_most = engine.value_at_most(state, kept, solve_seconds, stop)  # type: ignore[arg-type]
    if at_most is None:
        return _Valued(None, None, False)
    return _Valued(kept, move, True) if at_most else None


def _terminal(state: State) -> _Valued:
    result = state.result()
    return _Valued(result if state.to_move == 0 else -result, None, True)


def _value(state: State, solve_seconds: float, stop: np.ndarray | None = None,
           played: int | None = None) -> _Valued:
    """A position's value (and, when searched, every move's, from the same search). A
    position the opening book holds takes the book's values, unless the move ``played``
    there is not one of the book's: then all its moves come from one search, so the move's
    loss is measured against its siblings' values of that search, never across two."""
    if state.is_over():
        return _terminal(state)
    rules = rules_of(state.game_name)
    held = rules.book(state) if rules.solver is None else None
    if held and (played is None or played in dict(held)):
        return _Valued(held[0][1], held[0][0], False, dict(held), book=True)
    if rules.solver is not None:
        engine = importlib.import_module(rules.solver)
        found = engine.exact_value(state, solve_seconds, stop)
        if found is None:
            return _Valued(None, None, False)
        return _Valued(found[0], found[1], True)
    legal = state.legal_moves()
    if rules.exact(state):
        it = ai.best(state, Limits(exact=True))
        return _Valued(it.score, it.move, it.exact)
    scores = _searched_scores(rules, state, legal)
    best = max(legal, key=lambda m: (scores[m], -legal.index(m)))
    return _Valued(scores[best], best, False, scores)


def _searched_scores(rules: ReviewRules, state: State, legal: list[int]) -> dict[int, int]:
    """Every legal move's score at the rules' depth, from one search, folded by the board's
    symmetries: moves leading to images of one position get one value, and a position
    searched before, in any orientation, gives the values kept then (``_SEARCHED``). The
    engine's search keeps a table between searches, so two searches of symmetric positions
    (or one search's symmetric moves) can score differently; people comparing the four
    first moves of Othello, or a review and an analysis, must see one value."""
    depth = rules.depth(state)
    children = [_folded(state.play(move)) for move in legal]
    kept_key = (state.game_name, _folded(state), depth)
    kept = _SEARCHED.get(kept_key)
    if kept is None or any(child not in kept for child in children):
        scores = dict(ai.best(state, Limits(depth=depth, multipv=len(legal))).root_scores)
        kept = {}
        for child, move in zip(children, legal, strict=True):  # symmetric moves: the best
            kept[child] = max(scores[move], kept.get(child, scores[move]))
        _SEARCHED[kept_key] = kept
        while len(_SEARCHED) > SEARCHED_KEPT:
            _SEARCHED.popitem(last=False)
    _SEARCHED.move_to_end(kept_key)
    return {move: kept[child] for child, move in zip(children, legal, strict=True)}


SEARCHED_KEPT = 4096
"""Searched positions whose moves' values a worker process keeps (``_searched_scores``): a
few long games' worth, a few hundred kilobytes."""

_SEARCHED: OrderedDict[tuple[str, tuple[int, int], int], dict[tuple[int, int], int]] = (
    OrderedDict())
"""(game, folded position, depth) -> each move's value, by the folded position it leads to;
least recently used first."""


def _folded(state: State) -> tuple[int, int]:
    """The position under the least of the board's symmetries (``Game.transform``), as
    (stones of the side to move, stones of the other): one key for all its images. Cells
    are numbered as ``Game.cells`` gives them; any numbering the symmetries permute will do,
    since only the keys are compared."""
    game = games.load(state.game_name)
    side = state.to_move if state.to_move is not None else 0
    mine = theirs = 0
    for i, owner in enumerate(game.cells(state)):
        if owner is None:
            continue
        if owner == side:
            mine |= 1 << i
        else:
            theirs |= 1 << i
    return min((game.transform(mine, s), game.transform(theirs, s))
               for s in range(game.symmetries))


def _searched_moves(rules: ReviewRules, state: State, legal: list[int]) -> list[MoveValue]:
    if rules.exact(state):
        it = ai.best(state, Limits(exact=True, multipv=len(legal)))
        return [MoveValue(m, s, it.exact) for m, s in it.root_scores]
    return [MoveValue(m, s, False) for m, s in _searched_scores(rules, state, legal).items()]


def _child_value(solver: str, child: State, move: int, seconds: float,
                 stop: np.ndarray | None = None) -> MoveValue:
    """A move's exact value from its child position (proved by ``solver``), negated."""
    if child.is_over():
        done = _terminal(child)
        assert done.value is not None
        return MoveValue(move, -done.value, True)
    engine = importlib.import_module(solver)
    found = engine.exact_value(child, seconds, stop)
    if found is None:
        return MoveValue(move, None, False)
    return MoveValue(move, -found[0], True)


def _empties(state: State) -> int:
    """Empty squares of an Othello position."""
    P, O = state.mover_boards()  # type: ignore[attr-defined]
    return 64 - (P | O).bit_count()


def connect4_win_in(ply: int, score: int, exact: bool) -> int | None:
    """A proven Connect Four result as the ``ai_thinking`` message's ``win_in``, from the
    search's ``score`` for the side to move at ``ply``: exact scores are Pons' (22 minus the
    winner's stones), and the heuristic search scores a win it found as ``WIN`` plus Pons'.
    None when nothing is proven, and for a draw."""
    from ai.connect4.evaluation import MAX_EVAL, WIN

    if exact:
        pons = score
    elif abs(score) > MAX_EVAL:
        pons = score - WIN if score > 0 else score + WIN
    else:
        return None
    if pons == 0:
        return None
    mine = ply // 2  # the stones the side to move has played (it moves at even or odd plies)
    if pons > 0:
        return 22 - pons - mine
    return -(22 + pons - (ply - mine))


CONNECT4: ReviewRules = ReviewRules(
    solver="ai.connect4.engine", label=connect4_label, verdict=connect4_verdict,
    win_in=connect4_win_in,
)
"""Connect Four: every position proved (book, else solver), values in Pons' units."""

def othello_book(state: State) -> Sequence[tuple[int, int]] | None:
    """Othello's opening book (``ai.othello.book``): its near-best moves of the first plies,
    valued by a 12-ply search, keyed under the board's eight symmetries."""
    from ai.othello import book

    return book.lookup(state)  # type: ignore[arg-type]


OTHELLO: ReviewRules = ReviewRules(
    exact=lambda state: _empties(state) <= OTHELLO_EXACT_EMPTIES,
    depth=lambda state: min(OTHELLO_DEPTH, max(1, _empties(state) - 1)),
    verdict=othello_verdict,
    book=othello_book,
)
"""Othello: discs, the opening book's where it holds the position, exact over the last
``OTHELLO_EXACT_EMPTIES`` squares, else searched (one value for symmetric moves)."""


def review_moves(game_name: str, moves: Sequence[int],
                 solve_seconds: float = C4_SOLVE_SECONDS, check: Check = _no_check,
                 stop: np.ndarray | None = None) -> Review:
    """``review`` under the name the server's workers run (``module:function``)."""
    return review(game_name, moves, solve_seconds, check=check, stop=stop)


def analyse_moves(game_name: str, moves: Sequence[int],
                  seconds: float = ANALYSIS_SOLVE_SECONDS, check: Check = _no_check,
                  stop: np.ndarray | None = None) -> list[MoveValue]:
    """``analyse`` of the position reached by ``moves`` from the start (for the workers:
    moves travel between processes better than states)."""
    state = games.load(game_name).initial()
    for move in moves:
        state = state.play(move)
    return analyse(state, check, stop, seconds)
