"""The tournament desk: the one door of tournaments, for the sockets, the room runner and
the cluster, whatever the tournament's kind.

Why one door: the handler table, the runner's ``on_finish`` and the placement see one desk,
and a tournament's id says nothing of its kind. Here each message and each finished game is
routed to the part that runs its kind: arenas (``server.tournaments.arena_desk``), Swiss and
round-robin events (``server.tournaments.round_desk``), admins' recurring arenas
(``server.tournaments.schedule_desk``); who watches a page is ``server.tournaments.watchers``'s.
What the kinds hold alike (records, epochs, locks, timers) is ``server.tournaments.held``'s.
The list of tournaments, and where each is paired, are the desk's own.

On a cluster one node pairs each tournament at a time, as one node runs each room: it holds
the tournament's lease (``Leases``, the placement's), writes its rows under the lease's
epoch, so the store refuses them once another node has taken it over, and starts its games
as rooms of its own. Messages about it from players on other nodes are run on that node
(``run_forwarded``), and its standings reach them through the outbox's publish. When its
node dies, the node that takes the lease over brings the tournament back from the store
(``take_over``, the restart's path) and scores the games that ended meanwhile; a game run by
another node is scored when that node stores its end (``sweep``). A restart rebuilds the
tournaments that were upcoming or running the same way (``restore``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from server import errors
from server import protocol as p
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.rooms import room_of
from server.storage.store import Fenced, GameRecord, Store, TournamentRecord
from server.tournaments.arena import REMATCH_AFTER_SECONDS
from server.tournaments.arena_desk import Arenas
from server.tournaments.held import (
    DEFAULT_RATING,
    HeldTournaments,
    Leases,
    Players,
    Seating,
    SeatRatings,
    official,
)
from server.tournaments.makers import Makers
from server.tournaments.round_desk import RoundEvents
from server.tournaments.schedule_desk import ArenaSchedules
from server.tournaments.watchers import Watchers

Message = (p.CreateTournament | p.JoinTournament | p.PauseTournament | p.WithdrawTournament
           | p.GetTournament | p.ListTournaments | p.CreateRoundTournament | p.StartTournament)
Incoming = (Message | p.Berserk | p.UnwatchTournament | p.AdminCreateSchedule | p.AdminListSchedules
            | p.AdminDeleteSchedule)
ROUND_MESSAGES = (p.CreateRoundTournament, p.StartTournament)
SCHEDULE_MESSAGES = (p.AdminCreateSchedule, p.AdminListSchedules, p.AdminDeleteSchedule)
KINDS = ("arena", "swiss", "roundrobin")
"""The kinds of tournament this desk pairs (the ladder desk pairs the ladders)."""
LIST_PAGE = 50
"""Tournaments in one page of ``list_tournaments``."""
LIVE_LISTED = 2000
"""Upcoming and running tournaments the list reads (the limits on their makers keep them
far fewer)."""
FINISHED_LISTED = 20
"""Finished tournaments listed after the live ones: the most recently started."""


class TournamentDesk:
    """The tournament messages, and the end of each tournament game (``game_finished``)."""

    def __init__(self, store: Store, outbox: Outbox, players: Players, lobby: Lobby,
                 seating: Seating, ratings: SeatRatings, online: Callable[[str], Awaitable[Any]],
                 now: Callable[[], float], leases: Leases, watchers: Watchers,
                 push_seconds: float = 0.0, schedule_lead: float = 3600.0,
                 rematch_after: float = REMATCH_AFTER_SECONDS) -> None:
        self.store = store
        self.outbox = outbox
        self.lobby = lobby
        self.leases = leases
        self.watchers = watchers
        """The connections here that watch a tournament's page (``get_tournament``)."""
        self.held = HeldTournaments(store, players, lobby, seating, ratings, online, now,
                                    leases, self.let_go)
        self.arenas = Arenas(self.held, store, outbox, lobby, now, push_seconds, rematch_after)
        self.rounds = RoundEvents(self.held, store, outbox, lobby, now)
        self.schedules = ArenaSchedules(store, lobby, self.arenas.open, now, schedule_lead)
        """Admins' recurring arenas, made here ahead of time."""
        self.page = LIST_PAGE
        """Tournaments in one page of ``list_tournaments``."""
        self.makers = Makers(store, self._live)
        """Who may make and enter tournaments, and how many one maker may have."""

    # --- messages --------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player, message: Incoming) -> None:
        if isinstance(message, p.Berserk):
            await self.arenas.berserk(player, message.room)
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
            self.outbox.send([client], await self._list(player, message.offset))
            return
        if isinstance(message, p.CreateTournament | p.CreateRoundTournament):
            source = source_of(client)
            async with self.makers.making:
                await self.makers.check_maker(player.id, source)
                made = await self.answer(player, message)
                self.makers.made(source, made.tournament.id)
            self.outbox.send([client], made)
            return
        if (isinstance(message, p.TOURNAMENT_COMMANDS)
                and message.tournament not in self.held.records
                and await self.leases.tournament_forwarded(client, player, message.tournament,
                                                           message)):
            return
        self.outbox.send([client], await self.answer(player, message))

    commands = p.TOURNAMENT_COMMANDS

    def pairs(self, tournament_id: str) -> bool:
        """Every tournament the ladder desk does not pair (it is asked first)."""
        return True

    def plays(self, game_id: str) -> bool:
        """Whether ``game_id`` is a game of a tournament paired here (the engine's help is
        refused in it while it is played: ``server.reviews.live_positions``)."""
        return game_id in self.arenas.by_game or game_id in self.rounds.event_games

    async def run_forwarded(self, player: Player, message: BaseModel) -> str:
        """A message about a tournament paired here, from a player connected to another
        node: its answer, encoded (the other node writes it to the client)."""
        assert isinstance(message, p.TOURNAMENT_COMMANDS)
        return p.encode(await self.answer(player, message))

    async def answer(self, player: Player, message: Message
                     ) -> p.TournamentMessage | p.RoundTournamentMessage:
        """Run a tournament message here, by the part of its kind; what the sender is
        answered. Its rows written under a lease another node has taken over: the
        tournament is let go here and the sender is asked to send again (the new node will
        run it)."""
        assert not isinstance(message, p.ListTournaments)
        if not isinstance(message, p.CreateTournament | p.CreateRoundTournament):
            await self._find(message.tournament)
            if isinstance(message, p.JoinTournament) and message.tournament in self.held.records:
                await self.makers.check_entrant(player.id)  # before anything changes
        try:
            if isinstance(message, p.CreateTournament):
                return await self.arenas.handle(player, message)
            if isinstance(message, ROUND_MESSAGES) or message.tournament in self.rounds.events:
                return await self.rounds.handle(player, message)
            return await self.arenas.handle(player, message)
        except Fenced as exc:
            tid = getattr(message, "tournament", None)
            if tid is not None:
                self.held.fenced(tid)
            raise errors.InternalError("this tournament is paired by another server now; "
                                       "send that again") from exc

    async def _list(self, player: Player, offset: int) -> p.Tournaments:
        """A page of the lobby's list, from ``offset``: those upcoming and running, the
        admins' and scheduled ones first (soonest first), then those ``player`` may join,
        then the rest, each by entrants (most first) then soonest; then the lately
        finished, newest first. So a flood of empty tournaments sinks to the bottom."""
        live = [t for t in await self.store.list_tournaments(["upcoming", "running"],
                                                             limit=LIVE_LISTED)
                if not t.private and t.kind in KINDS]
        done = await self.store.list_tournaments(["finished"], limit=500)
        done = [t for t in sorted(done, key=lambda t: -t.starts_at)
                if not t.private and t.kind in KINDS][:FINISHED_LISTED]
        shown: dict[str, p.TournamentView] = {}
        for t in [*live, *done]:
            count = None if t.id in self.held.records else len(  # paired by another node,
                await self.store.tournament_entrants(t.id))         # or finished
            shown[t.id] = self._view(t, count)
        joinable = await self._joinable(player, live)
        live.sort(key=lambda t: (0, 0, t.starts_at, t.id) if official(t) else (
            1 if t.id in joinable else 2, -shown[t.id].players, t.starts_at, t.id))
        ordered = [shown[t.id] for t in [*live, *done]]
        end = offset + self.page
        return p.Tournaments(tournaments=ordered[offset:end],
                             next_offset=end if end < len(ordered) else None)

    async def _joinable(self, player: Player, live: list[TournamentRecord]) -> set[str]:
        """The tournaments of ``live`` that ``player`` may join now: none for a guest; an
        arena not over whose entry conditions it meets, a Swiss or round-robin not started."""
        stored = await self.store.load_player(player.id)
        if stored is None or stored.kind not in ("account", "bot"):
            return set()
        mine = {r.game: r for r in await self.store.ratings_of(player.id)}
        now = self.held.now()
        found = set()
        for t in live:
            if t.kind != "arena":
                if t.status == "upcoming":
                    found.add(t.id)
                continue
            rated = mine.get(t.game)
            rating = rated.rating if rated is not None else DEFAULT_RATING
            if ((t.ends_at or t.starts_at) > now
                    and (t.min_rating is None or rating >= t.min_rating)
                    and (t.max_rating is None or rating <= t.max_rating)
                    and (rated.games if rated is not None else 0) >= (t.min_games or 0)):
                found.add(t.id)
        return found

    def _live(self, tid: str) -> bool:
        """Whether the tournament ``tid`` is held here and not over."""
        record = self.held.records.get(tid)
        return record is not None and record.status != "finished"

    def _view(self, t: TournamentRecord, players: int | None) -> p.TournamentView:
        """``t`` as listed: ``players`` entrants, counted in the store if not held here."""
        if t.id in self.rounds.events:
            return self.rounds.view(t)
        return self.arenas.view(t, players)

    async def game_finished(self, record: GameRecord) -> None:
        """Score a finished tournament game, pair its players again, push the standings.
        Games of no tournament are ignored."""
        if record.id in self.rounds.event_games:
            await self.rounds.game_finished(record)
            return
        await self.arenas.game_finished(record)

    # --- where each tournament is paired ---------------------------------------------------

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
                if record.kind in KINDS]

    async def take_over(self, tid: str, epoch: int) -> bool:
        """Pair the tournament here from the store (at start-up, or after the node that
        paired it died): fenced at ``epoch`` first, so the former node can write no more,
        then read; its games that ended meanwhile are scored, its timers set, its standings
        pushed. False if it is over."""
        async with self.held.lock(tid):
            await self.store.fence_tournament(tid, epoch)
            record = await self.store.load_tournament(tid)
            if record is None or record.status == "finished" or record.kind not in KINDS:
                return False
            self.held.epochs[tid] = epoch
            ended = await self._load(record)
            if record.kind == "arena":
                self.arenas.set_timers(record)
            elif record.status == "upcoming":
                self.rounds.set_timer(record)
        for game in ended:
            await self.game_finished(game)
        if tid in self.arenas.arenas:
            self.arenas.push(tid)
        elif tid in self.rounds.events:
            self.rounds.push(tid)
        return True

    def let_go(self, tid: str) -> None:
        """Another node pairs the tournament now: forget it here, its timers stopped,
        writing nothing."""
        self.held.forget(tid)
        self.arenas.forget(tid)
        self.rounds.forget(tid)

    async def sweep(self) -> None:
        """Score the games of the tournaments paired here that ended on another node (a
        room taken over by a node that does not pair its tournament): what that node
        stored says. Every few seconds (``Server.sweep_forever``); alone, nothing to do."""
        elsewhere = [game_id for game_id in [*self.arenas.by_game, *self.rounds.event_games]
                     if room_of(game_id)[0] not in self.lobby.rooms]
        for game_id in elsewhere:
            stored = await self.store.load_game(game_id)
            if stored is not None and stored[0].status in ("finished", "aborted"):
                await self.game_finished(stored[0])

    async def _find(self, tid: str) -> None:
        """Wait while the tournament is being taken over here; a finished one another node
        paired is read from the store (to be shown, never paired)."""
        if tid in self.held.records:
            return
        async with self.held.lock(tid):
            if tid in self.held.records:
                return
            record = await self.store.load_tournament(tid)
            if record is not None and record.status == "finished":
                await self._load(record)

    async def _load(self, record: TournamentRecord) -> list[GameRecord]:
        """Build the tournament from its rows, by its kind; its games under way that the
        store holds ended (to be scored)."""
        if record.kind in ("swiss", "roundrobin"):
            return await self.rounds.load(record)
        return await self.arenas.load(record)

    def close(self) -> None:
        self.schedules.close()
        self.held.close()
        self.arenas.close()
