"""The Connect Four engine behind ``ai.search``: budgets, iterations and reports.

Three modes, picked by the ``Limits``:

- exact (``Limits.exact``): Pons' solver (``solver.solve``) proves the score, then the best
  move and a principal variation are found by null-window tests of the moves (cheap: the
  table holds the proof).
  ``Limits.depth`` is ignored. With a budget (time or nodes), a short heuristic search runs
  first (``BACKUP_DEPTH`` plies, ``BACKUP_SHARE`` of the budget); if the budget ends the
  proof, that search's answer comes back (``exact=False``), so a move always comes back.
- bounded by time alone (no depth) and after the single best move, as the expert level is:
  the opening book's proven move (``book``) where it holds the position, else the exact
  solve if it fits a share of the clock, else the weak solve (win, draw or loss; skipped
  when ``Limits.outcome`` gives it, half of it when ``Limits.not_lost`` does) and the
  heuristic's move if it is proven to keep that outcome, else one proven to keep it; the
  deepening below where nothing is proven in time (``_book_solve_or_deepen``).
- otherwise: iterative deepening of the depth-limited search (``alphabeta.search``) with
  aspiration windows; the first iteration always finishes, later ones stop at the hard
  deadline or node budget and no new one starts after the soft time. A proven result (a win
  or loss within the horizon, or the horizon at the end of the game) stops the deepening and is
  reported ``exact`` in Pons' units.

Scores are from the side to move. Exact scores: 22 minus the winner's stones, signed. Heuristic
scores: the evaluation, wins as ``WIN`` + Pons' score. Tables live per thread (searches in
several threads never share one); the exact table is kept between searches (its bounds are
true whatever the root), the heuristic table ages by generation.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from ai import tt
from ai.clock import StopFlag
from ai.connect4 import alphabeta, book, solver
from ai.connect4.evaluation import WIN, evaluate
from ai.limits import Iteration, Limits
from games.base import State
from games.connect4 import kernels
from games.connect4.rules import Connect4State

EXACT_TABLE_BITS = 22
"""2**22 entries (64 MiB) for proofs; Pons uses 2**24 smaller entries."""
HEURISTIC_TABLE_BITS = 20
ASPIRATION = 25
"""Half-width of the window around the previous iteration's score."""
PV_LIMIT = kernels.CELLS
BACKUP_DEPTH = 10
"""Deepest heuristic search run before a budgeted proof, as the move if the proof runs out."""
BACKUP_SHARE = 0.1
"""Share of a budgeted proof's time and nodes that the backup search may use."""
QUICK_SOLVE_SHARE = 0.1
"""Share of a time-bounded search's soft time first given to the exact solve alone."""
WEAK_SHARE = 0.75
"""Elapsed share of its hard time by which its weak solve (win, draw or loss) must end."""
SOLVE_SHARE = 0.5
"""Elapsed share of its soft time by which a proven outcome may be narrowed to the exact
score (as long as a proof may take before the heuristic starts)."""
DEEPEN_SHARE = 0.2
"""Share of its soft time its heuristic deepening may start iterations in at least, when
the solves ran past the soft time."""
DEEPEN_HARD_SHARE = 0.85
"""Elapsed share of its hard time at which its heuristic deepening is abandoned once an
outcome is proven (the rest is for proving that its move keeps it)."""
VERIFY_SHARE = 0.93
"""Elapsed share of its hard time by which the move it plays must be proven to keep the
outcome; the rest is a margin for the worker around it."""
_WARM_UP = "2252576253462244111563365343671351441"

_U = np.uint64


class _Workspace:
    """One thread's tables and buffers."""

    def __init__(self) -> None:
        self.exact_table = tt.new_table(EXACT_TABLE_BITS)
        self.table = tt.new_table(HEURISTIC_TABLE_BITS)
        self.cells, self.scores = solver.new_buffers()
        self.killers, self.history = alphabeta.new_heuristics()
        self.generation = 0


_local = threading.local()


def _workspace() -> _Workspace:
    ws: _Workspace | None = getattr(_local, "workspace", None)
    if ws is None:
        ws = _local.workspace = _Workspace()
    return ws


def search(state: State, limits: Limits) -> Iterator[Iteration]:
    """Yield finished iterations for ``state`` (a Connect Four position that is not over)."""
    if not isinstance(state, Connect4State):
        raise TypeError(f"not a Connect Four state: {state!r}")
    if state.is_over():
        raise ValueError("the game is over: there is nothing to search")
    if limits.exact:
        return _exact(state, limits)
    if limits.depth is None and limits.multipv == 1 and limits.soft_time is not None:
        return _book_solve_or_deepen(state, limits)
    return _deepening(state, limits)


