"""The Othello engine's driver: iterative deepening and the exact solve around the kernels.

``search(state, limits)`` yields one ``Iteration`` per finished midgame depth and, when the
position is solved, a last exact one. How it decides:

- ``limits.exact``, or a ``limits.depth`` that reaches the end of the game (at least the
  number of empty squares): a few midgame iterations to order the root moves (at most
  ``empties - 10`` plies, never more than ``PRE_SOLVE_DEPTH``), then the exact solve. A
  midgame search that deep would cost more than the solve and still prove nothing.
- no depth and at most ``weights.AUTO_SOLVE_EMPTIES`` empties: the same, so positions near
  the end are always played perfectly (the solve costs milliseconds there).
- no depth, a hard deadline and at most ``weights.CLOCK_SOLVE_EMPTIES`` empties: the same
  ordering iterations, then the exact solve if its expected time fits the time left
  (``weights.SOLVE_SECONDS``), else, for a single best move, the win/loss/draw solve if it
  fits (``weights.WLD_SOLVE_SHARE`` of the exact's time; the midgame's best move among those
  that keep the outcome, reported as ``Iteration.outcome``), else midgame iterations as
  below. An exact solve expected to end past the soft time is preceded by the win/loss/draw
  solve, whose answer stands if the deadline cuts the exact one. A solve cut by the deadline
  otherwise leaves the last midgame iteration as the answer.
- bounded by time alone, after the single best move (the expert level), with the shipped
  evaluation, in a position of the opening book (``book``): the book's near-best moves as
  one iteration marked ``book``, at once (``levels.choose_move`` picks one of them).
- otherwise: midgame iterations until a limit (the soft time ends them once an iteration
  ends past it; for one best move, a share of it once that move has settled and more once
  the last iteration changed it: ``SETTLED_SOFT_SHARE``), never one as deep as the
  empties: where the next iteration would reach the end of the game, the exact solve runs
  instead (if the soft time allows starting it; the hard deadline still stops it, and then
  the last midgame iteration stands).

- a forced move (one legal move or a pass) with more than ``AUTO_SOLVE_EMPTIES`` empties,
  unless a depth or the exact solve is asked for: the first iteration alone, at once.

With ``limits.selective`` (the levels bounded by time alone) the midgame iterations prune by
Multi-ProbCut (``ai.othello.probcut``, ``weights.PROBCUT_T``): a depth is reached with a
fraction of the nodes, and its score is the selective search's, not the full-width value. The
exact and win/loss/draw solves never prune.

A midgame iteration the clock cuts is thrown away, unless a root move it finished searching
beat the move it searched first (the last iteration's best): that move is proven better at
the deeper depth, and a last iteration with just the moves it searched says so
(``_cut_iteration``).

The first iteration runs without the clock or the node budget (depth 1 costs a few dozen
nodes), so a move always comes back even when the deadline has passed. The clock starts when
``search`` is called, and the kernels are stopped ``weights.HARD_TIME_MARGIN`` before the
hard time (``stop_time``), so that the answer is back by then. Midgame scores are in
disc-like units (``evaluation.to_discs``); exact scores are final disc differences.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ai import tt
from ai.clock import StopFlag
from ai.limits import Iteration, Limits
from ai.othello import alphabeta as kernels
from ai.othello import book, patterns, probcut
from ai.othello.evaluation import to_discs
from ai.othello.weights import (
    AUTO_SOLVE_EMPTIES,
    CLOCK_SOLVE_EMPTIES,
    EVALUATION,
    EVALUATIONS,
    HARD_TIME_MARGIN,
    INF,
    PROBCUT_T,
    SOLVE_SECONDS,
    SOLVE_TIME_SHARE,
    TT_BITS,
    WLD_SOLVE_SHARE,
)
from games.othello import PASS, OthelloState
from games.othello import kernels as rules

PRE_SOLVE_DEPTH = 8
"""Deepest midgame iteration run only to order the root moves of an exact solve."""
MAX_DEPTH = 60
NEXT_ITERATION_FACTOR = 4
"""A midgame iteration costs about this many times the one before (Othello's branching under
alpha-beta); used to stop deepening in time to start a clock-bounded solve."""
SETTLED_FROM_DEPTH = 6
"""Shallower iterations' best moves say little: the soft time is not shared out before."""
SETTLED_ITERATIONS = 4
SETTLED_SOFT_SHARE = 0.6
"""A search for one best move whose best move has stayed the same for ``SETTLED_ITERATIONS``
iterations ends at this share of its soft time: the next iterations would most likely
agree, and the time is worth more where the best move keeps changing. Against the same
search without the shares (both with the overrun rule below), at soft 0.15 s (``python -m
bench.othello_versus --reference cf59865 --time 0.15 --games 40 --seed 14``): 22 won, 1
drawn, 17 lost, +44 Elo (95% -26..+117), at 0.100 s a move against 0.111 s.

Not kept: also not starting an iteration expected (at twice the last one's time) to end
past the hard time. With it, 80 games against the search before this and the ordering of
``weights.MID_EVAL_SORT`` (``--reference edc39de --time 0.15``, seeds 11 and 12) scored
0.444 at 0.100 s a move against 0.135 s; without it the same openings scored 0.500 at
0.112 s: at so short a clock many iterations expected to overrun finish in time."""
CHANGED_SOFT_SHARE = 1.5
"""One whose last iteration changed the best move goes on to this share of its soft time
(the hard time still cuts an iteration that runs past it)."""

