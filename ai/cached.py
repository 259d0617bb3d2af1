"""When a stored search result may stand in for a search, and what a search leaves to store.

The position cache (``server.storage``) only stores and returns ``CachedResult`` values; this
module decides what they mean for a move. Pure: no I/O, no clock, so it is tested without a
cache. An engine process asks ``cached_iteration`` at a job's start (with the results the
cache holds for the position and its children) and gives ``learned`` to the cache after its
search.

``cached_iteration`` answers only when the cache holds what the level's search would give,
and its answer still goes through ``ai.levels.choose_move`` as a search's would, so the rails
and the level's seeded choice apply:

- a level that plays the single best move (``multipv`` 1) takes the root result when
  ``usable_answer`` accepts it (proven, or exact at least as deep as its search would go), or
  a root solved from its children when every child is solved;
- a level that chooses among several moves needs exact scores for its candidates and bounds
  on the rest at exactly its depth: ``multipv_answer`` rebuilds them from the children's
  results, which a search for that level saved (``child_results``);
- a level bounded only by time never takes an unproven result: how deep its own search would
  get is not known in advance.

A weak solve's outcome (a win or a loss proven, its size not: ``Iteration.outcome`` without
``exact``) is stored as a proven bound (``CachedResult.proven_bound``) and never answers a job
by itself: ``known_limits`` hands it to the next search of the position (``Limits.outcome``),
which then need not prove it again. A weak solve whose clock ended after "not a loss" was
proven (``Iteration.not_lost``) is stored the same way, as a floor (``not_lost_result``), and
handed to the next search as ``Limits.not_lost``, which then asks only whether it wins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ai.levels import loses_in_one
from ai.limits import Iteration, Limits
from games.base import State

LOWER, UPPER, EXACT = 1, 2, 3
"""Bounds as in ``ai.tt`` (not imported: that would load numba wherever results are stored)."""
PROVEN_DEPTH = 100
"""The depth a proven bound is stored at: deeper than any game lasts (Connect Four 42 plies,
Othello 60 moves and its passes), so that the cache's rule for keeping the better of two
results (proven first, then the deeper: ``server.storage.cache.Entry.better_than``) keeps it
over every depth-bounded result and never over an exact score, and no reader looking for a
result at some search depth takes it for one."""
FLOOR_DEPTH = PROVEN_DEPTH - 1
"""The depth a proven floor (``not_lost_result``) is stored at: below a proven bound, which
says more and so must win the cache's rule over it, above any search."""


@dataclass(frozen=True)
class CachedResult:
    """A search result for one position, from its side to move.

    ``bound``: 1 the score is a lower bound, 2 an upper bound, 3 exact at ``depth`` (as in
    ``ai.tt``). ``exact``: the score is proven to the end of the game. ``move`` is the best
    move (an int of the position's game) or None.

    A proven bound (``proven_bound``, from ``outcome_result``) is the one result that is
    proven but not ``exact``: a weak solve's win (``bound`` 1, score 1: at least 1) or loss
    (``bound`` 2, score -1: at most -1), true to the end of the game, at ``PROVEN_DEPTH``;
    ``move`` keeps it. ``exact`` stays false because the score is not known, so every reader
    that takes ``exact`` for a proven score stays right.
    """

    depth: int
    score: int
    bound: int
    move: int | None
    exact: bool = False

    @property
    def proven_bound(self) -> bool:
        """Whether the result is a bound proven to the end of the game (a weak solve's)."""
        return not self.exact and self.depth == PROVEN_DEPTH and self.bound in (LOWER, UPPER)

    @property
    def not_lost(self) -> bool:
        """Whether the result proves that the side to move does not lose: its outcome is a
        draw or a win, or it is a proven floor (``not_lost_result``); ``move`` keeps it."""
        outcome = self.outcome
        if outcome is not None:
            return outcome >= 0
        return (not self.exact and self.depth == FLOOR_DEPTH and self.bound == LOWER
                and self.score == 0)

    @property
    def outcome(self) -> int | None:
        """The game's proven result from the side to move (1 a win, 0 a draw, -1 a loss): an
        exact score's sign, or a proven bound's; None when the result proves none."""
        if self.exact and self.bound == EXACT:
            return (self.score > 0) - (self.score < 0)
        if self.proven_bound and self.bound == LOWER and self.score >= 1:
            return 1
        if self.proven_bound and self.bound == UPPER and self.score <= -1:
            return -1
        return None


