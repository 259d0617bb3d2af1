"""Measure how a shallow search predicts a deep one, and fit the Multi-ProbCut table.

``python -m ai.othello.probcut_fit [--games N] [--seed S] [--depth D] [--work DIR] [--out F]
[--jobs J]`` runs two steps, the first resumable (its work saved in ``DIR`` every ``CHUNK``
games, its games spread over ``J`` processes):

1. **Values.** Self-play games of the training pipeline (``train.play_game``: the shipped
   levels beginner to medium, random openings and random moves now and then), seeded per game.
   From each game, one position per stage of ``probcut.STAGE_EMPTIES`` empties (from
   ``MIN_EMPTIES`` up), drawn at random; each is searched by the engine's own iterative
   deepening, full-width, with the shipped pattern evaluation and a fresh table, to
   ``--depth`` plies, and its value at every depth is kept.
2. **Fit.** Per stage and depth ``D`` from ``probcut.MIN_DEPTH``: the least-squares line
   ``value(D) = a * value(shallow_depth(D)) + b`` over the positions whose two values are
   evaluations (not finished games), and ``sigma``, the residuals' standard deviation; a row
   needs ``MIN_POSITIONS``. Written to ``--out`` (default the shipped ``probcut.json``).

The same seed and options give the same table. Nothing here decides ``t``: the benchmark
``python -m bench.othello_mpc`` measures the trade of speed against accuracy it sets.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import TextIO

import numpy as np

from ai import tt
from ai.othello import alphabeta as kernels
from ai.othello import engine, probcut, train
from ai.othello.weights import INF
from ai.progress import Progress, clock
from games.othello import OthelloState

MIN_EMPTIES = 12
"""No position with fewer empties is measured (the engine solves those exactly)."""
CHUNK = 5
"""Games saved at a time (a resumed run starts at a chunk)."""
MIN_POSITIONS = 30
"""Fewest positions a fitted row rests on."""
TABLE_BITS = 18
"""Each position's fresh midgame table (2**18 entries: plenty for a depth-12 search)."""

_U = np.uint64