def _book_solve_or_deepen(state: Connect4State, limits: Limits) -> Iterator[Iteration]:
    """A search bounded by time alone and after the single best move (the expert level).

    The book's proven move where it holds the position. Else, against one clock (``hard``:
    the hard time, or twice the soft time without one):

    1. the exact solve for ``QUICK_SOLVE_SHARE`` of the soft time (most positions past the
       opening prove in milliseconds): its best move, as ``Limits.exact`` gives;
    2. the weak solve (``_weak_solve``: win, draw or loss, two null windows around zero,
       "not a loss?" first) until ``WEAK_SHARE`` of ``hard``; if it ends before
       ``SOLVE_SHARE`` of the soft time, the exact solve within the proven range until then;
    3. iterative deepening until the soft time (at least ``DEEPEN_SHARE`` of it), abandoned
       at ``DEEPEN_HARD_SHARE`` of ``hard`` (``VERIFY_SHARE`` if nothing was proven): the
       heuristic's move ``h``, the answer if nothing is proven;
    4. the move: ``h`` if it is the move the weak solve proved the outcome with, or a
       null-window test proves that it keeps the outcome by ``VERIFY_SHARE`` of ``hard``,
       else the weak solve's move (or, without one, the first other move proven to keep
       it). A proven draw is reported exact (score 0); a proven win or loss only as
       ``Iteration.outcome``, its score the heuristic's. When the clock ended the weak solve
       after "not a loss" was proven, the move is chosen the same way among the moves that
       do not lose, and no outcome is reported. When no move is proven to keep it in time,
       ``h`` is played and the outcome not reported (an ``Iteration`` with an outcome has a
       move that keeps it).

    With ``Limits.outcome`` (proven before: the position cache or the book's outcomes file,
    ``book.outcome``, holds it) steps 1 and 2's weak solve are skipped: the exact solve
    within the proven range runs until ``SOLVE_SHARE`` of the soft time, and
    ``Limits.outcome_move`` stands for the weak solve's move. With ``Limits.not_lost``
    (proven before, the outcome not) the weak solve asks only "a win?", and
    ``Limits.outcome_move`` stands for the move proven not to lose. An answer that proves
    only that the position is not lost says so (``Iteration.not_lost``), for the position
    cache to keep.

    Its move then keeps the game's value wherever the weak solve fits in the clock, and no
    longer depends on how deep the clock let the heuristic look wherever the book or the
    exact solver reach.
    """
    hit = book.lookup(state)
    if hit is not None:
        move, score = hit
        yield Iteration(depth=kernels.CELLS - state.ply, score=score, move=move, pv=(move,),
                        nodes=0, seconds=0.0, exact=True, root_scores=((move, score),),
                        outcome=_sign(score), book=True)
        return
    assert limits.soft_time is not None
    known = book.outcome(state) if limits.outcome is None else None
    if known is not None:  # the book's outcomes file: as the position cache would tell it
        limits = dataclasses.replace(limits, outcome=known[1], outcome_move=known[0],
                                     not_lost=False)
    budget = _Budget(limits)
    if limits.outcome is None:
        proof = _proof(state, budget, budget.soft * QUICK_SOLVE_SHARE)
        if proof is not None:
            yield proof
            return
        proven = _weak_solve(state, budget, _given(limits))
    else:  # proven before (the position cache): its time goes to the exact solve instead
        proven = _given(limits)
    outcome = proven.outcome
    if outcome is not None and budget.elapsed() < budget.soft * SOLVE_SHARE:
        proof = _proof(state, budget, budget.soft * SOLVE_SHARE, *_range(outcome))
        if proof is not None:
            yield proof
            return
    # The heuristic: the move played when nothing is proven, the one preferred otherwise.
    last: Iteration | None = None
    for iteration in _deepening(state, Limits(
        soft_time=max(budget.soft, budget.elapsed() + budget.soft * DEEPEN_SHARE)
        - budget.elapsed(),
        hard_time=max(1e-3, budget.hard * (VERIFY_SHARE if proven.nothing
                                           else DEEPEN_HARD_SHARE) - budget.elapsed()),
        nodes=budget.nodes_left(),
    )):
        budget.nodes += iteration.nodes - (last.nodes if last is not None else 0)
        last = iteration
        yield iteration
    assert last is not None, "the first iteration always finishes"
    if last.exact or proven.nothing:  # the heuristic proved it itself, or nothing is proven
        return
    if outcome == -1:  # every move loses: the heuristic's resists best
        yield _with(last, last.move, outcome, state, budget)
        return
    move, kept = _keeping(state, proven.low, last.move, proven.move, budget)
    if kept:
        yield _with(last, move, outcome, state, budget)
    else:  # no move proven to keep it in time: the heuristic's, the outcome not reported
        yield dataclasses.replace(last, nodes=budget.nodes, seconds=budget.elapsed())