_U = np.uint64


def pattern_table(evaluation: str | None = None) -> np.ndarray:
    """What the kernels take to score leaves with ``evaluation`` (one of
    ``weights.EVALUATIONS``; default ``weights.EVALUATION``): the shipped pattern weights,
    or no rows for the hand-made evaluation; or a pattern weights file's path ending in
    ``.npz`` (a benchmark's candidate weights). ``ValueError`` for another name."""
    name = EVALUATION if evaluation is None else evaluation
    if name == "patterns":
        return patterns.load()
    if name.endswith(".npz"):
        return patterns.load(Path(name))
    if name == "classic":
        return kernels.CLASSIC
    raise ValueError(f"no Othello evaluation {name!r}; there are {', '.join(EVALUATIONS)}")


class _Tables(threading.local):
    """The transposition tables of this thread, made on first use and kept: one endgame
    table, and a midgame table per evaluation (their scores do not mix).

    One set per thread: concurrent searches writing one table could tear an entry (its key
    from one position, its bound from another) and corrupt an exact result.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Drop every table; the next search makes new empty ones."""
        self.mid: dict[str, np.ndarray] = {}
        self.end: np.ndarray | None = None
        self.generation = 0

    def get(self, evaluation: str) -> tuple[np.ndarray, np.ndarray, int]:
        if evaluation not in self.mid:
            self.mid[evaluation] = tt.new_table(TT_BITS)
        if self.end is None:
            self.end = tt.new_table(TT_BITS)
        self.generation = (self.generation + 1) & 0xFF
        return self.mid[evaluation], self.end, self.generation


_TABLES = _Tables()


def _child(P: int, O: int, move: int) -> tuple[int, int]:
    if move == PASS:
        return O, P
    f = int(rules.flips(_U(P), _U(O), move))
    return O & ~f, P | f | (1 << move)


def _pv(table: np.ndarray, P: int, O: int, first: int, salt: int, length: int) -> tuple[int, ...]:
    """The principal variation: ``first``, then the table's best moves while they are legal."""
    pv = [first]
    P, O = _child(P, O, first)
    while len(pv) < length:
        moves = int(rules.legal_moves(_U(P), _U(O)))
        if not moves:
            if not rules.legal_moves(_U(O), _U(P)):
                break
            pv.append(PASS)
            P, O = O, P
            continue
        entry = tt.probe(table, _U(int(kernels.hash_key(_U(P), _U(O))) ^ salt))
        move = int(tt.entry_move(entry)) if entry else -1
        if move < 0 or move >= 64 or not moves >> move & 1:
            break
        pv.append(move)
        P, O = _child(P, O, move)
    return tuple(pv)


