"""The lobby: every room of this server, found by code and by player, and the open list.

Its own module because a room knows nothing of other rooms, and the lobby nothing of a game's
rules: the lobby makes rooms (new, restored from storage, between two AI levels), keeps the
indexes that say who is in which room, enforces the limits that span rooms (how many
unfinished rooms one player may have, which games, levels and time controls exist), and picks
the open list. Sans-I/O like the rooms: the caller passes ``now`` and carries each
``Outcome``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

import games
from games.base import Game
from server import errors
from server import protocol as p
from server.connections.player import Player
from server.play.clocks import FIRST_MOVE_SECONDS, TIME_CONTROLS, TimeControl
from server.play.outcome import AiTurn, Outcome
from server.play.rooms import Room, game_id_of, room_of
from server.play.seats import OpponentKind
from server.storage.store import GameRecord, MoveRecord

ROOM_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""Room codes are read aloud and typed from a friend's message: upper case only, and none of
the look-alikes 0/O, 1/I/L. ``Lobby.room`` upper-cases what people type."""

ROOM_CODE_LENGTH = 8
"""31**8 (about 8.5e11) codes: a guessed code finds a room only by rare luck."""


OPEN_LIST_SIZE = 100
"""Rooms the open list shows at most."""
OPEN_LIST_AGE = 1800.0
"""Seconds a room waits on the open list: older ones are left off (still joinable by code)."""
OPEN_LIST_PER_SOURCE = 3
"""Rooms one address (or one creator, where the address is unknown) shows on the open list
at most, its newest: twenty guests from one address cannot push everybody else's off."""


def pick_open(waiting: Sequence[tuple[float, str, p.RoomSummary]], now: float | None
              ) -> p.Rooms:
    """The open list from ``(created_at, source, summary)`` of the rooms waiting for anyone:
    newest first, none older than ``OPEN_LIST_AGE``, at most ``OPEN_LIST_PER_SOURCE`` per
    source, at most ``OPEN_LIST_SIZE`` in all."""
    shown: list[p.RoomSummary] = []
    per_source: dict[str, int] = {}
    for created_at, source, summary in sorted(waiting, key=lambda e: -e[0]):
        too_old = now is not None and now - created_at > OPEN_LIST_AGE
        if too_old or per_source.get(source, 0) >= OPEN_LIST_PER_SOURCE:
            continue
        per_source[source] = per_source.get(source, 0) + 1
        shown.append(summary)
        if len(shown) == OPEN_LIST_SIZE:
            break
    return p.Rooms(rooms=shown)


def _creator(room: Room) -> str:
    seated = next((s.player.id for s in room.seats if s.player is not None), "")
    return f"player:{seated}"



