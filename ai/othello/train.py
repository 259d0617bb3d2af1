"""Make the Othello pattern evaluation's training data here and fit its weights.

``discus train othello [--games N] [--seed S] [--work DIR] [--out FILE]`` (the same as
``python -m ai.othello.train``) runs three resumable steps, each saving its work in ``DIR``
as it goes, so a stopped run picks up where it was:

1. **Games.** Self-play between the shipped levels ``beginner``, ``easy`` and ``medium``
   (their depths, no clock, the hand-made evaluation), each game opening with up to
   ``OPENING_MOVES`` random moves and with a random move now and then (``RANDOM_MOVE``).
   Every position with a move to play is kept once.
2. **Labels**, in discs of final disc difference for the side to move: positions with at most
   ``--exact-empties`` empty squares are solved exactly (default 18: from empty tables the
   solver's median here was 3 ms at 14 empties, 13 ms at 16 and 43 ms at 18; along a game
   the table carries one proof into the next, about 0.1 s a game for all of them); then,
   stage by stage back from the end, the rest get the score of a ``--depth`` search whose
   leaves are scored by the stages already fitted (a stage spans fewer empties than the
   search is deep, so its leaves lie in later stages): exact results are carried back a
   stage at a time, as Logistello and Edax bootstrap their tables.
3. **Fit.** Per stage, regularised least squares on the compact features of the positions
   within ``WINDOW`` empties of the stage (preconditioned conjugate gradients on the normal
   equations, numpy only), the regularisation chosen on held-out games; written to ``FILE``
   as int16 weights in ``weights.DISC`` units (``patterns.save``).

Everything is seeded: the same seed and options give the same weights (game ``i`` plays from
its own seed; the search tables are cleared every ``CHUNK`` games, where a resumed run
starts; labels come from fresh tables). So ``--jobs N`` (processes for the games and the
labels, each given whole chunks and blocks of positions) changes the time, not the result,
and a larger ``--games`` with the same seed extends an earlier run's games (when that run's
count was a whole number of chunks).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import TextIO

import numpy as np

from ai import tt
from ai.levels import choose_move, find
from ai.limits import Limits
from ai.othello import alphabeta as kernels
from ai.othello import engine, patterns
from ai.othello.evaluation import to_discs
from ai.othello.weights import DISC, INF, TT_BITS
from ai.progress import Progress, clock
from games.othello import GAME, PASS, OthelloState

OPENING_MOVES = 10
"""A game opens with 0 to this many random legal moves."""
RANDOM_MOVE = 0.04
"""Chance that a move after the opening is random (new kinds of positions)."""
PLAYERS = (("beginner", 1), ("easy", 2), ("medium", 4))
"""Levels that play the games, with their odds of playing a side."""
CHUNK = 50
"""Games saved at a time (a resumed run starts at a chunk)."""
WINDOW = 2
"""A stage is fitted on positions up to this many empties beyond its own."""
LAMBDAS = (3.0, 10.0, 30.0)
"""Regularisation strengths tried on each stage in the final fit (the best on held-out games
is kept); the fits that only score leaves for the next stage's labels use the middle one."""
HELD_OUT = 10
"""One game in this many is held out to choose the regularisation."""

_U = np.uint64


# ---------------------------------------------------------------------------------------------
# 1. Games


def game_seed(seed: int, index: int) -> int:
    """The seed of a run's ``index``-th game (``play_game``), apart from every other run's;
    the ProbCut fit replays the same games, and benches seed theirs beyond these."""
    return seed * 1_000_003 + index


def play_game(seed: int) -> list[OthelloState]:
    """One self-play game from ``seed``: the positions where the side to move has a move."""
    rng = random.Random(seed)
    names = [name for name, _ in PLAYERS]
    odds = [odds for _, odds in PLAYERS]
    sides = [find("othello", name) for name in rng.choices(names, odds, k=2)]
    state = GAME.initial()
    seen = []
    for _ in range(rng.randint(0, OPENING_MOVES)):
        if state.is_over():
            break
        state = state.play(rng.choice(state.legal_moves()))
    while not state.is_over():
        legal = state.legal_moves()
        if legal != [PASS]:
            seen.append(state)
        if len(legal) == 1:
            move = legal[0]
        elif rng.random() < RANDOM_MOVE:
            move = rng.choice(legal)
        else:
            level = sides[state.to_move]
            limits = Limits(depth=level.max_depth, multipv=level.candidates)
            iterations = list(engine.search(state, limits, evaluation="classic"))
            move = choose_move(state, level, rng.getrandbits(32), iterations)
        state = state.play(move)
    return seen