def search(state: OthelloState, limits: Limits, evaluation: str | None = None,
           probcut_t: float | None = None, probcut_table: Path | None = None
           ) -> Iterator[Iteration]:
    """Yield each finished iteration of a search of ``state``; see the module docstring.

    ``evaluation`` picks the midgame's static score (``weights.EVALUATIONS``; default
    ``weights.EVALUATION``), ``probcut_t`` a selective search's confidence (default
    ``weights.PROBCUT_T``) and ``probcut_table`` its fitted rows (default the shipped
    ``probcut.TABLE_FILE``): comparison benchmarks set them, the server never does."""
    started = time.perf_counter()  # the caller's clock starts at its call, not at our tables
    legal = state.legal_moves()
    if not legal:
        raise ValueError("the game is over: there is nothing to search")
    leaves = pattern_table(evaluation)
    if (
        limits.depth is None and not limits.exact and limits.multipv == 1
        and limits.soft_time is not None
        and leaves is not kernels.CLASSIC  # the book was built with pattern weights
    ):
        hit = book.lookup(state)
        if hit:
            yield Iteration(depth=book.DEPTH, score=hit[0][1], move=hit[0][0], pv=(hit[0][0],),
                            nodes=0, seconds=0.0, root_scores=hit, book=True)
            return
    P, O = state.mover_boards()
    empties = 64 - (P | O).bit_count()
    # A forced move (one legal move, or a pass) needs no thinking: the first iteration alone,
    # unless a solve is asked for or costs next to nothing (then its exact score is worth it).
    forced = (len(legal) == 1 and not limits.exact and limits.depth is None
              and empties > AUTO_SOLVE_EMPTIES)
    mid_table, end_table, generation = _TABLES.get(evaluation or EVALUATION)
    # Selective (Multi-ProbCut) midgame iterations, when the limits allow them; the exact
    # solve never prunes. Their table entries are keyed apart (``kernels._MPC_SALT``).
    cuts = kernels.NO_PROBCUT
    if limits.selective:
        cuts = probcut.kernel_table(PROBCUT_T if probcut_t is None else probcut_t,
                                    probcut_table or probcut.TABLE_FILE)
    salt = int(kernels._MPC_SALT) if limits.selective else 0
    ctl = kernels.new_control(limits.nodes, use_tt=True, generation=generation,
                              selective=limits.selective)
    buf, killers, history = kernels.new_buffers()
    never = np.zeros(1, dtype=np.int64)
    multipv = min(limits.multipv, len(legal))

    if limits.depth is None:
        solve_first = limits.exact or empties <= AUTO_SOLVE_EMPTIES
        solve = True  # when the iterations reach the end of the game
    else:
        solve_first = solve = limits.exact or limits.depth >= empties
    pre_solve = max(1, min(PRE_SOLVE_DEPTH, empties - 10))
    # Whether to try the solve once the ordering iterations are done, by the clock alone.
    clock_solve = (
        limits.depth is None and not solve_first and limits.hard_time is not None
        and empties <= CLOCK_SOLVE_EMPTIES
    )
    if forced:
        max_mid, solve, clock_solve = 1, False, False
    elif solve_first:
        max_mid = pre_solve
    else:
        # An iteration as deep as the empties would search to the end of the game: that one
        # is the exact solve (much cheaper), so the midgame stops one ply short of it.
        max_mid = max(1, min(limits.depth or MAX_DEPTH, empties - 1))

    best_move, settled = -1, 0  # the best move so far, and for how many iterations since
    order = np.array(legal, dtype=np.int64)
    mid_scores, mid_depth = np.zeros(len(order), dtype=np.int64), 0
    wld = exact_after = False  # the win/loss/draw solve first; then the exact one too
    previous = 0.0  # seconds into the search when the last iteration ended
    flag = StopFlag(None if limits.hard_time is None else max(
        1e-6, stop_time(limits.hard_time) - (time.perf_counter() - started)))
    with flag:
        for depth in range(1, max_mid + 1):
            scores = np.full(len(order), -INF, dtype=np.int64)
            stop = never if depth == 1 else flag.array
            best_i = kernels.mid_root(
                _U(P), _U(O), depth, order, scores, multipv, mid_table, ctl, stop, buf,
                killers, history, leaves, cuts,
            )
            if ctl[kernels.ABORTED]:
                if best_i > 0 and multipv == 1:
                    yield _cut_iteration(P, O, depth, order[:best_i + 1], scores, best_i,
                                         mid_table, salt, ctl, started)
                break
            order, scores = _best_first(order, scores, best_i)
            settled = settled + 1 if int(order[0]) == best_move else 0
            best_move = int(order[0])
            mid_scores, mid_depth = scores, depth
            yield Iteration(
                depth=depth,
                score=to_discs(int(scores[0])),
                move=int(order[0]),
                pv=_pv(mid_table, P, O, int(order[0]), salt, depth),
                nodes=int(ctl[kernels.NODES]),
                seconds=time.perf_counter() - started,
                exact=False,
                root_scores=_pairs(order, scores, to_discs),
            )
            if clock_solve and depth >= pre_solve:
                assert limits.hard_time is not None
                now = time.perf_counter() - started
                need = expected_solve_seconds(empties) / SOLVE_TIME_SHARE
                hard = stop_time(limits.hard_time)
                soft = hard if limits.soft_time is None else limits.soft_time
                # Where the exact solve does not fit, the win/loss/draw solve may; where it
                # fits only beyond the soft time, the outcome is proven first, so that a
                # solve cut by the deadline still leaves a move that keeps it.
                short = hard - now < need
                outcome_first = multipv == 1 and need > soft - now
                if short and multipv == 1:
                    need *= WLD_SOLVE_SHARE
                if hard - now < need:
                    clock_solve = False  # it never will fit: deepen as usual
                elif (
                    need <= soft - now  # cheap: within the time a midgame move takes anyway
                    or hard - now - NEXT_ITERATION_FACTOR * (now - previous) < need
                    or now >= soft
                ):
                    wld, exact_after = outcome_first, not short
                    break  # solve now, before deepening eats its time
            previous = time.perf_counter() - started
            # Shared out only where no solve waits for the iterations: they order its moves.
            share = 1.0
            if not (limits.exact or solve_first or clock_solve or multipv > 1):
                share = _soft_share(depth, settled)
            if limits.soft_time is not None and previous >= share * limits.soft_time:
                if not limits.exact:
                    return
                break
        if not solve or flag.is_set or ctl[kernels.ABORTED]:
            return
        if not limits.exact and not clock_solve and limits.soft_time is not None and (
            time.perf_counter() - started >= limits.soft_time
        ):
            return
        low, high = -INF, INF
        if wld:
            answer = _wld(P, O, order, mid_scores, mid_depth, end_table, ctl, flag, started,
                          mid_table, leaves, salt)
            yield answer
            if answer.outcome is None or answer.outcome == 0 or not exact_after:
                return  # cut by the deadline, a draw (already exact), or no time for more
            # The exact score within the proven outcome, the table warm from proving it.
            low, high = (0, INF) if answer.outcome > 0 else (-INF, 0)
        scores = np.full(len(order), -INF, dtype=np.int64)
        best_i = kernels.end_root(
            _U(P), _U(O), order, scores, multipv, end_table, ctl, flag.array, low, high,
            leaves,
        )
        if ctl[kernels.ABORTED]:
            return
        order, scores = _best_first(order, scores, best_i)
        yield Iteration(
            depth=empties,
            score=int(scores[0]),
            move=int(order[0]),
            pv=_pv(end_table, P, O, int(order[0]), int(kernels._END_SALT), empties + 2),
            nodes=int(ctl[kernels.NODES]),
            seconds=time.perf_counter() - started,
            exact=True,
            root_scores=_pairs(order, scores, int),
        )


