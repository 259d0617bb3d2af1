"""Arenas as the tournament desk runs them: the glue between ``server.tournaments.arena``,
the rooms, the store and the sockets, for the one kind that pairs as players free up.

Why its own part: an arena has no rounds. Every command and every finished game may pair
someone, so each changes the arena, saves the rows it changed (``server.tournaments.records``),
starts the games ``Arena.pair`` returns as rooms and pushes the standings to its players,
at most one push per ``push_seconds``. Only an arena has entry conditions (a rating window,
a number of rated games), berserk (the clock halved for a point more), streaks, a clock of
its own (it ends at ``ends_at``, its games played out) and one-arena-at-a-time (joining one
pauses the player in the others).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import replace

import games
from server import errors
from server import protocol as p
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.rooms import room_of
from server.storage.store import Fenced, GameRecord, Store, TournamentRecord
from server.tournaments import Entrant, check_conditions
from server.tournaments.arena import REMATCH_AFTER_SECONDS, Arena, Standing
from server.tournaments.held import HeldTournaments
from server.tournaments.makers import check_entry
from server.tournaments.records import arena_from_records, arena_pairing_record, entrant_record
from server.tournaments.watchers import address

log = logging.getLogger("discus.tournaments")

TOP_ROWS = 10
"""Standings rows pushed to everyone; each player also gets its own row."""
GAMES_SHOWN = 20
"""Games under way listed in a ``tournament`` message: those of the best-placed players."""
TIMER_MARGIN_SECONDS = 0.05
"""A rematch's timer fires this much after it is due, so the arena finds it due."""

NO_SHOW_SECONDS = 15.0
"""How long a player's first turn must have lasted for its game's abort to count as its
no-show (``Arena.cancel``'s ``absent``)."""

ArenaMessage = (p.CreateTournament | p.JoinTournament | p.PauseTournament
                | p.WithdrawTournament | p.GetTournament)