class Lobby:
    """Every room on this server, indexed by id and by player; the sans-I/O front door.

    ``ids`` makes fresh ids (room ids and game ids); ``levels`` lists each game's AI levels;
    ``time_controls`` the time controls a room may be made with.
    """

    def __init__(
        self,
        levels: Mapping[str, Sequence[str]],
        ids: Callable[[], str],
        grace: float = 60.0,
        max_rooms: int = 10,
        rng: random.Random | None = None,
        time_controls: Mapping[str, TimeControl] = TIME_CONTROLS,
        first_move_seconds: float = FIRST_MOVE_SECONDS,
    ) -> None:
        self.levels = levels
        self.first_move_seconds = first_move_seconds
        """Each room's ``Room.first_move_seconds`` (``Settings.first_move_seconds``)."""
        self.time_controls = time_controls
        """What ``create`` accepts by name (tests may offer a quicker one)."""
        self.ids = ids
        self.grace = grace
        self.max_rooms = max_rooms
        self.rng = rng or random.Random(0)
        self.rooms: dict[str, Room] = {}
        self._of_player: dict[str, set[str]] = {}
        self._watching: dict[str, set[str]] = {}

    def room(self, room_id: str) -> Room:
        """The room a code names, as people type it: surrounding spaces and letter case do
        not matter (codes made before codes were upper case still match case-insensitively,
        if only one room does)."""
        code = room_id.strip()
        room = self.rooms.get(code) or self.rooms.get(code.upper())
        if room is None:
            folded = [r for r in self.rooms.values() if r.id.casefold() == code.casefold()]
            room = folded[0] if len(folded) == 1 else None
        if room is None:
            raise errors.UnknownRoom(f"there is no room {code!r}")
        return room

    def holds(self, player_id: str) -> bool:
        """Whether the player sits in or watches a room here."""
        return bool(self._of_player.get(player_id) or self._watching.get(player_id))

    def rooms_of(self, player_id: str) -> list[Room]:
        """Rooms where the player holds a seat, oldest first."""
        rooms = [self.rooms[r] for r in self._of_player.get(player_id, ()) if r in self.rooms]
        return sorted(rooms, key=lambda r: r.created_at)

    def _count_unfinished(self, player_id: str) -> int:
        return sum(1 for r in self.rooms_of(player_id)
                   if r.status != "finished" and r.seat_of(player_id) is not None)

    def _check_room_limit(self, player_id: str) -> None:
        if self._count_unfinished(player_id) >= self.max_rooms:
            raise errors.TooManyRooms(
                f"you already play in {self.max_rooms} unfinished rooms; finish or leave one",
                limit=self.max_rooms,
            )

    def time_control(self, name: str | None) -> TimeControl | None:
        """The time control a room may be made with called ``name`` (None: untimed); else
        ``UnknownTimeControl``."""
        if name is None:
            return None
        control = self.time_controls.get(name)
        if control is None:
            raise errors.UnknownTimeControl(
                f"there is no time control {name!r}; time controls: "
                f"{', '.join(self.time_controls)} (or none, untimed)")
        return control

    def _game(self, name: str) -> Game:
        try:
            return games.load(name)
        except ValueError:
            raise errors.UnknownGame(
                f"unknown game {name!r}; known games: {', '.join(games.names())}") from None

    def _check_level(self, game_name: str, level: str) -> None:
        known = self.levels.get(game_name, ())
        if level not in known:
            raise errors.UnknownLevel(
                f"{game_name} has no AI level {level!r}; levels: {', '.join(known)}")

    def _fresh_id(self) -> str:
        room_id = self.ids()
        while room_id in self.rooms:
            room_id = self.ids()
        return room_id

    def create(self, player: Player, game_name: str, opponent: p.AiOpponent
               | p.FriendOpponent | p.OpenOpponent, seat: int | None, now: float,
               time_control: str | None = None,
               ratings: Mapping[str, p.SeatRating | None] | None = None
               ) -> tuple[Room, Outcome]:
        """A new room with ``player`` seated (and the AI, against it). ``ratings``: the
        seat ratings to show from the first ``room_state`` (``Room.note_ratings``)."""
        game = self._game(game_name)
        if isinstance(opponent, p.AiOpponent):
            self._check_level(game_name, opponent.level)
        control = self.time_control(time_control)
        if isinstance(opponent, p.AiOpponent) and opponent.evaluation and (ratings or {}).get(
                player.id) is not None:
            raise errors.Forbidden(
                "your games against the computer are rated, and a rated game shows no engine "
                "evaluation; play as a guest to see it")
        self._check_room_limit(player.id)
        mine = self.rng.randrange(2) if seat is None else seat
        room_id = self._fresh_id()
        room = Room(room_id, game, opponent.kind, game_id_of(room_id, 1), now, self.grace,
                    control)
        room.first_move_seconds = self.first_move_seconds
        room.sit(mine, player)
        if isinstance(opponent, p.AiOpponent):
            room.seat_ai(1 - mine, opponent.level)
            room.evaluation = opponent.evaluation
        room.note_ratings(ratings or {})
        self.rooms[room.id] = room
        self._of_player.setdefault(player.id, set()).add(room.id)
        started = room.start()  # marks the AI as thinking before the state is sent
        return room, Outcome(sends=[room.state_for(player.id)]).extend(started)

    def restore(self, record: GameRecord, moves: Sequence[MoveRecord],
                people: Mapping[str, Player], now: float) -> tuple[Room, Outcome]:
        """Rebuild an unfinished game from storage after a restart (or a takeover).

        Its people count as disconnected since ``now`` (their grace period starts again);
        the outcome asks the AI to move if it is its turn. A timed game keeps the clocks
        stored with its last move, and the turn under way starts again at ``now``: the time
        the server was away is nobody's. Raises ``ValueError`` if the stored moves do not
        replay.

        A game its last stored move already ended (the server stopped between storing the
        move and storing the finished game) ends here as that move would have ended it, at
        that move's time: the outcome announces ``game_over`` and asks for the finished row
        to be saved (and so rated) like any finish.
        """
        game = games.load(record.game)
        room_id, round = room_of(record.id)
        opponent: OpponentKind = "ai" if record.ai_seat is not None else "friend"
        control = None
        if record.clock_initial_ms is not None:
            control = TimeControl(record.time_control or "custom", record.clock_initial_ms,
                                  record.clock_increment_ms or 0)
        room = Room(room_id, game, opponent, record.id, record.created_at, self.grace, control)
        room.first_move_seconds = self.first_move_seconds
        room.round = round
        room.evaluation = record.evaluation
        room.rated = record.rated
        for seat, player_id in enumerate(record.players):
            level = record.level_of(seat)
            if level is not None:
                room.seat_ai(seat, level)
            elif player_id is not None:
                room.sit(seat, people.get(player_id) or Player(player_id, "Player"))
                room.seats[seat].connected = False
                room.seats[seat].away_since = now
                self._of_player.setdefault(player_id, set()).add(room_id)
        out = room.replay(moves, record.berserk, now)
        self.rooms[room_id] = room
        return room, out

    def create_match(self, game_name: str, levels: tuple[str, str], now: float,
                     time_control: str | None = None) -> tuple[Room, Outcome]:
        """A new room where two AI levels play each other, ``levels[0]`` moving first (the
        engine ladder's games): nobody is seated, anyone may spectate, and the outcome asks
        for the first ``AiTurn``. Its room closes a grace period after its game ends."""
        game = self._game(game_name)
        for level in levels:
            self._check_level(game_name, level)
        control = self.time_control(time_control)
        room_id = self._fresh_id()
        room = Room(room_id, game, "ai", game_id_of(room_id, 1), now, self.grace, control)
        room.first_move_seconds = self.first_move_seconds
        for seat, level in enumerate(levels):
            room.seat_ai(seat, level)
        self.rooms[room.id] = room
        return room, room.start()

    def join(self, player: Player, room_id: str, now: float,
             rating: p.SeatRating | None = None) -> Outcome:
        """Seat ``player`` in the room's free seat, showing ``rating`` (its rating in the
        room's game, None: none) beside its name."""
        room = self.room(room_id)
        if room.seat_of(player.id) is None and room.status == "waiting":
            self._check_room_limit(player.id)
        out = room.join(player, now, rating)
        self._of_player.setdefault(player.id, set()).add(room.id)
        return out

    def spectate(self, player: Player, room_id: str, now: float | None = None) -> Outcome:
        out = self.room(room_id).spectate(player, now)
        self._watching.setdefault(player.id, set()).add(room_id)
        return out

    def leave(self, player_id: str, room_id: str, now: float) -> Outcome:
        """A spectator just stops watching; a seated player leaving a waiting room (nobody
        left to play) or the last person leaving closes the room."""
        room = self.room(room_id)
        seated = room.seat_of(player_id) is not None
        out = room.leave(player_id, now)
        self._forget(player_id, room)
        if seated and (room.status == "waiting" or not room.humans()):
            self.close(room.id)
        return out

    def rename(self, player: Player) -> None:
        """``player`` (same id) has a new name: seat it under that name wherever it sits."""
        for room in self.rooms_of(player.id):
            for seat in room.seats:
                if seat.player is not None and seat.player.id == player.id:
                    seat.player = player

    def _forget(self, player_id: str, room: Room) -> None:
        self._watching.get(player_id, set()).discard(room.id)
        if room.seat_of(player_id) is None:
            self._of_player.get(player_id, set()).discard(room.id)

    def close(self, room_id: str) -> None:
        room = self.rooms.pop(room_id, None)
        if room is None:
            return
        for seat in room.seats:
            if seat.player is not None:
                self._of_player.get(seat.player.id, set()).discard(room_id)
        for watcher in room.spectators:
            self._watching.get(watcher, set()).discard(room_id)

    def stalled_ai(self, rooms: Iterable[Room] | None = None) -> list[tuple[Room, AiTurn]]:
        """Rooms where the AI is to move but nobody is finding its move, each with the AI's
        turn (now marked thinking): the caller starts the AI for each. ``rooms``: only
        those of them still open here (else every room)."""
        turns = [(room, room.stalled_ai_turn()) for room in self._open(rooms)]
        return [(room, turn) for room, turn in turns if turn is not None]

    def _open(self, rooms: Iterable[Room] | None) -> list[Room]:
        """``rooms`` that are still open here (every open room when None)."""
        if rooms is None:
            return list(self.rooms.values())
        return [room for room in rooms if self.rooms.get(room.id) is room]

    def open_rooms(self, now: float | None = None) -> p.Rooms:
        """The open list (``pick_open``) of this server's rooms waiting for anyone (``now``
        None: none is too old)."""
        return pick_open([(r.created_at, r.source or _creator(r), r.summary())
                          for r in self.rooms.values()
                          if r.opponent == "open" and r.status == "waiting"], now)

    def disconnect(self, player_id: str, now: float) -> Outcome:
        """The player's last connection closed: every room they are in hears of it."""
        out = Outcome()
        for room_id in self._watching.pop(player_id, set()):
            if room_id in self.rooms:
                out.extend(self.rooms[room_id].disconnect(player_id, now))
        for room in self.rooms_of(player_id):
            out.extend(room.disconnect(player_id, now))
        return out

    def reconnect(self, player_id: str, now: float | None = None) -> Outcome:
        """The player is back: full state of each of their rooms first, then events."""
        out = Outcome()
        for room in self.rooms_of(player_id):
            out.extend(room.reconnect(player_id, now))
        return out

    def overdue(self, now: float, rooms: Iterable[Room] | None = None) -> list[Room]:
        """Rooms whose running clock, or first-move time, has run out by ``now``: the caller
        ends each game with ``Room.check_flag`` (under the room's lock, as any command).
        ``rooms``: only those of them still open here (else every room)."""
        return [room for room in self._open(rooms)
                if (deadline := room.deadline()) is not None and deadline <= now]

    def sweep(self, now: float, rooms: Iterable[Room] | None = None
              ) -> list[tuple[Room, Outcome]]:
        """Close rooms whose people have all been away longer than the grace period
        (``rooms``: only those of them still open here, else every room).

        Returns each closed room with its outcome (the caller saves finished games).
        """
        closed = []
        for room in self._open(rooms):
            since = room.abandoned_since()
            if since is not None and now - since >= self.grace:
                closed.append((room, room.expire(now)))
                self.close(room.id)
        return closed