def _soft_share(depth: int, settled: int) -> float:
    """The share of its soft time a search for one best move runs, once ``depth`` is done
    and its best move has stayed the same for ``settled`` iterations after the one that
    found it (``SETTLED_SOFT_SHARE``, ``CHANGED_SOFT_SHARE``)."""
    if depth < SETTLED_FROM_DEPTH:
        return 1.0
    if settled == 0:
        return CHANGED_SOFT_SHARE
    if settled >= SETTLED_ITERATIONS:
        return SETTLED_SOFT_SHARE
    return 1.0


def _cut_iteration(P: int, O: int, depth: int, searched: np.ndarray, scores: np.ndarray,
                   best_i: int, mid_table: np.ndarray, salt: int, ctl: np.ndarray,
                   started: float) -> Iteration:
    """The answer of an iteration the clock cut after ``searched`` (its first root moves, in
    its order) had been searched, where a later one (``best_i``) beat the first, the last
    iteration's best: a move proven better at this depth is a better answer than the last
    finished iteration's move, even though the moves not yet searched might be better still.

    The first move was searched with the full window, the better one re-searched above it, so
    both scores are exact at ``depth``; the other searched moves' are upper bounds, below the
    best, and the unsearched moves are left out."""
    order, ranked = _best_first(searched, scores[:len(searched)], best_i)
    move = int(order[0])
    return Iteration(
        depth=depth,
        score=to_discs(int(ranked[0])),
        move=move,
        pv=_pv(mid_table, P, O, move, salt, depth),
        nodes=int(ctl[kernels.NODES]),
        seconds=time.perf_counter() - started,
        exact=False,
        root_scores=_pairs(order, ranked, to_discs),
        cut=True,
    )


