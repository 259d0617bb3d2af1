"""The engine ladder: the glue between ``server.ladder.rules``, the rooms, the store and
the sockets.

One standing ladder per game, made the first time something enters it. Bots enter
themselves over their token connection (``enter_ladder``); an admin may enter any bot and
any AI level. The ladder plays in rounds: every ``pace`` seconds, once the last round's games
are all over, the entrants present (for a bot: connected) are paired by
``ladder.next_games``, each with the one it has met least (were free entrants paired as soon
as free, two quick ones would meet again and again while slow games go on). Each pair goes
through the game's opening lines (``ai.calibrate.OPENINGS``: the lines the level calibration
plays), each line twice with the seats swapped. The opening's plies are played and stored
before either side moves; the game then goes on as any room's under the ladder's one time
control.

Any two entrants meet: bot against bot, bot against level, and level against level (a room
of two AI seats, ``Lobby.create_match``, whose moves the runner's AI turns find one after
the other as for any AI move, watched by anyone). The rating list is ``ladder.fit`` over
every finished game, anchored to the calibrated AI levels among the entrants; a game aborted
before a move does not count.

Kept in the database as a tournament of kind ``ladder`` (its entrants and its games as the
tournament's entrants and pairings): a restart keeps every entrant and result, and a game
that ended while the server was down is counted when it comes back. On a cluster one node
runs each game's ladder, as an arena (``server.tournaments.desk``): the node holding its lease
(``Leases``, the placement's) schedules its games and writes its rows under the lease's
epoch; ``enter_ladder``, ``leave_ladder`` and ``get_ladder`` sent to another node run there
(who may send them is checked where they arrive); a node taking the lease over brings the
ladder back from the store (``take_over``, the restart's path).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel

import games
from ai.calibrate import OPENINGS, opening_moves
from server import errors
from server import protocol as p
from server.bots.accounts import Accounts
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.ladder.rules import (
    LadderGame,
    LadderRating,
    RatingPoint,
    fit,
    head_to_head,
    history,
    next_games,
)
from server.play.lobby import Lobby
from server.play.outcome import Outcome
from server.play.rooms import Room, room_of
from server.play.seats import level_key
from server.ratings.glicko import Rating
from server.storage.store import (
    EntrantRecord,
    Fenced,
    GameRecord,
    PairingRecord,
    Store,
    TournamentRecord,
)

log = logging.getLogger("discus.ladder")

LEVEL_PREFIX = level_key("")
"""Entrant ids of AI levels: ``level:NAME``."""
LADDER_PREFIX = "ladder-"
"""A ladder's tournament id: ``ladder-GAME``."""


def ladder_id(game: str) -> str:
    return LADDER_PREFIX + game


class Leases(Protocol):
    """Which node runs each ladder (``server.play.placement``): this one, or another."""

    async def hold_tournament(self, tournament_id: str) -> int: ...

    async def tournament_forwarded(self, client: Client, player: Player, tournament_id: str,
                                   message: BaseModel) -> bool: ...

    def lost_tournament(self, tournament_id: str, epoch: int) -> None: ...

    async def start_tournaments(self, tournaments: Any) -> int: ...


class Seating(Protocol):
    """What starting a ladder game asks of the room runner."""

    async def start(self, room: Room, out: Outcome) -> None: ...


class Players(Protocol):
    """The player registry, read (``server.people.identity``)."""

    def get(self, player_id: str) -> Player | None: ...


class LevelRatings(Protocol):
    """The rating desk's levels: each level's rating and whether a calibration measured
    it."""

    async def level_ratings(self, game: str) -> dict[str, tuple[Rating, bool]]: ...


class BotNames(Protocol):
    """The bot desk's accounts (to enter a bot by name)."""

    accounts: Accounts | None


Message = p.EnterLadder | p.LeaveLadder | p.GetLadder


@dataclasses.dataclass
class Ladder:
    """One game's ladder as this node runs it."""

    record: TournamentRecord
    entrants: dict[str, EntrantRecord]
    games: list[PairingRecord]
    """Every game, in the order started (``result`` None while under way or aborted)."""

    def under_way(self) -> list[PairingRecord]:
        return [g for g in self.games if g.result is None and not g.forfeit
                and g.finished_at is None]

    def finished(self) -> list[LadderGame]:
        return [LadderGame(g.first, g.second or "", g.result) for g in self.games
                if g.result is not None]


