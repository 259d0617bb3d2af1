"""Othello: what each midgame depth is worth, load-independently: the move it chooses on FFO
positions (every move's exact score known) and the nodes it took.

``python -m bench.othello_depth [--ffo 40-79] [--depths 12,16,18] [--t 1.5] [--full-width]``

Each FFO position (20 to 36 empties) is searched from empty tables by the expert's midgame
search (selective unless ``--full-width``; ``--t``: Multi-ProbCut's confidence, default
``weights.PROBCUT_T``) to each depth below its number of empties, so it never solves. The
chosen move's loss is the suite's best score minus that move's (a move the suite does not
list counts as ``CAP``, as does any larger loss). Prints per depth: the positions searched,
how many got a best move, the summed loss and the nodes, and each position's moves and losses
with ``--verbose``. Nodes and losses depend on the code alone, not on the machine's load:
two searches are compared by their loss at equal nodes (a search that reaches a depth with
fewer nodes and loses no more is better); the FFO positions are hard ones, so differences
below a few discs of summed loss are noise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ai.limits import Limits
from ai.othello import engine
from bench import numbers
from bench.othello_endgame import _ffo_lines, _scores
from games.othello import GAME

CAP = 20
"""Largest loss counted for one position (a move the suite does not list counts as this)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.othello_depth",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ffo", default="40-79", help="FFO numbers, e.g. 40-79")
    parser.add_argument("--depths", default="12,16,18")
    parser.add_argument("--t", type=float, default=None, help="ProbCut confidence")
    parser.add_argument("--full-width", action="store_true", help="no Multi-ProbCut")
    parser.add_argument("--verbose", action="store_true", help="every position's moves")
    args = parser.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",") if d]
    lines = _ffo_lines()
    engine.warm_up()
    totals = {depth: [0, 0, 0, 0] for depth in depths}  # searched, best, loss, nodes
    for number in numbers(args.ffo):
        line = lines[number]
        state = GAME.parse_position(line.split(";")[0].strip())
        scored = _scores(line)
        best = max(scored.values())
        empties = line[:64].count("-")
        row = []
        for depth in depths:
            if depth >= empties:
                row.append("-")
                continue
            engine.clear()
            *_, last = engine.search(state, Limits(depth=depth, selective=not args.full_width),
                                     probcut_t=args.t)
            move = GAME.format_move(last.move)
            loss = min(best - scored[move], CAP) if move in scored else CAP
            total = totals[depth]
            total[0] += 1
            total[1] += loss == 0
            total[2] += loss
            total[3] += last.nodes
            row.append(f"{move}:{loss}")
        if args.verbose:
            print(f"#{number} {empties} empties: {' '.join(row)}", flush=True)
    print(f"{'depth':>5} {'positions':>9} {'best':>5} {'loss':>5} {'nodes':>14}")
    for depth, (searched, found, loss, nodes) in totals.items():
        print(f"{depth:>5} {searched:>9} {found:>5} {loss:>5} {nodes:>14,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