class _Proven(NamedTuple):
    """What is proven of a position's outcome: it lies in ``[low, high]`` (-1 a loss, 0 a
    draw, 1 a win) and ``move`` scores at least ``low`` (-1: no move proven)."""

    low: int
    high: int
    move: int

    @property
    def outcome(self) -> int | None:
        return self.low if self.low == self.high else None

    @property
    def nothing(self) -> bool:
        """Nothing proven: any outcome, and no move known to keep one."""
        return (self.low, self.high) == (-1, 1)


def _given(limits: Limits) -> _Proven:
    """What ``limits`` say was proven before the search (the position cache, the book)."""
    move = -1 if limits.outcome_move is None else limits.outcome_move
    if limits.outcome is not None:
        return _Proven(limits.outcome, limits.outcome, move)
    if limits.not_lost:
        return _Proven(0, 1, move)
    return _Proven(-1, 1, -1)


def _weak_solve(state: Connect4State, budget: _Budget, given: _Proven) -> _Proven:
    """The weak solve, ended at ``WEAK_SHARE`` of the budget's hard time: "not a loss?" (a
    null window at -1..0; skipped when ``given``, proven before, says so already and names
    a move that does not lose), then, unless it failed, "a win?" (0..1).

    Not a loss first, unlike ``solver.outcome``: a drawn position is where a clock too short
    for the whole weak solve loses the game's value (every value lost in the openings
    measure of ``bench.c4_expert`` was a draw), and "not a loss" alone keeps a draw: one
    move proven to score at least 0 (a cut at the root), where "a win?" first must refute
    every move before anything is known. When the clock ends "a win?", the move proven not
    to lose is still known and ``[0, 1]`` proven. In a won position the first window costs
    about as much again as the second; in a lost one it is the only one.
    """
    c, m = _U(state.current), _U(state.mask)
    win = int(solver.immediate_win(c, m))
    if win >= 0:
        return _Proven(1, 1, win)
    until = budget.hard * WEAK_SHARE
    move = given.move
    if given.low < 0 or move < 0:  # a move that does not lose is wanted, known or not
        safe, move = _null_window(state, budget, -1, until)
        if safe is None:
            return given
        if not safe:
            return _Proven(-1, -1, -1)
    wins, winning = _null_window(state, budget, 0, until)
    if wins is None:
        return _Proven(0, 1, move)
    return _Proven(1, 1, winning) if wins else _Proven(0, 0, move)


def _null_window(state: Connect4State, budget: _Budget, alpha: int, until: float
                 ) -> tuple[bool | None, int]:
    """(whether the value exceeds ``alpha``, None if the clock ran out first; the root move
    proven to exceed it, or -1) by one null-window search ended ``until`` seconds in. The
    side to move must not win at once."""
    ws = _workspace()
    with budget.flag(until) as flag:
        ctl = budget.control()
        value = int(solver.negamax(_U(state.current), _U(state.mask), state.ply, alpha,
                                   alpha + 1, ws.exact_table, 0, ctl, flag.array, ws.cells,
                                   ws.scores))
        budget.nodes += int(ctl[solver.NODES])
    if ctl[solver.ABORTED]:
        return None, -1
    return value > alpha, int(ctl[solver.ROOT_MOVE])


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


def _range(outcome: int | None) -> tuple[int, int]:
    """The exact scores an ``outcome`` allows (all of them for None)."""
    return {1: (1, kernels.CELLS), 0: (0, 0), -1: (-kernels.CELLS, -1),
            None: (-kernels.CELLS, kernels.CELLS)}[outcome]


class _Budget:
    """The clock and node count shared by the phases of ``_book_solve_or_deepen``."""

    def __init__(self, limits: Limits) -> None:
        assert limits.soft_time is not None
        self.started = time.perf_counter()
        self.soft = limits.soft_time
        self.hard = limits.hard_time if limits.hard_time is not None else 2 * limits.soft_time
        self.max_nodes = limits.nodes
        self.nodes = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def flag(self, until: float) -> StopFlag:
        """A stop flag raised ``until`` seconds after the start (at once if that is past)."""
        return StopFlag(max(1e-6, until - self.elapsed()))

    def nodes_left(self) -> int | None:
        return None if self.max_nodes is None else max(1, self.max_nodes - self.nodes)

    def control(self) -> np.ndarray:
        return solver.new_control(self.nodes_left())


