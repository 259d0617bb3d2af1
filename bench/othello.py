"""Othello benchmark: FFO endgames solved exactly, with ratios against Edax.

``python -m bench.othello [--ffo 40-44] [--evaluation classic]`` (perft rates are in
``bench.perft``; ``--evaluation`` picks what orders the moves before the solve)

``python -m bench.othello --wld --ffo 40-59``: each position solved exactly and then to win,
loss or draw only (what a clock-bounded search runs when the exact solve does not fit), each
from empty tables after the same ordering iterations: nodes and seconds of both, and whether
the outcome and its move agree with the suite's scores.

Reference figures (``shared/data/README.md``, same kind of 2-core machine, busy): Edax solves
FFO #40-#44 in 22 s wall (13.3 s CPU) at about 50M nodes per CPU second. JIT warm-up is
measured apart and never charged to a position. We print wall and CPU seconds: when the
machine is shared, CPU seconds are the fairer comparison.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence

_T0 = time.perf_counter()
# Kernels with explicit signatures compile (or load from the cache) when imported.
importlib.import_module("ai.othello")
IMPORT_SECONDS = time.perf_counter() - _T0

import ai  # noqa: E402
from ai.levels import choose_move, find  # noqa: E402
from ai.limits import Limits  # noqa: E402
from ai.othello import engine  # noqa: E402
from bench import numbers, reference_data  # noqa: E402
from games.othello import GAME  # noqa: E402

EDAX_WALL = {40: 0.9, 41: 8.9, 42: 3.5, 43: 4.4, 44: 4.4}
EDAX_CPU = {40: 0.46, 41: 3.1, 42: 2.0, 43: 3.6, 44: 4.2}
EDAX_NPS = 50e6


def ffo_lines() -> dict[int, str]:
    lines = reference_data("othello/ffo_40_59.obf").read_text().splitlines()
    lines += reference_data("othello/ffo_60_79.obf").read_text().splitlines()
    return {40 + i: line for i, line in enumerate(lines) if line.strip()}


def best_answers(line: str) -> tuple[set[str], int]:
    """Moves sharing the best exact score in an OBF line, and that score."""
    answers = [a.strip().split(":") for a in line.split(";")[1:] if a.strip()]
    best = int(answers[0][1])
    return {move.lower() for move, score in answers if int(score) == best}, best


def bench_ffo(numbers: Sequence[int], evaluation: str | None = None) -> bool:
    lines = ffo_lines()
    print(f"{'#':>3} {'empties':>7} {'move':>5} {'score':>5} {'want':>5} {'ok':>3} "
          f"{'wall s':>8} {'cpu s':>8} {'nodes':>13} {'Mn/s cpu':>9} {'edax s':>7}")
    total_wall = total_cpu = 0.0
    total_nodes = 0
    all_right = True
    for number in numbers:
        line = lines[number]
        state = GAME.parse_position(line)
        moves, want = best_answers(line)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        last = list(engine.search(state, Limits(exact=True), evaluation=evaluation))[-1]
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        move = GAME.format_move(last.move)
        right = last.exact and last.score == want and move in moves
        all_right &= right
        total_wall += wall
        total_cpu += cpu
        total_nodes += last.nodes
        edax = f"{EDAX_WALL[number]:7.1f}" if number in EDAX_WALL else f"{'-':>7}"
        print(f"{number:>3} {64 - (state.black | state.white).bit_count():>7} {move:>5} "
              f"{last.score:>+5} {want:>+5} {'yes' if right else 'NO':>3} {wall:8.2f} "
              f"{cpu:8.2f} {last.nodes:>13,} {last.nodes / max(cpu, 1e-9) / 1e6:9.1f} {edax}",
              flush=True)
    print(f"total: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU, {total_nodes:,} nodes, "
          f"{total_nodes / max(total_cpu, 1e-9) / 1e6:.1f}M nodes per CPU second")
    if all(n in EDAX_WALL for n in numbers):
        edax_wall = sum(EDAX_WALL[n] for n in numbers)
        edax_cpu = sum(EDAX_CPU[n] for n in numbers)
        print(f"vs Edax: wall {total_wall:.1f} / {edax_wall:.1f} s = {total_wall / edax_wall:.2f}x"
              f" (target <= 3x, aim 1.5x); CPU {total_cpu:.1f} / {edax_cpu:.1f} s = "
              f"{total_cpu / edax_cpu:.2f}x")
    nps = total_nodes / max(total_cpu, 1e-9)
    print(f"nodes/s vs Edax's ~50M: {nps / 1e6:.1f}M = {nps / EDAX_NPS:.2f}x (target >= 0.5x)")
    print(f"all right: {'yes' if all_right else 'NO'}")
    return all_right


def bench_expert(numbers: Sequence[int], level_name: str) -> None:
    """How often a level, at its own limits and through ``choose_move`` as the server plays
    it, finds a best move of each FFO position (the suite's answers, not this engine's)."""
    level = find("othello", level_name)
    lines = ffo_lines()
    print(f"\n{level_name} at its limits (soft {level.soft_time} s, hard {level.hard_time} s):")
    print(f"{'#':>3} {'empties':>7} {'move':>5} {'best':>12} {'hit':>3} {'exact':>5} "
          f"{'depth':>5} {'seconds':>7}")
    hits = 0
    for number in numbers:
        line = lines[number]
        state = GAME.parse_position(line)
        moves, _ = best_answers(line)
        iterations = list(ai.search(state, level.limits()))
        move = GAME.format_move(choose_move(state, level, number, iterations[-1:]))
        last = iterations[-1]
        hits += move in moves
        print(f"{number:>3} {64 - (state.black | state.white).bit_count():>7} {move:>5} "
              f"{','.join(sorted(moves)):>12} {'yes' if move in moves else 'no':>3} "
              f"{'yes' if last.exact else 'no':>5} {last.depth:>5} {last.seconds:7.2f}",
              flush=True)
    print(f"{level_name}: best move in {hits} of {len(numbers)}")


def answer_scores(line: str) -> dict[str, int]:
    """Every move an OBF line scores, with its exact score."""
    answers = [a.strip().split(":") for a in line.split(";")[1:] if a.strip()]
    return {move.lower(): int(score) for move, score in answers}


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def bench_wld(numbers: Sequence[int]) -> bool:
    """The exact solve against the win/loss/draw solve, position by position."""
    lines = ffo_lines()
    print(f"{'#':>3} {'empties':>7} {'want':>5} {'exact s':>8} {'exact nodes':>13} "
          f"{'wld s':>7} {'wld nodes':>13} {'move':>5} {'ok':>3}")
    totals = [0.0, 0, 0.0, 0]
    all_right = True
    for number in numbers:
        line = lines[number]
        state = GAME.parse_position(line)
        _, want = best_answers(line)
        engine.clear()
        wall0 = time.perf_counter()
        exact = list(engine.search(state, Limits(exact=True)))[-1]
        exact_wall = time.perf_counter() - wall0
        engine.clear()
        wall0 = time.perf_counter()
        wld = engine.solve_outcome(state)
        wld_wall = time.perf_counter() - wall0
        move = GAME.format_move(wld.move)
        scored = answer_scores(line)
        # The suite scores only its best moves on some lines: an unlisted move must be worse,
        # so it keeps the outcome only when that is a loss.
        right = (wld.outcome == _sign(want) and exact.score == want
                 and (_sign(scored[move]) == _sign(want) if move in scored else want < 0))
        all_right &= right
        for i, value in enumerate((exact_wall, exact.nodes, wld_wall, wld.nodes)):
            totals[i] += value
        print(f"{number:>3} {64 - (state.black | state.white).bit_count():>7} {want:>+5} "
              f"{exact_wall:8.2f} {exact.nodes:>13,} {wld_wall:7.2f} {wld.nodes:>13,} "
              f"{move:>5} {'yes' if right else 'NO':>3}", flush=True)
    print(f"total: exact {totals[0]:.1f} s, {int(totals[1]):,} nodes; win/loss/draw "
          f"{totals[2]:.1f} s, {int(totals[3]):,} nodes: {totals[2] / max(totals[0], 1e-9):.2f}"
          f" of the time, {totals[3] / max(totals[1], 1):.2f} of the nodes")
    print(f"all right: {'yes' if all_right else 'NO'}")
    return all_right


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello", description=__doc__)
    parser.add_argument("--ffo", default="40-44", help="FFO numbers, e.g. 40-44 or 45")
    parser.add_argument("--level", default="", help="also play FFO #40-59 at this level's "
                        "limits (e.g. expert) and count its best moves")
    parser.add_argument("--evaluation", default=None, help="patterns or classic (default: "
                        "the engine's)")
    parser.add_argument("--wld", action="store_true", help="compare the exact solve with "
                        "the win/loss/draw solve on the --ffo positions")
    args = parser.parse_args(argv)
    warm = IMPORT_SECONDS + ai.warm_up("othello")
    print(f"engine JIT warm-up (compile or load from cache, import included): {warm:.2f} s")
    if args.wld:
        return 0 if bench_wld(numbers(args.ffo)) else 1
    right = bench_ffo(numbers(args.ffo), args.evaluation) if args.ffo else True
    if args.level:
        bench_expert(numbers("40-59"), args.level)
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