def _play_chunk(seed: int, first: int, last: int) -> list[tuple[int, int, int]]:
    """(mover's discs, other's discs, game) of each position of games ``first``..``last - 1``,
    played from empty tables (a chunk is the unit a resumed run or a job starts from)."""
    engine.clear()
    out = []
    for index in range(first, last):
        for state in play_game(game_seed(seed, index)):
            P, O = state.mover_boards()
            out.append((P, O, index))
    return out


def generate(work: Path, games: int, seed: int, report: TextIO,
             pool: Executor | None = None) -> dict[str, np.ndarray]:
    """Play games until ``work/positions.npz`` holds ``games`` of them; returns its arrays:
    ``players``, ``opponents`` (the side to move's and the other's discs) and ``game``."""
    path = work / "positions.npz"
    players: list[int] = []
    opponents: list[int] = []
    game_of: list[int] = []
    done = 0
    if path.exists():
        with np.load(path) as data:
            players = [int(x) for x in data["players"]]
            opponents = [int(x) for x in data["opponents"]]
            game_of = [int(x) for x in data["game"]]
            done = int(data["games"])
    seen = set(zip(players, opponents, strict=True))
    progress = Progress(report, "games    ", games, done)
    starts = range(done, games, CHUNK)
    chunks = _mapped(pool, _play_chunk, [(seed, s, min(s + CHUNK, games)) for s in starts])
    for first, positions in zip(starts, chunks, strict=True):
        for P, O, index in positions:  # chunks come back in order: the same as one process
            if (P, O) not in seen:
                seen.add((P, O))
                players.append(P)
                opponents.append(O)
                game_of.append(index)
        done = min(first + CHUNK, games)
        progress.step(done - first)
        _save(path, players=np.array(players, dtype=np.uint64),
              opponents=np.array(opponents, dtype=np.uint64),
              game=np.array(game_of, dtype=np.int32), games=np.array(done))
    with np.load(path) as data:
        return {k: data[k] for k in ("players", "opponents", "game")}


def _mapped(pool: Executor | None, function: Callable[..., list], tasks: list[tuple]
            ) -> Iterator[list]:
    """``function(*task)`` for each task, in order: in ``pool`` if there is one."""
    if pool is None:
        return (function(*task) for task in tasks)
    return pool.map(function, *zip(*tasks, strict=True))


def _save(path: Path, **arrays: np.ndarray) -> None:
    """Write arrays to ``path`` whole or not at all (a stop mid-write keeps the old file)."""
    temporary = path.with_suffix(".tmp.npz")
    np.savez(temporary, **arrays)  # type: ignore[arg-type]
    temporary.replace(path)


