"""The positions of this node's live games that the engine must not help in.

Why by position and not by who asks: a player in a rated game can ask from a second
connection, a fresh guest or a friend's browser, and ``analyse`` takes any list of moves. So
every position that stands on the board of a *guarded* game, or stood there within the last
``BACK_PLIES`` plies, or is one move away from it (``AHEAD_PLIES``: what the player to move
could reach, whose analysis would value that move), is refused to everybody until the game
moves on from it or ends. A game is guarded while it is unfinished, a person sits in it and it
is rated (a seated account or bot has a rating, the rooms' own notion, as for the
evaluation) or it is a tournament's or the ladder's (``in_event``). Casual games (guests', and
a guest's against the computer with the evaluation on) are not guarded.

On a cluster each node also keeps its guarded rooms' positions where every node reads them
(``SharedPositions``: ``server.cluster.live_positions``), written before each move is
announced (``publish``), and a node asked looks there too (``elsewhere``).

Positions are compared as the game sees them, relative to the side to move and under every
symmetry of the board (``server.storage.symmetry``): a mirrored board, or the same stones with
the colours swapped, is the same question to the engine. Each room's keys are recomputed only
when its game, ply or line of moves changed since the last look, playing on from the states
kept where the game went on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import games
from ai import review as engine_review
from server.play.rooms import Room
from server.storage.symmetry import bitboards

BACK_PLIES = 4
"""How many plies back a position of a guarded game stays refused: the positions before both
players' last two moves (analysing the position before the opponent's reply values that reply,
so the position that stands now)."""
AHEAD_PLIES = 1
"""How far ahead: every position one move from the one that stands (its analysis would value
the move that reaches it)."""

Key = tuple[str, int, int]
"""(game, stones of the side to move, stones of the other side), cells as ``Game.cells``."""


def in_book(state: games.State) -> bool:
    """Whether the shipped opening book holds the position: every game passes through such
    positions, so their values help nobody in particular and stay open to all (Connect Four's
    book values every move of its positions, ``analyse_known``; Othello's holds the positions
    of its first plies)."""
    if state.game_name == "othello":
        from ai.othello import book

        return book.lookup(state) is not None  # type: ignore[arg-type]
    return engine_review.analyse_known(state) is not None


def position_key(game: games.Game, state: games.State) -> Key:
    """A position as compared here, relative to its side to move (not yet canonical)."""
    mine, theirs = bitboards(game.cells(state), state.to_move)
    return game.name, mine, theirs


def images(game: games.Game, key: Key) -> set[Key]:
    """The position under every symmetry of its board: it matches a guarded one when any
    image does (the symmetries are a group, so matching is symmetric)."""
    _, mine, theirs = key
    return {(key[0], game.transform(mine, s), game.transform(theirs, s))
            for s in range(game.symmetries)}


class SharedPositions(Protocol):
    """The guarded positions of every node's rooms (a cluster's:
    ``server.cluster.live_positions.SharedLivePositions``)."""

    async def publish(self, room_id: str, positions: Collection[Key]) -> None: ...

    async def first_standing(self, images: Sequence[Collection[Key]]) -> int | None: ...


@dataclass
class _Watched:
    """What was last seen of one guarded room: the states of its last plies, its keys."""

    signature: tuple[str, int, int]
    states: deque[games.State]
    keys: set[Key] = field(default_factory=set)


class LivePositions:
    """Refuses the engine's help for positions of this node's guarded games. ``rooms`` lists
    the node's rooms (the lobby's, read only); ``in_event`` says whether a game id is a
    tournament's or the ladder's."""

    def __init__(self, rooms: Callable[[], Iterable[Room]],
                 in_event: Callable[[str], bool] = lambda game_id: False,
                 shared: SharedPositions | None = None) -> None:
        self._rooms = rooms
        self._in_event = in_event
        self._shared = shared
        """A cluster's positions of every node (None: alone, this node's rooms are all)."""
        self._watched: dict[str, _Watched] = {}
        self._where: dict[Key, set[str]] = {}
        """Each guarded key, and the rooms whose board it is on (or was, or is one move from)."""

    def guarded(self, room: Room) -> bool:
        """Whether the engine must not help in ``room``'s game now."""
        if room.result is not None:
            return False
        people = [s.player.id for s in room.seats if s.kind == "human" and s.player is not None]
        if not people:
            return False
        rated = room.rated and any(pid in room.ratings for pid in people)
        return rated or self._in_event(room.game_id)

    def standing(self, game: games.Game, state: games.State) -> str | None:
        """The id of a guarded room where ``state`` stands, stood within ``BACK_PLIES`` or is
        one move from standing; None if there is none (or the shipped book holds it)."""
        if in_book(state):
            return None
        self._refresh()
        for image in images(game, position_key(game, state)):
            rooms = self._where.get(image)
            if rooms:
                return min(rooms)
        return None

    def first_standing(self, game: games.Game, states: Sequence[games.State]
                       ) -> tuple[int, str] | None:
        """The first of ``states`` (its index) that ``standing`` finds, with the room."""
        self._refresh()
        if not self._where:
            return None
        for index, state in enumerate(states):
            if in_book(state):
                continue
            for image in images(game, position_key(game, state)):
                rooms = self._where.get(image)
                if rooms:
                    return index, min(rooms)
        return None

    async def publish(self, room: Room, here: bool) -> None:
        """On a cluster: tell every node ``room``'s guarded positions as they stand now
        (none once its game ended or, ``here`` false, the room closed on this node). The
        room's runner calls it before announcing each change; nothing is written when its
        positions did not change."""
        if self._shared is None:
            return
        if here and self._see(room):
            positions: Collection[Key] = self._watched[room.id].keys
        else:
            self._forget(room.id)
            positions = ()
        await self._shared.publish(room.id, positions)

    async def elsewhere(self, game: games.Game, states: Sequence[games.State]) -> int | None:
        """The index of the first of ``states`` (the shipped book's aside) standing on a
        guarded board of any node of a cluster; None alone, or if none does."""
        if self._shared is None:
            return None
        asked = [(i, state) for i, state in enumerate(states) if not in_book(state)]
        found = await self._shared.first_standing(
            [images(game, position_key(game, state)) for _, state in asked])
        return None if found is None else asked[found][0]

    def _refresh(self) -> None:
        """Bring the keys up to date with the rooms as they stand now (a room that ended,
        closed or is no longer guarded drops its keys)."""
        seen = {room.id for room in self._rooms() if self._see(room)}
        for room_id in [r for r in self._watched if r not in seen]:
            self._forget(room_id)

    def _see(self, room: Room) -> bool:
        """Bring ``room``'s keys up to date; False (its keys dropped) if it is not guarded."""
        if not self.guarded(room):
            self._forget(room.id)
            return False
        signature = (room.game_id, len(room.moves), room.line)
        watched = self._watched.get(room.id)
        if watched is not None and watched.signature == signature:
            return True
        self._drop(room.id)
        self._watched[room.id] = watched = self._watch(room, watched, signature)
        for key in watched.keys:
            self._where.setdefault(key, set()).add(room.id)
        return True

    def _forget(self, room_id: str) -> None:
        self._drop(room_id)
        self._watched.pop(room_id, None)

    def _drop(self, room_id: str) -> None:
        watched = self._watched.get(room_id)
        if watched is None:
            return
        for key in watched.keys:
            rooms = self._where.get(key)
            if rooms is not None:
                rooms.discard(room_id)
                if not rooms:
                    del self._where[key]

    @staticmethod
    def _watch(room: Room, before: _Watched | None, signature: tuple[str, int, int]
               ) -> _Watched:
        """The room's last states and keys: played on from ``before`` when the same line of
        the same game only went further, else replayed from the start."""
        game = room.game
        moves = room.moves
        if (before is not None and before.signature[0] == signature[0]
                and before.signature[2] == signature[2] and before.signature[1] <= len(moves)):
            states = before.states
            state = states[-1]
            for move in moves[before.signature[1]:]:
                state = state.play(move)
                states.append(state)
        else:
            state = game.initial()
            states = deque([state], maxlen=BACK_PLIES + 1)
            for move in moves:
                state = state.play(move)
                states.append(state)
        keys = {position_key(game, s) for s in states}
        frontier = [state]
        for _ in range(AHEAD_PLIES):
            frontier = [s.play(m) for s in frontier if not s.is_over() for m in s.legal_moves()]
            keys.update(position_key(game, s) for s in frontier)
        return _Watched(signature, states, keys)
