"""How a room is seen: the full ``room_state`` a person gets on (re)connecting, the position
with each move, the line on the room lists, and the row the store keeps of its game.

Its own part of the room because these are renderings, never decisions: they read the whole
room and change nothing, so every message and row shows one room the same way whichever
command made it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.base import Game, State
from server import protocol as p
from server.connections.outbox import Send
from server.play.clocks import TimeControl
from server.play.seats import OpponentKind, SeatState
from server.storage.store import GameRecord, GameStatus


class Views:
    """The messages and the stored row that show a room.

    A part of ``Room``, which inherits it and sets up the state (``Room.__init__``): the
    annotations below, and the signatures under ``TYPE_CHECKING``, are what this part uses of
    the rest of the room.
    """

    id: str
    game: Game
    opponent: OpponentKind
    seats: list[SeatState]
    spectators: set[str]
    round: int
    game_id: str
    started_at: float
    finished_at: float | None
    state: State
    moves: list[int]
    boards: list[str]
    result: p.Result | None
    ai_thinking: bool
    draw_offered_by: int | None
    rematch_offered_by: int | None
    time_control: TimeControl | None
    berserk_allowed: bool
    berserked: set[int]
    evaluation: bool
    rated: bool

    if TYPE_CHECKING:
        @property
        def status(self) -> p.RoomStatus: ...

        @property
        def ai_only(self) -> bool: ...

        def seat_of(self, player_id: str) -> int | None: ...

        def seat_views(self) -> list[p.SeatView]: ...

        def clock_view(self, now: float | None = None) -> p.ClockView | None: ...

    def position(self, cells: list[int | None] | None = None) -> p.Position:
        over = self.state.is_over()
        placed, flipped = changes(*self.boards[-2:]) if len(self.boards) > 1 else (None, [])
        return p.Position(
            ply=len(self.moves),
            position=self.game.format_position(self.state),
            cells=cells if cells is not None else self.game.cells(self.state),  # type: ignore[arg-type]
            to_move=None if over or self.result is not None else self.state.to_move,  # type: ignore[arg-type]
            legal_moves=[]
            if self.result is not None
            else [self.game.format_move(m) for m in self.state.legal_moves()],
            last_move=self.game.format_move(self.moves[-1]) if self.moves else None,
            placed=placed,
            flipped=flipped,
            winning=self.game.winning_line(self.state) if over else [],
        )

    def view(self, now: float | None = None) -> p.RoomView:
        return p.RoomView(
            id=self.id,
            game=self.game.name,
            rows=self.game.rows,
            cols=self.game.cols,
            opponent=self.opponent,
            seats=self.seat_views(),
            spectators=len(self.spectators),
            status=self.status,
            moves=[self.game.format_move(m) for m in self.moves],
            boards=list(self.boards),
            position=self.position(),
            result=self.result,
            ai_thinking=self.ai_thinking,
            rematch_offered_by=self.rematch_offered_by,  # type: ignore[arg-type]
            draw_offered_by=self.draw_offered_by,  # type: ignore[arg-type]
            round=self.round,
            clock=self.clock_view(now),
            berserk_allowed=self.berserk_allowed,
            berserk=sorted(self.berserked),  # type: ignore[arg-type]
        )

    def summary(self) -> p.RoomSummary:
        return p.RoomSummary(
            id=self.id,
            game=self.game.name,
            seats=self.seat_views(),
            status=self.status,
            ply=len(self.moves),
            spectators=len(self.spectators),
            time_control=None if self.time_control is None else self.time_control.name,
        )

    def state_for(self, player_id: str, now: float | None = None) -> Send:
        """The full ``room_state`` as ``player_id`` sees it, clocks as of ``now`` (None: as of
        the running turn's start, right when the caller has just started it)."""
        return Send((player_id,), p.RoomState(room=self.view(now), you=self.seat_of(player_id)))  # type: ignore[arg-type]

    def record(self) -> GameRecord:
        """The storage row of the game now being played in this room."""
        ai_seat = next((i for i, s in enumerate(self.seats) if s.kind == "ai"), None)
        status: GameStatus = self.status
        result: int | None = None
        if self.result is not None and self.result.reason == "aborted":
            status = "aborted"
        elif self.result is not None:
            if self.result.score is not None:
                result = self.result.score
            else:
                result = 0 if self.result.winner is None else (1 if self.result.winner == 0 else -1)
        return GameRecord(
            id=self.game_id,
            game=self.game.name,
            players=tuple(  # type: ignore[arg-type]
                s.player.id if s.kind == "human" and s.player is not None else None
                for s in self.seats
            ),
            ai_level=next((s.level for s in self.seats if s.kind == "ai"), None),
            ai_seat=ai_seat,
            other_ai_level=self.seats[1].level if self.ai_only else None,
            status=status,
            start_position=self.game.format_position(self.game.initial()),
            created_at=self.started_at,
            result=result,
            reason=self.result.reason if self.result is not None else None,
            finished_at=self.finished_at,
            time_control=None if self.time_control is None else self.time_control.name,
            clock_initial_ms=None if self.time_control is None else self.time_control.initial_ms,
            clock_increment_ms=None if self.time_control is None
            else self.time_control.increment_ms,
            berserk=tuple(sorted(self.berserked)),
            evaluation=self.evaluation,
            rated=self.rated,
        )


def changes(before: str, after: str) -> tuple[int | None, list[int]]:
    """What one ply did between two ``boards``: the cell it filled (None for a pass) and the
    cells whose owner it changed."""
    if len(before) != len(after):
        raise ValueError("two boards of different sizes")
    # The boards as numbers, a byte a cell: their XOR is non-zero only in the bytes of the
    # cells that changed, found a set bit at a time (one to a few a ply, not every cell).
    last = len(before) - 1
    diff = int.from_bytes(before.encode(), "big") ^ int.from_bytes(after.encode(), "big")
    placed = None
    flipped = []
    while diff:
        byte = ((diff & -diff).bit_length() - 1) >> 3
        diff &= ~(0xFF << (byte << 3))
        cell = last - byte
        if before[cell] == "-":
            placed = cell
        else:
            flipped.append(cell)
    flipped.reverse()  # lowest byte first is the last cell first
    return placed, flipped
