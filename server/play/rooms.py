"""Rooms as a sans-I/O state machine: commands in, outgoing messages and effects out.

Nothing here touches sockets, the event loop, the store or a clock: the caller passes ``now``
(seconds, any monotonic origin) and receives an ``Outcome`` saying whom to send which protocol
message, whether the game's record changed, and whether the AI must now move. Every command
validates first and raises a ``server.errors.ProtocolError`` before changing anything.

Moves are two-phase so the glue can make a move durable before anyone hears of it:
``check_move`` (pure validation, returns a ``PlannedMove``), then the caller stores the
``PlannedMove.record``, then ``apply_move`` changes the room and returns the announcements.
The caller must not let another command for the same room run between the two (one lock per
room in the glue); ``apply_move`` re-checks the ply and refuses a plan that went stale.

Rules come from ``games.load`` (the same code the AI searches with), so the server and the AI
can never disagree about what is legal.

The rooms of a server are kept by ``server.play.lobby``; what a command hands back is
``server.play.outcome``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import games
from games.base import Game, State
from server import errors
from server import protocol as p
from server.connections.outbox import Send
from server.connections.player import Player
from server.play.clocks import Clocks, TimeControl
from server.play.outcome import AiTurn, Outcome, PlannedMove
from server.storage.store import GameRecord, GameStatus, MoveRecord

ABORTABLE_PLIES = 2
"""Until both sides have made a move, leaving or abandoning a game aborts it (unscored)."""

OpponentKind = Literal["ai", "friend", "open"]
SeatKind = Literal["human", "ai", "empty"]


@dataclass
class SeatState:
    kind: SeatKind = "empty"
    player: Player | None = None
    level: str | None = None
    connected: bool = True
    away_since: float | None = None
    """When the player's last connection dropped; None while connected."""
    gone: bool = False
    """The player left the room for good (after or by ending the game)."""