class LadderDesk:
    """``enter_ladder``, ``leave_ladder``, ``get_ladder``; the schedule; the end of each
    ladder game (``game_finished``)."""

    def __init__(self, store: Store, outbox: Outbox, players: Players, lobby: Lobby,
                 seating: Seating, levels: LevelRatings, bots: BotNames,
                 online: Callable[[str], Awaitable[Any]], now: Callable[[], float],
                 time_control: str, pace_seconds: float, stopping: asyncio.Event,
                 leases: Leases, default_levels: dict[str, tuple[str, ...]] | None = None
                 ) -> None:
        self.store = store
        self.default_levels = default_levels
        """``Settings.ladder_levels``: the levels a ladder has entered from the start."""
        self.leases = leases
        self.epochs: dict[str, int] = {}
        """The epoch each game's ladder run here is held at (0 alone): its writes carry it."""
        self.outbox = outbox
        self.players = players
        self.lobby = lobby
        self.seating = seating
        self.levels = levels
        self.bots = bots
        self.online = online
        self.now = now
        self.time_control = time_control
        self.pace = pace_seconds
        self.stopping = stopping
        self.ladders: dict[str, Ladder] = {}
        self.by_game: dict[str, tuple[str, str]] = {}
        """Stored game id -> (ladder's game, pairing id), for the games under way."""
        self.openings: dict[str, str] = {}
        """Pairing id -> the opening its game started from (this node's memory only)."""
        self.engines: dict[tuple[str, str], p.EngineView] = {}
        """(game, bot's player id) -> the program the bot said plays for it when it last
        entered (``enter_ladder.engine``). Memory only, by design: no column of its own in
        the store; a bot says it again on each entry (the reference bot enters on every
        connect), so after a restart or a move of the ladder to another node the name is
        back with the bot's next entry."""
        self.lock = asyncio.Lock()
        self.ticker: asyncio.Task[None] | None = None

    # --- messages --------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player, message: Message) -> None:
        if message.game not in games.names():
            raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                     f"{', '.join(games.names())}")
        if not isinstance(message, p.GetLadder):
            await self._entrant(client, player, message.game, message.entrant)  # may it?
        if message.game not in self.ladders and await self.leases.tournament_forwarded(
                client, player, ladder_id(message.game), message):
            return
        self.outbox.send([client], await self._run(player, message))

    commands = p.LADDER_MESSAGES

    def pairs(self, tournament_id: str) -> bool:
        return tournament_id.startswith(LADDER_PREFIX)

    def plays(self, game_id: str) -> bool:
        """Whether ``game_id`` is a ladder game scheduled here (the engine's help is refused
        in it while it is played: ``server.reviews.live_positions``)."""
        return game_id in self.by_game

    async def run_forwarded(self, player: Player, message: BaseModel) -> str:
        """A ladder message from a player on another node, which checked who may send it:
        its answer, encoded."""
        assert isinstance(message, p.LADDER_MESSAGES)
        return p.encode(await self._run(player, message))

    async def _run(self, player: Player, message: Message) -> p.LadderMessage:
        """Enter, leave or show the ladder here (who may send it was checked where it was
        sent)."""
        if not isinstance(message, p.GetLadder):
            entrant_id, name = await self._entrant(None, player, message.game,
                                                   message.entrant)
            try:
                async with self.lock:
                    ladder = await self._ladder(message.game)
                    known = ladder.entrants.get(entrant_id)
                    if isinstance(message, p.EnterLadder):
                        if message.engine is not None and message.entrant is None:
                            self.engines[(message.game, entrant_id)] = message.engine
                        row = EntrantRecord(ladder.record.id, entrant_id, name, 0.0, "active",
                                            known.joined_at if known else self.now())
                    elif known is None:
                        raise errors.NotEntered(f"{name} is not on the {message.game} ladder")
                    else:
                        row = dataclasses.replace(known, status="withdrawn")
                    await self.store.save_entrant(row, epoch=self.epochs.get(message.game, 0))
                    ladder.entrants[entrant_id] = row
            except Fenced as exc:
                self._fenced(message.game)
                raise errors.InternalError("the ladder is run by another server now; send "
                                           "that again") from exc
        return await self.view(message.game)

    async def game_finished(self, record: GameRecord) -> None:
        """Count a finished ladder game (an aborted one not); others are ignored."""
        found = self.by_game.get(record.id)
        if found is None:
            return
        try:
            async with self.lock:
                await self._count(record)
        except Fenced:
            self._fenced(found[0])

    async def _count(self, record: GameRecord) -> None:
        """``game_finished``'s work (the caller holds the lock)."""
        found = self.by_game.pop(record.id, None)
        if found is None:
            return
        game, pairing_id = found
        ladder = self.ladders[game]
        for k, row in enumerate(ladder.games):
            if row.pairing_id != pairing_id:
                continue
            ended = record.finished_at if record.finished_at is not None else self.now()
            if record.status == "aborted" or record.result is None:
                done = dataclasses.replace(row, forfeit=True, finished_at=ended)
            else:
                score = 0.5 if record.result == 0 else (1.0 if record.result > 0 else 0.0)
                done = dataclasses.replace(row, result=score, finished_at=ended)
            ladder.games[k] = done
            await self.store.save_pairing(done, epoch=self.epochs.get(game, 0))

    async def restore(self) -> None:
        """Bring back the ladders this node is to run (alone: all; on a cluster: those no
        node holds), each through ``take_over``, and start the schedule. Call once at
        start-up, after the rooms' restore."""
        await self.leases.start_tournaments(self)
        self.ticker = asyncio.ensure_future(self._tick_forever())

    async def unfinished(self) -> list[str]:
        return [record.id for record in await self.store.list_tournaments(["running"],
                                                                         limit=1000)
                if record.kind == "ladder"]

    async def take_over(self, tournament_id: str, epoch: int) -> bool:
        """Run the ladder here from the store (at start-up, or after the node running it
        died), fenced at ``epoch`` first; its games that ended meanwhile are counted. False
        if the store has no such ladder."""
        async with self.lock:
            return await self._load(tournament_id, epoch)

    async def _load(self, tournament_id: str, epoch: int) -> bool:
        """``take_over``'s work (the caller holds the lock)."""
        await self.store.fence_tournament(tournament_id, epoch)
        record = await self.store.load_tournament(tournament_id)
        if record is None or record.kind != "ladder":
            return False
        entrants = await self.store.tournament_entrants(record.id)
        pairings = await self.store.tournament_pairings(record.id)
        ladder = Ladder(record, {e.player_id: e for e in entrants}, list(pairings))
        self.ladders[record.game] = ladder
        self.epochs[record.game] = epoch
        await self._enter_default_levels(ladder)
        for row in ladder.under_way():
            if row.game_id is None:
                continue
            self.by_game[row.game_id] = (record.game, row.pairing_id)
            stored = await self.store.load_game(row.game_id)
            if stored is not None and stored[0].status in ("finished", "aborted"):
                await self._count(stored[0])
        return True

    def let_go(self, tournament_id: str) -> None:
        """Another node runs the ladder now: forget it here, writing nothing."""
        game = tournament_id.removeprefix(LADDER_PREFIX)
        self.ladders.pop(game, None)
        self.epochs.pop(game, None)
        for game_id in [g for g, (of, _) in self.by_game.items() if of == game]:
            del self.by_game[game_id]

    def _fenced(self, game: str) -> None:
        """A write of the ladder was refused: another node runs it now."""
        self.leases.lost_tournament(ladder_id(game), self.epochs.get(game, 0))
        self.let_go(ladder_id(game))

    async def close(self, timeout: float) -> None:
        """Once ``stopping`` is set: let a schedule under way finish (it writes to the
        store: never cancelled there), cancelled only past ``timeout``."""
        if self.ticker is not None:
            await asyncio.wait([self.ticker], timeout=timeout)
            self.ticker.cancel()
            self.ticker = None

    # --- views -----------------------------------------------------------------------------

    async def view(self, game: str) -> p.LadderMessage:
        ladder = self.ladders.get(game)
        entrants = list(ladder.entrants.values()) if ladder is not None else self._unmade(game)
        played = ladder.finished() if ladder is not None else []
        under_way = ladder.under_way() if ladder is not None else []
        busy = {pid for g in under_way for pid in (g.first, g.second or "")}
        anchors = await self._anchors(game)
        ids = [e.player_id for e in entrants]
        try:
            rated = {r.id: r for r in fit(ids, played, anchors)}
        except (ValueError, ZeroDivisionError):  # no calibrated level has played: scores only
            rated = {}
        rows = []
        for e in entrants:
            r = rated.get(e.player_id)
            mine = [g for g in played if e.player_id in (g.first, g.second)]
            score = sum(g.score if g.first == e.player_id else 1 - g.score for g in mine)
            level = e.player_id.removeprefix(LEVEL_PREFIX) \
                if e.player_id.startswith(LEVEL_PREFIX) else None
            rows.append(p.LadderRow(
                id=e.player_id, name=e.name, level=level,
                player=None if level is not None else self._who(e.player_id, e.name),
                rating=None if r is None or r.rating is None else round(r.rating),
                error=None if r is None or r.error is None else round(r.error),
                games=len(mine), score=score, anchored=e.player_id in anchors,
                active=e.status == "active", playing=e.player_id in busy,
                engine=self.engines.get((game, e.player_id)),
                waits_for=_waits_for(e, r, entrants, anchors)))
        rows.sort(key=lambda r: (r.rating is None, -(r.rating or 0), -r.score, r.id))
        return p.LadderMessage(
            game=game, time_control=self.time_control, pace_seconds=self.pace,
            openings=list(OPENINGS[game]), entrants=rows,
            games=[p.LadderGameView(room=room_of(g.game_id)[0], first=g.first,
                                    second=g.second or "",
                                    opening=self.openings.get(g.pairing_id, ""))
                   for g in under_way if g.game_id is not None],
            played=len(played), **_record(ladder, ids, anchors))

    def _who(self, player_id: str, name: str) -> p.PlayerView:
        known = self.players.get(player_id) or Player(player_id, name, bot=True)
        return known.view()

    async def _anchors(self, game: str) -> dict[str, float]:
        measured = await self.levels.level_ratings(game)
        return {level_key(name): rating.rating
                for name, (rating, calibrated) in measured.items() if calibrated}

    # --- inside ----------------------------------------------------------------------------

    async def _entrant(self, client: Client | None, player: Player, game: str,
                       named: str | None) -> tuple[str, str]:
        """Who an enter or leave is about: the sending bot, or (an admin's) a named bot or
        level. ``forbidden`` for anyone else (``client`` None: checked where it was sent)."""
        if named is None:
            if not player.bot:
                raise errors.Forbidden("only a bot enters the ladder itself (an admin may "
                                       "enter a bot or an AI level by name)")
            return player.id, player.name
        if client is not None and client.admin is None:
            raise errors.Forbidden("only an admin enters another bot or an AI level")
        level = named.removeprefix(LEVEL_PREFIX)
        if level in self.lobby.levels.get(game, ()):
            return level_key(level), level
        accounts = self.bots.accounts
        if accounts is not None:
            for bot in await accounts.list_bots():
                if not bot.revoked and named in (bot.name, bot.player_id):
                    return bot.player_id, bot.name
        raise errors.UnknownPlayer(f"no bot or {game} AI level is called {named!r}")

    async def _ladder(self, game: str) -> Ladder:
        """The game's ladder, run here from now on if no node ran it (the caller holds the
        lock): the one the store has, or a new one."""
        ladder = self.ladders.get(game)
        if ladder is None:
            epoch = await self.leases.hold_tournament(ladder_id(game))
            if await self._load(ladder_id(game), epoch):
                return self.ladders[game]
            now = self.now()
            record = TournamentRecord(ladder_id(game), "ladder", game, f"{game} ladder",
                                      self.time_control, True, None, now, now,
                                      status="running")
            self.epochs[game] = epoch
            await self.store.save_tournament(record, epoch=epoch)
            ladder = self.ladders[game] = Ladder(record, {}, [])
            await self._enter_default_levels(ladder)
        return ladder

    def levels_by_default(self, game: str) -> tuple[str, ...]:
        """The AI levels of ``game`` its ladder has entered from the start
        (``Settings.ladder_levels``; by default the weakest level alone), those it knows."""
        known = list(self.lobby.levels.get(game, ()))
        if self.default_levels is None:
            return tuple(known[:1])
        return tuple(name for name in self.default_levels.get(game, ()) if name in known)

    def _unmade(self, game: str) -> list[EntrantRecord]:
        """The entrants a ladder not made yet starts with (its default levels), as its list
        shows them meanwhile: what a bot entering will meet, what an admin may take off."""
        return [EntrantRecord(ladder_id(game), level_key(name), name, 0.0, "active", 0.0)
                for name in self.levels_by_default(game)]

    async def _enter_default_levels(self, ladder: Ladder) -> None:
        """Enter the game's default levels in a ladder that never had a level (just made,
        or stored before levels were entered by default), so a bot's first games rate it
        with no admin's help; a ladder an admin has given or taken a level is left as it
        is. The caller holds the lock."""
        if any(pid.startswith(LEVEL_PREFIX) for pid in ladder.entrants):
            return
        game = ladder.record.game
        for name in self.levels_by_default(game):
            row = EntrantRecord(ladder.record.id, level_key(name), name, 0.0, "active",
                                self.now())
            await self.store.save_entrant(row, epoch=self.epochs.get(game, 0))
            ladder.entrants[row.player_id] = row

    async def _tick_forever(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.pace)
                return
            for game in list(self.ladders):
                try:
                    async with self.lock:
                        if game in self.ladders:
                            await self._schedule(game)
                except Fenced:
                    log.warning("the %s ladder is run by another node now", game)
                    self._fenced(game)
                except Exception:
                    log.exception("the ladder's schedule failed")

    async def _schedule(self, game: str) -> None:
        """Start the games ``next_games`` pairs among the free entrants (the caller holds
        the lock)."""
        ladder = self.ladders[game]
        for row in ladder.under_way():
            if row.game_id is not None and room_of(row.game_id)[0] not in self.lobby.rooms:
                await self._gone(ladder, row)
        if ladder.under_way():
            return  # in rounds: a fast pair must not meet again and again while others play
        busy: set[str] = set()
        active = [e.player_id for e in sorted(ladder.entrants.values(),
                                              key=lambda e: (e.joined_at, e.player_id))
                  if e.status == "active"]
        for pid in active:
            if not pid.startswith(LEVEL_PREFIX) and not await self.online(pid):
                busy.add(pid)
        played = [LadderGame(g.first, g.second or "", 0.5) for g in ladder.games
                  if not g.forfeit]
        for made in next_games(active, played, OPENINGS[game], busy):
            await self._start(ladder, made.first, made.second, made.opening)

    async def _gone(self, ladder: Ladder, row: PairingRecord) -> None:
        """A game whose room closed unseen (the caller holds the lock): counted as stored
        if it finished, else dropped, so the next round is not held up."""
        assert row.game_id is not None
        stored = await self.store.load_game(row.game_id)
        if stored is not None and stored[0].status in ("finished", "aborted"):
            await self._count(stored[0])
            return
        self.by_game.pop(row.game_id, None)
        dropped = dataclasses.replace(row, forfeit=True, finished_at=self.now())
        ladder.games[ladder.games.index(row)] = dropped
        await self.store.save_pairing(dropped, epoch=self.epochs.get(ladder.record.game, 0))

    async def _start(self, ladder: Ladder, first_id: str, second_id: str,
                     opening: str) -> None:
        game = ladder.record.game
        now = self.now()
        seats = [first_id, second_id]
        levels = [pid.removeprefix(LEVEL_PREFIX) for pid in seats
                  if pid.startswith(LEVEL_PREFIX)]
        bots = [self.players.get(pid) or Player(pid, ladder.entrants[pid].name, bot=True)
                for pid in seats if not pid.startswith(LEVEL_PREFIX)]
        try:
            if len(levels) == 2:
                room, made = self.lobby.create_match(game, (levels[0], levels[1]), now,
                                                     self.time_control)
            elif levels:
                mine = 0 if seats[0] == bots[0].id else 1
                room, made = self.lobby.create(bots[0], game, p.AiOpponent(level=levels[0]),
                                               mine, now, self.time_control)
            else:
                room, made = self.lobby.create(bots[0], game, p.FriendOpponent(), 0, now,
                                               self.time_control)
                try:
                    self.lobby.join(bots[1], room.id, now)
                except errors.ProtocolError:
                    self.lobby.close(room.id)
                    raise
        except errors.ProtocolError as exc:
            log.info("ladder %s could not seat %s and %s: %s", game, first_id, second_id, exc)
            return
        records, after = room.play_opening(opening_moves(room.game, opening), now)
        await self.store.save_game(room.record())
        for record in records:
            await self.store.append_move(record)
        row = PairingRecord(ladder.record.id, f"g{len(ladder.games) + 1}", len(ladder.games),
                            0, first_id, second_id, now, room.game_id)
        ladder.games.append(row)
        self.openings[row.pairing_id] = opening
        self.by_game[room.game_id] = (game, row.pairing_id)
        await self.store.save_pairing(row, epoch=self.epochs.get(game, 0))
        out = Outcome(sends=[room.state_for(b.id) for b in bots], save_game=True,
                      ai=after.ai if records else made.ai)
        for bot in bots:
            if not await self.online(bot.id):
                out.extend(room.disconnect(bot.id, now))
        await self.seating.start(room, out)