def outcome_result(outcome: int, move: int | None) -> CachedResult:
    """The proven bound that stores a win (``outcome`` 1) or a loss (-1) whose size is not
    known, with a move that keeps it (None: not known). A draw is an exact score (0)."""
    if outcome not in (1, -1):
        raise ValueError(f"a proven bound is a win or a loss, not {outcome}")
    return CachedResult(PROVEN_DEPTH, outcome, LOWER if outcome > 0 else UPPER, move)


def not_lost_result(move: int | None) -> CachedResult:
    """The proven floor that stores a position proven not lost (a draw or a win, which one
    not known), with a move that does not lose (None: not known)."""
    return CachedResult(FLOOR_DEPTH, 0, LOWER, move)


def cached_iteration(state: State, limits: Limits, root: CachedResult | None,
                     children: Sequence[CachedResult | None]) -> Iteration | None:
    """The iteration a search of ``state`` with ``limits`` would end with, rebuilt from the
    cached results of ``state`` (``root``) and of its children (``children``, one per move of
    ``state.legal_moves()``, in that order), or None: then search, as always.

    A level bounded only by time that chooses among several moves gets None without a
    lookup being needed (``wants_lookup``).
    """
    if not wants_lookup(limits):
        return None
    legal = state.legal_moves()
    if limits.multipv > 1:
        assert limits.depth is not None
        return multipv_answer(state, root, legal, children, limits.depth, limits.multipv)
    answer = usable_answer(root, limits)
    if answer is None and children and all(
        hit is not None and hit.exact and not state.play(move).is_over()
        for hit, move in zip(children, legal, strict=True)
    ):
        # Every child solved: the root is solved too (negamax), best move included.
        score, move = max((-hit.score, m) for hit, m in zip(children, legal, strict=True)
                          if hit is not None)
        depth = 1 + max(hit.depth for hit in children if hit is not None)
        answer = usable_answer(CachedResult(depth, score, EXACT, move, True), limits)
    if answer is None or answer.move is None:
        return None
    return Iteration(answer.depth, answer.score, answer.move, (answer.move,), 0, 0.0,
                     answer.exact)


SHALLOW_DEPTH = 4
"""A level bounded at this depth or less (both games' beginner and easy) neither asks nor
teaches the cache (``worth_caching``): its search costs about a millisecond or less, less
CPU than looking up the position and its children and saving what it found. Measured in an
engine process with the embedded SQLite tier, CPU a move without and with the cache:
Connect Four beginner 0.18 / 1.28 ms, easy 0.41 / 1.92 ms; Othello beginner 0.24 / 1.86 ms,
easy 0.99 / 2.69 ms. Its results could not stand in for a deeper level's search anyway."""


def worth_caching(limits: Limits) -> bool:
    """Whether a search with ``limits`` costs enough to be worth the cache's lookup and
    save (``SHALLOW_DEPTH``)."""
    return limits.depth is None or limits.depth > SHALLOW_DEPTH


def wants_lookup(limits: Limits) -> bool:
    """Whether the cache could ever answer a job with ``limits``: not for a level bounded
    only by time that chooses among several moves (no such level ships; it always
    searches)."""
    return not (limits.multipv > 1 and limits.depth is None)


def learned(state: State, last: Iteration, candidates: int) -> list[tuple[State, CachedResult]]:
    """What a search of ``state`` ending with ``last`` teaches the cache: for a level choosing
    among ``candidates`` moves, every root move's child (``child_results``), then the root and
    principal variation (``pv_results``). The PV comes last: its child entry carries a best
    move, which wins a tie when the cache keeps the better of two results."""
    children = child_results(state, last, candidates) if candidates > 1 else []
    return [*children, *pv_results(state, last)]


