"""Who is in a room: its two seats (a person, an AI level or nobody), the people watching,
who of them is connected, and the ratings shown beside each seat.

Its own part of the room because who sits, comes, goes and comes back is one concern apart
from the rules of the game: people arrive and leave whatever the position, and every event
about them (``room_event``) goes to everyone in the room with the seats as they now are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from games.base import Game
from server import errors
from server import protocol as p
from server.connections.outbox import Send
from server.connections.player import Player
from server.play.outcome import Outcome

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


def level_key(level: str) -> str:
    """The key of an AI level's rating in ``Room.ratings`` (apart from player ids)."""
    return f"level:{level}"


class Seating:
    """The seats and spectators of a room, and the events that tell everyone about them.

    A part of ``Room``, which inherits it and sets up the state (``Room.__init__``): the
    annotations below, and the signatures under ``TYPE_CHECKING``, are what this part uses of
    the rest of the room.
    """

    id: str
    game: Game
    grace: float
    seats: list[SeatState]
    spectators: set[str]
    ratings: dict[str, p.SeatRating]
    created_at: float
    started_at: float
    last_move_at: float
    finished_at: float | None
    rematch_offered_by: int | None

    if TYPE_CHECKING:
        @property
        def status(self) -> p.RoomStatus: ...

        def state_for(self, player_id: str, now: float | None = None) -> Send: ...

        def clock_view(self, now: float | None = None) -> p.ClockView | None: ...

        def _run_clock(self, now: float) -> None: ...

        def _require_active(self) -> None: ...

        def _finish_early(self, result: p.Result, now: float) -> Outcome: ...

    # --- who sits where -------------------------------------------------------------------

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
        if not self.spectators and (len(seated) < 2 or seated[0] != seated[1]):
            return tuple(seated)  # the usual case, on every move: nobody to drop twice
        return tuple(dict.fromkeys([*seated, *sorted(self.spectators)]))

    def humans(self) -> list[SeatState]:
        return [s for s in self.seats if s.kind == "human" and not s.gone]

    @property
    def ai_only(self) -> bool:
        """Both seats are AI levels (the engine ladder's games): nobody plays, anyone may
        watch, and every move is an ``AiTurn``."""
        return all(s.kind == "ai" for s in self.seats)

    def _seated(self, player_id: str) -> int:
        seat = self.seat_of(player_id)
        if seat is None:
            raise errors.NotSeated(f"only the players seated in room {self.id} may do that")
        return seat

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

    # --- people coming and going ---------------------------------------------------------

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

    def present(self, player_id: str, now: float) -> Outcome:
        """A command came from the player, so it is connected somewhere whatever this room
        last heard (a room run again from the store before Redis was told again where its
        people are): back, as ``reconnect``, if it was counted away; else nothing."""
        seat = self.seat_of(player_id)
        if seat is None or self.seats[seat].connected:
            return Outcome()
        return self.reconnect(player_id, now)

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
