"""What a room command hands back: the sans-I/O boundary between the rooms and their runner.

A room decides and never acts; these values carry its decision to whoever does the I/O (the
room runner, a test): the messages to send, whether the game's row changed, which AI move to
ask for, which move to store and apply next. Their own module because a room makes them
while the runner, the lobby and the desks read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from games.base import State
from server import protocol as p
from server.connections.outbox import Send
from server.storage.store import MoveRecord


@dataclass(frozen=True)
class AiTurn:
    """The AI holding ``seat`` must now find a move for ``state`` at ``level``.

    When it has one, call ``Room.check_ai_move(round, ply, move)``; a stale request (the
    room moved on, was rematched or closed) is refused there, so late answers are harmless.
    """

    room: str
    round: int
    ply: int
    seat: int
    game: str
    level: str
    state: State
    moves: tuple[int, ...]
    """The moves from the start that led to ``state`` (how workers rebuild it)."""
    line: int = 0
    """How many take-backs the game had when the AI was asked: an answer for a line of play
    that was taken back is stale even if the game is at the same ply again."""


@dataclass
class Outcome:
    """What a command produced. Send ``sends`` in order; save ``Room.record()`` if
    ``save_game``; start ``ai`` if set; store and apply ``forced`` if set."""

    sends: list[Send] = field(default_factory=list)
    save_game: bool = False
    ai: AiTurn | None = None
    forced: PlannedMove | None = None
    """A forced Othello pass the server plays for whichever seat has no other move (person,
    bot or AI; a pass costs no time, and nobody should wait on a choice that is not one):
    store its ``record``, then ``Room.apply_move`` it, as for any move. Never set with
    ``ai``."""

    def extend(self, other: Outcome) -> Outcome:
        self.sends.extend(other.sends)
        self.save_game = self.save_game or other.save_game
        self.ai = other.ai or self.ai
        self.forced = other.forced or self.forced
        return self


@dataclass(frozen=True)
class PlannedMove:
    """A validated move not yet applied. Store ``record`` first, then ``Room.apply_move``."""

    round: int
    ply: int
    seat: int
    move: int
    record: MoveRecord
    thought: p.AiThought | None = None
    """For the AI's move: what its search saw, announced with the move."""
    forced: bool = False
    """A pass the server plays because the seat had no other move (``Outcome.forced``),
    announced as such (``move_made.forced``)."""
