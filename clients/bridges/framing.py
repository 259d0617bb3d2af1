"""What every engine protocol's framing shares: a line to send and how to read its answer,
the engine's name as it reports it, and the answers that cost a game.

A dialect (``nboard``, ``gtp``, ``columns``) is pure text: it turns a position into the
lines to send (``Ask``s) and the lines read back into a move, and never touches a process;
``clients.bridges.keeper`` does the I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from clients.turns import TurnClock


class IllegalAnswer(ValueError):
    """The engine answered with something that is not a legal move here (or not a move)."""


class Resigned(Exception):
    """The engine resigned the game (GTP's ``resign``): a legitimate answer, no fault."""


Reader = Callable[[str], object | None]
"""Fed each line the engine writes after an ``Ask`` was sent: None to read on, anything else
ends the ask with that value."""


@dataclass(frozen=True)
class Ask:
    """A line for the engine; ``until`` reads its answer (None: it has none)."""

    line: str
    until: Reader | None = None


@dataclass(frozen=True)
class EngineId:
    """How the engine names itself (NBoard ``set myname``, GTP ``name`` and ``version``)."""

    name: str
    version: str | None = None

    def text(self) -> str:
        return self.name if not self.version else f"{self.name} {self.version}"


@dataclass(frozen=True)
class Position:
    """One turn as a dialect sees it: the moves from the start (Discus notation), the legal
    answers, and the clock with the bridge's margin already off ``clock.mine_ms``."""

    game: str
    moves: tuple[str, ...]
    legal: tuple[str, ...]
    clock: TurnClock | None


class Dialect(Protocol):
    """One engine protocol's framing. ``opening`` once per process start (after which
    ``identity`` holds what the engine said of itself), ``turn`` per move; the last ``Ask``
    of ``turn`` reads the answer, which ``move`` turns into a legal move or refuses with
    ``IllegalAnswer`` (``Resigned``: the engine gave up)."""

    protocol: str
    games: frozenset[str]

    def opening(self) -> list[Ask]: ...

    def identity(self) -> EngineId | None: ...

    def turn(self, position: Position) -> list[Ask]: ...

    def move(self, answer: object, legal: Sequence[str]) -> str: ...


def legal_move(text: str, legal: Sequence[str]) -> str:
    """``text`` as one of ``legal`` (case-insensitive); ``IllegalAnswer`` otherwise."""
    wanted = text.strip().lower()
    for move in legal:
        if move.lower() == wanted:
            return move
    raise IllegalAnswer(f"{text!r} is not legal here (legal: {' '.join(legal) or 'none'})")