def _proof(state: Connect4State, budget: _Budget, until: float,
           low: int = -kernels.CELLS, high: int = kernels.CELLS) -> Iteration | None:
    """The exact solve (knowing the value is in ``[low, high]``) finished by ``until``
    seconds into the budget, as an exact iteration with its principal variation; None if
    the clock or the node budget ran out first."""
    ws = _workspace()
    c, m = _U(state.current), _U(state.mask)
    with budget.flag(until) as flag:
        ctl = budget.control()
        score = int(solver.solve_within(c, m, low, high, ws.exact_table, 0, ctl, flag.array,
                                        ws.cells, ws.scores))
        move = -1 if ctl[solver.ABORTED] else _exact_move(state, score, ws, ctl, flag.array)
        if ctl[solver.ABORTED] or move < 0:
            budget.nodes += int(ctl[solver.NODES])
            return None
        pv = [move]
        child, child_score = state.play(move), -score
        while not child.is_over() and len(pv) < PV_LIMIT:
            reply = _exact_move(child, child_score, ws, ctl, flag.array)
            if reply < 0 or ctl[solver.ABORTED]:
                break
            pv.append(reply)
            child, child_score = child.play(reply), -child_score
        budget.nodes += int(ctl[solver.NODES])
    return Iteration(depth=kernels.CELLS - state.ply, score=score, move=move, pv=tuple(pv),
                     nodes=budget.nodes, seconds=budget.elapsed(), exact=True,
                     root_scores=((move, score),), outcome=_sign(score))


def _keeping(state: Connect4State, outcome: int, preferred: int, proven: int,
             budget: _Budget) -> tuple[int, bool]:
    """(move, kept): a move that keeps ``outcome`` (1 or 0) and whether it is proven to.

    ``preferred`` (the heuristic's move) when it is ``proven`` (a move already proven to
    keep it: the weak solve's, or the position cache's; -1 if none) or a null-window test
    proves it keeps it by ``VERIFY_SHARE`` of the budget's hard time; else ``proven``; else,
    with no proven move, the first other move (centre first) a test proves keeps it. When
    the clock runs out with none proven: ``preferred``, not kept."""
    ws = _workspace()
    c, m = _U(state.current), _U(state.mask)
    legal = state.legal_moves()
    if proven not in legal:
        proven = -1
    if preferred == proven:
        return proven, True
    order = [preferred]
    if proven < 0:
        order += [col for col in solver.CENTRE_FIRST if col in legal and col != preferred]
    chosen = -1
    with budget.flag(budget.hard * VERIFY_SHARE) as flag:
        ctl = budget.control()
        for col in order:
            child = state.play(col)
            if child.is_over():  # a win (taken at once) or the draw that fills the board
                if child.winner() is not None or outcome == 0:
                    chosen = col
                    break
                continue
            keeps = solver.move_value_at_least(c, m, col, outcome, ws.exact_table, 0, ctl,
                                               flag.array, ws.cells, ws.scores)
            if ctl[solver.ABORTED]:
                break
            if keeps:
                chosen = col
                break
        budget.nodes += int(ctl[solver.NODES])
    if chosen >= 0:
        return chosen, True
    return (proven, True) if proven >= 0 else (preferred, False)


def _with(last: Iteration, move: int, outcome: int | None, state: Connect4State,
          budget: _Budget) -> Iteration:
    """The heuristic's last iteration with ``move`` played and ``outcome`` proven: a draw is
    an exact score of 0; a win or a loss keeps the heuristic's score (its size is unknown),
    as does None (only that ``move`` does not lose is proven: ``Iteration.not_lost``)."""
    if outcome == 0:
        return Iteration(depth=kernels.CELLS - state.ply, score=0, move=move, pv=(move,),
                         nodes=budget.nodes, seconds=budget.elapsed(), exact=True,
                         root_scores=((move, 0),), outcome=0)
    pv = last.pv if move == last.move else (move,)
    return dataclasses.replace(last, move=move, pv=pv, root_scores=((move, last.score),),
                               nodes=budget.nodes, seconds=budget.elapsed(), outcome=outcome,
                               not_lost=outcome is None)


def _never() -> np.ndarray:
    return np.zeros(1, dtype=np.int64)


def _first(state: Connect4State) -> int:
    return min(state.legal_moves(), key=solver.CENTRE_FIRST.index)


def _backup(state: Connect4State, limits: Limits) -> Iteration | None:
    """A heuristic answer to fall back on if the budget ends the proof (None if unbounded).

    Costs at most ``BACKUP_SHARE`` of the budget and ``BACKUP_DEPTH`` plies.
    """
    if limits.hard_time is None and limits.nodes is None:
        return None
    share = Limits(
        depth=min(BACKUP_DEPTH, kernels.CELLS - state.ply),
        hard_time=None if limits.hard_time is None else limits.hard_time * BACKUP_SHARE,
        nodes=None if limits.nodes is None else max(1, int(limits.nodes * BACKUP_SHARE)),
    )
    last = None
    for iteration in _deepening(state, share):
        last = iteration
    return last


