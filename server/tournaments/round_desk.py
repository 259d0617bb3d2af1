"""Swiss and round-robin events as the tournament desk runs them: the glue between
``server.tournaments.rounds``, the rooms, the store and the sockets, for the kinds played
in rounds.

Why its own part: an event in rounds moves a round at a time, not a game at a time. Entries
are open until round 1 is paired (at ``starts_at``, or when its maker sends
``start_tournament``); each round's games are started as rooms (the first of a board in
seat 0); the next round is paired as soon as the last game of a round ends, and the event
ends after its last round. There is no pause and no berserk; the entrants get the standings
with their tie-breaks, each round's boards and the crosstable.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Callable

import games
from server import errors
from server import protocol as p
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.rooms import room_of
from server.storage.store import Fenced, GameRecord, Store, TournamentRecord
from server.tournaments import Entrant
from server.tournaments.held import HeldTournaments
from server.tournaments.records import (
    round_entrant_record,
    round_pairing_records,
    rounds_from_records,
)
from server.tournaments.rounds import RoundEvent
from server.tournaments.swiss import NoPairing
from server.tournaments.watchers import address

log = logging.getLogger("discus.tournaments")

RoundMessage = (p.CreateRoundTournament | p.StartTournament | p.JoinTournament
                | p.PauseTournament | p.WithdrawTournament | p.GetTournament)


class RoundEvents:
    """The Swiss and round-robin events held here (``HeldTournaments``): their messages,
    their rounds paired and started, their games' ends, their standings pushed."""

    def __init__(self, held: HeldTournaments, store: Store, outbox: Outbox, lobby: Lobby,
                 now: Callable[[], float]) -> None:
        self.held = held
        self.store = store
        self.outbox = outbox
        self.lobby = lobby
        self.now = now
        self.events: dict[str, RoundEvent] = {}
        """The Swiss and round-robin events upcoming or running, by id."""
        self.event_games: dict[str, tuple[str, int, str]] = {}
        """Stored game id -> (event, round, board's first), for the round games under way."""
        self.stored_as: dict[tuple[str, str], str] = {}
        """(event, pairing id) -> the stored game of that board."""

    async def handle(self, player: Player, message: RoundMessage) -> p.RoundTournamentMessage:
        if isinstance(message, p.CreateRoundTournament):
            tid = await self._create(player, message)
        else:
            tid = message.tournament
        event = self.events.get(tid)
        if event is None:
            raise errors.UnknownTournament(f"there is no tournament {tid!r} here")
        async with self.held.lock(tid):
            record = self.held.records[tid]
            now = self.now()
            if isinstance(message, p.JoinTournament):
                if record.status == "finished":
                    raise errors.TournamentClosed("the tournament is over", reason="over")
                rating = await self.held.rating(tid, player.id)
                entrant = Entrant(player.id, player.name, rating)
                event.enter(entrant)
                self.held.names[player.id] = player
                await self.held.save_entrant(tid, round_entrant_record(event, entrant, now))
            elif isinstance(message, p.WithdrawTournament):
                entrant = event.entrants.get(player.id) or Entrant(player.id, player.name, 0)
                event.withdraw(player.id)
                await self.held.save_entrant(tid, round_entrant_record(event, entrant, now))
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
            self.push(tid)
        return self.state(tid)

    async def _create(self, player: Player, message: p.CreateRoundTournament) -> str:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        if message.kind == "swiss" and message.rounds is None:
            raise errors.BadMessage("a Swiss needs a number of rounds", field="rounds")
        control = self.lobby.time_control(message.time_control)
        assert control is not None
        now = self.now()
        tid = "t" + secrets.token_hex(5)
        rounds = message.rounds if message.kind == "swiss" else None
        record = TournamentRecord(tid, message.kind, message.game, message.name, control.name,
                                  message.rated, player.id, now, now + message.starts_in, None,
                                  rounds)
        self.held.epochs[tid] = await self.held.leases.hold_tournament(tid)
        self.events[tid] = RoundEvent(tid, message.kind, rounds)
        self.held.records[tid] = record
        await self.held.save_tournament(tid)
        self.set_timer(record)
        return tid

    def state(self, tid: str) -> p.RoundTournamentMessage:
        event = self.events[tid]
        boards = event.boards[-1] if event.boards else []
        who = self.held.who
        return p.RoundTournamentMessage(
            tournament=self.view(self.held.records[tid]), round=len(event.boards),
            standings=[p.RoundStandingRow(
                rank=r.rank, player=who(r.id), rating=round(r.rating), score=r.score,
                buchholz=r.buchholz, sonneborn_berger=r.sonneborn_berger,
                withdrawn=r.withdrawn) for r in event.standings()],
            boards=[p.RoundBoardView(
                first=who(b.first),
                second=None if b.second is None else who(b.second), result=b.result,
                room=self._room_of(tid, f"r{b.round}-{b.first}")) for b in boards],
            crosstable=event.crosstable_csv())

    def view(self, t: TournamentRecord) -> p.TournamentView:
        """The event ``t`` as listed (one held here)."""
        event = self.events[t.id]
        return self.held.view(t, len(event.entrants), event.rounds)

    def _room_of(self, tid: str, pairing_id: str) -> str | None:
        stored = self.stored_as.get((tid, pairing_id))
        return None if stored is None else room_of(stored)[0]

    def push(self, tid: str) -> None:
        self.outbox.to_players([address(tid), *self.events[tid].entrants], self.state(tid))

    async def _next_round(self, tid: str) -> None:
        """Pair and start rounds until one has a game to play, or finish the event (the
        caller holds its lock)."""
        event = self.events[tid]
        while True:
            if event.over:
                await self._finish(tid)
                return
            try:
                boards = event.pair_next()
            except (NoPairing, errors.BadMessage, errors.TournamentClosed) as exc:
                log.info("tournament %s ends: %s", tid, exc)
                await self._finish(tid)
                return
            record = self.held.records[tid]
            if record.status == "upcoming":
                self.held.records[tid] = dataclasses.replace(record, status="running",
                                                             rounds=event.rounds)
                await self.held.save_tournament(tid)
            number = len(event.boards)
            for board in boards:
                await self._start_board(tid, number, board.first, board.second)
            await self._save_round(tid, number)
            if not event.over and all(b.result is not None for b in event.boards[-1]):
                continue  # only byes and forfeits: on to the next round
            if event.over:
                await self._finish(tid)
            return

    async def _start_board(self, tid: str, number: int, first_id: str,
                           second_id: str | None) -> None:
        assert second_id is not None
        event = self.events[tid]
        record = self.held.records[tid]
        first = self.held.player(first_id, event.entrants[first_id].name)
        second = self.held.player(second_id, event.entrants[second_id].name)
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
        await self.held.start(room, first, second, now)

    async def _save_round(self, tid: str, number: int) -> None:
        event = self.events[tid]
        now = self.now()
        for row in round_pairing_records(event, number, now, now):
            await self.held.save_pairing(tid, dataclasses.replace(
                row, game_id=self.stored_as.get((tid, row.pairing_id))))

    async def game_finished(self, record: GameRecord) -> None:
        """Score a finished round game; the next round paired if it was the round's last.
        Games of no event here are ignored."""
        found = self.event_games.pop(record.id, None)
        if found is None:
            return
        tid, number, first = found
        try:
            await self._score_game(tid, number, first, record)
        except Fenced:
            log.warning("tournament %s is paired by another node now; letting it go", tid)
            self.held.fenced(tid)

    async def _score_game(self, tid: str, number: int, first: str,
                          record: GameRecord) -> None:
        async with self.held.lock(tid):
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
        self.push(tid)

    async def _finish(self, tid: str) -> None:
        record = self.held.records[tid]
        if record.status != "finished":
            self.held.records[tid] = dataclasses.replace(record, status="finished",
                                                         rounds=self.events[tid].rounds)
            await self.held.save_tournament(tid)
            await self.held.leases.drop_tournament(tid)

    async def load(self, record: TournamentRecord) -> list[GameRecord]:
        """Build the event from its rows; its games under way that the store holds ended
        (to be scored)."""
        entrants = await self.store.tournament_entrants(record.id)
        pairings = await self.store.tournament_pairings(record.id)
        event = rounds_from_records(record, entrants, pairings)
        self.events[record.id] = event
        self.held.records[record.id] = record
        for entrant in entrants:
            self.held.names.setdefault(entrant.player_id, Player(entrant.player_id,
                                                                  entrant.name))
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

    def forget(self, tid: str) -> None:
        """Another node pairs the event now: dropped here."""
        self.events.pop(tid, None)
        for game_id in [g for g, found in self.event_games.items() if found[0] == tid]:
            del self.event_games[game_id]

    def set_timer(self, record: TournamentRecord) -> None:
        """Tick at the event's start."""
        self.held.at(record.id, max(0.0, record.starts_at - self.now()), self._tick)

    async def _tick(self, tid: str) -> None:
        """At the start: round 1 (or the end, with fewer than two entrants)."""
        try:
            async with self.held.lock(tid):
                if tid not in self.held.records or self.held.records[tid].status != "upcoming":
                    return
                await self._next_round(tid)
            self.push(tid)
        except Fenced:
            log.warning("tournament %s is paired by another node now; letting it go", tid)
            self.held.fenced(tid)
        except Exception:
            log.exception("tournament %s: start failed", tid)
