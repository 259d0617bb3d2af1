"""Othello: this checkout's expert search against a reference commit's, by depth or by nodes.

``python -m bench.othello_versus [--reference main] [--new REF] [--games 40] [--depth 10 |
--nodes N | --time S] [--ref-depth D | --ref-nodes N] [--full-width] [--ref-full-width]
[--opening 8-12] [--balanced DISCS] [--seed 1]``

A match that the machine's load does not decide: each side is bounded by a depth or a node
budget (``Limits.depth`` or ``Limits.nodes``), not by a clock, so the same run on a busy
machine and on an idle one plays the same games. ``--time`` (soft seconds, hard twice that)
is there for comparison only. Both sides search selectively (Multi-ProbCut) as the expert
does unless ``--full-width`` (``--ref-full-width``: the reference alone); the reference may
be given another depth or budget (``--ref-depth``, ``--ref-nodes``: what a change is worth in
depth or nodes).

The reference commit is exported as ``bench.othello_endgame`` does (``git archive`` into a
directory named by its commit, kept). Two worker processes, one importing this checkout's
engine and one the reference's, take turns (never both at once): each keeps its tables from
move to move of a game, as an engine process does, and clears them at each new game
(``--new REF``: another commit's engine instead of this checkout's). Each opening
(``--opening`` random legal moves from the start, seeded) is played twice, the colours
swapped; each side plays its search's best move (the expert's choice); with
``--balanced DISCS`` only openings a 10-ply search scores within DISCS of even (random ones
are often lost for one side, and pairs of them split whoever is stronger). Prints each game,
then the score with its 95% interval (from the spread of the pairs' scores), the Elo
difference, the mean disc difference with its interval, how many pairs split, and each
side's mean nodes and seconds a move (seconds depend on the load: read them with it).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


def _worker() -> None:
    """Answer one JSON request a line: a position and its limits -> the search's move.

    Runs under the tree on ``PYTHONPATH`` (this checkout or the reference), so it imports
    only what both have: ``ai.warm_up``, ``engine.search``, ``engine.clear``, ``Limits``."""
    import ai
    from ai.limits import Limits
    from ai.othello import engine
    from games.othello import GAME

    ai.warm_up("othello")
    print(json.dumps({"ready": True}), flush=True)
    for request in sys.stdin:
        asked = json.loads(request)
        if asked["new_game"]:
            engine.clear()
        state = GAME.parse_position(asked["position"])
        seconds = asked["time"]
        limits = Limits(depth=asked["depth"], nodes=asked["nodes"],
                        soft_time=seconds, hard_time=None if seconds is None else 2 * seconds,
                        selective=asked["selective"])
        began = time.perf_counter()
        last = list(engine.search(state, limits))[-1]
        print(json.dumps({"move": last.move, "depth": last.depth, "nodes": last.nodes,
                          "wall": time.perf_counter() - began}), flush=True)


class _Player:
    """A worker process running the engine of ``tree``, with what its moves cost."""

    def __init__(self, tree: Path) -> None:
        # Imported here: a worker runs with another tree's ``bench`` on its path.
        from bench.othello_endgame import TreeWorker

        self.worker = TreeWorker(__file__, tree)
        self.ask = self.worker.ask
        self.close = self.worker.close
        self.nodes: list[int] = []
        self.walls: list[float] = []


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_versus",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reference", default="main", help="the commit to play against")
    parser.add_argument("--new", default=None,
                        help="a commit to play instead of this checkout (its working tree)")
    parser.add_argument("--games", type=int, default=40, help="even; default 40")
    bound = parser.add_mutually_exclusive_group()
    bound.add_argument("--depth", type=int, help="plies a move (default 10)")
    bound.add_argument("--nodes", type=int, help="nodes a move")
    bound.add_argument("--time", type=float, help="soft seconds a move (load-dependent)")
    parser.add_argument("--ref-depth", type=int, help="the reference's depth if another")
    parser.add_argument("--ref-nodes", type=int, help="the reference's nodes if other")
    parser.add_argument("--full-width", action="store_true", help="no Multi-ProbCut")
    parser.add_argument("--ref-full-width", action="store_true",
                        help="no Multi-ProbCut on the reference's side only")
    parser.add_argument("--opening", default="8-12", help="random moves first, e.g. 8-12")
    parser.add_argument("--balanced", type=float, default=None, metavar="DISCS",
                        help="only openings a 10-ply search scores within DISCS of even")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker()
        return 0
    # Not at the top: a worker runs this file under the reference's tree.
    from bench.othello_endgame import reference_tree
    from bench.othello_match import PairedScore, elo, opening
    from games.othello import GAME

    if args.depth is None and args.nodes is None and args.time is None:
        args.depth = 10
    limits = {"depth": args.depth, "nodes": args.nodes, "time": args.time,
              "selective": not args.full_width}
    ref_limits = dict(limits)
    if args.ref_depth is not None or args.ref_nodes is not None:
        ref_limits.update(depth=args.ref_depth, nodes=args.ref_nodes)
    if args.ref_full_width:
        ref_limits["selective"] = False
    tree = reference_tree(args.reference)
    low, _, high = args.opening.partition("-")
    print(f"new ({args.new or 'this checkout'}) {limits} vs reference {args.reference} "
          f"({tree.name}) {ref_limits}, openings of {args.opening} random moves, seed {args.seed}",
          flush=True)
    players = {"new": _Player(_CHECKOUT if args.new is None else reference_tree(args.new)),
               "ref": _Player(tree)}
    bounds = {"new": limits, "ref": ref_limits}
    rng = random.Random(args.seed)
    tally = PairedScore()
    started = time.perf_counter()
    try:
        for _ in range(args.games // 2):
            start = opening(rng, int(low), int(high or low), args.balanced)
            for new_is_black in (True, False):
                state = start
                fresh = {"new": True, "ref": True}
                while not state.is_over():
                    name = "new" if (state.to_move == 0) == new_is_black else "ref"
                    answer = players[name].ask({"position": GAME.format_position(state),
                                                "new_game": fresh[name], **bounds[name]})
                    fresh[name] = False
                    players[name].nodes.append(int(answer["nodes"]))  # type: ignore[call-overload]
                    players[name].walls.append(float(answer["wall"]))  # type: ignore[arg-type]
                    state = state.play(int(answer["move"]))  # type: ignore[call-overload]
                result = state.result()
                mine = result if new_is_black else -result
                tally.add(mine)
                print(f"game {tally.games:3d}: new {'black' if new_is_black else 'white'} "
                      f"{mine:+3d}  total {tally.points:g}/{tally.games}", flush=True)
            tally.end_pair()
    finally:
        for side in players.values():
            side.close()
    discs, n, score, spread = tally.discs, tally.games, tally.score, tally.spread
    wins, draws = tally.wins, tally.draws
    new, ref = players["new"], players["ref"]
    print(f"\n{'games':>6} {'won':>4} {'drawn':>5} {'lost':>4} {'score':>7} "
          f"{'95% interval':>13} {'Elo':>6} {'95% interval':>14} {'discs':>6}")
    print(f"{n:>6} {wins:>4} {draws:>5} {n - wins - draws:>4} {score:>7.3f} "
          f"{f'{score - 1.96 * spread:.3f}..{score + 1.96 * spread:.3f}':>13} "
          f"{elo(score):>+6.0f} "
          f"{f'{elo(score - 1.96 * spread):+.0f}..{elo(score + 1.96 * spread):+.0f}':>14} "
          f"{statistics.mean(discs):>+6.1f}")
    pair_discs = [(discs[i] + discs[i + 1]) / 2 for i in range(0, n - 1, 2)]
    disc_spread = statistics.stdev(pair_discs) / math.sqrt(len(pair_discs)) if len(
        pair_discs) > 1 else 0.0
    split = sum(1 for i in range(0, n - 1, 2) if discs[i] * discs[i + 1] < 0)
    mean = statistics.mean(discs)
    print(f"discs a game {mean:+.1f} (95% {mean - 1.96 * disc_spread:+.1f}.."
          f"{mean + 1.96 * disc_spread:+.1f}); {split} of {len(pair_discs)} pairs split "
          "(each side won its opening once)")
    print(f"nodes a move: new {statistics.mean(new.nodes):,.0f}, ref "
          f"{statistics.mean(ref.nodes):,.0f}; seconds a move: new "
          f"{statistics.mean(new.walls):.3f}, ref {statistics.mean(ref.walls):.3f} "
          f"({time.perf_counter() - started:.0f} s in all; read with the load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
