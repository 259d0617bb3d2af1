"""The one value that bounds a search, and the one value a search reports.

Every way to stop a search (depth, clocks, node count, solve-to-the-end) is a field of
``Limits``, so callers never pass loose keyword arguments to engines.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    """Bounds on one search. ``None`` means unbounded on that axis.

    - ``depth``: deepest iteration to start, in plies.
    - ``soft_time``: seconds after which no new iteration is started.
    - ``hard_time``: seconds after which the running iteration is abandoned at once and the
      last finished iteration's answer is used.
    - ``nodes``: node budget; treated like ``hard_time`` when it runs out.
    - ``exact``: search to the end of the game (or to a solve) and report proven scores in the
      game's exact units (see ``games.base.State.result``), from the side to move.
    - ``multipv``: how many best root moves must get exact (not bound) scores in
      ``Iteration.root_scores``; used by weaker levels to pick among good moves.
    - ``selective``: the engine may prune moves a shallow search predicts to be bad (Othello's
      Multi-ProbCut), reaching deeper in the same time; a depth-``d`` iteration's score is
      then no longer the full-width depth-``d`` value (exact solves stay exact). Engines
      without a selective search ignore it.
    - ``outcome``: not a bound but something already known: the game's result with best
      play from the side to move (1 a win, 0 a draw, -1 a loss) when it was proven before (the
      position cache holds it, ``ai.cached.known_outcome``), None when it was not. An engine
      that would prove it (Connect Four's weak solve) takes it as given; it must be true.
    - ``not_lost``: the position was proven not lost for the side to move (a draw or a win:
      which one was not), its ``outcome`` not known; an engine that would ask (Connect Four's
      weak solve, whose first question it is) takes it as given; it must be true.
    - ``outcome_move``: a move proven to keep ``outcome``, or not to lose when only
      ``not_lost`` is known, when one is known (None if not).
    """

    depth: int | None = None
    soft_time: float | None = None
    hard_time: float | None = None
    nodes: int | None = None
    exact: bool = False
    multipv: int = 1
    selective: bool = False
    outcome: int | None = None
    outcome_move: int | None = None
    not_lost: bool = False

    def __post_init__(self) -> None:
        if self.depth is not None and self.depth < 1:
            raise ValueError(f"depth must be at least 1, got {self.depth}")
        for name in ("soft_time", "hard_time"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be at least 1, got {self.nodes}")
        if self.multipv < 1:
            raise ValueError(f"multipv must be at least 1, got {self.multipv}")
        if self.outcome not in (None, -1, 0, 1):
            raise ValueError(f"outcome must be -1, 0, 1 or None, got {self.outcome}")
        if self.not_lost and self.outcome is not None:
            raise ValueError("not_lost with an outcome: the outcome says more")
        if self.outcome_move is not None and self.outcome is None and not self.not_lost:
            raise ValueError("outcome_move without an outcome or not_lost")


@dataclass(frozen=True)
class Iteration:
    """One finished iteration of a search; the last one yielded is the search's answer.

    ``score`` is from the side to move. ``exact`` is true only when ``score`` is proven (a
    solved position), in which case it is in the game's exact units. ``root_scores`` pairs
    root moves with scores, best first; the first ``Limits.multipv`` of them are exact at this
    depth, the rest may be bounds. ``book`` marks an answer from an opening book: every move
    of ``root_scores`` is one the book plays there, and a level picks among them.
    ``outcome``: the game's proven result with best play from the side to move (1 a win, 0 a
    draw, -1 a loss) when the engine proved it, None when it did not; ``move`` then keeps it.
    It may be known when ``score`` is not (a weak solve proves who wins, not by how much);
    an ``exact`` score's sign is its outcome whether or not this is set. ``not_lost``: the
    engine proved the position not lost (a draw or a win) but not its outcome; ``move`` then
    does not lose. ``cut``: the clock stopped this iteration before it had searched every
    root move (the Othello engine answers with the better move it had found by then), so
    ``score`` bounds the root's value at ``depth`` from below only.
    """

    depth: int
    score: int
    move: int
    pv: tuple[int, ...]
    nodes: int
    seconds: float
    exact: bool = False
    root_scores: tuple[tuple[int, int], ...] = field(default=())
    book: bool = False
    outcome: int | None = None
    not_lost: bool = False
    cut: bool = False