def positions_of(game: Sequence[OthelloState], rng: random.Random) -> list[OthelloState]:
    """One position of ``game`` per stage from ``MIN_EMPTIES`` empties, drawn with ``rng``."""
    by_stage: dict[int, list[OthelloState]] = {}
    for state in game:
        empties = 64 - sum(board.bit_count() for board in state.mover_boards())
        if empties >= MIN_EMPTIES:
            by_stage.setdefault(empties // probcut.STAGE_EMPTIES, []).append(state)
    return [rng.choice(by_stage[stage]) for stage in sorted(by_stage)]


def values(state: OthelloState, depth: int, leaves: np.ndarray) -> np.ndarray:
    """The position's full-width value at each depth 1..``depth`` (index = depth; index 0 is
    the static score), by the engine's iterative deepening over one fresh table."""
    P, O = state.mover_boards()
    out = np.zeros(depth + 1, dtype=np.int64)
    out[0] = kernels.leaf(_U(P), _U(O), leaves)
    table = tt.new_table(TABLE_BITS)
    ctl = kernels.new_control(None, use_tt=True, generation=1)
    buf, killers, history = kernels.new_buffers()
    stop = np.zeros(1, dtype=np.int64)
    order = np.array(state.legal_moves(), dtype=np.int64)
    for d in range(1, depth + 1):
        scores = np.full(len(order), -INF, dtype=np.int64)
        best_i = kernels.mid_root(_U(P), _U(O), d, order, scores, 1, table, ctl, stop, buf,
                                  killers, history, leaves, kernels.NO_PROBCUT)
        out[d] = scores[best_i]
        order, _ = engine._best_first(order, scores, best_i)
    return out


def game_values(index: int, seed: int, depth: int) -> list[tuple[int, np.ndarray]]:
    """(empties, values by depth) of each position measured in game ``index`` of ``seed``."""
    game_seed = train.game_seed(seed, index)
    leaves = engine.pattern_table()
    return [(64 - sum(b.bit_count() for b in state.mover_boards()), values(state, depth, leaves))
            for state in positions_of(train.play_game(game_seed), random.Random(game_seed))]


def measure(work: Path, games: int, seed: int, depth: int, report: TextIO,
            pool: Executor | None = None) -> dict[str, np.ndarray]:
    """Play and search until ``work/values.npz`` holds ``games`` games' positions (on
    ``pool``'s processes when given); returns its arrays ``empties``, ``values`` (one row of
    depths per position) and ``game``."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / "values.npz"
    empties: list[int] = []
    rows: list[np.ndarray] = []
    game_of: list[int] = []
    done = 0
    if path.exists():
        with np.load(path) as data:
            if data["values"].shape[1] != depth + 1:
                raise SystemExit(f"{path} holds depth {data['values'].shape[1] - 1}: "
                                 "delete it or ask for that depth")
            empties = [int(x) for x in data["empties"]]
            rows = list(data["values"])
            game_of = [int(x) for x in data["game"]]
            done = int(data["games"])
    progress = Progress(report, "games", games, done)
    while done < games:
        chunk = range(done, min(done + CHUNK, games))
        measured = (pool.map(game_values, chunk, itertools.repeat(seed), itertools.repeat(depth))
                    if pool is not None else (game_values(i, seed, depth) for i in chunk))
        for index, positions in zip(chunk, measured, strict=True):
            for empty, row in positions:
                empties.append(empty)
                rows.append(row)
                game_of.append(index)
            progress.step()
        done = chunk.stop
        train._save(path, empties=np.array(empties, dtype=np.int64),
                    values=np.array(rows, dtype=np.int64).reshape(-1, depth + 1),
                    game=np.array(game_of, dtype=np.int32), games=np.array(done))
    with np.load(path) as data:
        return {k: data[k] for k in ("empties", "values", "game")}


def fit(empties: np.ndarray, table: np.ndarray) -> list[probcut.Row]:
    """The rows of the ProbCut table from each position's values by depth (``table``)."""
    rows = []
    deepest = table.shape[1] - 1
    for stage in sorted({int(e) // probcut.STAGE_EMPTIES for e in empties}):
        here = empties // probcut.STAGE_EMPTIES == stage
        low = stage * probcut.STAGE_EMPTIES
        high = low + probcut.STAGE_EMPTIES - 1
        for depth in range(probcut.MIN_DEPTH, deepest + 1):
            shallow = probcut.shallow_depth(depth)
            x = table[here, shallow].astype(np.float64)
            y = table[here, depth].astype(np.float64)
            keep = (np.abs(x) < kernels.PROBCUT_MARGIN) & (np.abs(y) < kernels.PROBCUT_MARGIN)
            x, y = x[keep], y[keep]
            if len(x) < MIN_POSITIONS:
                continue
            a, b = np.polyfit(x, y, 1)
            sigma = float(np.sqrt(np.sum((y - (a * x + b)) ** 2) / (len(x) - 2)))
            rows.append(probcut.Row(low, high, depth, shallow, round(float(a), 4),
                                    round(float(b), 2), round(sigma, 2), len(x)))
    return rows


def write(out: Path, rows: Sequence[probcut.Row], meta: dict[str, object]) -> None:
    lines = ",\n".join("    " + json.dumps(row.__dict__) for row in rows)
    out.write_text('{\n  "meta": ' + json.dumps(meta) + ',\n  "rows": [\n' + lines + "\n  ]\n}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai.othello.probcut_fit",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--depth", type=int, default=12,
                        help="deepest search measured, and so the deepest row (default 12)")
    parser.add_argument("--work", type=Path, default=Path("data/othello-probcut"),
                        help="where the measured values are kept (default data/othello-probcut)")
    parser.add_argument("--out", type=Path, default=probcut.TABLE_FILE,
                        help="the table file (default: the one the engine ships)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes measuring games at once (default 1)")
    args = parser.parse_args(argv)
    if not probcut.MIN_DEPTH <= args.depth <= probcut.MAX_DEPTH:
        parser.error(f"--depth must be {probcut.MIN_DEPTH}..{probcut.MAX_DEPTH}")
    engine.warm_up()
    started = time.perf_counter()
    if args.jobs > 1:  # spawned, as the trainer's: each process loads the compiled kernels
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            data = measure(args.work, args.games, args.seed, args.depth, sys.stdout, pool)
    else:
        data = measure(args.work, args.games, args.seed, args.depth, sys.stdout)
    rows = fit(data["empties"], data["values"])
    write(args.out, rows, {"games": args.games, "seed": args.seed, "depth": args.depth,
                           "positions": len(data["empties"])})
    for row in rows:
        print(f"empties {row.low:2d}-{row.high:2d} depth {row.depth:2d} from {row.shallow}: "
              f"a {row.a:.3f} b {row.b:+6.1f} sigma {row.sigma:6.1f} (n {row.n})")
    print(f"{len(rows)} rows written to {args.out} in {clock(time.perf_counter() - started)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
