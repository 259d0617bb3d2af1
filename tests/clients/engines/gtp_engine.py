"""A test engine speaking GTP (Othello), as Egaroucid for Console does: random legal moves,
faults on request."""

from __future__ import annotations

import sys

from common import choose, legal, warm


def main() -> None:
    warm("othello")
    moves: list[str] = []
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        command, args = words[0], words[1:]
        answer: str | None = ""
        if command == "name":
            answer = "GoTester"
        elif command == "version":
            answer = "0.3"
        elif command == "clear_board":
            moves = []
        elif command == "play":
            move = args[1].lower()
            if move not in legal("othello", moves):
                answer = None
            else:
                moves.append(move)
        elif command == "genmove":
            move = choose("othello", moves)
            moves.append(move)
            answer = move.upper() if move != "pass" else "pass"
        elif command == "quit":
            print("=\n", flush=True)
            return
        elif command not in ("boardsize", "time_settings", "time_left", "komi"):
            print("? unknown command\n", flush=True)
            continue
        print("? illegal move\n" if answer is None else f"= {answer}".rstrip() + "\n",
              flush=True)


if __name__ == "__main__":
    main()