def _wld(P: int, O: int, order: np.ndarray, mid_scores: np.ndarray, mid_depth: int,
         end_table: np.ndarray, ctl: np.ndarray, flag: StopFlag, started: float,
         mid_table: np.ndarray, leaves: np.ndarray, salt: int = 0) -> Iteration:
    """The win/loss/draw solve of the root (``order``: the moves, the midgame's best first,
    with ``mid_scores`` from its last iteration at ``mid_depth``) as the search's answer.

    A draw is an exact score (0); a win or a loss only its ``outcome``, with the midgame's
    score. The move: the midgame's best of those that win, else of those that draw; when
    every move loses (or the clock ends the solve), the midgame's best.
    """
    scores = np.full(len(order), -INF, dtype=np.int64)
    best_i = kernels.end_root(_U(P), _U(O), order, scores, 1, end_table, ctl, flag.array,
                              -1, 1, leaves)
    nodes, seconds = int(ctl[kernels.NODES]), time.perf_counter() - started
    outcome: int | None = None
    if not ctl[kernels.ABORTED]:
        best = int(scores[best_i])
        outcome = (best > 0) - (best < 0)
    if outcome is None or outcome < 0:
        best_i = 0
    move = int(order[best_i])
    if outcome == 0:
        return Iteration(depth=64 - (P | O).bit_count(), score=0, move=move, pv=(move,),
                         nodes=nodes, seconds=seconds, exact=True, root_scores=((move, 0),),
                         outcome=0)
    score = to_discs(int(mid_scores[best_i]))
    pv = _pv(mid_table, P, O, move, salt, mid_depth) if best_i == 0 else (move,)
    return Iteration(depth=mid_depth, score=score, move=move, pv=pv, nodes=nodes,
                     seconds=seconds, exact=False, root_scores=((move, score),),
                     outcome=outcome)


def solve_outcome(state: OthelloState, evaluation: str | None = None) -> Iteration:
    """The win/loss/draw solve of ``state`` (not over) as a clock-bounded search runs it when
    the exact solve does not fit its time, with no clock: the midgame iterations that order
    the root moves, then ``_wld``. For benchmarks and tests; the tables are this thread's."""
    legal = state.legal_moves()
    if not legal:
        raise ValueError("the game is over: there is nothing to solve")
    started = time.perf_counter()
    leaves = pattern_table(evaluation)
    P, O = state.mover_boards()
    empties = 64 - (P | O).bit_count()
    mid_table, end_table, generation = _TABLES.get(evaluation or EVALUATION)
    ctl = kernels.new_control(None, use_tt=True, generation=generation)
    buf, killers, history = kernels.new_buffers()
    order = np.array(legal, dtype=np.int64)
    with StopFlag() as flag:
        for depth in range(1, max(1, min(PRE_SOLVE_DEPTH, empties - 10)) + 1):
            scores = np.full(len(order), -INF, dtype=np.int64)
            best_i = kernels.mid_root(_U(P), _U(O), depth, order, scores, 1, mid_table, ctl,
                                      flag.array, buf, killers, history, leaves,
                                      kernels.NO_PROBCUT)
            order, scores = _best_first(order, scores, best_i)
        return _wld(P, O, order, scores, depth, end_table, ctl, flag, started, mid_table,
                    leaves)


def stop_time(hard_time: float) -> float:
    """When, into a search with ``hard_time``, its kernels are told to stop: early enough
    that the answer is back by the hard time (``weights.HARD_TIME_MARGIN``)."""
    seconds, share = HARD_TIME_MARGIN
    return max(hard_time * 0.5, hard_time - seconds - share * hard_time)


def expected_solve_seconds(empties: int) -> float:
    """The typical wall time of an exact solve with ``empties`` empty squares here."""
    at_20, growth = SOLVE_SECONDS
    return float(at_20 * growth ** (empties - 20))


def _pairs(order: np.ndarray, scores: np.ndarray, unit: Callable[[int], int]
           ) -> tuple[tuple[int, int], ...]:
    return tuple((int(m), unit(int(s))) for m, s in zip(order, scores, strict=True))