class Room:
    """One room: two seats, spectators, one game at a time, rematches with seats swapped."""

    def __init__(
        self,
        room_id: str,
        game: Game,
        opponent: OpponentKind,
        game_id: str,
        now: float,
        grace: float,
        time_control: TimeControl | None = None,
    ) -> None:
        self.id = room_id
        self.game = game
        self.opponent: OpponentKind = opponent
        self.grace = grace
        self.time_control = time_control
        """None: untimed. Every game of the room (rematches too) is played under it."""
        self.seats = [SeatState(), SeatState()]
        self.spectators: set[str] = set()
        self.evaluation = False
        """The creator asked to see the engine's evaluation (``AiOpponent.evaluation``);
        it is shown only while the game is not rated (``shows_evaluation``)."""
        self.rated = True
        """False: a casual room (an unrated tournament's game, and its rematches): its games
        move nobody's rating (``RatingDesk.rate``), whoever sits."""
        self.ratings: dict[str, p.SeatRating] = {}
        """Seat ratings in this room's game the server handed in (``note_ratings``), by
        player id and by ``level_key(level)``; whoever is missing is shown without one."""
        self.round = 1
        self.created_at = now
        self.source = ""
        """The address its creator made it from (``server.connections.client.source_of``), for the
        open list's per-address share; "" when unknown (restored, or a challenge's)."""
        self.epoch = 0
        """The fencing token this instance of the room writes with: the lease epoch it was
        created, loaded or taken over under (0 on a single node). A newer instance of the
        same room (after a lost lease) has a newer one, so this one's writes are refused."""
        self._start(game_id, now)

    def _start(self, game_id: str, now: float) -> None:
        self.game_id = game_id
        self.started_at = now
        self.state: State = self.game.initial()
        self.moves: list[int] = []
        self.boards: list[str] = [p.board_text(self.game.cells(self.state))]
        """The board before any move and after each ply, as ``room_state.boards`` sends them
        (kept rather than replayed: a room's full state is sent on every (re)connect)."""
        self.result: p.Result | None = None
        self.ai_thinking = False
        self.rematch_offered_by: int | None = None
        self.draw_offered_by: int | None = None
        self.draw_declined_at: int | None = None
        """The ply at which the last draw offer was declined: no new offer from that side
        before a move (an offer repeated at once would only badger the other player)."""
        self.line = 0
        """Take-backs so far (``AiTurn.line``)."""
        self.last_move_at = now
        self.finished_at: float | None = None
        self.clocks = None if self.time_control is None else Clocks.fresh(self.time_control)
        """Both clocks of a timed game (None untimed); only a person's clock ever runs."""
        self.clock_log: list[tuple[int | None, int | None]] = []
        """The clocks after each ply, as stored with the moves (for a take-back)."""
        self.berserk_allowed = False
        """Whether this game's players may berserk: an arena's game whose arena allows it
        (the tournament desk says so after making the room; a rematch is no arena game)."""
        self.berserked: set[int] = set()
        """The seats that halved their own clock in this game (``berserk``)."""
        self._run_clock(now)

    # --- queries -------------------------------------------------------------------------

    @property
    def shows_evaluation(self) -> bool:
        """Whether the AI's thinking goes out with its score and any proven result: only when
        asked for, and never in a rated game (a seated person with a rating: an account or
        a bot, also one who signed up while seated)."""
        return self.evaluation and not any(
            s.kind == "human" and s.player is not None and s.player.id in self.ratings
            for s in self.seats)

    def _shown(self, thought: p.AiThought | None) -> p.AiThought | None:
        """What players see of the AI's search: without the evaluation unless it is shown."""
        if thought is None or self.shows_evaluation:
            return thought
        return thought.model_copy(update={"score": None, "exact": False, "win_in": None})

    @property
    def status(self) -> p.RoomStatus:
        if self.result is not None:
            return "finished"
        if any(s.kind == "empty" for s in self.seats):
            return "waiting"
        return "active"

    def seat_of(self, player_id: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.player is not None and seat.player.id == player_id and not seat.gone:
                return i
        return None

    def members(self) -> tuple[str, ...]:
        """Everyone who hears about this room: seated people (not gone) and spectators."""
        seated = [
            s.player.id for s in self.seats if s.player is not None and not s.gone
        ]
        return tuple(dict.fromkeys([*seated, *sorted(self.spectators)]))

    def humans(self) -> list[SeatState]:
        return [s for s in self.seats if s.kind == "human" and not s.gone]

    @property
    def ai_only(self) -> bool:
        """Both seats are AI levels (the engine ladder's games): nobody plays, anyone may
        watch, and every move is an ``AiTurn``."""
        return all(s.kind == "ai" for s in self.seats)

    def _only_pass(self) -> bool:
        """Whether the side to move can do nothing but pass (Othello)."""
        moves = self.state.legal_moves()
        return len(moves) == 1 and self.game.format_move(moves[0]) == "pass"

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
        """When the running clock's flag falls (``check_flag`` then ends the game), or None
        when no clock runs."""
        if self.clocks is None or self.status != "active":
            return None
        return self.clocks.deadline()

    def check_flag(self, now: float) -> Outcome:
        """End the game on time if the running clock has run out by ``now``: the other seat
        wins (reason ``timeout``); before both sides have moved, the game is aborted as in
        ``_finish_early``. Nothing happens otherwise. The caller checks it before any room
        command and whenever ``deadline`` passes, so a flag falls even if nobody acts."""
        if self.clocks is None or self.status != "active":
            return Outcome()
        seat = self.clocks.flagged(now)
        if seat is None:
            return Outcome()
        return self._finish_early(p.Result(winner=1 - seat, reason="timeout"), now)  # type: ignore[arg-type]

    def _play(self, move: int) -> list[int | None]:
        """Play ``move`` on the room's game; returns the new cells (and records the board)."""
        self.state = self.state.play(move)
        self.moves.append(move)
        cells = self.game.cells(self.state)
        self.boards.append(p.board_text(cells))
        return cells

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

    def seat_views(self) -> list[p.SeatView]:
        colours = self.game.colours
        return [
            p.SeatView(
                seat=i,  # type: ignore[arg-type]
                colour=colours[i],
                kind=s.kind,
                player=s.player.view() if s.player is not None else None,
                level=s.level,
                connected=s.connected and not s.gone,
                rating=self._rating_of(s),
            )
            for i, s in enumerate(self.seats)
        ]

    def _rating_of(self, seat: SeatState) -> p.SeatRating | None:
        if seat.kind == "human" and seat.player is not None:
            return self.ratings.get(seat.player.id)
        if seat.kind == "ai" and seat.level is not None:
            return self.ratings.get(level_key(seat.level))
        return None

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

    def _event(self, kind: p.RoomEventKind, seat: int | None = None,
               grace: float | None = None, to: Iterable[str] | None = None,
               clock: p.ClockView | None = None) -> Send:
        message = p.RoomEvent(
            room=self.id,
            event=kind,
            seat=seat,  # type: ignore[arg-type]
            seats=self.seat_views(),
            spectators=len(self.spectators),
            grace_seconds=grace,
            clock=clock,
        )
        return Send(tuple(self.members() if to is None else to), message)

    def _others(self, player_id: str) -> tuple[str, ...]:
        return tuple(m for m in self.members() if m != player_id)

    def _ai_turn(self) -> AiTurn | None:
        """The AI request if the AI is to move in a game still going; marks it thinking."""
        if self.status != "active" or self.state.is_over():
            return None
        seat = self.seats[self.state.to_move]
        if seat.kind != "ai" or seat.level is None:
            return None
        self.ai_thinking = True
        return AiTurn(self.id, self.round, len(self.moves), self.state.to_move,
                      self.game.name, seat.level, self.state, tuple(self.moves), self.line)

    # --- people --------------------------------------------------------------------------

    def note_ratings(self, ratings: Mapping[str, p.SeatRating | None]) -> None:
        """Show these ratings in the room's game in seat views from now on (keys as in
        ``ratings``; None forgets one). Nothing is sent: the room never reads the store, so
        the caller looks ratings up when a player sits or a game is rated, and hands them in
        before the messages that should carry them are made."""
        for key, rating in ratings.items():
            if rating is None:
                self.ratings.pop(key, None)
            else:
                self.ratings[key] = rating

    def sit(self, seat: int, player: Player) -> None:
        """Seat the creator (no messages: the caller sends ``state_for`` to them)."""
        self.seats[seat] = SeatState(kind="human", player=player)

    def seat_ai(self, seat: int, level: str) -> None:
        self.seats[seat] = SeatState(kind="ai", level=level)

    def start(self) -> Outcome:
        """After seating at creation: the AI's first move if it moves first (else a person's
        clock starts)."""
        self._run_clock(self.started_at)
        return Outcome(save_game=True, ai=self._ai_turn())

    def replay(self, moves: Sequence[MoveRecord], berserk: Iterable[int],
               now: float) -> Outcome:
        """Play a stored game's ``moves`` again, with the clocks stored with each, on a room
        just rebuilt with its seats (``Lobby.restore``); ``berserk``: its seats that went
        berserk. The turn under way starts again at ``now``. Returns what the position asks
        for (``_after_ply``): a game its last stored move ended ends at that move's time.
        Raises ``ValueError`` if the stored moves do not replay."""
        played = sorted(moves, key=lambda m: m.ply)
        for stored in played:
            self._play(self.game.parse_move(self.state, stored.move))
            self._set_clocks((stored.clock0_ms, stored.clock1_ms), now)
        if self.clocks is not None and self.time_control is not None:
            initial_ms = self.time_control.initial_ms
            for seat in berserk:
                self.berserked.add(seat)
                if not self._has_moved(seat):  # else a stored clock of its own is halved
                    # The other's first move may have stored it halved already, or not.
                    self.clocks.remaining_ms[seat] = min(self.clocks.remaining_ms[seat],
                                                         initial_ms - initial_ms // 2)
        self.last_move_at = now
        self._run_clock(now)
        ended_at = played[-1].created_at if played and self.state.is_over() else now
        return self._after_ply(ended_at)

    def join(self, player: Player, now: float, rating: p.SeatRating | None = None) -> Outcome:
        if self.seat_of(player.id) is not None:
            raise errors.AlreadySeated(f"you already sit in room {self.id}")
        if self.status != "waiting":
            raise errors.RoomFull(f"room {self.id} has no free seat; you may spectate it")
        free = next(i for i, s in enumerate(self.seats) if s.kind == "empty")
        self.note_ratings({player.id: rating})
        self.spectators.discard(player.id)
        self.seats[free] = SeatState(kind="human", player=player)
        self.last_move_at = now
        self.started_at = now
        self._run_clock(now)
        out = Outcome(sends=[self.state_for(player.id)], save_game=True)
        out.sends.append(self._event("joined", free, to=self._others(player.id),
                                     clock=self.clock_view(now)))
        return out

    def spectate(self, player: Player, now: float | None = None) -> Outcome:
        if self.seat_of(player.id) is not None:
            raise errors.AlreadySeated(f"you sit in room {self.id}; you cannot also watch it")
        self.spectators.add(player.id)
        out = Outcome(sends=[self.state_for(player.id, now)])
        out.sends.append(self._event("spectator_joined", to=self._others(player.id)))
        return out

    def leave(self, player_id: str, now: float) -> Outcome:
        """A spectator stops watching; a seated player leaves (losing an active game)."""
        if player_id in self.spectators:
            self.spectators.discard(player_id)
            return Outcome(sends=[self._event("spectator_left")])
        seat = self.seat_of(player_id)
        if seat is None:
            raise errors.NotInRoom(f"you are not in room {self.id}")
        out = Outcome()
        if self.status == "active":
            out.extend(self._finish_early(p.Result(winner=1 - seat, reason="left"), now))  # type: ignore[arg-type]
        self.seats[seat].gone = True
        self.seats[seat].connected = False
        if self.rematch_offered_by is not None:
            self.rematch_offered_by = None
        out.sends.append(self._event("left", seat))
        return out

    def disconnect(self, player_id: str, now: float) -> Outcome:
        """The player's last connection dropped: keep the seat for the grace period."""
        if player_id in self.spectators:
            self.spectators.discard(player_id)
            return Outcome(sends=[self._event("spectator_left")])
        seat = self.seat_of(player_id)
        if seat is None or not self.seats[seat].connected:
            return Outcome()
        self.seats[seat].connected = False
        self.seats[seat].away_since = now
        return Outcome(sends=[self._event("disconnected", seat, grace=self.grace,
                                          to=self._others(player_id))])

    def reconnect(self, player_id: str, now: float | None = None) -> Outcome:
        """The player is back (hello with resume): full state to them first (clocks as of
        ``now``), then the event."""
        seat = self.seat_of(player_id)
        if seat is None:
            return Outcome()
        out = Outcome()
        if not self.seats[seat].connected:
            self.seats[seat].connected = True
            self.seats[seat].away_since = None
            out.sends.append(self._event("reconnected", seat, to=self._others(player_id)))
        out.sends.insert(0, self.state_for(player_id, now))
        return out

    def claim(self, player_id: str, now: float) -> Outcome:
        seat = self._seated(player_id)
        self._require_active()
        other = self.seats[1 - seat]
        if other.kind != "human" or other.connected or other.away_since is None:
            raise errors.CannotClaim("your opponent is connected; there is nothing to claim")
        left = other.away_since + self.grace - now
        if left > 0:
            raise errors.CannotClaim(
                f"your opponent may still come back for {left:.0f} s", retry_after=round(left, 3)
            )
        return self._finish_early(p.Result(winner=seat, reason="abandoned"), now)  # type: ignore[arg-type]

    def abandoned_since(self) -> float | None:
        """When the last connected person left, if nobody seated is connected any more. A
        game between two AI levels has nobody to abandon it while it is played: its room is
        abandoned from the game's end."""
        if self.ai_only:
            return self.finished_at
        humans = self.humans()
        if any(s.connected for s in humans):
            return None
        times = [s.away_since for s in humans if s.away_since is not None]
        return max(times) if times else self.created_at

    def expire(self, now: float) -> Outcome:
        """Close a room nobody came back to: an unfinished game ends as abandoned.

        With an AI opponent the AI wins; between people it is scored a draw. A game where a
        side has not moved yet is aborted instead (``_finish_early``).
        """
        if self.status != "active":
            return Outcome()
        ai_seat = next((i for i, s in enumerate(self.seats) if s.kind == "ai"), None)
        return self._finish_early(p.Result(winner=ai_seat, reason="abandoned"), now)  # type: ignore[arg-type]

    # --- the game ------------------------------------------------------------------------

    def _seated(self, player_id: str) -> int:
        seat = self.seat_of(player_id)
        if seat is None:
            raise errors.NotSeated(f"only the players seated in room {self.id} may do that")
        return seat

    def _require_active(self) -> None:
        if self.status == "waiting":
            raise errors.GameNotStarted(f"room {self.id} is still waiting for a second player")
        if self.status == "finished":
            raise errors.GameFinished(f"the game in room {self.id} is over")

    def check_move(self, player_id: str, ply: int, text: str, now: float) -> PlannedMove:
        """Validate a person's move; nothing changes. Raises the error that says what is wrong."""
        seat = self._seated(player_id)
        self._require_active()
        if ply != len(self.moves):
            raise errors.StalePly(
                f"the move is for ply {ply} but the game is at ply {len(self.moves)}",
                expected=len(self.moves),
            )
        if self.state.to_move != seat:
            raise errors.NotYourTurn(f"it is {self._colour(self.state.to_move)}'s turn")
        try:
            move = self.game.parse_move(self.state, text)
        except games.InvalidNotation as exc:
            raise errors.InvalidNotation(str(exc)) from None
        except games.IllegalMove as exc:
            raise errors.IllegalMove(str(exc)) from None
        return self._plan(seat, move, now)

    def check_ai_move(self, round: int, ply: int, move: int, now: float,
                      thought: p.AiThought | None = None, line: int = 0) -> PlannedMove:
        """Validate the AI's answer to an ``AiTurn`` (``thought``: its search's figures, none
        for a quick fallback move); ``StalePly`` if the room moved on (or the line it was
        asked in was taken back)."""
        if (round != self.round or ply != len(self.moves) or self.status != "active"
                or line != self.line):
            raise errors.StalePly("the AI's move is no longer wanted", expected=len(self.moves))
        seat = self.state.to_move
        if self.seats[seat].kind != "ai":
            raise errors.NotYourTurn("the AI is not to move")
        if move not in self.state.legal_moves():
            raise errors.IllegalMove(f"the AI chose an illegal move {move}")
        return self._plan(seat, move, now, thought)

    def play_opening(self, moves: Sequence[int], now: float) -> tuple[list[MoveRecord], Outcome]:
        """Play ``moves`` for whoever is to move, from the start of a game nobody has moved in
        (the engine ladder's balanced openings): the records to store before the game goes
        on, and what the position then asks for (the AI's turn; no message: the caller sends
        each seat its ``room_state``). ``ValueError`` for an illegal move, changing
        nothing."""
        if self.moves or self.status != "active":
            raise ValueError("an opening is played before the first move of a started game")
        state = self.state
        for move in moves:
            if state.is_over() or move not in state.legal_moves():
                raise ValueError(f"the opening's move {move} is not legal there")
            state = state.play(move)
        records: list[MoveRecord] = []
        out = Outcome()
        for move in moves:
            plan = self._plan(self.state.to_move, move, now)
            records.append(plan.record)
            out = self.apply_move(plan, now)
        return records, Outcome(save_game=out.save_game, ai=out.ai)

    def _plan(self, seat: int, move: int, now: float,
              thought: p.AiThought | None = None) -> PlannedMove:
        clocks: tuple[int | None, int | None] = (None, None)
        if self.clocks is not None:
            if self.clocks.flagged(now) == seat:
                raise errors.GameFinished("your time has run out: the game is lost on time")
            after = self.clocks.after_move(seat, now)
            clocks = (None if self.seats[0].kind == "ai" else after[0],
                      None if self.seats[1].kind == "ai" else after[1])
        record = MoveRecord(
            game_id=self.game_id,
            ply=len(self.moves),
            move=self.game.format_move(move),
            seat=seat,
            seconds=max(0.0, now - self.last_move_at),
            created_at=now,
            ai_depth=None if thought is None else thought.depth,
            ai_score=None if thought is None else thought.score,
            ai_nodes=None if thought is None else thought.nodes,
            clock0_ms=clocks[0],
            clock1_ms=clocks[1],
        )
        return PlannedMove(self.round, len(self.moves), seat, move, record, thought)

    def apply_move(self, plan: PlannedMove, now: float) -> Outcome:
        """Play a move checked by ``check_move``/``check_ai_move`` and already stored."""
        if plan.round != self.round or plan.ply != len(self.moves) or self.status != "active":
            raise errors.StalePly("the game moved on before this move was applied",
                                  expected=len(self.moves))
        cells = self._play(plan.move)
        self.last_move_at = now
        self._set_clocks((plan.record.clock0_ms, plan.record.clock1_ms), now)
        if self.draw_offered_by is not None and self.draw_offered_by != plan.seat:
            self.draw_offered_by = None  # answered by a move: declined
        if self.seats[plan.seat].kind == "ai":
            self.ai_thinking = False
        made = p.MoveMade(
            room=self.id,
            ply=plan.ply,
            move=self.game.format_move(plan.move),
            seat=plan.seat,  # type: ignore[arg-type]
            position=self.position(cells),
            status="finished" if self.state.is_over() else "active",
            thought=self._shown(plan.thought),
            clock=self.clock_view(now),
        )
        return Outcome(sends=[Send(self.members(), made)]).extend(self._after_ply(now))

    def _after_ply(self, now: float) -> Outcome:
        """What the position after the last ply asks for: if the rules say the game is over,
        its end (``game_over`` to everyone, the finished row to save, finished at ``now``);
        else the AI's turn or the forced pass, if either is due."""
        if self.state.is_over():
            score = self.state.result()
            winner = None if score == 0 else (0 if score > 0 else 1)
            return self._finish(p.Result(winner=winner, score=score, reason="end"), now)  # type: ignore[arg-type]
        return Outcome(ai=self._ai_turn(), forced=self._forced_pass(now))

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
        """In a timed game, the pass a person to move can only make, planned for the server
        to play (no clock runs meanwhile); None otherwise."""
        if (self.clocks is None or self.status != "active" or self.state.is_over()
                or self.seats[self.state.to_move].kind != "human" or not self._only_pass()):
            return None
        return self._plan(self.state.to_move, self.state.legal_moves()[0], now)

    def resign(self, player_id: str, now: float) -> Outcome:
        seat = self._seated(player_id)
        self._require_active()
        return self._finish(p.Result(winner=1 - seat, reason="resigned"), now)  # type: ignore[arg-type]

    def _finish_early(self, result: p.Result, now: float) -> Outcome:
        """End a game nobody played out (a player left, or was away too long) with ``result``;
        but while a side has yet to make its first move (fewer than two plies, as lichess
        counts) nobody has played a game: it is aborted, unscored, with no winner."""
        if len(self.moves) < ABORTABLE_PLIES:
            result = p.Result(winner=None, reason="aborted")
        return self._finish(result, now)

    def _finish(self, result: p.Result, now: float) -> Outcome:
        self.result = result
        self.ai_thinking = False
        self.draw_offered_by = None
        self.finished_at = now
        if self.clocks is not None:
            self.clocks.run(None, now)  # the clocks stop with the time the mover spent
        over = p.GameOver(room=self.id, result=result, clock=self.clock_view(now))
        return Outcome(sends=[Send(self.members(), over)], save_game=True)

    def ai_failed(self, round: int, ply: int, line: int = 0) -> Outcome:
        """The AI's move for ``round``/``ply`` could not be played (not stored): if the room
        still waits for it, the AI no longer shows as thinking and everyone gets the room's
        full state again. ``stalled_ai_turn`` asks again later."""
        if (round != self.round or ply != len(self.moves) or not self.ai_thinking
                or line != self.line):
            return Outcome()
        self.ai_thinking = False
        return Outcome(sends=[self.state_for(m) for m in self.members()])

    def stalled_ai_turn(self) -> AiTurn | None:
        """The AI's turn again if it is to move but nobody is finding its move (the last
        attempt failed); marks it thinking. None otherwise."""
        return None if self.ai_thinking else self._ai_turn()

    def ai_progress(self, round: int, ply: int, depth: int, score: int, nodes: int,
                    seconds: float, exact: bool = False, win_in: int | None = None,
                    line: int = 0) -> Outcome:
        """A search iteration for the AI's move; dropped if the request is stale. Its
        score and proven result go out only where the room shows the evaluation."""
        if (round != self.round or ply != len(self.moves) or not self.ai_thinking
                or line != self.line):
            return Outcome()
        shown = self.shows_evaluation
        message = p.AiThinking(room=self.id, ply=ply, depth=depth,
                               score=score if shown else None, nodes=nodes,
                               seconds=round_seconds(seconds), exact=exact and shown,
                               win_in=win_in if shown else None)
        return Outcome(sends=[Send(self.members(), message)])

    # --- take-back and draws ---------------------------------------------------------------

    def check_take_back(self, player_id: str) -> int:
        """How many plies a take-back by ``player_id`` removes (nothing changes yet): their
        last move, and the AI's reply if it has moved. Only against the AI, while the game
        is going; ``CannotTakeBack`` otherwise."""
        seat = self._seated(player_id)
        self._require_active()
        if self.opponent != "ai":
            raise errors.CannotTakeBack("moves can be taken back only against the computer")
        # Seats alternate ply by ply (an Othello pass is a ply of its own).
        mine = [ply for ply in range(len(self.moves)) if ply % 2 == seat]
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
        out.ai = self._ai_turn()  # the AI to move again when its seat moved first
        return out

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

    def _colour(self, seat: int) -> str:
        return self.game.colours[seat]


def level_key(level: str) -> str:
    """The key of an AI level's rating in ``Room.ratings`` (apart from player ids)."""
    return f"level:{level}"


def changes(before: str, after: str) -> tuple[int | None, list[int]]:
    """What one ply did between two ``boards``: the cell it filled (None for a pass) and the
    cells whose owner it changed."""
    placed = None
    flipped = []
    for i, (was, now) in enumerate(zip(before, after, strict=True)):
        if was == now:
            continue
        if was == "-":
            placed = i
        else:
            flipped.append(i)
    return placed, flipped


def round_seconds(seconds: float) -> float:
    return round(seconds, 4)


def game_id_of(room_id: str, round: int) -> str:
    """The stored game id of a room's ``round``: ``<room>-<round>`` (so a restart can tell
    from a stored game which room it belongs to)."""
    return f"{room_id}-{round}"


def room_of(game_id: str) -> tuple[str, int]:
    """The room id and round of a game id made by ``game_id_of``."""
    room_id, _, round = game_id.rpartition("-")
    if not room_id or not round.isdigit():
        return game_id, 1
    return room_id, int(round)
