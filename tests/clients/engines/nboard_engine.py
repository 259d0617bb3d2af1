"""A test engine speaking NBoard 2 (Othello): random legal moves, faults on request."""

from __future__ import annotations

import re
import sys

from common import choose, warm

NAME = "NTester"


def moves_of(ggf: str) -> list[str]:
    found = re.findall(r"(?<![A-Z])[BW]\[([^\]]*)\]", ggf)
    return ["pass" if m.split("/")[0].upper() in ("PA", "PASS") else m.split("/")[0].lower()
            for m in found]


def main() -> None:
    warm("othello")
    moves: list[str] = []
    for raw in sys.stdin:
        line = raw.strip()
        if line.startswith("nboard"):
            print(f"set myname {NAME}", flush=True)
        elif line.startswith("set game "):
            moves = moves_of(line[len("set game "):])
        elif line.startswith("ping "):
            print(f"pong {line.split()[1]}", flush=True)
        elif line == "go":
            move = choose("othello", moves)
            print(f"=== {'PA' if move == 'pass' else move.upper()}/0.00/0.01", flush=True)
        # set depth, set contempt and the rest: nothing to say


if __name__ == "__main__":
    main()
