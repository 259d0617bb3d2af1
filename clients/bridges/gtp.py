"""GTP, the Go Text Protocol, as Othello engines speak it (Egaroucid for Console ``-gtp``).

Each command is one line; each answer is ``= TEXT`` (or ``? ERROR``), possibly on several
lines, ended by an empty line. The bridge asks ``name`` and ``version`` once, then for each
move replays the game: ``boardsize 8``, ``clear_board``, ``play b|w MOVE`` per ply (black
moves first; a pass is ``play b pass``), the clock when timed, and ``genmove b|w``, whose
answer is a square (``f5``, any case), ``pass`` or ``resign``.

The clock: GTP has no increment, so ``time_settings MAIN 0 0`` gives the start (seconds)
and ``time_left COLOUR SECONDS 0`` the time left before each ``genmove``, less the
bridge's margin; an engine that does not know them answers ``?``, which is no fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clients.bridges.framing import (
    Ask,
    EngineId,
    IllegalAnswer,
    Position,
    Reader,
    Resigned,
    legal_move,
)

COLOURS = ("b", "w")


@dataclass(frozen=True)
class Refused:
    """A ``?`` answer's text."""

    text: str


def answer_reader() -> Reader:
    """Reads one GTP answer: the text after ``=`` (or a ``Refused`` after ``?``), lines
    joined with newlines, returned at the empty line that ends it."""
    lines: list[str] = []
    refused = False

    def until(line: str) -> object | None:
        nonlocal refused
        text = line.rstrip("\r\n")
        if not lines:
            if not text.strip():
                return None  # blank lines before an answer are read past
            if text[0] not in "=?":
                return None  # stray output (a log line) is read past too
            refused = text[0] == "?"
            lines.append(text[1:].lstrip("0123456789").strip())
            return None
        if not text.strip():
            body = "\n".join(lines).strip()
            return Refused(body) if refused else body
        lines.append(text)
        return None

    return until


class Gtp:
    """GTP framing for Othello."""

    protocol = "gtp"
    games = frozenset({"othello"})

    def __init__(self) -> None:
        self.name: str | None = None
        self.version: str | None = None

    def identity(self) -> EngineId | None:
        return EngineId(self.name, self.version) if self.name else None

    def opening(self) -> list[Ask]:
        return [Ask("name", self._keep("name")), Ask("version", self._keep("version")),
                Ask("boardsize 8", answer_reader())]

    def turn(self, position: Position) -> list[Ask]:
        if position.game != "othello":
            raise ValueError("GTP engines play Othello here")
        asks = [Ask("boardsize 8", answer_reader()), Ask("clear_board", answer_reader())]
        for ply, move in enumerate(position.moves):
            asks.append(Ask(f"play {COLOURS[ply % 2]} {move.lower()}", answer_reader()))
        colour = COLOURS[len(position.moves) % 2]
        if position.clock is not None:
            main = position.clock.initial_ms // 1000
            left = max(0, position.clock.mine_ms) // 1000
            asks.append(Ask(f"time_settings {main} 0 0", answer_reader()))
            asks.append(Ask(f"time_left {colour} {left} 0", answer_reader()))
        asks.append(Ask(f"genmove {colour}", answer_reader()))
        return asks

    def move(self, answer: object, legal: Sequence[str]) -> str:
        if isinstance(answer, Refused):
            raise IllegalAnswer(f"genmove refused: {answer.text}")
        text = str(answer).strip()
        if text.lower() == "resign":
            raise Resigned("the engine resigned")
        return legal_move(text, legal)

    def _keep(self, what: str) -> Reader:
        read = answer_reader()

        def until(line: str) -> object | None:
            value = read(line)
            if isinstance(value, str) and value:
                setattr(self, what, value.splitlines()[0].strip())
            return value

        return until