def empties_of(players: np.ndarray, opponents: np.ndarray) -> np.ndarray:
    filled = players | opponents
    bits = np.unpackbits(filled.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    return (64 - bits).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# 2. Labels


def solve_exact(P: int, O: int, table: np.ndarray) -> int:
    """The exact final disc difference for the side to move (``table``: an endgame table).

    Its moves are ordered with the hand-made evaluation: the labels must not depend on the
    pattern weights they are fitting."""
    ctl = kernels.new_control(None, use_tt=True, generation=1)
    stop = np.zeros(1, dtype=np.int64)
    return int(kernels.solve(_U(P), _U(O), -INF, INF, table, ctl, stop, kernels.CLASSIC))


def search_label(state: OthelloState, depth: int, table: np.ndarray) -> float:
    """A ``depth`` search's score in discs with leaves scored by the pattern ``table``."""
    value = engine.fixed_depth_value(state, depth, use_tt=True, table_bits=14, leaves=table)
    if abs(value) >= INF // 3:  # a finished game's score (evaluation.terminal)
        return float(to_discs(value))
    return value / DISC


class Labels:
    """``work/labels.npy``: one label per position (NaN until labelled), saved every
    ``every`` seconds and at the end of each step."""

    def __init__(self, work: Path, count: int, every: float = 20.0) -> None:
        self.path = work / "labels.npy"
        self.values = np.load(self.path) if self.path.exists() else np.full(count, np.nan)
        assert len(self.values) == count, "labels.npy is for other positions: delete it"
        self.every = every
        self.saved = time.perf_counter()

    def set(self, i: int, value: float) -> None:
        self.values[i] = value
        if time.perf_counter() - self.saved > self.every:
            self.save()

    def save(self) -> None:
        temporary = self.path.with_suffix(".tmp.npy")
        np.save(temporary, self.values)
        temporary.replace(self.path)
        self.saved = time.perf_counter()


BLOCK = 500
"""Positions labelled at a time (by one job, from one table; the labels are saved between)."""


def _solve_block(players: np.ndarray, opponents: np.ndarray) -> list[float]:
    table = tt.new_table(TT_BITS)  # game by game: one position's proof helps the next
    return [float(solve_exact(int(P), int(O), table))
            for P, O in zip(players, opponents, strict=True)]


def _search_block(players: np.ndarray, opponents: np.ndarray, depth: int,
                  table: np.ndarray) -> list[float]:
    # Black to move: the board from the mover's view.
    return [search_label(OthelloState(int(P), int(O), 0), depth, table)
            for P, O in zip(players, opponents, strict=True)]


def _label(data: dict[str, np.ndarray], labels: Labels, mine: np.ndarray, title: str,
           work: Callable[..., list[float]], extra: tuple, pool: Executor | None,
           report: TextIO) -> None:
    """Label the unlabelled positions of ``mine`` (a mask) with ``work``, block by block."""
    todo = np.flatnonzero(mine & np.isnan(labels.values))
    progress = Progress(report, title, int(mine.sum()), int(mine.sum()) - len(todo))
    blocks = [todo[i:i + BLOCK] for i in range(0, len(todo), BLOCK)]
    tasks = [(data["players"][b], data["opponents"][b], *extra) for b in blocks]
    for block, values in zip(blocks, _mapped(pool, work, tasks), strict=True):
        for i, value in zip(block, values, strict=True):
            labels.set(int(i), value)
        progress.step(len(block))
    labels.save()


def label_exact(data: dict[str, np.ndarray], empties: np.ndarray, labels: Labels,
                exact_empties: int, report: TextIO, pool: Executor | None = None) -> None:
    _label(data, labels, empties <= exact_empties, f"exact <={exact_empties:2d}",
           _solve_block, (), pool, report)


def label_stage(data: dict[str, np.ndarray], empties: np.ndarray, stages: np.ndarray,
                labels: Labels, stage: int, exact_empties: int, depth: int, table: np.ndarray,
                report: TextIO, pool: Executor | None = None) -> None:
    """Search-label the positions of ``stage`` (``stages``: each position's) beyond the exact
    ones."""
    mine = (stages == stage) & (empties > exact_empties)
    _label(data, labels, mine, f"stage {stage:2d}  ", _search_block, (depth, table), pool,
           report)


# ---------------------------------------------------------------------------------------------
# 3. Fit


def design(players: np.ndarray, opponents: np.ndarray) -> np.ndarray:
    """(positions, instances + 1) compact feature ids: each row lists the features that are 1
    (a feature listed twice counts twice); the last column is the bias."""
    full = patterns.full_indices(players, opponents)
    compact = patterns.full_to_compact()[full]
    bias = np.full((len(players), 1), patterns.FEATURES - 1, dtype=np.int64)
    return np.hstack([compact, bias])


def fit(rows: np.ndarray, y: np.ndarray, lam: float, features: int,
        iterations: int = 100, tolerance: float = 1e-4,
        start: np.ndarray | None = None) -> np.ndarray:
    """Weights ``w`` minimising ``|Xw - y|^2 + lam |w|^2``, where row ``i`` of ``X`` has a 1
    for each feature listed in ``rows[i]``: conjugate gradients on the normal equations
    ``(X'X + lam I) w = X'y``, preconditioned by their diagonal (each feature's count plus
    ``lam``: an exact solve for features no two positions share). Features never seen get 0."""
    k = rows.shape[1]
    flat = rows.ravel()

    def gram(w: np.ndarray) -> np.ndarray:
        r = w[rows].sum(axis=1)
        return np.bincount(flat, weights=np.repeat(r, k), minlength=features) + lam * w

    # The diagonal's counts (a feature listed twice in a row adds 2 here, 4 in X'X: only the
    # preconditioner is that rough, not the solution).
    inverse = 1.0 / (np.bincount(flat, minlength=features) + lam)
    b = np.bincount(flat, weights=np.repeat(y, k), minlength=features)
    w = np.zeros(features) if start is None else start.astype(np.float64).copy()
    r = b - gram(w)
    z = inverse * r
    p = z.copy()
    rz = r @ z
    norm_b = np.linalg.norm(b) or 1.0
    for _ in range(iterations):
        if np.linalg.norm(r) <= tolerance * norm_b:
            break
        q = gram(p)
        step = rz / (p @ q)
        w += step * p
        r -= step * q
        z = inverse * r
        rz_next = r @ z
        p = z + (rz_next / rz) * p
        rz = rz_next
    return w


def fit_stage(stage: int, rows: np.ndarray, y: np.ndarray, game: np.ndarray,
              empties: np.ndarray, choose: bool = True) -> tuple[np.ndarray, str]:
    """A stage's compact weights in discs, fitted on its window of labelled positions, the
    regularisation chosen on held-out games if ``choose``; and a line saying how."""
    low = stage * patterns.STAGE_EMPTIES - WINDOW
    high = stage * patterns.STAGE_EMPTIES + patterns.STAGE_EMPTIES - 1 + WINDOW
    if stage == patterns.STAGES - 1:
        high = 64
    window = (empties >= low) & (empties <= high) & ~np.isnan(y)
    held = window & (game % HELD_OUT == 0)
    train = window & ~held
    if window.sum() == 0:
        return np.zeros(patterns.FEATURES), f"stage {stage:2d}: no positions"
    best_lam, best_error = LAMBDAS[len(LAMBDAS) // 2], float("nan")
    if choose and held.sum() >= 50:
        best_error = float("inf")
        for lam in LAMBDAS:
            w = fit(rows[train], y[train], lam, patterns.FEATURES)
            error = float(np.abs(w[rows[held]].sum(axis=1) - y[held]).mean())
            if error < best_error:
                best_lam, best_error = lam, error
    w = fit(rows[window], y[window], best_lam, patterns.FEATURES)
    return w, (f"stage {stage:2d}: {int(window.sum()):7d} positions ({max(low, 0)}-{min(high, 60)} "
               f"empties), lambda {best_lam:g}, held-out mean error {best_error:.2f} discs")


def to_int16(w: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(w * DISC), -32000, 32000).astype(np.int16)


def train(work: Path, out: Path, games: int, seed: int, exact_empties: int, depth: int,
          report: TextIO = sys.stdout, jobs: int = 1) -> np.ndarray:
    """Run every step (each resumes from ``work``); writes and returns the compact weights."""
    work.mkdir(parents=True, exist_ok=True)
    if jobs > 1:  # spawned, not forked: a fresh process loads the compiled kernels itself
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            return _train(work, out, games, seed, exact_empties, depth, report, pool)
    return _train(work, out, games, seed, exact_empties, depth, report, None)


def _train(work: Path, out: Path, games: int, seed: int, exact_empties: int, depth: int,
           report: TextIO, pool: Executor | None) -> np.ndarray:
    started = time.perf_counter()
    data = generate(work, games, seed, report, pool)
    empties = empties_of(data["players"], data["opponents"])
    report.write(f"{len(empties)} distinct positions from {games} games\n")
    labels = Labels(work, len(empties))
    label_exact(data, empties, labels, exact_empties, report, pool)
    rows = design(data["players"], data["opponents"])
    game = data["game"]
    compact = np.zeros((patterns.STAGES, patterns.FEATURES))
    first = patterns.stage_of(exact_empties + 1)
    stages = np.array([patterns.stage_of(int(e)) for e in empties])
    for stage in range(first - 1):
        compact[stage], _ = fit_stage(stage, rows, labels.values, game, empties, choose=False)
    for stage in range(first, patterns.STAGES):
        # Leaves of this stage's searches lie in the stages fitted so far.
        compact[stage - 1], _ = fit_stage(stage - 1, rows, labels.values, game, empties,
                                          choose=False)
        table = patterns.expand(to_int16(compact))
        label_stage(data, empties, stages, labels, stage, exact_empties, depth, table, report,
                    pool)
    labeled = int((~np.isnan(labels.values)).sum())
    report.write(f"{labeled} positions labelled, {clock(time.perf_counter() - started)} "
                 "so far; final fit:\n")
    for stage in range(patterns.STAGES):
        compact[stage], line = fit_stage(stage, rows, labels.values, game, empties)
        report.write(line + "\n")
        report.flush()
    weights = to_int16(compact)
    patterns.save(out, weights, meta={
        "seed": str(seed), "games": str(games), "positions": str(labeled),
        "exact_empties": str(exact_empties), "depth": str(depth)})
    report.write(f"weights written to {out} ({out.stat().st_size:,} bytes) in "
                 f"{clock(time.perf_counter() - started)}\n")
    return weights


def main(argv: Sequence[str] | None = None,
         on_done: Callable[[], None] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="discus train othello",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("data/othello-train"),
                        help="where the steps keep their work (default data/othello-train)")
    parser.add_argument("--out", type=Path, default=patterns.WEIGHTS_FILE,
                        help="the weights file (default: the one the engine ships)")
    parser.add_argument("--exact-empties", type=int, default=18,
                        help="solve positions with this many empties or fewer (default 18)")
    parser.add_argument("--depth", type=int, default=6,
                        help="search depth of the other labels (default 6; at least a stage)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes for the games and labels (default 1; same result)")
    args = parser.parse_args(argv)
    if args.depth < patterns.STAGE_EMPTIES:
        parser.error(f"--depth must be at least {patterns.STAGE_EMPTIES} (a stage's span)")
    engine.warm_up()
    train(args.work, args.out, args.games, args.seed, args.exact_empties, args.depth,
          jobs=args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