def _exact(state: Connect4State, limits: Limits) -> Iterator[Iteration]:
    booked = _book_exact(state, limits.multipv)
    if booked is not None:
        yield booked  # the book proved it: no search (the empty board takes minutes)
        return
    ws = _workspace()
    c, m = _U(state.current), _U(state.mask)
    started = time.perf_counter()
    backup = _backup(state, limits)
    if backup is not None and backup.exact and limits.multipv == 1:
        yield backup  # the quick search already proved the score
        return
    remaining = limits
    if backup is not None:
        spent = time.perf_counter() - started
        remaining = Limits(
            hard_time=None if limits.hard_time is None else max(1e-6, limits.hard_time - spent),
            nodes=None if limits.nodes is None else max(1, limits.nodes - backup.nodes),
            exact=True,
            multipv=limits.multipv,
        )
    with StopFlag(remaining.hard_time) as flag:
        ctl = solver.new_control(remaining.nodes)
        if limits.multipv > 1:
            scored = _exact_root_scores(state, ws, ctl, flag.array)
            if scored is None:
                yield _fallback(state, backup, ctl, flag)
                return
            move, score = scored[0]
            root_scores = tuple(scored)
        else:
            score = solver.solve(c, m, ws.exact_table, 0, ctl, flag.array, ws.cells, ws.scores)
            move = _exact_move(state, score, ws, ctl, flag.array)
            if ctl[solver.ABORTED] or move < 0:
                yield _fallback(state, backup, ctl, flag)
                return
            root_scores = ((move, score),)
        pv = [move]
        child, child_score = state.play(move), -score
        while not child.is_over() and len(pv) < PV_LIMIT:
            reply = _exact_move(child, child_score, ws, ctl, flag.array)
            if reply < 0 or ctl[solver.ABORTED]:
                break
            pv.append(reply)
            child, child_score = child.play(reply), -child_score
        yield Iteration(
            depth=kernels.CELLS - state.ply,
            score=int(score),
            move=move,
            pv=tuple(pv),
            nodes=int(ctl[solver.NODES]),
            seconds=flag.elapsed(),
            exact=True,
            root_scores=root_scores,
        )


def _book_exact(state: Connect4State, multipv: int) -> Iteration | None:
    """The exact iteration the book gives for ``state``, or None: the book's move and score,
    its line as far as the book follows it for a principal variation and, when several
    moves' scores are wanted (``multipv``), every move's from the book's entries for the
    children (None unless the book holds them all)."""
    hit = book.lookup(state)
    if hit is None:
        return None
    move, score = hit
    root_scores: tuple[tuple[int, int], ...] = ((move, score),)
    if multipv > 1:
        scored = []
        for col in state.legal_moves():
            child = state.play(col)
            if child.winner() is not None:
                value = (kernels.CELLS + 1 - state.ply) // 2
            elif child.is_over():
                value = 0
            else:
                found = book.lookup(child)
                if found is None:
                    return None
                value = -found[1]
            scored.append((col, value))
        scored.sort(key=lambda pair: (-pair[1], pair[0] != move, pair[0]))
        root_scores = tuple(scored)
    pv = [move]
    child = state.play(move)
    while not child.is_over() and len(pv) < PV_LIMIT:
        reply = book.lookup(child)
        if reply is None:
            break
        pv.append(reply[0])
        child = child.play(reply[0])
    return Iteration(depth=kernels.CELLS - state.ply, score=score, move=move, pv=tuple(pv),
                     nodes=0, seconds=0.0, exact=True, root_scores=root_scores,
                     book=multipv == 1)


def _exact_move(
    state: Connect4State, score: int, ws: _Workspace, ctl: np.ndarray, stop: np.ndarray
) -> int:
    """A move that achieves the proven ``score``, or -1 if the budget ended first."""
    c, m = _U(state.current), _U(state.mask)
    win = solver.immediate_win(c, m)
    if win >= 0:
        return int(win)
    safe = int(kernels.non_losing_moves(c, m))
    if safe == 0:
        return _first(state)
    for col in solver.CENTRE_FIRST:
        if safe & int(kernels.column_mask(col)):
            if solver.move_value_at_least(
                c, m, col, score, ws.exact_table, 0, ctl, stop, ws.cells, ws.scores
            ):
                return col
            if ctl[solver.ABORTED]:
                return -1
    return -1


