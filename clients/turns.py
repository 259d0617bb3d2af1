"""What an engine is told about one turn, beyond the moves: the clock, and the failures that
cost the game.

Kept apart from ``clients.bot`` so that the engine bridges (``clients.bridges``) and the bot
share these few types without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class TurnClock:
    """A timed game's clocks as the server last sent them (``room_state`` or the
    ``move_made`` before this turn), in milliseconds: the bot's own time left, the
    opponent's (None: it has no clock, the AI), and the control's start and increment."""

    mine_ms: int
    theirs_ms: int | None
    initial_ms: int
    increment_ms: int


@dataclass(frozen=True)
class Turn:
    """One move to find: the game's moves from the start, the legal answers (notation), the
    seed for engines that draw lots, the clock (None: untimed) and ``since``, the
    ``time.monotonic()`` at which the message that made it our turn arrived: the time spent
    since then is already off ``clock.mine_ms``."""

    game: str
    moves: tuple[str, ...]
    legal: tuple[str, ...]
    seed: int
    clock: TurnClock | None
    since: float


class EngineName(Protocol):
    """What a program calls itself (``clients.bridges.EngineId``)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str | None: ...


class EngineFault(Exception):
    """The engine failed this turn (an illegal or late answer, a crash, a hang) or gave the
    game up: the bot resigns this game and goes on with the others. ``resigned``: the engine
    itself resigned, which is no failure (it is not restarted)."""

    def __init__(self, reason: str, *, resigned: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.resigned = resigned


@runtime_checkable
class TurnEngine(Protocol):
    """An engine that wants the clock: the bot calls ``choose_turn`` instead of ``choose``
    (in its worker thread). It returns a move from ``turn.legal`` or raises ``EngineFault``."""

    name: str

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        ...

    def choose_turn(self, turn: Turn) -> str:
        ...
