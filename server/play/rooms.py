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

A room is made of parts, each in its own module: who sits and watches (``server.play.seats``),
the clocks of a timed game (``server.play.timing``), take-backs, draws and rematches
(``server.play.offers``), how the room is seen (``server.play.views``). This module holds
the game itself (moves, the AI's turns, the end) and the state every part shares. The rooms
of a server are kept by ``server.play.lobby``; what a command hands back is
``server.play.outcome``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import games
from games.base import Game, State
from server import errors
from server import protocol as p
from server.connections.outbox import Send
from server.play.clocks import Clocks, TimeControl
from server.play.offers import Offers
from server.play.outcome import AiTurn, Outcome, PlannedMove
from server.play.seats import OpponentKind, Seating, SeatState
from server.play.timing import Timing
from server.play.views import Views
from server.storage.store import MoveRecord

ABORTABLE_PLIES = 2
"""Until both sides have made a move, leaving or abandoning a game aborts it (unscored)."""


class Room(Seating, Timing, Offers, Views):
    """One room: two seats, spectators, one game at a time, rematches with seats swapped.

    Its parts (``Seating``, ``Timing``, ``Offers``, ``Views``) are mixed in: ``__init__`` and
    ``_start`` set up the state they all share."""

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
        first, second = self.seats  # a property read several times a move: no generator
        if first.kind == "empty" or second.kind == "empty":
            return "waiting"
        return "active"

    def _play(self, move: int) -> list[int | None]:
        """Play ``move`` on the room's game; returns the new cells (and records the board)."""
        self.state = self.state.play(move)
        self.moves.append(move)
        cells = self.game.cells(self.state)
        self.boards.append(p.board_text(cells))
        return cells

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

    # --- the game ------------------------------------------------------------------------

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
        self._restore_berserk(berserk)
        self.last_move_at = now
        self._run_clock(now)
        ended_at = played[-1].created_at if played and self.state.is_over() else now
        return self._after_ply(ended_at)

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
        return records, Outcome(save_game=out.save_game, ai=out.ai, forced=out.forced)

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
            epoch=self.epoch,
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
            forced=plan.forced,
        )
        return Outcome(sends=[Send(self.members(), made)]).extend(self._after_ply(now))

    def _after_ply(self, now: float) -> Outcome:
        """What the position after the last ply asks for: if the rules say the game is over,
        its end (``game_over`` to everyone, the finished row to save, finished at ``now``);
        else what the side to move is due (``_due``)."""
        if self.state.is_over():
            score = self.state.result()
            winner = None if score == 0 else (0 if score > 0 else 1)
            return self._finish(p.Result(winner=winner, score=score, reason="end"), now)  # type: ignore[arg-type]
        return self._due(now)

    def _due(self, now: float) -> Outcome:
        """What the side to move is due in a game going on: its forced pass, played by the
        server whoever holds the seat; else the AI's turn if the seat is the AI's (marked
        thinking); else nothing (a person's or bot's move is theirs to send)."""
        forced = self._forced_pass(now)
        if forced is not None:
            return Outcome(forced=forced)
        return Outcome(ai=self._ai_turn())

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

    def ai_waiting(self, round: int, ply: int, position: int, queued: int, seconds: float,
                   line: int = 0) -> p.AiWaiting | None:
        """What the room's people are told while the AI's move waits for a free engine
        (``position`` 0: one took it): ``ai_waiting``, for every member; None if the request
        is stale."""
        if (round != self.round or ply != len(self.moves) or not self.ai_thinking
                or line != self.line):
            return None
        return p.AiWaiting(room=self.id, ply=ply, position=position, queued=queued,
                           wait_seconds=seconds)

    def _colour(self, seat: int) -> str:
        return self.game.colours[seat]


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
