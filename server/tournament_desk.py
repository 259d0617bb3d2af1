"""Arena tournaments: the glue between ``server.tournaments.arena``, the rooms, the store and
the sockets.

Every command and every finished game changes the arena, saves the rows it changed
(``server.tournaments.records``), starts the games ``Arena.pair`` returns as rooms (through
the room runner, as an accepted challenge does) and pushes the arena's state to its
players. A restart rebuilds the arenas that were upcoming or running from the store
(``restore``) and scores the games that ended while nobody was listening.

On one node only: a cluster would need one node to pair each arena at a time (the rooms'
lease and fencing), which is not built yet.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

import games
from server import errors
from server import protocol as p
from server.connection import Client
from server.outbox import Outbox
from server.rooms import Lobby, Outcome, Player, Room, room_of
from server.store import GameRecord, Store, TournamentRecord
from server.tournaments import Entrant
from server.tournaments.arena import Arena, Standing
from server.tournaments.records import arena_from_records, arena_pairing_record, entrant_record

log = logging.getLogger("discus.tournaments")

TOP_ROWS = 10
"""Standings rows pushed to everyone; each player also gets its own row."""
DEFAULT_RATING = 1500


class Seating(Protocol):
    """What starting a paired game asks of the room runner."""

    async def start(self, room: Room, out: Outcome) -> None: ...


class SeatRatings(Protocol):
    """The rating desk, as pairing needs it."""

    async def seat_ratings(self, game: str, player_ids: Iterable[str],
                           level: str | None = None) -> dict[str, p.SeatRating | None]: ...


class Players(Protocol):
    """The player registry, read (``server.identity``)."""

    def get(self, player_id: str) -> Player | None: ...


Message = (p.CreateTournament | p.JoinTournament | p.PauseTournament | p.WithdrawTournament
           | p.GetTournament | p.ListTournaments)


class TournamentDesk:
    """The tournament messages, and the end of each tournament game (``game_finished``)."""

    def __init__(self, store: Store, outbox: Outbox, players: Players, lobby: Lobby,
                 seating: Seating, ratings: SeatRatings, online: Callable[[str], Awaitable[Any]],
                 now: Callable[[], float], single_node: bool = True) -> None:
        self.store = store
        self.single_node = single_node
        """Arenas are paired by the node that holds them: on a cluster none is made yet."""
        self.outbox = outbox
        self.players = players
        self.lobby = lobby
        self.seating = seating
        self.ratings = ratings
        self.online = online
        self.now = now
        self.arenas: dict[str, Arena] = {}
        self.records: dict[str, TournamentRecord] = {}
        self.by_game: dict[str, tuple[str, str]] = {}
        """Stored game id -> (tournament, arena game id), for the games under way."""
        self.names: dict[str, Player] = {}
        self.timers: list[asyncio.TimerHandle] = []
        self.locks: dict[str, asyncio.Lock] = {}

    # --- messages --------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player, message: Message) -> None:
        if isinstance(message, p.ListTournaments):
            found = await self.store.list_tournaments(["upcoming", "running"])
            done = await self.store.list_tournaments(["finished"], limit=500)
            done = sorted(done, key=lambda t: -t.starts_at)[:20]
            self.outbox.send([client], p.Tournaments(
                tournaments=[self._view(t) for t in [*found, *done] if not t.private]))
            return
        if isinstance(message, p.CreateTournament):
            tid = await self._create(player, message)
        else:
            tid = message.tournament
        arena = self._arena(tid)
        if isinstance(message, p.JoinTournament) and not arena.is_over(self.now()):
            await self._pause_elsewhere(tid, player.id)  # before this arena's lock: no cycle
        async with self._lock(tid):
            now = self.now()
            if isinstance(message, p.JoinTournament):
                rating = await self._rating(tid, player.id)
                arena.join(Entrant(player.id, player.name, rating), now)
                self.names[player.id] = player
                await self.store.save_entrant(entrant_record(arena, player.id, now))
            elif isinstance(message, p.PauseTournament):
                arena.pause(player.id)
                await self.store.save_entrant(entrant_record(arena, player.id, now))
            elif isinstance(message, p.WithdrawTournament):
                arena.withdraw(player.id)
                await self.store.save_entrant(entrant_record(arena, player.id, now))
            await self._pair(tid)
        self.outbox.send([client], self.state(tid, player.id))
        if not isinstance(message, p.GetTournament):
            self._push(tid)

    async def game_finished(self, record: GameRecord) -> None:
        """Score a finished tournament game, pair its players again, push the standings.
        Games of no tournament are ignored."""
        found = self.by_game.pop(record.id, None)
        if found is None:
            return
        tid, game_id = found
        async with self._lock(tid):
            self._score(tid, game_id, record)
            await self.store.save_pairing(arena_pairing_record(self.arenas[tid], game_id))
            await self._pair(tid)
            await self._maybe_finish(tid)
        self._push(tid)

    async def restore(self) -> None:
        """Rebuild the upcoming and running arenas from the store, score their games that
        ended meanwhile, and set their timers. Call once at start-up, after the rooms'
        restore."""
        for record in await self.store.list_tournaments(["upcoming", "running"], limit=1000):
            if record.kind != "arena":
                continue
            arena = arena_from_records(record, await self.store.tournament_entrants(record.id),
                                       await self.store.tournament_pairings(record.id))
            self.arenas[record.id] = arena
            self.records[record.id] = record
            for entrant in arena.players.values():
                self.names.setdefault(entrant.entrant.id, Player(entrant.entrant.id,
                                                                  entrant.entrant.name))
            for game in arena.under_way():
                if game.stored_as is None:
                    continue
                self.by_game[game.stored_as] = (record.id, game.game_id)
                stored = await self.store.load_game(game.stored_as)
                if stored is not None and stored[0].status in ("finished", "aborted"):
                    await self.game_finished(stored[0])
            self._set_timers(record)

    def close(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()

    # --- views -----------------------------------------------------------------------------

    def state(self, tid: str, player_id: str | None = None) -> p.TournamentMessage:
        arena = self.arenas[tid]
        rows = arena.standings()
        mine = next((r for r in rows if r.id == player_id), None)
        playing = [p.TournamentGameView(room=room_of(g.stored_as)[0], first=self._who(g.first),
                                        second=self._who(g.second))
                   for g in arena.under_way() if g.stored_as is not None]
        return p.TournamentMessage(
            tournament=self._view(self.records[tid], len(rows)),
            standings=[self._row(r) for r in rows[:TOP_ROWS]],
            you=None if mine is None else self._row(mine), games=playing)

    def _view(self, t: TournamentRecord, players: int | None = None) -> p.TournamentView:
        arena = self.arenas.get(t.id)
        count = players if players is not None else (
            len(arena.players) if arena is not None else 0)
        return p.TournamentView(id=t.id, kind="arena", name=t.name, game=t.game,
                                time_control=t.time_control or "", starts_at=t.starts_at,
                                ends_at=t.ends_at or t.starts_at, status=t.status,
                                berserk=t.berserk, players=count)

    def _row(self, row: Standing) -> p.StandingRow:
        return p.StandingRow(rank=row.rank, player=self._who(row.id), rating=round(row.rating),
                             score=row.score, games=row.games, sheet=list(row.sheet),
                             on_fire=row.on_fire, status=row.status.value,
                             playing=row.playing)

    def _who(self, player_id: str) -> p.PlayerView:
        known = self.players.get(player_id) or self.names.get(player_id)
        return (known or Player(player_id, player_id)).view()

    def _push(self, tid: str) -> None:
        top = self.state(tid)
        for row in self.arenas[tid].standings():
            self.outbox.to_players([row.id], top.model_copy(update={"you": self._row(row)}))

    # --- inside ----------------------------------------------------------------------------

    def _arena(self, tid: str) -> Arena:
        arena = self.arenas.get(tid)
        if arena is None:
            raise errors.UnknownTournament(f"there is no arena {tid!r} here")
        return arena

    def _lock(self, tid: str) -> asyncio.Lock:
        return self.locks.setdefault(tid, asyncio.Lock())

    async def _create(self, player: Player, message: p.CreateTournament) -> str:
        if not self.single_node:
            raise errors.Forbidden("arenas are not run on a cluster yet")
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        control = self.lobby.time_control(message.time_control)
        assert control is not None  # the message's time control is a name, never None
        stored = await self.store.load_player(player.id)
        if stored is None or stored.kind == "guest":
            raise errors.Forbidden("sign in to make a tournament")
        now = self.now()
        starts_at = now + message.starts_in
        tid = "t" + secrets.token_hex(5)
        record = TournamentRecord(tid, "arena", message.game, message.name, control.name, True,
                                  player.id, now, starts_at, starts_at + 60 * message.minutes,
                                  None, message.berserk, False,
                                  "running" if message.starts_in == 0 else "upcoming")
        assert record.ends_at is not None
        self.arenas[tid] = Arena(tid, starts_at, record.ends_at, message.berserk)
        self.records[tid] = record
        await self.store.save_tournament(record)
        self._set_timers(record)
        return tid

    async def _pause_elsewhere(self, tid: str, player_id: str) -> None:
        """One arena at a time: joining one pauses the player in the others it plays in
        (a game under way there is played out), so it is never paired twice at once."""
        for other, arena in self.arenas.items():
            entered = arena.players.get(player_id)
            if other == tid or entered is None or entered.status.value != "active":
                continue
            async with self._lock(other):
                arena.pause(player_id)
                await self.store.save_entrant(entrant_record(arena, player_id, self.now()))
            self._push(other)

    async def _rating(self, tid: str, player_id: str) -> float:
        seat = (await self.ratings.seat_ratings(self.records[tid].game, [player_id])).get(
            player_id)
        return float(seat.rating) if seat is not None else float(DEFAULT_RATING)

    async def _pair(self, tid: str) -> None:
        """Start the games the arena pairs now (the caller holds the arena's lock)."""
        arena = self.arenas[tid]
        record = self.records[tid]
        for pairing in arena.pair(self.now()):
            first = self.players.get(pairing.first) or self.names.get(pairing.first) \
                or Player(pairing.first, pairing.first)
            second = self.players.get(pairing.second) or self.names.get(pairing.second) \
                or Player(pairing.second, pairing.second)
            now = self.now()
            try:
                room, _ = self.lobby.create(first, record.game, p.FriendOpponent(), 0, now,
                                            record.time_control)
                self.lobby.join(second, room.id, now)
            except errors.ProtocolError:
                log.exception("arena %s could not seat %s and %s", tid, first.id, second.id)
                arena.cancel(pairing.game_id, now)
                await self.store.save_pairing(arena_pairing_record(arena, pairing.game_id))
                continue
            game = arena.games[pairing.game_id]
            game.stored_as = room.game_id
            self.by_game[room.game_id] = (tid, pairing.game_id)
            await self.store.save_pairing(arena_pairing_record(arena, pairing.game_id))
            out = Outcome(sends=[room.state_for(first.id), room.state_for(second.id)],
                          save_game=True)
            for player in (first, second):
                if not await self.online(player.id):
                    out.extend(room.disconnect(player.id, now))
            await self.seating.start(room, out)

    def _score(self, tid: str, game_id: str, record: GameRecord) -> None:
        arena = self.arenas[tid]
        ended = record.finished_at if record.finished_at is not None else self.now()
        if record.status == "aborted" or record.result is None:
            arena.cancel(game_id, ended)
        else:
            winner = None if record.result == 0 else (0 if record.result > 0 else 1)
            arena.finish(game_id, winner, ended)

    async def _maybe_finish(self, tid: str) -> None:
        arena = self.arenas[tid]
        record = self.records[tid]
        if record.status == "finished" or not arena.is_over(self.now()) or arena.under_way():
            return
        self.records[tid] = TournamentRecord(**{**record.__dict__, "status": "finished"})
        await self.store.save_tournament(self.records[tid])

    def _set_timers(self, record: TournamentRecord) -> None:
        loop = asyncio.get_running_loop()
        now = self.now()
        for at in (record.starts_at, record.ends_at or record.starts_at):
            if at > now:
                self.timers.append(loop.call_later(
                    at - now, lambda: asyncio.ensure_future(self._tick(record.id))))

    async def _tick(self, tid: str) -> None:
        """At the start (status running, first pairings) and at the end (finished once its
        last game ends)."""
        try:
            async with self._lock(tid):
                record = self.records[tid]
                if record.status == "upcoming" and self.now() >= record.starts_at:
                    self.records[tid] = TournamentRecord(**{**record.__dict__,
                                                            "status": "running"})
                    await self.store.save_tournament(self.records[tid])
                await self._pair(tid)
                await self._maybe_finish(tid)
            self._push(tid)
        except Exception:
            log.exception("arena %s: timer failed", tid)