def pv_results(state: State, iteration: Iteration) -> list[tuple[State, CachedResult]]:
    """What a finished search teaches the cache: the root and each position along the
    principal variation, scores negated ply by ply (negamax), one ply shallower each step.

    PV positions have exact values at their depth in an alpha-beta search, so every entry is
    ``bound`` 3; a solved search (``iteration.exact``) marks them all proven. An iteration
    the clock cut (``iteration.cut``) searched its move exactly but not every other root
    move, so its root is stored as a lower bound at its depth and the rest of the variation
    as exact.

    A proven win or loss of unknown size (``iteration.outcome`` without ``exact``) makes the
    root a proven bound (``outcome_result``) with the iteration's move, which keeps the outcome
    (the ``Iteration`` contract), and so the child after that move a proven bound the other
    way, without a move (the principal variation's reply is the heuristic's, not proven); the
    rest of the variation is stored as the heuristic found it. A position proven only not
    lost (``iteration.not_lost``) makes the root a proven floor (``not_lost_result``) the
    same way; its child is left as the heuristic found it.
    """
    pv = iteration.pv or (iteration.move,)
    if iteration.exact:
        return _pv_entries(state, iteration, pv)
    if iteration.outcome in (1, -1):
        proven = [(state, outcome_result(iteration.outcome, iteration.move))]
        child = state.play(iteration.move)
        if not child.is_over():
            proven.append((child, outcome_result(-iteration.outcome, None)))
    elif iteration.not_lost:
        proven = [(state, not_lost_result(iteration.move))]
    else:
        return _pv_entries(state, iteration, pv)
    heuristic = _pv_entries(state, iteration, pv if pv[0] == iteration.move else (iteration.move,))
    return proven + heuristic[len(proven):]


def _pv_entries(state: State, iteration: Iteration, pv: tuple[int, ...]
                ) -> list[tuple[State, CachedResult]]:
    out: list[tuple[State, CachedResult]] = []
    score = iteration.score
    for i, move in enumerate(pv):
        depth = iteration.depth - i
        if depth < 1 and not iteration.exact:
            break
        bound = LOWER if i == 0 and iteration.cut else EXACT
        out.append((state, CachedResult(max(depth, 0), score, bound, move, iteration.exact)))
        try:
            state = state.play(move)
        except ValueError:  # a PV that runs past the game's end or a stale move: stop there
            break
        if state.is_over():
            break
        score = -score
    return out


def usable_answer(hit: CachedResult | None, limits: Limits) -> CachedResult | None:
    """The cached root result if it answers a job with ``limits`` as well as the search
    would, else None (then search, as always).

    Usable when one best move is wanted (``multipv`` 1: weaker levels need scores for
    several root moves) and the result is proven, or exact at a depth at least
    ``limits.depth``. A search bounded only by time is never skipped: how deep it would get
    is not known in advance. A proven bound is never usable: its score is no search's
    (``known_limits`` gives its outcome to the search instead).
    """
    if hit is None or hit.move is None or limits.multipv > 1:
        return None
    if hit.exact:
        return hit
    if hit.bound == EXACT and limits.depth is not None and hit.depth >= limits.depth:
        return hit
    return None


def known_limits(state: State, limits: Limits, root: CachedResult | None,
                 children: Sequence[CachedResult | None]) -> Limits:
    """``limits`` with the outcome the cached results prove for ``state`` and a move that
    keeps it (``Limits.outcome``, ``Limits.outcome_move``; ``known_outcome``), or else that
    it is not lost and a move that does not lose (``Limits.not_lost``; ``not_losing``), so a
    search that would prove it again takes it as given; ``limits`` as they are when nothing
    is proven (or they carry an outcome already)."""
    if limits.outcome is not None:
        return limits
    known = known_outcome(state, root, children)
    if known is not None:
        return dataclasses.replace(limits, outcome=known[0], outcome_move=known[1],
                                   not_lost=False)
    if limits.not_lost:
        return limits
    move = not_losing(state, root, children)
    if move is None:
        return limits
    return dataclasses.replace(limits, not_lost=True, outcome_move=move)


def not_losing(state: State, root: CachedResult | None,
               children: Sequence[CachedResult | None]) -> int | None:
    """A move of ``state`` the cached results prove does not lose, or None: the root's proven
    floor's move (``not_lost_result``), else a move to a child proven not won for its side to
    move (a draw, proven or on the board). For a position whose outcome they do not prove
    (``known_outcome`` says more where they do)."""
    if root is not None and root.not_lost and root.move is not None:
        return root.move
    if not children:
        return None
    for move, hit in zip(state.legal_moves(), children, strict=True):
        child = state.play(move)
        if child.is_over():
            if child.result() == 0:
                return move
        elif hit is not None and hit.outcome == 0:
            return move
    return None