def _best_first(order: np.ndarray, scores: np.ndarray, best_i: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Root moves by score, best first (stable: earlier moves win ties; the best leads)."""
    ranked = sorted(range(len(order)), key=lambda i: (i != best_i, -int(scores[i]), i))
    return order[ranked].copy(), scores[ranked].copy()


def warm_up() -> float:
    """Compile (or load from the cache) every kernel the engine runs; returns the seconds.
    Leaves this thread's tables empty, so a freshly warmed worker plays as a fresh process
    does."""
    started = time.perf_counter()
    from games.othello import GAME

    # 23 empties: the midgame searches (patterns, classic, selective).
    state = GAME.parse_position(
        "--XXXXX---XXXX---OOOXX---OOXXXX--OOXXXO-OOOOXOO----XOX----XXXXX- O"
    )
    for _ in search(state, Limits(depth=3)):
        pass
    for _ in search(state, Limits(depth=3), evaluation="classic"):
        pass
    for _ in search(state, Limits(depth=4, selective=True)):
        pass
    # 12 empties, the same game later: the exact and win/loss/draw solves compile every
    # endgame kernel in milliseconds (solving the 23-empty one took over 3 s, every warm-up).
    end = GAME.parse_position(
        "--XXXXX---XXXX---OOOXX---OOXXXXX-OOOXOXXOOXXXXOXOOOOOOOOXXXXXXXX X"
    )
    for _ in search(end, Limits(exact=True)):
        pass
    solve_outcome(end)
    for _ in search(GAME.initial(), Limits(depth=2)):
        pass
    quick = GAME.parse_moves("f5d6c3d3c4f4f6f3e6e7d7c5b6")
    for _ in search(quick, Limits(depth=2)):
        pass
    clear()  # what the warm-up searched must not steer the first real game's searches
    return time.perf_counter() - started


def clear() -> None:
    """Forget everything this thread's transposition tables hold."""
    _TABLES.reset()


def leaf_value(state: OthelloState, evaluation: str | None = None) -> int:
    """The static score the midgame search gives ``state`` at a leaf, from its side to
    move's view (a plain-Python reference search calls this to see what the engine sees)."""
    P, O = state.mover_boards()
    return int(kernels.leaf(_U(P), _U(O), pattern_table(evaluation)))


def fixed_depth_value(state: OthelloState, depth: int, use_tt: bool = False,
                      evaluation: str | None = None, table_bits: int = 16,
                      leaves: np.ndarray | None = None) -> int:
    """The compiled midgame score of ``state`` at exactly ``depth`` plies (internal units).

    Without the table this is by contract the plain negamax value over ``games`` states with
    ``leaf_value`` at the leaves (a pass is a ply); tests hold it to that. ``leaves``, a
    pattern table, stands in for ``evaluation``'s (the trainer scores with weights it is
    still fitting).
    """
    if leaves is None:
        leaves = pattern_table(evaluation)
    legal = state.legal_moves()
    P, O = state.mover_boards()
    if not legal or depth < 1:
        return int(kernels.leaf(_U(P), _U(O), leaves))
    table = tt.new_table(table_bits)
    ctl = kernels.new_control(None, use_tt=use_tt, generation=1)
    buf, killers, history = kernels.new_buffers()
    order = np.array(legal, dtype=np.int64)
    scores = np.full(len(order), -INF, dtype=np.int64)
    stop = np.zeros(1, dtype=np.int64)
    best_i = kernels.mid_root(_U(P), _U(O), depth, order, scores, 1, table, ctl, stop, buf,
                              killers, history, leaves, kernels.NO_PROBCUT)
    return int(scores[best_i])


def exact_value(state: OthelloState, use_tt: bool = True) -> tuple[int, int]:
    """(exact score, nodes) of ``state`` from the side to move, solved with a fresh endgame
    table or, with ``use_tt`` false, with none at all: a table-free solve is the reference
    the table's bounds are checked against where plain negamax would take too long."""
    P, O = state.mover_boards()
    table = tt.new_table(TT_BITS)
    ctl = kernels.new_control(None, use_tt=use_tt, generation=1)
    stop = np.zeros(1, dtype=np.int64)
    score = int(kernels.solve(_U(P), _U(O), -INF, INF, table, ctl, stop, pattern_table()))
    return score, int(ctl[kernels.NODES])
