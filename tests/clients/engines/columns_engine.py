"""A test engine speaking ``columns`` (Connect Four): a column, or with ``--scores`` seven
scores as Pons' solver prints with ``-a`` (the position echoed first); faults on request."""

from __future__ import annotations

import sys

from common import choose, warm


def main() -> None:
    warm("connect4")
    scores = "--scores" in sys.argv
    for raw in sys.stdin:
        line = raw.strip()
        moves = list(line)
        move = choose("connect4", moves)
        if scores and move.isdigit() and 1 <= int(move) <= 7:
            values = ["-1000" if c == 0 else "0" for c in range(7)]  # column 1 marked full
            values[int(move) - 1] = "5"
            print(f"{line} {' '.join(values)}", flush=True)
        else:
            print(move, flush=True)


if __name__ == "__main__":
    main()
