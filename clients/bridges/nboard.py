"""The NBoard protocol (NTest, Edax), version 2, Othello only.

The GUI (here the bridge) sends ``nboard 2`` once, ``set depth N``, and for each move the
whole game as a GGF record (``set game (;GM[Othello]...;)``), then ``ping N``: the engine
answers ``pong N`` once it has read everything before it, so whatever it wrote earlier (a
move of an abandoned search) is read past. ``go`` then asks for a move, answered with
``=== F5`` (optionally ``=== F5/eval/seconds``; ``PA`` is a pass). Engines name themselves
with ``set myname NAME`` at any time; ``status`` and ``nodestats`` lines are read past.

The clock: NBoard has no time-left command. The GGF record carries the time control in
``TI[]`` (the GGS clock form ``MM:SS/MM:SS/``: the start, the increment), and the engine's
strength is ``set depth``; the bridge's hard deadline bounds the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.bridges.framing import Ask, EngineId, IllegalAnswer, Position, legal_move

START_BOARD = "-" * 27 + "O*" + "-" * 6 + "*O" + "-" * 27
"""Row 1 first, ``*`` black, ``O`` white: d4 white, e4 black, d5 black, e5 white (the same
start as ``games.othello.ggf``)."""


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def ggf(position: Position) -> str:
    """The game so far as one GGF line (no newline inside: the protocol is line-based)."""
    parts = ["(;GM[Othello]PC[Discus]PB[black]PW[white]TY[8]"]
    if position.clock is not None:
        parts.append(f"TI[{_clock(position.clock.initial_ms)}/"
                     f"{_clock(position.clock.increment_ms)}/]")
    rows = " ".join(START_BOARD[r * 8:r * 8 + 8] for r in range(8))
    parts.append(f"BO[8 {rows} *]")
    for ply, move in enumerate(position.moves):
        colour = "B" if ply % 2 == 0 else "W"
        parts.append(f"{colour}[{'PA' if move.lower() == 'pass' else move.upper()}]")
    parts.append(";)")
    return "".join(parts)


class NBoard:
    """NBoard 2 framing. ``depth``: the ``set depth`` sent at the start (the engine's
    strength: NBoard engines search to it rather than to a clock)."""

    protocol = "nboard"
    games = frozenset({"othello"})

    def __init__(self, depth: int = 8) -> None:
        self.depth = depth
        self.name: str | None = None
        self._pings = 0

    def identity(self) -> EngineId | None:
        return EngineId(self.name) if self.name else None

    def opening(self) -> list[Ask]:
        return [Ask("nboard 2"), Ask(f"set depth {self.depth}"), self._ping()]

    def turn(self, position: Position) -> list[Ask]:
        if position.game != "othello":
            raise ValueError("NBoard engines play Othello only")
        return [Ask(f"set game {ggf(position)}"), self._ping(), Ask("go", self._move)]

    def move(self, answer: object, legal: Sequence[str]) -> str:
        text = str(answer).split("/")[0].strip()
        if text.upper() in ("PA", "PASS"):
            text = "pass"
        return legal_move(text, legal)

    def _ping(self) -> Ask:
        self._pings += 1
        pong = f"pong {self._pings}"

        def until(line: str) -> object | None:
            self._note(line)
            return True if line.strip() == pong else None

        return Ask(f"ping {self._pings}", until)

    def _move(self, line: str) -> object | None:
        self._note(line)
        text = line.strip()
        if text.startswith("==="):
            answer = text[3:].strip()
            if not answer:
                raise IllegalAnswer("'===' without a move")
            return answer
        return None

    def _note(self, line: str) -> None:
        words = line.split(maxsplit=2)
        if words[:2] == ["set", "myname"] and len(words) == 3:
            self.name = words[2].strip()