def _exact_root_scores(
    state: Connect4State, ws: _Workspace, ctl: np.ndarray, stop: np.ndarray
) -> list[tuple[int, int]] | None:
    """Every legal move with its exact score, best first (centre first on ties)."""
    scored = []
    loss = -((kernels.CELLS - state.ply) // 2)
    c, m = _U(state.current), _U(state.mask)
    safe = int(kernels.non_losing_moves(c, m))
    win = solver.immediate_win(c, m)
    for col in sorted(state.legal_moves(), key=solver.CENTRE_FIRST.index):
        child = state.play(col)
        if child.is_over():
            value = 0 if child.winner() is None else (kernels.CELLS + 1 - state.ply) // 2
        elif win < 0 and not safe & (1 << (7 * col + _height(state, col))):
            value = loss
        else:
            value = -solver.solve(
                _U(child.current),
                _U(child.mask),
                ws.exact_table,
                0,
                ctl,
                stop,
                ws.cells,
                ws.scores,
            )
        if ctl[solver.ABORTED]:
            return None
        scored.append((col, int(value)))
    scored.sort(key=lambda pair: -pair[1])
    return scored


def _height(state: Connect4State, col: int) -> int:
    return (state.mask >> (7 * col) & 0x7F).bit_count()


def _fallback(
    state: Connect4State, backup: Iteration | None, ctl: np.ndarray, flag: StopFlag
) -> Iteration:
    """The answer when the budget ended a proof: the backup, else a two-ply search."""
    if backup is not None:
        return Iteration(
            depth=backup.depth,
            score=backup.score,
            move=backup.move,
            pv=backup.pv,
            nodes=backup.nodes + int(ctl[solver.NODES]),
            seconds=backup.seconds + flag.elapsed(),
            exact=False,
            root_scores=backup.root_scores,
        )
    ws = _workspace()
    depth = min(2, kernels.CELLS - state.ply)
    root = np.zeros(kernels.WIDTH + 1, dtype=np.int64)
    inner = solver.new_control()
    score = alphabeta.search(
        _U(state.current),
        _U(state.mask),
        depth,
        -alphabeta.INF,
        alphabeta.INF,
        ws.table,
        False,
        0,
        ws.killers,
        ws.history,
        inner,
        _never(),
        True,
        False,
        root,
    )
    move = int(root[kernels.WIDTH])
    return Iteration(
        depth=depth,
        score=int(score),
        move=move,
        pv=(move,),
        nodes=int(ctl[solver.NODES] + inner[solver.NODES]),
        seconds=flag.elapsed(),
        exact=False,
    )


def _units(score: int) -> tuple[int, bool]:
    """(score, proven): a win or loss found by the search in Pons' units, else as it is."""
    if score >= WIN:
        return score - WIN, True
    if score <= -WIN:
        return score + WIN, True
    return score, False


def _deepening(state: Connect4State, limits: Limits) -> Iterator[Iteration]:
    ws = _workspace()
    ws.generation = (ws.generation + 1) & 0xFF
    c, m = _U(state.current), _U(state.mask)
    remaining = kernels.CELLS - state.ply
    deepest = remaining if limits.depth is None else min(limits.depth, remaining)
    root_all = limits.multipv > 1
    root = np.zeros(kernels.WIDTH + 1, dtype=np.int64)
    ctl = solver.new_control(limits.nodes)
    previous: int | None = None
    with StopFlag(limits.hard_time) as flag:
        for depth in range(1, deepest + 1):
            if depth > 1 and limits.soft_time is not None and flag.elapsed() >= limits.soft_time:
                return
            # The first iteration ignores every budget so that a move always comes back.
            run_ctl = ctl if depth > 1 else solver.new_control()
            stop = flag.array if depth > 1 else _never()
            alpha, beta = -alphabeta.INF, alphabeta.INF
            if previous is not None and depth >= 3 and not root_all and abs(previous) < WIN:
                alpha, beta = previous - ASPIRATION, previous + ASPIRATION
            while True:
                score = alphabeta.search(
                    c,
                    m,
                    depth,
                    alpha,
                    beta,
                    ws.table,
                    True,
                    ws.generation,
                    ws.killers,
                    ws.history,
                    run_ctl,
                    stop,
                    True,
                    root_all,
                    root,
                )
                if run_ctl[solver.ABORTED]:
                    return
                if score <= alpha:
                    alpha = -alphabeta.INF
                elif score >= beta:
                    beta = alphabeta.INF
                else:
                    break
            if depth == 1:
                ctl[solver.NODES] += run_ctl[solver.NODES]
            previous = int(score)
            move = int(root[kernels.WIDTH])
            value, proven = _units(int(score))
            exact = proven or depth == remaining
            root_scores: tuple[tuple[int, int], ...] = ((move, int(score)),)
            if root_all:
                pairs = [(col, int(root[col])) for col in range(kernels.WIDTH)]
                pairs = [p for p in pairs if p[1] > -alphabeta.INF]
                pairs.sort(key=lambda p: (-p[1], solver.CENTRE_FIRST.index(p[0])))
                if pairs:  # empty when the root was decided without searching its moves
                    root_scores = tuple(pairs)
            if exact:
                # Proven: report the root moves proven too, in Pons' units. A move the search
                # could not prove within its depth keeps a heuristic score, which would read
                # as a win (19 points beat a win with 14 stones to spare): it is left out.
                root_scores = tuple(
                    (col, _units(s)[0]) for col, s in root_scores
                    if _units(s)[1] or depth == remaining
                ) or ((move, value),)
            yield Iteration(
                depth=depth,
                score=value if exact else int(score),
                move=move,
                pv=_table_pv(state, move, depth, ws.table),
                nodes=int(ctl[solver.NODES]),
                seconds=flag.elapsed(),
                exact=exact,
                root_scores=root_scores,
                outcome=_sign(value) if exact else None,
            )
            if exact:
                return


def _table_pv(state: Connect4State, move: int, depth: int, table: np.ndarray) -> tuple[int, ...]:
    """The principal variation: the root move, then the table's best moves while legal."""
    pv = [move]
    child = state.play(move)
    while len(pv) < depth and not child.is_over():
        entry = tt.probe(table, _U(child.current + child.mask))
        reply = int(tt.entry_move(entry)) if entry else -1
        if reply not in child.legal_moves():
            break
        pv.append(reply)
        child = child.play(reply)
    return tuple(pv)


def warm_up() -> float:
    """Compile or load every kernel (run each once); returns the seconds it took. Leaves
    this thread's tables empty, so a freshly warmed worker plays as a fresh process does."""
    started = time.perf_counter()
    from games.connect4 import GAME

    state = GAME.parse_moves(_WARM_UP)  # the first end game of Pons' set L3_R1
    GAME.perft(state, 2)
    for limits in (
        Limits(depth=4),
        Limits(depth=4, multipv=2),
        Limits(exact=True),
        Limits(exact=True, multipv=2),
    ):
        for _ in search(state, limits):
            pass
    ws = _workspace()
    c, m = _U(state.current), _U(state.mask)
    for kernel in (solver.outcome, solver.solve):  # the expert's weak solve, and its exact
        kernel(c, m, ws.exact_table, 0, solver.new_control(), _never(), ws.cells, ws.scores)
    solver.solve_within(c, m, -1, 1, ws.exact_table, 0, solver.new_control(), _never(),
                        ws.cells, ws.scores)
    solver.solve_batch(
        np.array([state.current], dtype=np.uint64),
        np.array([state.mask], dtype=np.uint64),
        tt.new_table(10),
        solver.new_control(),
        _never(),
        ws.cells,
        ws.scores,
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )
    clear()  # what the warm-up searched must not steer the first real game's searches
    return time.perf_counter() - started


def use_exact_table(bits: int) -> None:
    """Give this thread's solver a fresh table of ``2**bits`` entries: a long proof (the
    book's first plies) runs faster in a larger one than a move's share of memory allows."""
    _workspace().exact_table = tt.new_table(bits)


def clear() -> None:
    """Forget everything this thread's tables and move-ordering counters have learnt."""
    ws = _workspace()
    for array in (ws.exact_table, ws.table, ws.history):
        array.fill(0)
    ws.killers.fill(-1)


def leaf_value(state: State) -> int:
    """The heuristic search's value of ``state`` searched zero plies, for the reference search.

    Finished games score as the search scores them (a loss of the side to move:
    ``-(WIN + Pons' score)``, a draw 0); others get the evaluation.
    """
    if not isinstance(state, Connect4State):
        raise TypeError(f"not a Connect Four state: {state!r}")
    if state.is_over():
        return 0 if state.winner() is None else -(WIN + (44 - state.ply) // 2)
    return int(evaluate(_U(state.current), _U(state.mask)))


def fixed_depth_value(state: Connect4State, depth: int, use_table: bool) -> int:
    """One search of ``depth`` plies with a fresh table, every root move allowed.

    The value plain minimax with ``leaf_value`` gives at the same depth (the tests hold it to
    that); ``use_table`` turns the transposition table on.
    """
    table = tt.new_table(16)
    killers, history = alphabeta.new_heuristics()
    root = np.zeros(kernels.WIDTH + 1, dtype=np.int64)
    return int(
        alphabeta.search(
            _U(state.current),
            _U(state.mask),
            depth,
            -alphabeta.INF,
            alphabeta.INF,
            table,
            use_table,
            1,
            killers,
            history,
            solver.new_control(),
            _never(),
            False,
            False,
            root,
        )
    )


def known_value(state: Connect4State) -> tuple[int, int] | None:
    """(exact score, a move achieving it) of ``state`` from the shipped book, without any
    search; None where the book does not hold it. A review or analysis takes these before it
    proves anything, so the first plies of any game cost no proof and no yield point."""
    hit = book.lookup(state)
    return None if hit is None else (hit[1], hit[0])


def known_outcome(state: Connect4State) -> tuple[int, int | None] | None:
    """``outcome_value``'s answer from the shipped files alone (the book, then the outcomes
    file), without any search; None where neither holds ``state``."""
    hit = book.lookup(state)
    if hit is not None:
        return _sign(hit[1]), hit[0]
    known = book.outcome(state)
    if known is not None:
        return known[1], known[0] if known[1] >= 0 else None
    return None


def exact_value(state: Connect4State, hard_time: float | None = None,
                stop: np.ndarray | None = None, outcome: int | None = None
                ) -> tuple[int, int] | None:
    """(exact score in Pons' units from the side to move, a move that achieves it) of
    ``state`` (not over): the book's entry where it holds the position, else the solver's
    proof within ``hard_time`` seconds (None: the budget ran out first, nothing is known).

    No backup search and no principal variation, unlike ``Limits(exact=True)``: a game
    review asks this of every position of a game. The thread's exact table is kept between
    calls, so valuing a game's positions from its end backwards reuses each proof. ``stop``:
    a stop array another thread may raise to end the proof sooner (None then too); the
    deadline raises it as well, so lower it again before reusing it. ``outcome``: the
    position's outcome when already proven (``outcome_value``; it must be true): the proof
    looks only among the scores it allows."""
    if state.is_over():
        raise ValueError("the game is over: there is nothing to solve")
    hit = book.lookup(state)
    if hit is not None:
        return hit[1], hit[0]
    ws = _workspace()
    with StopFlag(hard_time, stop) as flag:
        ctl = solver.new_control()
        score = int(solver.solve_within(_U(state.current), _U(state.mask), *_range(outcome),
                                        ws.exact_table, 0, ctl, flag.array, ws.cells,
                                        ws.scores))
        if ctl[solver.ABORTED]:
            return None
        move = _exact_move(state, score, ws, ctl, flag.array)
        if ctl[solver.ABORTED] or move < 0:
            return None
    return score, move


def outcome_value(state: Connect4State, hard_time: float | None = None,
                  stop: np.ndarray | None = None, from_book: bool = True
                  ) -> tuple[int, int | None] | None:
    """(outcome from the side to move: 1 a win, 0 a draw, -1 a loss; a move proven to keep
    it, or None) of ``state`` (not over): the book's where one of its files holds the
    position (the outcomes file too), else the weak solve's (``solver.outcome``: two null
    windows around zero, often a small part of ``exact_value``'s proof early in the game)
    within ``hard_time`` seconds (None: the budget ran out first). No move for a loss
    (every move keeps it), nor when the table, not a search, decided the outcome. ``stop``
    as for ``exact_value``. Idle workers prove this first, so a position whose exact score
    does not fit their budget still has its outcome kept (``ai.review.prove_positions``).
    Without ``from_book``, always the weak solve's (the book's builder checks the book)."""
    if state.is_over():
        raise ValueError("the game is over: there is nothing to solve")
    known = known_outcome(state) if from_book else None
    if known is not None:
        return known
    ws = _workspace()
    with StopFlag(hard_time, stop) as flag:
        ctl = solver.new_control()
        found = int(solver.outcome(_U(state.current), _U(state.mask), ws.exact_table, 0, ctl,
                                   flag.array, ws.cells, ws.scores))
        if ctl[solver.ABORTED]:
            return None
    move = int(ctl[solver.ROOT_MOVE])
    return found, move if move >= 0 and found >= 0 else None


def value_at_most(state: Connect4State, bound: int, hard_time: float | None = None,
                  stop: np.ndarray | None = None) -> bool | None:
    """Whether the exact value of ``state`` (not over) from the side to move is at most
    ``bound`` (Pons' units): one null-window search, cheaper than ``exact_value``'s several,
    or the book. None: ``hard_time`` ran out first. A review asks it of a position whose
    played move it knows the value of: if no move does better, that value is the position's.
    """
    if state.is_over():
        raise ValueError("the game is over: there is nothing to solve")
    hit = book.lookup(state)
    if hit is not None:
        return hit[1] <= bound
    c, m = _U(state.current), _U(state.mask)
    if solver.immediate_win(c, m) >= 0:
        return (kernels.CELLS + 1 - state.ply) // 2 <= bound
    ws = _workspace()
    with StopFlag(hard_time, stop) as flag:
        ctl = solver.new_control()
        result = solver.negamax(c, m, state.ply, bound, bound + 1, ws.exact_table, 0, ctl,
                                flag.array, ws.cells, ws.scores)
        if ctl[solver.ABORTED]:
            return None
    return int(result) <= bound