def known_outcome(state: State, root: CachedResult | None,
                  children: Sequence[CachedResult | None]) -> tuple[int, int | None] | None:
    """(outcome, a move that keeps it or None) for ``state`` from the cached results of the
    position (``root``) and of its children (one per move of ``state.legal_moves()``), or
    None: the root's own outcome; else, by negamax, a win through a child proven lost for
    its side to move; else, when every child's outcome is known (a finished game's from its
    result), the best of them negated. Nothing proves a move that keeps a loss: every move
    does."""
    if root is not None and root.outcome is not None:
        return root.outcome, root.move if root.outcome >= 0 else None
    if not children:
        return None
    legal = state.legal_moves()
    outcomes: list[tuple[int, int]] = []
    for move, hit in zip(legal, children, strict=True):
        child = state.play(move)
        if child.is_over():
            result = child.result() if child.to_move == 0 else -child.result()
            found: int | None = (result > 0) - (result < 0)
        else:
            found = None if hit is None else hit.outcome
        if found == -1:
            return 1, move
        if found is not None:
            outcomes.append((-found, move))
    if len(outcomes) < len(legal):
        return None
    best, move = max(outcomes, key=lambda pair: pair[0])
    return best, move if best >= 0 else None


def child_results(state: State, iteration: Iteration, candidates: int
                  ) -> list[tuple[State, CachedResult]]:
    """What a search for several candidates teaches the cache about the root's children,
    so that a later job at the same level can be answered from them (``multipv_answer``).

    By the ``Iteration`` contract the first ``candidates`` root scores are exact at the
    iteration's depth and the rest may be bounds that are no better than the
    ``candidates``-th: each root move's child gets its score negated, one ply shallower,
    ``EXACT`` for the first ones and ``LOWER`` for the rest (a root move worth at most s is
    a child worth at least -s), with no best move. Nothing for a proven iteration (its
    root scores can mix proven and heuristic units) or one without several root scores.
    """
    if iteration.exact or len(iteration.root_scores) < 2 or iteration.depth < 1:
        return []
    out = []
    for i, (move, score) in enumerate(iteration.root_scores):
        bound = EXACT if i < candidates else LOWER
        out.append((state.play(move), CachedResult(iteration.depth - 1, -score, bound, None)))
    return out


def multipv_answer(state: State, root: CachedResult | None, moves: Sequence[int],
                   children: Sequence[CachedResult | None], depth: int, candidates: int
                   ) -> Iteration | None:
    """The iteration a depth-``depth`` search of ``state`` for ``candidates`` best moves
    would report, rebuilt from cached results of ``moves``' children, or None.

    ``root`` must be an unproven result exact at exactly ``depth``: proof that a search of
    this position to that depth ran and ended unproven (a fresh one would too, rather than
    stop early with a proven score in other units), and its score must equal the best
    rebuilt one (children from the same search). Each child counts when its result is
    unproven and exactly ``depth - 1`` deep: ``EXACT`` gives the move's exact score,
    ``LOWER`` a bound on it. A deeper result is refused, not used: a depth-bounded level
    plays by its depth's scores, and the margin and weights of ``ai.levels.choose_move``
    compare them, so a deeper (different) score would change its choice; a proven one is in
    other units. A move without a usable child is left out when it loses at once (the
    Connect Four engine leaves such moves out of its root scores; no level with rails plays
    them) and some move does not; otherwise there is no answer.

    The answer needs the ``candidates`` best moves exact and every other move bounded no
    higher than the worst of them, as the search itself gives. Root scores come best first,
    ties broken by move number (the engine's own tie order is not kept by the cache, and
    ``choose_move`` ranks ties by move number too): the exact ``candidates`` first, then the
    rest.
    """
    if root is None or root.exact or root.bound != EXACT or root.depth != depth:
        return None
    exact: list[tuple[int, int]] = []
    bounded: list[tuple[int, int]] = []
    losers: bool | None = None
    for move, hit in zip(moves, children, strict=True):
        if hit is not None and not hit.exact and not hit.proven_bound and (
            hit.depth == depth - 1 and hit.bound in (EXACT, LOWER)
        ):
            (exact if hit.bound == EXACT else bounded).append((move, -hit.score))
            continue
        if losers is None:
            losers = any(not loses_in_one(state, m) for m in state.legal_moves())
        if not (losers and loses_in_one(state, move)):
            return None
    exact.sort(key=lambda pair: (-pair[1], pair[0]))
    top, rest = exact[:candidates], exact[candidates:] + bounded
    if not top or (rest and (len(top) < candidates or max(s for _, s in rest) > top[-1][1])):
        return None
    if top[0][1] != root.score:
        return None
    rest.sort(key=lambda pair: (-pair[1], pair[0]))
    best, score = top[0]
    return Iteration(depth, score, best, (best,), 0, 0.0, False, tuple(top + rest))