class Arenas:
    """The arenas held here (``HeldTournaments``): their messages, their games' ends, their
    timers, berserk, and their standings pushed."""

    def __init__(self, held: HeldTournaments, store: Store, outbox: Outbox, lobby: Lobby,
                 now: Callable[[], float], push_seconds: float = 0.0,
                 rematch_after: float = REMATCH_AFTER_SECONDS) -> None:
        self.held = held
        self.rematch_after = rematch_after
        """``Arena.rematch_after`` of the arenas held here (``Settings.arena_rematch_seconds``)."""
        self.store = store
        self.outbox = outbox
        self.lobby = lobby
        self.now = now
        self.push_seconds = push_seconds
        """At most one standings push per arena (so per player) in this many seconds."""
        self.pushed_at: dict[str, float] = {}
        self.push_due: dict[str, asyncio.TimerHandle] = {}
        self.arenas: dict[str, Arena] = {}
        self.by_game: dict[str, tuple[str, str]] = {}
        """Stored game id -> (tournament, arena game id), for the games under way."""

    async def handle(self, player: Player, message: ArenaMessage) -> p.TournamentMessage:
        if isinstance(message, p.CreateTournament):
            tid = await self._create(player, message)
        else:
            tid = message.tournament
        arena = self._arena(tid)
        if isinstance(message, p.JoinTournament) and not arena.is_over(self.now()):
            await self._pause_elsewhere(tid, player.id)  # before this arena's lock: no cycle
        async with self.held.lock(tid):
            now = self.now()
            if isinstance(message, p.JoinTournament):
                rating = await self.held.rating(tid, player.id)
                if player.id not in arena.players:  # one who comes back is let in again
                    await check_entry(self.store, self.held.records[tid], player.id, rating)
                arena.join(Entrant(player.id, player.name, rating), now)
                self.held.names[player.id] = player
                await self.held.save_entrant(tid, entrant_record(arena, player.id, now))
            elif isinstance(message, p.PauseTournament):
                arena.pause(player.id)
                await self.held.save_entrant(tid, entrant_record(arena, player.id, now))
            elif isinstance(message, p.WithdrawTournament):
                arena.withdraw(player.id)
                await self.held.save_entrant(tid, entrant_record(arena, player.id, now))
            await self._pair(tid)
        if not isinstance(message, p.GetTournament):
            self.push(tid)
        return self.state(tid, player.id)

    async def game_finished(self, record: GameRecord) -> None:
        """Score a finished arena game, pair its players again, push the standings. Games
        of no arena here are ignored."""
        found = self.by_game.pop(record.id, None)
        if found is None:
            return
        tid, game_id = found
        absent = await self._absent(record)
        try:
            async with self.held.lock(tid):
                if tid not in self.arenas:
                    return  # let go meanwhile: its new node scores the game
                self._score(tid, game_id, record, absent)
                if record.rated:
                    # The standings show each player's rating now, not the one it joined with.
                    arena = self.arenas[tid]
                    for pid in arena.games[game_id].players():
                        one = arena.players[pid]
                        one.entrant = replace(one.entrant, rating=await self.held.rating(tid, pid))
                await self.held.save_pairing(tid, arena_pairing_record(self.arenas[tid],
                                                                       game_id))
                if absent is not None:
                    await self.held.save_entrant(tid, entrant_record(self.arenas[tid], absent,
                                                                     self.now()))
                await self._pair(tid)
                await self._maybe_finish(tid)
        except Fenced:
            log.warning("arena %s is paired by another node now; letting it go", tid)
            self.held.fenced(tid)
            return
        self.push(tid)

    async def load(self, record: TournamentRecord) -> list[GameRecord]:
        """Build the arena from its rows; its games under way that the store holds ended
        (to be scored)."""
        arena = arena_from_records(record, await self.store.tournament_entrants(record.id),
                                   await self.store.tournament_pairings(record.id))
        arena.rematch_after = self.rematch_after
        self.arenas[record.id] = arena
        self.held.records[record.id] = record
        for one in arena.players.values():  # as rated now, not as when it joined
            one.entrant = replace(one.entrant, rating=await self.held.rating(record.id,
                                                                             one.entrant.id))
        for entrant in arena.players.values():
            self.held.names.setdefault(entrant.entrant.id, Player(entrant.entrant.id,
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
                await self.held.save_pairing(record.id,
                                             arena_pairing_record(arena, game.game_id))
                continue
            self.by_game[game.stored_as] = (record.id, game.game_id)
            room = self.lobby.rooms.get(room_of(game.stored_as)[0])
            if room is not None and room.game_id == game.stored_as:
                room.berserk_allowed = arena.berserk_allowed
                room.rated = record.rated
            if stored[0].status in ("finished", "aborted"):
                ended.append(stored[0])
        return ended

    def forget(self, tid: str) -> None:
        """Another node pairs the arena now: dropped here, its pushes stopped."""
        self.arenas.pop(tid, None)
        due = self.push_due.pop(tid, None)
        if due is not None:
            due.cancel()
        for game_id in [g for g, found in self.by_game.items() if found[0] == tid]:
            del self.by_game[game_id]

    def close(self) -> None:
        for timer in self.push_due.values():
            timer.cancel()
        self.push_due.clear()

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
        playing = [p.TournamentGameView(room=room_of(g.stored_as)[0],
                                        first=self.held.who(g.first),
                                        second=self.held.who(g.second))
                   for g in under_way[:GAMES_SHOWN] if g.stored_as is not None]
        return p.TournamentMessage(
            tournament=self.view(self.held.records[tid], len(ordered)),
            standings=[self._row(r, arena) for r in rows],
            you=None if mine is None else self._row(mine, arena), games=playing)

    def view(self, t: TournamentRecord, players: int | None = None) -> p.TournamentView:
        """The arena ``t`` as listed: ``players`` entrants, if known elsewhere."""
        arena = self.arenas.get(t.id)
        count = players if players is not None else (
            len(arena.players) if arena is not None else 0)
        return self.held.view(t, count, t.rounds)

    def _row(self, row: Standing, arena: Arena) -> p.StandingRow:
        waiting = arena.waiting(row.id, self.now())
        return p.StandingRow(rank=row.rank, player=self.held.who(row.id),
                             rating=round(row.rating), score=row.score, games=row.games,
                             sheet=list(row.sheet), on_fire=row.on_fire,
                             status=row.status.value, playing=row.playing,
                             status_reason=row.benched,  # type: ignore[arg-type]
                             no_shows=row.no_shows,
                             waiting=None if waiting is None else waiting[0],
                             rematch_in=None if waiting is None or waiting[1] is None
                             else round(waiting[1], 1))

    def push(self, tid: str) -> None:
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
        arena = self.arenas[tid]
        for row in arena.standings():
            self.outbox.to_players_encoded(
                [row.id], f'{head}"you":{self._row(row, arena).model_dump_json()},{tail}')

    # --- inside ----------------------------------------------------------------------------

    def _arena(self, tid: str) -> Arena:
        arena = self.arenas.get(tid)
        if arena is None:
            raise errors.UnknownTournament(f"there is no arena {tid!r} here")
        return arena

    async def _create(self, player: Player, message: p.CreateTournament) -> str:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        control = self.lobby.time_control(message.time_control)
        assert control is not None  # the message's time control is a name, never None
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
        await self.open(record)
        return tid

    async def open(self, record: TournamentRecord) -> None:
        """Pair the arena ``record`` made here (its lease held first, then stored): timers
        set, listed."""
        tid = record.id
        assert record.ends_at is not None
        self.held.epochs[tid] = await self.held.leases.hold_tournament(tid)
        self.arenas[tid] = Arena(tid, record.starts_at, record.ends_at, record.berserk,
                                 rematch_after=self.rematch_after)
        self.held.records[tid] = record
        await self.held.save_tournament(tid)
        self.set_timers(record)

    async def berserk(self, player: Player, room_id: str) -> None:
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
        await self.held.seating.berserk(player, room.id, room.game_id)
        try:
            async with self.held.lock(tid):  # after the room's lock: never both at once
                if tid in self.arenas and not arena.games[game_id].finished:
                    arena.berserk(player.id, game_id)
                    await self.held.save_pairing(tid, arena_pairing_record(arena, game_id))
        except Fenced:  # the stored game keeps the berserk: the new node scores it
            self.held.fenced(tid)

    async def _pause_elsewhere(self, tid: str, player_id: str) -> None:
        """One arena at a time: joining one pauses the player in the others it plays in
        (a game under way there is played out), so it is never paired twice at once."""
        for other, arena in list(self.arenas.items()):
            entered = arena.players.get(player_id)
            if other == tid or entered is None or entered.status.value != "active":
                continue
            try:
                async with self.held.lock(other):
                    arena.pause(player_id)
                    await self.held.save_entrant(other, entrant_record(arena, player_id,
                                                                       self.now()))
            except Fenced:
                self.held.fenced(other)  # paired by another node now: not paused there
                continue
            self.push(other)

    async def _pair(self, tid: str) -> None:
        """Start the games the arena pairs now (the caller holds the arena's lock)."""
        arena = self.arenas[tid]
        record = self.held.records[tid]
        for pairing in arena.pair(self.now()):
            first = self.held.player(pairing.first, pairing.first)
            second = self.held.player(pairing.second, pairing.second)
            now = self.now()
            try:
                room, _ = self.lobby.create(first, record.game, p.FriendOpponent(), 0, now,
                                            record.time_control)
                self.lobby.join(second, room.id, now)
            except errors.ProtocolError:
                log.exception("arena %s could not seat %s and %s", tid, first.id, second.id)
                arena.cancel(pairing.game_id, now)
                await self.held.save_pairing(tid, arena_pairing_record(arena,
                                                                       pairing.game_id))
                continue
            room.berserk_allowed = arena.berserk_allowed
            room.rated = record.rated
            game = arena.games[pairing.game_id]
            game.stored_as = room.game_id
            self.by_game[room.game_id] = (tid, pairing.game_id)
            try:
                await self.held.save_pairing(tid, arena_pairing_record(arena,
                                                                       pairing.game_id))
            except Fenced:
                self.lobby.close(room.id)  # never started: the new node pairs them again
                raise
            await self.held.start(room, first, second, now)
        due = arena.rematch_due()
        if due is not None:  # two who just met wait alone: pair them again then
            self.held.at(tid, max(0.0, due - self.now()) + TIMER_MARGIN_SECONDS, self._tick)

    async def _absent(self, record: GameRecord) -> str | None:
        """Who never made its move in an aborted game: the player to move when it was
        aborted, before both had moved, if its turn had lasted ``NO_SHOW_SECONDS`` (a
        quarter of the clock, if less): its flag fell or it stayed away. Not one whose
        opponent moved and left at once. None for another end."""
        if record.status != "aborted" or record.finished_at is None:
            return None
        stored = await self.store.load_game(record.id)
        moves = stored[1] if stored is not None else []
        if len(moves) >= 2:
            return None
        turn_began = moves[-1].created_at if moves else record.created_at
        quarter = (record.clock_initial_ms or 0) / 4000
        waited = min(NO_SHOW_SECONDS, quarter) if quarter else NO_SHOW_SECONDS
        return record.players[len(moves)] if record.finished_at - turn_began >= waited else None

    def _score(self, tid: str, game_id: str, record: GameRecord, absent: str | None) -> None:
        arena = self.arenas[tid]
        ended = record.finished_at if record.finished_at is not None else self.now()
        if record.status == "aborted" or record.result is None:
            arena.cancel(game_id, ended, absent)
        else:
            winner = None if record.result == 0 else (0 if record.result > 0 else 1)
            # The stored game says who went berserk, even if the arena missed it.
            arena.games[game_id].berserk.update(
                pid for seat, pid in enumerate(record.players)
                if seat in record.berserk and pid is not None)
            arena.finish(game_id, winner, ended)

    async def _maybe_finish(self, tid: str) -> None:
        arena = self.arenas[tid]
        record = self.held.records[tid]
        if record.status == "finished" or not arena.is_over(self.now()) or arena.under_way():
            return
        self.held.records[tid] = TournamentRecord(**{**record.__dict__, "status": "finished"})
        await self.held.save_tournament(tid)
        await self.held.leases.drop_tournament(tid)

    def set_timers(self, record: TournamentRecord) -> None:
        """Tick at the arena's start and at its end, those still to come."""
        now = self.now()
        for at in (record.starts_at, record.ends_at or record.starts_at):
            if at > now:
                self.held.at(record.id, at - now, self._tick)

    async def _tick(self, tid: str) -> None:
        """At the start (status running, first pairings) and at the end (finished once its
        last game ends)."""
        try:
            async with self.held.lock(tid):
                record = self.held.records.get(tid)
                if record is None:
                    return  # let go meanwhile
                if record.status == "upcoming" and self.now() >= record.starts_at:
                    self.held.records[tid] = TournamentRecord(**{**record.__dict__,
                                                                 "status": "running"})
                    await self.held.save_tournament(tid)
                await self._pair(tid)
                await self._maybe_finish(tid)
            self.push(tid)
        except Fenced:
            log.warning("arena %s is paired by another node now; letting it go", tid)
            self.held.fenced(tid)
        except Exception:
            log.exception("arena %s: timer failed", tid)