def _waits_for(entrant: EntrantRecord, rated: LadderRating | None,
               entrants: list[EntrantRecord], anchors: dict[str, float]
               ) -> Literal["level", "game"] | None:
    """What an unrated bot waits for (``LadderRow.waits_for``): a level of calibrated
    strength on the ladder, or a game that links it to one. None when rated, or a level."""
    if entrant.player_id.startswith(LEVEL_PREFIX) or (rated is not None
                                                      and rated.rating is not None):
        return None
    if not any(e.player_id in anchors and e.status == "active" for e in entrants):
        return "level"
    return "game"


RESULTS_SHOWN = 100
"""Finished games listed in ``ladder.results``, newest first."""


def _record(ladder: Ladder | None, ids: list[str], anchors: dict[str, float]
            ) -> dict[str, Any]:
    """The ladder's past for its page: the rating list over time (refitted over the games
    in the order they finished), the head-to-head scores and the latest results."""
    if ladder is None:
        return {}
    done = sorted((g for g in ladder.games if g.result is not None),
                  key=lambda g: (g.finished_at or g.started_at, g.seq))
    games = [LadderGame(g.first, g.second or "", g.result) for g in done
             if g.result is not None]
    timed = [(g.finished_at or g.started_at, game) for g, game in zip(done, games, strict=True)]
    return {
        "history": [p.LadderPoint(played=point.played, at=point.at,
                                  ratings={k: round(v) for k, v in point.ratings.items()})
                    for point in _history(tuple(ids), tuple(timed),
                                          tuple(sorted(anchors.items())))],
        "pairs": [p.LadderPair(a=h.a, b=h.b, wins=h.wins, draws=h.draws, losses=h.losses)
                  for h in head_to_head(games)],
        "results": [p.LadderResult(game_id=g.game_id, first=g.first, second=g.second or "",
                                   result=g.result, finished_at=g.finished_at)
                    for g in reversed(done[-RESULTS_SHOWN:]) if g.result is not None],
    }


@functools.lru_cache(maxsize=4)
def _history(ids: tuple[str, ...], games: tuple[tuple[float, LadderGame], ...],
             anchors: tuple[tuple[str, float], ...]) -> list[RatingPoint]:
    """``history``, kept for the last few asks: every ``get_ladder`` between two finished
    games would otherwise refit the whole past thirty times."""
    return history(ids, games, dict(anchors))
