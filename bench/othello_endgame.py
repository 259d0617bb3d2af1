"""Othello endgame solver against a reference commit's, in one run: FFO nodes, seconds, ratios.

``python -m bench.othello_endgame [--ffo 40-49] [--reference main] [--wld]``
``python -m bench.othello_endgame --played 20,22,24 [--count 4] [--seed 1]``: positions of
the engine's self-play instead (what the expert meets), with the median and longest solve
per number of empties (``weights.SOLVE_SECONDS`` is fitted to these).

The reference commit (default ``main``) is exported with ``git archive`` into a directory
beside the system's temporary files, named by its commit so its compiled kernels are reused
by the next run. Two worker processes, one importing the engine of this checkout and one the
reference's, each warm their kernels (not measured) and then solve the same FFO positions as
the engine runs an exact solve (``search`` with ``Limits(exact=True)``: the ordering
iterations, then the solve), or with ``--wld`` to win, loss or draw only
(``engine.solve_outcome``), each from empty tables. The two take turns position by position,
who goes first alternating, so a change in the machine's load falls on both alike.

Every score is checked against the suite's (exact: the score and a best move; win/loss/draw:
the outcome). Prints per position and in total the nodes and wall seconds of both and the
new/reference ratios (below 1: the new solver is faster), CPU seconds in the totals. Nodes
are every node the search counts: the ordering iterations', the solve's and its ordering
searches'. A self-play position has no known score: the two solvers must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


def _worker() -> None:
    """Answer one JSON request a line: ``{"line": OBF, "wld": bool}`` -> the solve's result.

    Runs under the tree on ``PYTHONPATH`` (this checkout or the reference), so it imports
    only what both have: ``ai.warm_up``, ``engine.search``, ``engine.solve_outcome``."""
    import ai
    from ai.limits import Limits
    from ai.othello import engine
    from games.othello import GAME

    ai.warm_up("othello")
    print(json.dumps({"ready": True}), flush=True)
    for request in sys.stdin:
        asked = json.loads(request)
        state = GAME.parse_position(asked["line"].split(";")[0].strip())
        engine.clear()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        if asked["wld"]:
            last = engine.solve_outcome(state)
        else:
            last = list(engine.search(state, Limits(exact=True)))[-1]
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        print(json.dumps({
            "move": GAME.format_move(last.move), "score": last.score, "exact": last.exact,
            "outcome": getattr(last, "outcome", None), "nodes": last.nodes,
            "wall": wall, "cpu": cpu,
        }), flush=True)


def reference_tree(ref: str) -> Path:
    """This repository's ``ref`` exported into a directory named by its commit (kept)."""
    commit = subprocess.run(["git", "rev-parse", ref], cwd=_CHECKOUT, check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"discus-reference-{commit[:12]}"
    if not (tree / "ai" / "othello" / "engine.py").is_file():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=_CHECKOUT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


class TreeWorker:
    """A worker process running ``script --worker`` on the engine of ``tree``: one JSON
    request a line in, one answer a line out (the first answer says it is ready)."""

    def __init__(self, script: str, tree: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.process = subprocess.Popen(
            [sys.executable, script, "--worker"], cwd=tree, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        self.ask(None)

    def ask(self, request: dict[str, object] | None) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        if request is not None:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the worker process ended")
        result: dict[str, object] = json.loads(answer)
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def _ffo_lines() -> dict[int, str]:
    from bench import reference_data

    lines = reference_data("othello/ffo_40_59.obf").read_text().splitlines()
    lines += reference_data("othello/ffo_60_79.obf").read_text().splitlines()
    return {40 + i: line for i, line in enumerate(lines) if line.strip()}


def _scores(line: str) -> dict[str, int]:
    answers = [a.strip().split(":") for a in line.split(";")[1:] if a.strip()]
    return {move.lower(): int(score) for move, score in answers}


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def _right(result: dict[str, object], scored: dict[str, int], wld: bool) -> bool:
    """Whether a result agrees with the suite (its first listed score is the best)."""
    want = max(scored.values())
    move = str(result["move"])
    if wld:
        # An unlisted move is worse than every listed one: it keeps only a loss.
        keeps = _sign(scored[move]) == _sign(want) if move in scored else want < 0
        return result["outcome"] == _sign(want) and keeps
    return bool(result["exact"]) and result["score"] == want and scored.get(move) == want


def played_positions(empties: Sequence[int], count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` positions at each number of ``empties`` from games the engine plays against
    itself (depth 4 after 4 random moves, a seeded choice among moves within a disc of the
    best so games differ): (label, position as text), like the expert meets in play."""
    import random

    import ai
    from ai.limits import Limits
    from games.othello import GAME

    rng = random.Random(seed)
    found: list[tuple[str, str]] = []
    for target in empties:
        made = 0
        while made < count:
            state = GAME.initial()
            for _ in range(4):
                state = state.play(rng.choice(state.legal_moves()))
            while not state.is_over() and 64 - (state.black | state.white).bit_count() > target:
                last = ai.best(state, Limits(depth=4, multipv=3))
                top = last.root_scores[0][1]
                near = [m for m, s in last.root_scores[:3] if s >= top - 1]
                state = state.play(rng.choice(near))
            if not state.is_over() and 64 - (state.black | state.white).bit_count() == target:
                made += 1
                found.append((f"{target}e{made}", GAME.format_position(state)))
    return found


def compare(items: Sequence[tuple[str, str]], ref: str, wld: bool) -> bool:
    """Solve each (label, OBF line) with both solvers; an FFO line's answers are checked
    against the suite's scores, a line without answers by the two solvers' agreement."""
    tree = reference_tree(ref)
    print(f"reference {ref}: {tree.name}; new: this checkout; "
          f"{'win/loss/draw' if wld else 'exact'} solves, empty tables each", flush=True)
    solvers = {"ref": TreeWorker(__file__, tree), "new": TreeWorker(__file__, _CHECKOUT)}
    totals = {name: {"nodes": 0, "wall": 0.0, "cpu": 0.0} for name in solvers}
    walls: dict[int, dict[str, list[float]]] = {}
    cpus: dict[int, dict[str, list[float]]] = {}
    all_right = True
    print(f"{'#':>5} {'empties':>7} {'score':>5} {'ok':>7} {'ref nodes':>13} "
          f"{'new nodes':>13} {'ratio':>6} {'ref s':>7} {'new s':>7} {'ratio':>6}")
    try:
        for turn, (label, line) in enumerate(items):
            scored = _scores(line)
            request = {"line": line, "wld": wld}
            order = ["ref", "new"] if turn % 2 == 0 else ["new", "ref"]
            results = {name: solvers[name].ask(request) for name in order}
            ref_r, new_r = results["ref"], results["new"]
            if scored:
                right = {name: _right(results[name], scored, wld) for name in solvers}
                want = f"{max(scored.values()):+d}"
            else:
                field = "outcome" if wld else "score"
                same = ref_r[field] == new_r[field] and (wld or bool(new_r["exact"]))
                right = {name: same for name in solvers}
                want = "same" if same else "DIFF"
            all_right &= all(right.values())
            empties = line[:64].count("-")
            for name, result in results.items():
                for key in ("nodes", "wall", "cpu"):
                    totals[name][key] += result[key]  # type: ignore[operator]
                walls.setdefault(empties, {}).setdefault(name, []).append(
                    float(result["wall"]))  # type: ignore[arg-type]
                cpus.setdefault(empties, {}).setdefault(name, []).append(
                    float(result["cpu"]))  # type: ignore[arg-type]
            ok = "/".join("yes" if right[n] else "NO" for n in ("ref", "new"))
            ref_nodes, new_nodes = int(ref_r["nodes"]), int(new_r["nodes"])  # type: ignore[call-overload]
            ref_wall, new_wall = float(ref_r["wall"]), float(new_r["wall"])  # type: ignore[arg-type]
            print(f"{label:>5} {empties:>7} {want:>5} {ok:>7} {ref_nodes:>13,} "
                  f"{new_nodes:>13,} {new_nodes / max(ref_nodes, 1):6.2f} {ref_wall:7.2f} "
                  f"{new_wall:7.2f} {new_wall / max(ref_wall, 1e-9):6.2f}", flush=True)
    finally:
        for solver in solvers.values():
            solver.close()
    ref_t, new_t = totals["ref"], totals["new"]
    print(f"total: nodes {int(ref_t['nodes']):,} -> {int(new_t['nodes']):,} "
          f"({new_t['nodes'] / max(ref_t['nodes'], 1):.2f}); wall {ref_t['wall']:.1f} -> "
          f"{new_t['wall']:.1f} s ({new_t['wall'] / max(ref_t['wall'], 1e-9):.2f}); CPU "
          f"{ref_t['cpu']:.1f} -> {new_t['cpu']:.1f} s "
          f"({new_t['cpu'] / max(ref_t['cpu'], 1e-9):.2f})")
    for empties in sorted(walls):
        ref_w, new_w = walls[empties]["ref"], walls[empties]["new"]
        ref_c, new_c = cpus[empties]["ref"], cpus[empties]["new"]
        print(f"{empties} empties: median wall {statistics.median(ref_w):.2f} -> "
              f"{statistics.median(new_w):.2f} s, max {max(ref_w):.2f} -> {max(new_w):.2f} s; "
              f"median CPU {statistics.median(ref_c):.2f} -> {statistics.median(new_c):.2f} s "
              f"({len(new_w)} positions)")
    print(f"all right: {'yes' if all_right else 'NO'}")
    return all_right


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_endgame",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ffo", default="40-49", help="FFO numbers, e.g. 40-49 or 45")
    parser.add_argument("--reference", default="main", help="the commit to compare with")
    parser.add_argument("--wld", action="store_true", help="win/loss/draw solves instead")
    parser.add_argument("--played", default="", help="instead of FFO, positions of the "
                        "engine's self-play with these empties, e.g. 20,22,24")
    parser.add_argument("--count", type=int, default=4, help="--played positions per empties")
    parser.add_argument("--seed", type=int, default=1, help="--played games' seed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker()
        return 0
    # Not at the top: a worker runs this file under the reference's tree, whose bench
    # package may not have it.
    from bench import numbers
    if args.played:
        items = played_positions([int(e) for e in args.played.split(",")], args.count,
                                 args.seed)
    else:
        lines = _ffo_lines()
        items = [(str(number), lines[number]) for number in numbers(args.ffo)]
    return 0 if compare(items, args.reference, args.wld) else 1


if __name__ == "__main__":
    sys.exit(main())
