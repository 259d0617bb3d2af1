"""Arena tournaments: the glue between ``server.tournaments.arena``, the rooms, the store and
the sockets.

Every command and every finished game changes the arena, saves the rows it changed
(``server.tournaments.records``), starts the games ``Arena.pair`` returns as rooms (through
the room runner, as an accepted challenge does) and pushes the arena's state to its
players. A restart rebuilds the arenas that were upcoming or running from the store
(``restore``) and scores the games that ended while nobody was listening.

Swiss and round-robin events (``server.tournaments.rounds``) are run here the same way:
entries until round 1 is paired (at ``starts_at`` or on ``start_tournament``), each round's
games started as rooms (the first of a board in seat 0), the next round paired as soon as
the last game of a round ends, the standings and the crosstable pushed to the entrants.

On a cluster one node pairs each tournament at a time, as one node runs each room: it holds
the tournament's lease (``Leases``, the placement's), writes its rows under the lease's
epoch, so the store refuses them once another node has taken it over, and starts its games
as rooms of its own. Messages about it from players on other nodes are run on that node
(``run_forwarded``), and its standings reach them through the outbox's publish. When its
node dies, the node that takes the lease over brings the tournament back from the store
(``take_over``, the restart's path) and scores the games that ended meanwhile; a game run by
another node is scored when that node stores its end (``sweep``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from pydantic import BaseModel

import games
from server import errors
from server import protocol as p
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.outcome import Outcome
from server.play.rooms import Room, room_of
from server.storage.store import (
    EntrantRecord,
    Fenced,
    GameRecord,
    PairingRecord,
    Store,
    TournamentRecord,
)
from server.tournaments import Entrant, check_conditions
from server.tournaments.arena import Arena, Standing
from server.tournaments.records import (
    arena_from_records,
    arena_pairing_record,
    entrant_record,
    round_entrant_record,
    round_pairing_records,
    rounds_from_records,
)
from server.tournaments.rounds import RoundEvent
from server.tournaments.schedule_desk import ArenaSchedules
from server.tournaments.swiss import NoPairing
from server.tournaments.watchers import Watchers, address

log = logging.getLogger("discus.tournaments")

TOP_ROWS = 10
"""Standings rows pushed to everyone; each player also gets its own row."""
GAMES_SHOWN = 20
"""Games under way listed in a ``tournament`` message: those of the best-placed players."""
DEFAULT_RATING = 1500


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


Message = (p.CreateTournament | p.JoinTournament | p.PauseTournament | p.WithdrawTournament
           | p.GetTournament | p.ListTournaments | p.CreateRoundTournament | p.StartTournament)
Incoming = (Message | p.Berserk | p.UnwatchTournament | p.AdminCreateSchedule | p.AdminListSchedules
            | p.AdminDeleteSchedule)
ROUND_MESSAGES = (p.CreateRoundTournament, p.StartTournament)
SCHEDULE_MESSAGES = (p.AdminCreateSchedule, p.AdminListSchedules, p.AdminDeleteSchedule)


class TournamentDesk:
    """The tournament messages, and the end of each tournament game (``game_finished``)."""

    def __init__(self, store: Store, outbox: Outbox, players: Players, lobby: Lobby,
                 seating: Seating, ratings: SeatRatings, online: Callable[[str], Awaitable[Any]],
                 now: Callable[[], float], leases: Leases, watchers: Watchers,
                 push_seconds: float = 0.0, schedule_lead: float = 3600.0) -> None:
        self.store = store
        self.watchers = watchers
        """The connections here that watch a tournament's page (``get_tournament``)."""
        self.schedules = ArenaSchedules(store, lobby, self.open_arena, now, schedule_lead)
        """Admins' recurring arenas, made here ahead of time."""
        self.push_seconds = push_seconds
        """At most one standings push per arena (so per player) in this many seconds."""
        self.pushed_at: dict[str, float] = {}
        self.push_due: dict[str, asyncio.TimerHandle] = {}
        self.leases = leases
        self.epochs: dict[str, int] = {}
        """The epoch each tournament paired here is held at (0 alone): its writes carry it."""
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
        self.timers: dict[str, list[asyncio.TimerHandle]] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.events: dict[str, RoundEvent] = {}
        """The Swiss and round-robin events upcoming or running, by id."""
        self.event_games: dict[str, tuple[str, int, str]] = {}
        """Stored game id -> (event, round, board's first), for the round games under way."""
        self.stored_as: dict[tuple[str, str], str] = {}
        """(event, pairing id) -> the stored game of that board."""

    # --- messages --------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player, message: Incoming) -> None:
        if isinstance(message, p.Berserk):
            await self._berserk(player, message.room)
            return
        if isinstance(message, p.UnwatchTournament):
            self.watchers.unwatch(client)
            return
        if isinstance(message, p.GetTournament):  # here: the watcher's node, before forwarding
            await self.watchers.watch(client, message.tournament)
        if isinstance(message, SCHEDULE_MESSAGES):
            self.outbox.send([client], await self.schedules.handle(client, message))
            return
        if isinstance(message, p.ListTournaments):
            found = await self.store.list_tournaments(["upcoming", "running"])
            done = await self.store.list_tournaments(["finished"], limit=500)
            done = sorted(done, key=lambda t: -t.starts_at)[:20]
            listed = [t for t in [*found, *done] if not t.private and t.kind != "ladder"]
            counts = {t.id: len(await self.store.tournament_entrants(t.id)) for t in listed
                      if t.id not in self.records}  # paired by another node, or finished
            self.outbox.send([client], p.Tournaments(
                tournaments=[self._view(t, counts.get(t.id)) for t in listed]))
            return
        if (isinstance(message, p.TOURNAMENT_COMMANDS) and message.tournament not in self.records
                and await self.leases.tournament_forwarded(client, player, message.tournament,
                                                           message)):
            return
        self.outbox.send([client], await self.answer(player, message))

    commands = p.TOURNAMENT_COMMANDS

    def pairs(self, tournament_id: str) -> bool:
        """Every tournament the ladder desk does not pair (it is asked first)."""
        return True

    async def run_forwarded(self, player: Player, message: BaseModel) -> str:
        """A message about a tournament paired here, from a player connected to another
        node: its answer, encoded (the other node writes it to the client)."""
        assert isinstance(message, p.TOURNAMENT_COMMANDS)
        return p.encode(await self.answer(player, message))

    async def answer(self, player: Player, message: Message
                     ) -> p.TournamentMessage | p.RoundTournamentMessage:
        """Run a tournament message here; what the sender is answered. Its rows written
        under a lease another node has taken over: the tournament is let go here and the
        sender is asked to send again (the new node will run it)."""
        assert not isinstance(message, p.ListTournaments)
        if not isinstance(message, p.CreateTournament | p.CreateRoundTournament):
            await self._find(message.tournament)
        try:
            if isinstance(message, ROUND_MESSAGES) or (
                    not isinstance(message, p.CreateTournament)
                    and message.tournament in self.events):
                return await self._handle_rounds(player, message)
            return await self._handle_arena(player, message)
        except Fenced as exc:
            tid = getattr(message, "tournament", None)
            if tid is not None:
                self._fenced(tid)
            raise errors.InternalError("this tournament is paired by another server now; "
                                       "send that again") from exc

    async def _handle_arena(self, player: Player, message: Message) -> p.TournamentMessage:
        assert not isinstance(message, p.ListTournaments | p.CreateRoundTournament
                              | p.StartTournament)
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
                if player.id not in arena.players:  # one who comes back is let in again
                    await self._check_entry(tid, player.id, rating)
                arena.join(Entrant(player.id, player.name, rating), now)
                self.names[player.id] = player
                await self._save_entrant(tid, entrant_record(arena, player.id, now))
            elif isinstance(message, p.PauseTournament):
                arena.pause(player.id)
                await self._save_entrant(tid, entrant_record(arena, player.id, now))
            elif isinstance(message, p.WithdrawTournament):
                arena.withdraw(player.id)
                await self._save_entrant(tid, entrant_record(arena, player.id, now))
            await self._pair(tid)
        if not isinstance(message, p.GetTournament):
            self._push(tid)
        return self.state(tid, player.id)

    async def game_finished(self, record: GameRecord) -> None:
        """Score a finished tournament game, pair its players again, push the standings.
        Games of no tournament are ignored."""
        if record.id in self.event_games:
            await self._round_game_finished(record)
            return
        found = self.by_game.pop(record.id, None)
        if found is None:
            return
        tid, game_id = found
        try:
            async with self._lock(tid):
                if tid not in self.arenas:
                    return  # let go meanwhile: its new node scores the game
                self._score(tid, game_id, record)
                await self._save_pairing(tid, arena_pairing_record(self.arenas[tid], game_id))
                await self._pair(tid)
                await self._maybe_finish(tid)
        except Fenced:
            log.warning("arena %s is paired by another node now; letting it go", tid)
            self._fenced(tid)
            return
        self._push(tid)

    async def restore(self) -> int:
        """Bring back the upcoming and running tournaments this node is to pair (alone:
        all; on a cluster: those no node holds), each through ``take_over``; how many. Then
        make the arenas of the admins' schedules that are due. Call once at start-up, after
        the rooms' restore."""
        taken = await self.leases.start_tournaments(self)
        await self.schedules.start()
        return taken

    async def unfinished(self) -> list[str]:
        return [record.id for record in
                await self.store.list_tournaments(["upcoming", "running"], limit=1000)
                if record.kind in ("arena", "swiss", "roundrobin")]

    async def take_over(self, tid: str, epoch: int) -> bool:
        """Pair the tournament here from the store (at start-up, or after the node that
        paired it died): fenced at ``epoch`` first, so the former node can write no more,
        then read; its games that ended meanwhile are scored, its timers set, its standings
        pushed. False if it is over."""
        async with self._lock(tid):
            await self.store.fence_tournament(tid, epoch)
            record = await self.store.load_tournament(tid)
            if record is None or record.status == "finished" or record.kind not in (
                    "arena", "swiss", "roundrobin"):
                return False
            self.epochs[tid] = epoch
            ended = await self._load(record)
            if record.kind == "arena":
                self._set_timers(record)
            elif record.status == "upcoming":
                self._set_round_timer(record)
        for game in ended:
            await self.game_finished(game)
        if tid in self.arenas:
            self._push(tid)
        elif tid in self.events:
            self._push_rounds(tid)
        return True

    def let_go(self, tid: str) -> None:
        """Another node pairs the tournament now: forget it here, its timers stopped,
        writing nothing."""
        self.epochs.pop(tid, None)
        self.arenas.pop(tid, None)
        self.events.pop(tid, None)
        self.records.pop(tid, None)
        for timer in self.timers.pop(tid, []):
            timer.cancel()
        due = self.push_due.pop(tid, None)
        if due is not None:
            due.cancel()
        for table in (self.by_game, self.event_games):
            for game_id in [g for g, found in table.items() if found[0] == tid]:
                del table[game_id]

    def _fenced(self, tid: str) -> None:
        """A write of the tournament was refused: another node took it over. Its lease and
        the tournament are let go here."""
        self.leases.lost_tournament(tid, self.epochs.get(tid, 0))
        self.let_go(tid)

    async def sweep(self) -> None:
        """Score the games of the tournaments paired here that ended on another node (a
        room taken over by a node that does not pair its tournament): what that node
        stored says. Every few seconds (``Server.sweep_forever``); alone, nothing to do."""
        elsewhere = [game_id for game_id in [*self.by_game, *self.event_games]
                     if room_of(game_id)[0] not in self.lobby.rooms]
        for game_id in elsewhere:
            stored = await self.store.load_game(game_id)
            if stored is not None and stored[0].status in ("finished", "aborted"):
                await self.game_finished(stored[0])

    async def _find(self, tid: str) -> None:
        """Wait while the tournament is being taken over here; a finished one another node
        paired is read from the store (to be shown, never paired)."""
        if tid in self.records:
            return
        async with self._lock(tid):
            if tid in self.records:
                return
            record = await self.store.load_tournament(tid)
            if record is not None and record.status == "finished":
                await self._load(record)

    async def _load(self, record: TournamentRecord) -> list[GameRecord]:
        """Build the tournament from its rows; its games under way that the store holds
        ended (to be scored)."""
        if record.kind in ("swiss", "roundrobin"):
            return await self._restore_rounds(record)
        arena = arena_from_records(record, await self.store.tournament_entrants(record.id),
                                   await self.store.tournament_pairings(record.id))
        self.arenas[record.id] = arena
        self.records[record.id] = record
        for entrant in arena.players.values():
            self.names.setdefault(entrant.entrant.id, Player(entrant.entrant.id,
                                                              entrant.entrant.name))
        ended = []
        for game in arena.under_way():
            if game.stored_as is None or record.status == "finished":
                continue
            stored = await self.store.load_game(game.stored_as)
            if stored is None:
                # Paired, but its node stopped before the room's game was stored: it never
                # began. Cancelled (it scores nothing), so both players are paired again.
                arena.cancel(game.game_id, self.now())
                await self._save_pairing(record.id, arena_pairing_record(arena, game.game_id))
                continue
            self.by_game[game.stored_as] = (record.id, game.game_id)
            room = self.lobby.rooms.get(room_of(game.stored_as)[0])
            if room is not None and room.game_id == game.stored_as:
                room.berserk_allowed = arena.berserk_allowed
                room.rated = record.rated
            if stored[0].status in ("finished", "aborted"):
                ended.append(stored[0])
        return ended

    def close(self) -> None:
        self.schedules.close()
        for timer in [t for timers in self.timers.values() for t in timers]:
            timer.cancel()
        for timer in self.push_due.values():
            timer.cancel()
        self.timers.clear()
        self.push_due.clear()

    async def _save_tournament(self, tid: str) -> None:
        await self.store.save_tournament(self.records[tid], epoch=self.epochs.get(tid, 0))

    async def _save_entrant(self, tid: str, entrant: EntrantRecord) -> None:
        await self.store.save_entrant(entrant, epoch=self.epochs.get(tid, 0))

    async def _save_pairing(self, tid: str, pairing: PairingRecord) -> None:
        await self.store.save_pairing(pairing, epoch=self.epochs.get(tid, 0))

    # --- views -----------------------------------------------------------------------------

    def state(self, tid: str, player_id: str | None = None) -> p.TournamentMessage:
        arena = self.arenas[tid]
        # Every answer carries this: in a big arena only the rows shown are made (a join
        # storm of 1,000 players made each answer build all 1,000 and lagged the loop).
        ordered = arena.ranked()
        rank = {one.entrant.id: k + 1 for k, one in enumerate(ordered)}
        rows = [arena.standing(one.entrant.id, k + 1)
                for k, one in enumerate(ordered[:TOP_ROWS])]
        mine = None if player_id not in rank else arena.standing(player_id, rank[player_id])
        under_way = sorted((g for g in arena.under_way() if g.stored_as is not None),
                           key=lambda g: min(rank.get(g.first, 0), rank.get(g.second, 0)))
        playing = [p.TournamentGameView(room=room_of(g.stored_as)[0], first=self._who(g.first),
                                        second=self._who(g.second))
                   for g in under_way[:GAMES_SHOWN] if g.stored_as is not None]
        return p.TournamentMessage(
            tournament=self._view(self.records[tid], len(ordered)),
            standings=[self._row(r) for r in rows],
            you=None if mine is None else self._row(mine), games=playing)

    def _view(self, t: TournamentRecord, players: int | None = None) -> p.TournamentView:
        arena = self.arenas.get(t.id)
        count = players if players is not None else (
            len(arena.players) if arena is not None else 0)
        event = self.events.get(t.id)
        if event is not None:
            count = len(event.entrants)
        return p.TournamentView(id=t.id, kind=t.kind,  # type: ignore[arg-type]
                                name=t.name, game=t.game,
                                time_control=t.time_control or "", starts_at=t.starts_at,
                                ends_at=t.ends_at or t.starts_at, status=t.status,
                                berserk=t.berserk, rated=t.rated, players=count,
                                min_rating=t.min_rating, max_rating=t.max_rating,
                                min_games=t.min_games, schedule=t.schedule_id,
                                rounds=event.rounds if event is not None else t.rounds)

    def _row(self, row: Standing) -> p.StandingRow:
        return p.StandingRow(rank=row.rank, player=self._who(row.id), rating=round(row.rating),
                             score=row.score, games=row.games, sheet=list(row.sheet),
                             on_fire=row.on_fire, status=row.status.value,
                             playing=row.playing)

    def _who(self, player_id: str) -> p.PlayerView:
        known = self.players.get(player_id) or self.names.get(player_id)
        return (known or Player(player_id, player_id)).view()

    def _push(self, tid: str) -> None:
        """Push the standings to the arena's players: now, or (within ``push_seconds`` of
        the last push) once at the end of that interval, coalescing the events between."""
        if tid in self.push_due:
            return
        wait = self.pushed_at.get(tid, float("-inf")) + self.push_seconds - self.now()
        if wait <= 0:
            self._push_now(tid)
            return
        loop = asyncio.get_running_loop()
        self.push_due[tid] = loop.call_later(wait, self._push_now, tid)

    def _push_now(self, tid: str) -> None:
        self.push_due.pop(tid, None)
        self.pushed_at[tid] = self.now()
        top = self.state(tid)
        # One frame made once, each player's own row spliced in where ``you`` is null.
        encoded = p.encode(top)
        # Watchers first: an entrant who also watches ends on the frame with its own row.
        self.outbox.to_players_encoded([address(tid)], encoded)
        head, mark, tail = encoded.partition('"you":null,')
        assert mark, "a tournament message has a you field"
        for row in self.arenas[tid].standings():
            self.outbox.to_players_encoded(
                [row.id], f'{head}"you":{self._row(row).model_dump_json()},{tail}')

    # --- inside ----------------------------------------------------------------------------

    def _arena(self, tid: str) -> Arena:
        arena = self.arenas.get(tid)
        if arena is None:
            raise errors.UnknownTournament(f"there is no arena {tid!r} here")
        return arena

    def _lock(self, tid: str) -> asyncio.Lock:
        return self.locks.setdefault(tid, asyncio.Lock())

    async def _create(self, player: Player, message: p.CreateTournament) -> str:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        control = self.lobby.time_control(message.time_control)
        assert control is not None  # the message's time control is a name, never None
        stored = await self.store.load_player(player.id)
        if stored is None or stored.kind == "guest":
            raise errors.Forbidden("sign in to make a tournament")
        check_conditions(message.min_rating, message.max_rating)
        now = self.now()
        starts_at = now + message.starts_in
        tid = "t" + secrets.token_hex(5)
        record = TournamentRecord(tid, "arena", message.game, message.name, control.name,
                                  message.rated, player.id, now, starts_at,
                                  starts_at + 60 * message.minutes, None, message.berserk,
                                  message.private,
                                  "running" if message.starts_in == 0 else "upcoming",
                                  message.min_rating, message.max_rating, message.min_games)
        await self.open_arena(record)
        return tid

    async def open_arena(self, record: TournamentRecord) -> None:
        """Pair the arena ``record`` made here (its lease held first, then stored): timers
        set, listed."""
        tid = record.id
        assert record.ends_at is not None
        self.epochs[tid] = await self.leases.hold_tournament(tid)
        self.arenas[tid] = Arena(tid, record.starts_at, record.ends_at, record.berserk)
        self.records[tid] = record
        await self._save_tournament(tid)
        self._set_timers(record)

    async def _check_entry(self, tid: str, player_id: str, rating: float) -> None:
        """Refuse a newcomer whom the arena's entry conditions keep out, naming the one
        that failed. The rating is the one the arena seeds by (1500 for one never rated)."""
        record = self.records[tid]
        if record.min_rating is not None and rating < record.min_rating:
            raise errors.EntryRefused(
                f"this arena is for players rated {record.min_rating} or more in "
                f"{record.game}; you are rated {round(rating)}", condition="min_rating",
                required=record.min_rating, yours=round(rating))
        if record.max_rating is not None and rating > record.max_rating:
            raise errors.EntryRefused(
                f"this arena is for players rated {record.max_rating} or less in "
                f"{record.game}; you are rated {round(rating)}", condition="max_rating",
                required=record.max_rating, yours=round(rating))
        if record.min_games:
            played = next((r.games for r in await self.store.ratings_of(player_id)
                           if r.game == record.game), 0)
            if played < record.min_games:
                raise errors.EntryRefused(
                    f"this arena is for players with {record.min_games} rated games of "
                    f"{record.game} or more; you have played {played}",
                    condition="min_games", required=record.min_games, yours=played)

    async def _berserk(self, player: Player, room_id: str) -> None:
        """Halve ``player``'s clock in its arena game in ``room_id``: the arena's rules
        checked here, the room's (before one's first move, once) by the runner, under the
        room's lock; then the arena notes it (the stored game row counts too, at the end).
        On a cluster, the game's room and its arena must run on this node (as they do where
        the arena paired the game)."""
        room = self.lobby.room(room_id)
        found = self.by_game.get(room.game_id)
        if found is None and room.status == "finished":
            raise errors.GameFinished(f"the game in room {room.id} is over")
        if found is None or found[0] not in self.arenas:
            raise errors.CannotBerserk("berserk is only for arena games (paired on this "
                                       "server)", reason="not_arena")
        tid, game_id = found
        arena = self.arenas[tid]
        if not arena.berserk_allowed:
            raise errors.CannotBerserk("this arena does not allow berserk",
                                       reason="not_allowed")
        await self.seating.berserk(player, room.id, room.game_id)
        try:
            async with self._lock(tid):  # after the room's lock: never both at once this way
                if tid in self.arenas and not arena.games[game_id].finished:
                    arena.berserk(player.id, game_id)
                    await self._save_pairing(tid, arena_pairing_record(arena, game_id))
        except Fenced:  # the stored game keeps the berserk: the new node scores it
            self._fenced(tid)

    async def _pause_elsewhere(self, tid: str, player_id: str) -> None:
        """One arena at a time: joining one pauses the player in the others it plays in
        (a game under way there is played out), so it is never paired twice at once."""
        for other, arena in list(self.arenas.items()):
            entered = arena.players.get(player_id)
            if other == tid or entered is None or entered.status.value != "active":
                continue
            try:
                async with self._lock(other):
                    arena.pause(player_id)
                    await self._save_entrant(other, entrant_record(arena, player_id,
                                                                   self.now()))
            except Fenced:
                self._fenced(other)  # paired by another node now: not paused there
                continue
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
                await self._save_pairing(tid, arena_pairing_record(arena, pairing.game_id))
                continue
            room.berserk_allowed = arena.berserk_allowed
            room.rated = record.rated
            game = arena.games[pairing.game_id]
            game.stored_as = room.game_id
            self.by_game[room.game_id] = (tid, pairing.game_id)
            try:
                await self._save_pairing(tid, arena_pairing_record(arena, pairing.game_id))
            except Fenced:
                self.lobby.close(room.id)  # never started: the new node pairs them again
                raise
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
            # The stored game says who went berserk, even if the arena missed it.
            arena.games[game_id].berserk.update(
                pid for seat, pid in enumerate(record.players)
                if seat in record.berserk and pid is not None)
            arena.finish(game_id, winner, ended)

    async def _maybe_finish(self, tid: str) -> None:
        arena = self.arenas[tid]
        record = self.records[tid]
        if record.status == "finished" or not arena.is_over(self.now()) or arena.under_way():
            return
        self.records[tid] = TournamentRecord(**{**record.__dict__, "status": "finished"})
        await self._save_tournament(tid)
        await self.leases.drop_tournament(tid)

    def _set_timers(self, record: TournamentRecord) -> None:
        loop = asyncio.get_running_loop()
        now = self.now()
        for at in (record.starts_at, record.ends_at or record.starts_at):
            if at > now:
                self.timers.setdefault(record.id, []).append(loop.call_later(
                    at - now, lambda: asyncio.ensure_future(self._tick(record.id))))

    async def _tick(self, tid: str) -> None:
        """At the start (status running, first pairings) and at the end (finished once its
        last game ends)."""
        try:
            async with self._lock(tid):
                record = self.records.get(tid)
                if record is None:
                    return  # let go meanwhile
                if record.status == "upcoming" and self.now() >= record.starts_at:
                    self.records[tid] = TournamentRecord(**{**record.__dict__,
                                                            "status": "running"})
                    await self._save_tournament(tid)
                await self._pair(tid)
                await self._maybe_finish(tid)
            self._push(tid)
        except Fenced:
            log.warning("arena %s is paired by another node now; letting it go", tid)
            self._fenced(tid)
        except Exception:
            log.exception("arena %s: timer failed", tid)

    # --- Swiss and round-robin -------------------------------------------------------------

    async def _handle_rounds(self, player: Player, message: Message
                             ) -> p.RoundTournamentMessage:
        if isinstance(message, p.CreateRoundTournament):
            tid = await self._create_rounds(player, message)
        else:
            assert not isinstance(message, (p.CreateTournament, p.ListTournaments))
            tid = message.tournament
        event = self.events.get(tid)
        if event is None:
            raise errors.UnknownTournament(f"there is no tournament {tid!r} here")
        async with self._lock(tid):
            record = self.records[tid]
            now = self.now()
            if isinstance(message, p.JoinTournament):
                if record.status == "finished":
                    raise errors.TournamentClosed("the tournament is over", reason="over")
                rating = await self._rating(tid, player.id)
                entrant = Entrant(player.id, player.name, rating)
                event.enter(entrant)
                self.names[player.id] = player
                await self._save_entrant(tid, round_entrant_record(event, entrant, now))
            elif isinstance(message, p.WithdrawTournament):
                entrant = event.entrants.get(player.id) or Entrant(player.id, player.name, 0)
                event.withdraw(player.id)
                await self._save_entrant(tid, round_entrant_record(event, entrant, now))
            elif isinstance(message, p.PauseTournament):
                raise errors.BadMessage("a Swiss or round-robin has no pause: withdraw",
                                        field="type")
            elif isinstance(message, p.StartTournament):
                if record.created_by != player.id:
                    raise errors.Forbidden("only the tournament's maker may start it")
                if record.status != "upcoming":
                    raise errors.TournamentClosed("the tournament has started",
                                                  reason="started")
                if len(event.entrants) < 2:
                    raise errors.BadMessage("a tournament needs at least two entrants",
                                            field="tournament")
                await self._next_round(tid)
        if not isinstance(message, p.GetTournament):
            self._push_rounds(tid)
        return self.round_state(tid)

    async def _create_rounds(self, player: Player, message: p.CreateRoundTournament) -> str:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        if message.kind == "swiss" and message.rounds is None:
            raise errors.BadMessage("a Swiss needs a number of rounds", field="rounds")
        control = self.lobby.time_control(message.time_control)
        assert control is not None
        stored = await self.store.load_player(player.id)
        if stored is None or stored.kind == "guest":
            raise errors.Forbidden("sign in to make a tournament")
        now = self.now()
        tid = "t" + secrets.token_hex(5)
        rounds = message.rounds if message.kind == "swiss" else None
        record = TournamentRecord(tid, message.kind, message.game, message.name, control.name,
                                  message.rated, player.id, now, now + message.starts_in, None,
                                  rounds)
        self.epochs[tid] = await self.leases.hold_tournament(tid)
        self.events[tid] = RoundEvent(tid, message.kind, rounds)
        self.records[tid] = record
        await self._save_tournament(tid)
        self._set_round_timer(record)
        return tid

    def round_state(self, tid: str) -> p.RoundTournamentMessage:
        event = self.events[tid]
        boards = event.boards[-1] if event.boards else []
        return p.RoundTournamentMessage(
            tournament=self._view(self.records[tid]), round=len(event.boards),
            standings=[p.RoundStandingRow(
                rank=r.rank, player=self._who(r.id), rating=round(r.rating), score=r.score,
                buchholz=r.buchholz, sonneborn_berger=r.sonneborn_berger,
                withdrawn=r.withdrawn) for r in event.standings()],
            boards=[p.RoundBoardView(
                first=self._who(b.first),
                second=None if b.second is None else self._who(b.second), result=b.result,
                room=self._room_of(tid, f"r{b.round}-{b.first}")) for b in boards],
            crosstable=event.crosstable_csv())

    def _room_of(self, tid: str, pairing_id: str) -> str | None:
        stored = self.stored_as.get((tid, pairing_id))
        return None if stored is None else room_of(stored)[0]

    def _push_rounds(self, tid: str) -> None:
        self.outbox.to_players([address(tid), *self.events[tid].entrants],
                               self.round_state(tid))

    async def _next_round(self, tid: str) -> None:
        """Pair and start rounds until one has a game to play, or finish the event (the
        caller holds its lock)."""
        event = self.events[tid]
        while True:
            if event.over:
                await self._finish_rounds(tid)
                return
            try:
                boards = event.pair_next()
            except (NoPairing, errors.BadMessage, errors.TournamentClosed) as exc:
                log.info("tournament %s ends: %s", tid, exc)
                await self._finish_rounds(tid)
                return
            record = self.records[tid]
            if record.status == "upcoming":
                self.records[tid] = dataclasses.replace(record, status="running",
                                                        rounds=event.rounds)
                await self._save_tournament(tid)
            number = len(event.boards)
            for board in boards:
                await self._start_board(tid, number, board.first, board.second)
            await self._save_round(tid, number)
            if not event.over and all(b.result is not None for b in event.boards[-1]):
                continue  # only byes and forfeits: on to the next round
            if event.over:
                await self._finish_rounds(tid)
            return

    async def _start_board(self, tid: str, number: int, first_id: str,
                           second_id: str | None) -> None:
        assert second_id is not None
        event = self.events[tid]
        record = self.records[tid]
        first = self.players.get(first_id) or self.names.get(first_id) \
            or Player(first_id, event.entrants[first_id].name)
        second = self.players.get(second_id) or self.names.get(second_id) \
            or Player(second_id, event.entrants[second_id].name)
        now = self.now()
        try:
            room, _ = self.lobby.create(first, record.game, p.FriendOpponent(), 0, now,
                                        record.time_control)
            try:
                self.lobby.join(second, room.id, now)
            except errors.ProtocolError:
                self.lobby.close(room.id)
                raise
        except errors.ProtocolError:
            log.exception("tournament %s could not seat %s and %s: a draw", tid, first_id,
                          second_id)
            event.record(number, first_id, 0.5)
            return
        room.rated = record.rated
        self.stored_as[(tid, f"r{number}-{first_id}")] = room.game_id
        self.event_games[room.game_id] = (tid, number, first_id)
        out = Outcome(sends=[room.state_for(first.id), room.state_for(second.id)],
                      save_game=True)
        for player in (first, second):
            if not await self.online(player.id):
                out.extend(room.disconnect(player.id, now))
        await self.seating.start(room, out)

    async def _save_round(self, tid: str, number: int) -> None:
        event = self.events[tid]
        now = self.now()
        for row in round_pairing_records(event, number, now, now):
            await self._save_pairing(tid, dataclasses.replace(
                row, game_id=self.stored_as.get((tid, row.pairing_id))))

    async def _round_game_finished(self, record: GameRecord) -> None:
        tid, number, first = self.event_games.pop(record.id)
        try:
            await self._score_round_game(tid, number, first, record)
        except Fenced:
            log.warning("tournament %s is paired by another node now; letting it go", tid)
            self._fenced(tid)

    async def _score_round_game(self, tid: str, number: int, first: str,
                                record: GameRecord) -> None:
        async with self._lock(tid):
            event = self.events.get(tid)
            if event is None:
                return  # let go meanwhile: its new node scores the game
            # Seat 0 is the board's first. An aborted game (no result) counts as a draw.
            won = record.result
            result = 0.5 if won is None or won == 0 else (1.0 if won > 0 else 0.0)
            try:
                event.record(number, first, result)
            except errors.ProtocolError:
                log.exception("tournament %s: no board waits for game %s", tid, record.id)
                return
            await self._save_round(tid, number)
            if number == len(event.boards) and all(
                    b.result is not None for b in event.boards[-1]):
                await self._next_round(tid)
        self._push_rounds(tid)

    async def _finish_rounds(self, tid: str) -> None:
        record = self.records[tid]
        if record.status != "finished":
            self.records[tid] = dataclasses.replace(record, status="finished",
                                                    rounds=self.events[tid].rounds)
            await self._save_tournament(tid)
            await self.leases.drop_tournament(tid)

    async def _restore_rounds(self, record: TournamentRecord) -> list[GameRecord]:
        entrants = await self.store.tournament_entrants(record.id)
        pairings = await self.store.tournament_pairings(record.id)
        event = rounds_from_records(record, entrants, pairings)
        self.events[record.id] = event
        self.records[record.id] = record
        for entrant in entrants:
            self.names.setdefault(entrant.player_id, Player(entrant.player_id, entrant.name))
        ended = []
        for row in pairings:
            if row.game_id is None:
                continue
            self.stored_as[(record.id, row.pairing_id)] = row.game_id
            if row.result is None and row.second is not None and record.status != "finished":
                self.event_games[row.game_id] = (record.id, row.round, row.first)
                room = self.lobby.rooms.get(room_of(row.game_id)[0])
                if room is not None and room.game_id == row.game_id:
                    room.rated = record.rated
                stored = await self.store.load_game(row.game_id)
                if stored is not None and stored[0].status in ("finished", "aborted"):
                    ended.append(stored[0])
        return ended

    def _set_round_timer(self, record: TournamentRecord) -> None:
        loop = asyncio.get_running_loop()
        delay = max(0.0, record.starts_at - self.now())
        self.timers.setdefault(record.id, []).append(loop.call_later(
            delay, lambda: asyncio.ensure_future(self._round_tick(record.id))))

    async def _round_tick(self, tid: str) -> None:
        """At the start: round 1 (or the end, with fewer than two entrants)."""
        try:
            async with self._lock(tid):
                if tid not in self.records or self.records[tid].status != "upcoming":
                    return
                await self._next_round(tid)
            self._push_rounds(tid)
        except Fenced:
            log.warning("tournament %s is paired by another node now; letting it go", tid)
            self._fenced(tid)
        except Exception:
            log.exception("tournament %s: start failed", tid)
