"""What one player of a room asks beyond a move, and the other may grant: taking a move back
(against the computer), a draw, a rematch.

Its own part of the room because these are agreements, not rules of the game: who asked,
what stands until when (a move declines a draw; a draw offer declined waits for a move), and
what granting does (the game goes back, ends agreed, or starts again with the seats
swapped).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from games.base import Game, State
from server import errors
from server import protocol as p
from server.connections.outbox import Send
from server.play.clocks import Clocks, TimeControl
from server.play.outcome import AiTurn, Outcome
from server.play.seats import OpponentKind, SeatState


class Offers:
    """Take-backs, draw offers and rematches in a room.

    A part of ``Room``, which inherits it and sets up the state (``Room.__init__``): the
    annotations below, and the signatures under ``TYPE_CHECKING``, are what this part uses of
    the rest of the room.
    """

    id: str
    game: Game
    opponent: OpponentKind
    seats: list[SeatState]
    round: int
    state: State
    moves: list[int]
    boards: list[str]
    line: int
    ai_thinking: bool
    last_move_at: float
    draw_offered_by: int | None
    draw_declined_at: int | None
    rematch_offered_by: int | None
    time_control: TimeControl | None
    clocks: Clocks | None
    clock_log: list[tuple[int | None, int | None]]

    if TYPE_CHECKING:
        @property
        def status(self) -> p.RoomStatus: ...

        def members(self) -> tuple[str, ...]: ...

        def state_for(self, player_id: str, now: float | None = None) -> Send: ...

        def _event(self, kind: p.RoomEventKind, seat: int | None = None,
                   grace: float | None = None, to: Iterable[str] | None = None,
                   clock: p.ClockView | None = None) -> Send: ...

        def _seated(self, player_id: str) -> int: ...

        def _require_active(self) -> None: ...

        def _start(self, game_id: str, now: float) -> None: ...

        def _play(self, move: int) -> list[int | None]: ...

        def _set_clocks(self, clocks: tuple[int | None, int | None], now: float) -> None: ...

        def _ai_turn(self) -> AiTurn | None: ...

        def _due(self, now: float) -> Outcome: ...

        def _finish(self, result: p.Result, now: float) -> Outcome: ...

    # --- take-back and draws ---------------------------------------------------------------

    def check_take_back(self, player_id: str) -> int:
        """How many plies a take-back by ``player_id`` removes (nothing changes yet): their
        last move, and the AI's reply if it has moved. Only against the AI, while the game
        is going; ``CannotTakeBack`` otherwise."""
        seat = self._seated(player_id)
        self._require_active()
        if self.opponent != "ai":
            raise errors.CannotTakeBack("moves can be taken back only against the computer")
        # Seats alternate ply by ply (an Othello pass is a ply of its own). A pass was the
        # server's, forced: taken back, the same position would only force it again.
        mine = [ply for ply in range(len(self.moves)) if ply % 2 == seat
                and self.game.format_move(self.moves[ply]) != "pass"]
        if not mine:
            raise errors.CannotTakeBack("you have no move to take back yet")
        return len(self.moves) - mine[-1]

    def take_back(self, plies: int, now: float) -> Outcome:
        """Remove the last ``plies`` (``check_take_back``'s count, the stored moves already
        deleted): everyone gets the room's state again. An AI answer for the line taken
        back is dropped (``AiTurn.line``)."""
        kept = self.moves[: len(self.moves) - plies]
        self.state = self.game.initial()
        self.moves = []
        self.boards = self.boards[:1]
        for move in kept:
            self._play(move)
        self.line += 1
        self.ai_thinking = False
        self.draw_offered_by = None
        self.last_move_at = now
        if self.clocks is not None and self.time_control is not None:
            # The clocks go back with the moves: as stored with the last ply kept.
            log = self.clock_log[: len(kept)]
            self.clocks = Clocks.fresh(self.time_control)
            self.clock_log = []
            self._set_clocks(log[-1] if log else (None, None), now)
            self.clock_log = log
        out = Outcome(sends=[self.state_for(m, now) for m in self.members()])
        out.sends.append(self._event("took_back", self.state.to_move))
        return out.extend(self._due(now))  # the AI to move again when its seat moved first

    def offer_draw(self, player_id: str, now: float) -> Outcome:
        """Between people: the other seat hears of it (``draw_offered``), and may accept it
        until it moves (a move declines it). An offer already standing from the other seat
        is accepted instead."""
        seat = self._seated(player_id)
        self._require_active()
        if self.seats[1 - seat].kind != "human":
            raise errors.CannotOfferDraw("the computer plays every game out; offer draws to "
                                         "people")
        if self.draw_offered_by == 1 - seat:
            return self._finish(p.Result(winner=None, reason="agreed"), now)
        if self.draw_offered_by == seat:
            raise errors.CannotOfferDraw("your draw offer stands; wait for the answer")
        if self.draw_declined_at == len(self.moves):
            raise errors.CannotOfferDraw("your draw offer was declined; offer again after a "
                                         "move")
        self.draw_offered_by = seat
        return Outcome(sends=[self._event("draw_offered", seat)])

    def answer_draw(self, player_id: str, accept: bool, now: float) -> Outcome:
        seat = self._seated(player_id)
        self._require_active()
        if self.draw_offered_by != 1 - seat:
            raise errors.NoDrawOffer("the other player has not offered a draw")
        self.draw_offered_by = None
        if accept:
            return self._finish(p.Result(winner=None, reason="agreed"), now)
        self.draw_declined_at = len(self.moves)
        return Outcome(sends=[self._event("draw_declined", seat)])

    # --- rematch -------------------------------------------------------------------------

    def offer_rematch(self, player_id: str, game_id: str, now: float) -> Outcome:
        """Against the AI, or when the other seat already offered, the rematch starts now."""
        seat = self._seated(player_id)
        self._require_finished()
        other = self.seats[1 - seat]
        if other.kind == "ai" or self.rematch_offered_by == 1 - seat:
            return self._rematch(game_id, now)
        if other.gone:
            raise errors.NoRematchOffer("your opponent has left the room")
        self.rematch_offered_by = seat
        return Outcome(sends=[self._event("rematch_offered", seat)])

    def accept_rematch(self, player_id: str, game_id: str, now: float) -> Outcome:
        seat = self._seated(player_id)
        self._require_finished()
        if self.rematch_offered_by != 1 - seat:
            raise errors.NoRematchOffer("the other player has not offered a rematch")
        return self._rematch(game_id, now)

    def _require_finished(self) -> None:
        if self.status != "finished":
            raise errors.GameNotFinished(f"the game in room {self.id} is not over yet")

    def _rematch(self, game_id: str, now: float) -> Outcome:
        self.seats.reverse()  # colours alternate
        self.round += 1
        self._start(game_id, now)
        ai = self._ai_turn()
        return Outcome(sends=[self.state_for(m, now) for m in self.members()], save_game=True,
                       ai=ai)
