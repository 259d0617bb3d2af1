"""``columns``: a line protocol for Connect Four engines, defined by Discus.

The bridge writes one line per move: the game so far as columns ``1``..``7`` from the start
(``4453``; an empty line at the start). The engine answers with one line, either

- a column ``1``..``7``, the move it plays; or
- the score of every column, at least seven whitespace-separated integers of which the
  last seven count, column 1 first, larger is better for the side to move (as Pascal Pons'
  solver prints with ``-a``: the position echoed, then seven scores, ``-1000`` for a full
  column). The bridge plays the best legal column, the most central of equal ones.

Nothing else is said: no start-up, no name (the command's file name stands for it), no
clock (the bridge's deadline bounds each answer). An engine that needs files beside it (a
solver's opening book) gets its own working directory with ``--engine-dir``.
"""

from __future__ import annotations

from collections.abc import Sequence

from clients.bridges.framing import Ask, EngineId, IllegalAnswer, Position

CENTRE_FIRST = (4, 3, 5, 2, 6, 1, 7)
"""Equal scores: the most central column wins (it is on most fours)."""


def _line(line: str) -> object | None:
    return line.strip() or None


def best_column(answer: str, legal: Sequence[str]) -> str:
    """The column the answer plays: the column it names, or the best scored legal one."""
    words = answer.split()
    if len(words) == 1:
        if words[0] in legal:
            return words[0]
        raise IllegalAnswer(f"column {words[0]!r} is not legal here (legal: {' '.join(legal)})")
    if len(words) < 7:
        raise IllegalAnswer(f"neither a column nor seven scores: {answer!r}")
    try:
        scores = [int(word) for word in words[-7:]]
    except ValueError:
        raise IllegalAnswer(f"scores must be integers: {answer!r}") from None
    playable = [c for c in CENTRE_FIRST if str(c) in legal]
    if not playable:
        raise IllegalAnswer("no legal column to play")
    return str(max(playable, key=lambda c: scores[c - 1]))


class Columns:
    """``columns`` framing; ``name``: what the engine is called (it says nothing itself)."""

    protocol = "columns"
    games = frozenset({"connect4"})

    def __init__(self, name: str) -> None:
        self.name = name

    def identity(self) -> EngineId | None:
        return EngineId(self.name)

    def opening(self) -> list[Ask]:
        return []

    def turn(self, position: Position) -> list[Ask]:
        if position.game != "connect4":
            raise ValueError("columns engines play Connect Four only")
        return [Ask("".join(position.moves), _line)]

    def move(self, answer: object, legal: Sequence[str]) -> str:
        return best_column(str(answer), legal)
