"""The tournaments this node pairs, as every kind of them is held: the tournament desk's
common part, under its arenas (``server.tournaments.arena_desk``) and its Swiss and
round-robin events (``server.tournaments.round_desk``).

Why one place: an arena and a Swiss are held alike. Each has its stored record, the epoch of
the lease it is paired under (every row it writes carries it, so the store refuses them
once another node has taken it over: ``Fenced``, then the tournament is let go here), one
lock that orders its commands and its games' ends, and timers that die with it. Their
entrants are shown by the same names, seeded by the same ratings, and their games are
started as rooms the same way (through the room runner, as an accepted challenge is).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from pydantic import BaseModel

from server import protocol as p
from server.connections.client import Client
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.outcome import Outcome
from server.play.rooms import Room
from server.storage.store import EntrantRecord, PairingRecord, Store, TournamentRecord

DEFAULT_RATING = 1500


def official(t: TournamentRecord) -> bool:
    """Made by an admin or one of their schedules (no player made it): listed first."""
    return t.created_by is None or t.schedule_id is not None


class Seating(Protocol):
    """What starting a paired game, and a berserk in it, ask of the room runner."""

    async def start(self, room: Room, out: Outcome) -> None: ...

    async def berserk(self, player: Player, room_id: str, game_id: str) -> None: ...


class SeatRatings(Protocol):
    """The rating desk, as pairing needs it."""

    async def seat_ratings(self, game: str, player_ids: Iterable[str],
                           level: str | None = None) -> dict[str, p.SeatRating | None]: ...


class Leases(Protocol):
    """Which node pairs each tournament (``server.play.placement``): this one, or another."""

    async def hold_tournament(self, tournament_id: str) -> int: ...

    async def tournament_forwarded(self, client: Client, player: Player, tournament_id: str,
                                   message: BaseModel) -> bool: ...

    async def drop_tournament(self, tournament_id: str) -> None: ...

    def lost_tournament(self, tournament_id: str, epoch: int) -> None: ...

    async def start_tournaments(self, tournaments: Any) -> int: ...


class Players(Protocol):
    """The player registry, read (``server.people.identity``)."""

    def get(self, player_id: str) -> Player | None: ...


class WallTimer:
    """Calls ``callback`` once ``now()`` (the wall clock tournaments' times are in) reaches
    ``due``. The loop's timer runs on its own clock: uvloop's fires up to a millisecond early
    by the wall clock, and an arena whose start tick came early stayed "upcoming" for good
    (``ArenaDesk._tick`` saw it was not yet time). A timer that fires early is set again for
    what is left."""

    def __init__(self, now: Callable[[], float], due: float, callback: Callable[[], Any]
                 ) -> None:
        self.now = now
        self.due = due
        self.callback = callback
        self.handle = asyncio.get_running_loop().call_later(max(0.0, due - now()), self._fire)

    def _fire(self) -> None:
        left = self.due - self.now()
        if left > 0:
            self.handle = asyncio.get_running_loop().call_later(left, self._fire)
            return
        self.callback()

    def cancel(self) -> None:
        self.handle.cancel()


class HeldTournaments:
    """The tournaments paired here (and the finished ones shown here), whatever their kind:
    records, epochs, locks, timers, names; their rows written, their games started."""

    def __init__(self, store: Store, players: Players, lobby: Lobby, seating: Seating,
                 ratings: SeatRatings, online: Callable[[str], Awaitable[Any]],
                 now: Callable[[], float], leases: Leases,
                 let_go: Callable[[str], None]) -> None:
        self.store = store
        self.players = players
        self.lobby = lobby
        self.seating = seating
        self.ratings = ratings
        self.online = online
        self.now = now
        self.leases = leases
        self.let_go = let_go
        """The desk's: forget a tournament another node pairs now, in every kind."""
        self.epochs: dict[str, int] = {}
        """The epoch each tournament paired here is held at (0 alone): its writes carry it."""
        self.records: dict[str, TournamentRecord] = {}
        self.names: dict[str, Player] = {}
        self.timers: dict[str, list[WallTimer]] = {}
        self.locks: dict[str, asyncio.Lock] = {}

    def lock(self, tid: str) -> asyncio.Lock:
        return self.locks.setdefault(tid, asyncio.Lock())

    def fenced(self, tid: str) -> None:
        """A write of the tournament was refused: another node took it over. Its lease and
        the tournament are let go here."""
        self.leases.lost_tournament(tid, self.epochs.get(tid, 0))
        self.let_go(tid)

    def forget(self, tid: str) -> None:
        """The tournament's record and epoch dropped, its timers stopped."""
        self.epochs.pop(tid, None)
        self.records.pop(tid, None)
        for timer in self.timers.pop(tid, []):
            timer.cancel()

    def at(self, tid: str, delay: float, tick: Callable[[str], Awaitable[None]]) -> None:
        """Run ``tick(tid)`` once ``now`` is ``delay`` seconds later, unless the tournament is
        let go first (``tick`` compares ``now`` with the tournament's times)."""
        self.timers.setdefault(tid, []).append(WallTimer(
            self.now, self.now() + delay, lambda: asyncio.ensure_future(tick(tid))))

    def close(self) -> None:
        for timer in [t for timers in self.timers.values() for t in timers]:
            timer.cancel()
        self.timers.clear()

    async def save_tournament(self, tid: str) -> None:
        await self.store.save_tournament(self.records[tid], epoch=self.epochs.get(tid, 0))

    async def save_entrant(self, tid: str, entrant: EntrantRecord) -> None:
        await self.store.save_entrant(entrant, epoch=self.epochs.get(tid, 0))

    async def save_pairing(self, tid: str, pairing: PairingRecord) -> None:
        await self.store.save_pairing(pairing, epoch=self.epochs.get(tid, 0))

    async def rating(self, tid: str, player_id: str) -> float:
        """The rating ``player_id`` enters the tournament with: its rating in the game (1500
        for one never rated)."""
        seat = (await self.ratings.seat_ratings(self.records[tid].game, [player_id])).get(
            player_id)
        return float(seat.rating) if seat is not None else float(DEFAULT_RATING)

    def player(self, player_id: str, name: str) -> Player:
        """The entrant as a room seats it: connected, known by name, or ``name``."""
        return self.players.get(player_id) or self.names.get(player_id) \
            or Player(player_id, name)

    def who(self, player_id: str) -> p.PlayerView:
        return self.player(player_id, player_id).view()

    async def start(self, room: Room, first: Player, second: Player, now: float) -> None:
        """Start the game of a paired room: both players sent its state, one not online
        counted as gone (its clock runs), the game stored."""
        out = Outcome(sends=[room.state_for(first.id), room.state_for(second.id)],
                      save_game=True)
        for player in (first, second):
            if not await self.online(player.id):
                out.extend(room.disconnect(player.id, now))
        await self.seating.start(room, out)

    def view(self, t: TournamentRecord, players: int, rounds: int | None) -> p.TournamentView:
        return p.TournamentView(id=t.id, kind=t.kind,  # type: ignore[arg-type]
                                name=t.name, game=t.game,
                                time_control=t.time_control or "", starts_at=t.starts_at,
                                ends_at=t.ends_at or t.starts_at, status=t.status,
                                berserk=t.berserk, rated=t.rated, players=players,
                                min_rating=t.min_rating, max_rating=t.max_rating,
                                min_games=t.min_games, schedule=t.schedule_id,
                                rounds=rounds, official=official(t))
