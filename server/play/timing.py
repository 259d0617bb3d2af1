"""The clocks of a room's timed game: whose clock runs, what they show, when a flag falls,
the time stored with each ply, and berserk.

Its own part of the room because time is a rule beside the game's rules: the same moves make
the same position timed or not, but in a timed game every ply also settles both clocks, only
a person's clock ever runs (never the AI's, never through a forced pass, which the server
plays for every seat), and a flag can end the game between moves. The clocks themselves are
plain values (``server.play.clocks``); this part says when they run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from games.base import Game, State
from server import errors
from server import protocol as p
from server.connections.outbox import Send
from server.play.clocks import FIRST_MOVE_SECONDS, Clocks, TimeControl
from server.play.outcome import Outcome, PlannedMove
from server.play.seats import SeatState


class Timing:
    """When the clocks of a room's game run, and what a flag or a berserk does.

    A part of ``Room``, which inherits it and sets up the state (``Room.__init__``): the
    annotations below, and the signatures under ``TYPE_CHECKING``, are what this part uses of
    the rest of the room.
    """

    game: Game
    game_id: str
    state: State
    moves: list[int]
    seats: list[SeatState]
    time_control: TimeControl | None
    clocks: Clocks | None
    clock_log: list[tuple[int | None, int | None]]
    berserked: set[int]
    last_move_at: float
    first_move_seconds: float = FIRST_MOVE_SECONDS
    """This room's first-move time (0: none); the lobby sets it from ``Settings``."""

    if TYPE_CHECKING:
        @property
        def status(self) -> p.RoomStatus: ...

        def _seated(self, player_id: str) -> int: ...

        def _require_active(self) -> None: ...

        def _event(self, kind: p.RoomEventKind, seat: int | None = None,
                   grace: float | None = None, to: Iterable[str] | None = None,
                   clock: p.ClockView | None = None) -> Send: ...

        def _finish_early(self, result: p.Result, now: float) -> Outcome: ...

        def _plan(self, seat: int, move: int, now: float,
                  thought: p.AiThought | None = None) -> PlannedMove: ...

    def _run_clock(self, now: float) -> None:
        """Start the clock of the side to move at ``now`` if it has one and may act: a person,
        in a game going on, with a move other than a forced pass. Else no clock runs."""
        if self.clocks is None:
            return
        seat = None
        if self.status == "active" and not self.state.is_over():
            to_move = self.state.to_move
            if self.seats[to_move].kind == "human" and not self._only_pass():
                seat = to_move
        self.clocks.run(seat, now)

    def clock_view(self, now: float | None = None) -> p.ClockView | None:
        """The clocks as of ``now`` (None: as of the start of the running turn)."""
        if self.clocks is None or self.time_control is None:
            return None
        at = self.clocks.since if now is None else now
        return p.ClockView(
            control=self.time_control.view(),
            remaining_ms=[None if s.kind == "ai" else self.clocks.left(i, at)
                          for i, s in enumerate(self.seats)],
            running=self.clocks.running,  # type: ignore[arg-type]
        )

    def deadline(self) -> float | None:
        """When the running clock's flag falls, or the first-move time of the side to move
        runs out, whichever comes first (``check_flag`` then ends the game); None when no
        clock runs."""
        if self.clocks is None or self.status != "active":
            return None
        flag = self.clocks.deadline()
        first = self.first_move_due()
        if flag is None or first is None:
            return flag if first is None else first
        return min(flag, first)

    def first_move_due(self) -> float | None:
        """When the side to move must have made its first move, in a timed game between two
        people whose clock runs: ``first_move_seconds`` after its turn began (the second
        player sat down, the first player moved, or the room was restored: as its clock,
        its turn starts again then). None otherwise: an untimed game, a game against the
        AI (nobody waits on the person but the AI), a side that has moved already."""
        if (self.clocks is None or self.clocks.running is None or self.status != "active"
                or self.first_move_seconds <= 0
                or any(s.kind != "human" for s in self.seats)
                or self._has_moved(self.clocks.running)):
            return None
        return self.last_move_at + self.first_move_seconds

    def check_flag(self, now: float) -> Outcome:
        """End the game on time if the running clock has run out by ``now``: the other seat
        wins (reason ``timeout``); before both sides have moved, the game is aborted as in
        ``_finish_early``. A side that let its first-move time (``first_move_due``) pass
        aborts the game too (reason ``aborted``: no winner, nobody rated). Nothing happens
        otherwise. The caller checks it before any room command and whenever ``deadline``
        passes, so a flag falls even if nobody acts."""
        if self.clocks is None or self.status != "active":
            return Outcome()
        seat = self.clocks.flagged(now)
        if seat is None:
            first = self.first_move_due()
            if first is not None and now >= first:
                return self._finish_early(p.Result(winner=None, reason="aborted"), now)
            return Outcome()
        return self._finish_early(p.Result(winner=1 - seat, reason="timeout"), now)  # type: ignore[arg-type]

    def _only_pass(self) -> bool:
        """Whether the side to move can do nothing but pass (Othello)."""
        moves = self.state.legal_moves()
        return len(moves) == 1 and self.game.format_move(moves[0]) == "pass"

    def _set_clocks(self, clocks: tuple[int | None, int | None], now: float) -> None:
        """After a ply: each clocked seat's time as stored with the ply, and the clock of the
        side now to move started (``_run_clock``)."""
        if self.clocks is None:
            return
        self.clocks.running = None
        for seat, left in enumerate(clocks):
            if left is not None:
                self.clocks.remaining_ms[seat] = left
        self.clock_log.append(clocks)
        self._run_clock(now)

    def _forced_pass(self, now: float) -> PlannedMove | None:
        """The pass the side to move can only make (Othello), planned for the server to play
        at once: for a person, a bot or the AI, timed or not. Nobody waits on a choice that
        is not one (a newcomer sat minutes at a lone "Pass" button), no clock runs meanwhile
        and no engine is asked. None when the side to move has a real move."""
        if self.status != "active" or self.state.is_over() or not self._only_pass():
            return None
        plan = self._plan(self.state.to_move, self.state.legal_moves()[0], now)
        return replace(plan, forced=True)

    def berserk(self, player_id: str, game_id: str, now: float) -> Outcome:
        """``player_id`` halves its own clock in game ``game_id`` (an arena's, for a bonus
        point on a win): half the initial time is taken off what it has left, before its
        first move only, once. Everyone in the room hears of it (``berserk``, with the
        clocks); the game row is saved, so a restored room keeps the halved clock. The
        caller has checked the game belongs to an arena that allows it."""
        seat = self._seated(player_id)
        if self.game_id != game_id:
            raise errors.CannotBerserk("that game is over; this room plays another now",
                                       reason="other_game")
        self._require_active()
        if self.clocks is None or self.time_control is None:
            raise errors.CannotBerserk("only a timed game has a clock to halve",
                                       reason="untimed")
        if seat in self.berserked:
            raise errors.CannotBerserk("you have already gone berserk in this game",
                                       reason="already")
        if self._has_moved(seat):
            raise errors.CannotBerserk("berserk only before your first move",
                                       reason="moved")
        self.clocks.run(self.clocks.running, now)  # charge the running clock up to now
        self.berserked.add(seat)
        self._halve(seat)
        return Outcome(sends=[self._event("berserk", seat, clock=self.clock_view(now))],
                       save_game=True)

    def _has_moved(self, seat: int) -> bool:
        """Whether ``seat`` has played a move in this game (plies alternate, a pass being a
        move: seat 0 plays plies 0, 2, ..., seat 1 plies 1, 3, ...)."""
        return len(self.moves) > seat

    def _halve(self, seat: int) -> None:
        assert self.clocks is not None and self.time_control is not None
        self.clocks.remaining_ms[seat] = max(
            0, self.clocks.remaining_ms[seat] - self.time_control.initial_ms // 2)

    def _restore_berserk(self, seats: Iterable[int]) -> None:
        """Of a restored game: the seats that went berserk (``GameRecord.berserk``), their
        clocks halved where no stored clock of their own says so yet."""
        if self.clocks is None or self.time_control is None:
            return
        initial_ms = self.time_control.initial_ms
        for seat in seats:
            self.berserked.add(seat)
            if not self._has_moved(seat):  # else a stored clock of its own is halved
                # The other's first move may have stored it halved already, or not.
                self.clocks.remaining_ms[seat] = min(self.clocks.remaining_ms[seat],
                                                     initial_ms - initial_ms // 2)
