"""The room runner: the one actor that runs every room's commands over the sans-I/O rooms.

Why one place: a room's order of events is its truth. Every command — a person's, a
forwarded one, the AI's answer, a clock's flag, a forced pass, a sweep, a restore — runs under
the room's lock, writes the store first and announces after (``carry``), so nobody ever hears
of a move that is not durable, and a restarted or taken-over room replays to the same state.
``server.play.rooms`` decides what happens; this module does the I/O around it (but for the
AI's search and its storing, ``server.play.ai_turns``, whose moves it carries like any other).

Fencing: each instance of a room writes with the epoch it was created, loaded or taken over
under (``Room.epoch``). An instance that lost its lease is dropped from the lobby with its
timers, and its work still in flight (an AI search) finds itself stale and neither writes nor
announces.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from server import errors
from server import protocol as p
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.engines import Pool
from server.engines.live_levels import LiveLevels
from server.play.ai_turns import AiTurns
from server.play.lobby import Lobby
from server.play.locks import RoomLocks
from server.play.outcome import AiTurn, Outcome, PlannedMove
from server.play.placement import Placement
from server.play.rooms import Room, game_id_of
from server.settings import FLAG_MARGIN_SECONDS, Settings
from server.storage.store import (
    DuplicateMove,
    Fenced,
    GameRecord,
    MoveRecord,
    PlayerRecord,
    Store,
    replace,
)
from server.turns import in_turns

log = logging.getLogger("discus.runner")


class RoomMoved(errors.InternalError):
    """This node's instance of the room was stale (another node took it over, or the store
    refused its write): the command changed nothing, and the one who sent it may send it on
    to the room's real owner once (the gateway does) rather than tell the person to. Its
    ``detail.moved`` says so to a node that forwarded the command here."""

    def __init__(self, room_id: str) -> None:
        super().__init__(f"room {room_id} is run by another server now; send that again",
                         moved=True)


class Ratings(Protocol):
    """The rating desk, as rooms need it."""

    async def seat_ratings(self, game: str, player_ids: Iterable[str],
                           level: str | None = None) -> dict[str, p.SeatRating | None]: ...

    async def rate(self, room_id: str, record: GameRecord) -> Any: ...


class BotRules(Protocol):
    """The bot desk's limits on what a bot may do in rooms."""

    async def check_games(self, player: Player) -> None: ...

    async def check_command(self, player: Player, message: Any, room: Room) -> None: ...


class People(Protocol):
    """The player registry (``server.people.identity``): read, and told of stored players."""

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]: ...

    def remember(self, player: Player, replace: bool = False) -> Player: ...

    async def unsaved(self, player_ids: Iterable[str | None]) -> list[PlayerRecord]: ...

    def kept(self, rows: Iterable[PlayerRecord]) -> None: ...


class RoomRunner:
    """Runs the rooms of this node. ``stopping`` is the server's shutdown flag."""

    def __init__(self, store: Store, lobby: Lobby, outbox: Outbox, placement: Placement,
                 people: People, ratings: Ratings, bots: BotRules, levels: LiveLevels,
                 pool: Pool | None, settings: Settings, stopping: asyncio.Event,
                 locks: RoomLocks, now: Callable[[], float] = time.time) -> None:
        self.store = store
        self.lobby = lobby
        self.outbox = outbox
        self.placement = placement
        self.people = people
        self.ratings = ratings
        self.bots = bots
        self.stopping = stopping
        self.now = now
        """Wall-clock seconds: rooms write these times into stored games and moves, which
        outlive the process (history dates, GGF ``DT``, restored games' grace periods)."""
        self.lock = locks
        self.tasks: set[asyncio.Task[None]] = set()
        """AI moves and flag checks under way."""
        self.flag_timers: dict[str, asyncio.TimerHandle] = {}
        """Per timed room, the timer that checks its flag when the running clock runs out."""
        self.on_finish: list[Callable[[GameRecord], Awaitable[None]]] = []
        """Told of each game this node finished (stored, announced and rated): a
        tournament scores it and pairs its players again."""
        self.ai_turns = AiTurns(self, store, outbox, pool, levels, settings, stopping, locks,
                                now)
        """The AI's moves (``server.play.ai_turns``), started when an outcome asks."""

    # --- commands ------------------------------------------------------------------------------

    async def create(self, player: Player, message: p.CreateRoom, source: str = "") -> None:
        """A new room of ``player``'s, made from the address ``source`` (for the open
        list's per-address share)."""
        await self.bots.check_games(player)
        await self.placement.check_room_limit(player.id)
        level = message.opponent.level if isinstance(message.opponent, p.AiOpponent) else None
        ratings = await self.ratings.seat_ratings(message.game, [player.id], level)
        room, out = self.lobby.create(player, message.game, message.opponent, message.seat,
                                      self.now(), message.time_control, ratings)
        room.source = source
        async with self.lock(room.id):
            await self.carry(room, out)

    async def start(self, room: Room, out: Outcome) -> None:
        """Run a room made outside a command (an accepted challenge): its seats' ratings
        looked up, then ``out`` carried."""
        await self.show_ratings(room)
        async with self.lock(room.id):
            await self.carry(room, out)

    async def command(self, player: Player, message: p.RoomCommand) -> None:
        """Run one room command of ``player`` here (the caller checked it is not another
        node's room)."""
        if self.stopping.is_set():
            raise errors.InternalError("this server is stopping; reconnect and send that again")
        await self.placement.settled(message.room)
        room_id = self.lobby.room(message.room).id  # unknown_room before waiting for any lock
        async with self.lock(room_id):
            room = self.lobby.room(room_id)  # it may have closed while we waited
            now = self.now()
            flagged = room.check_flag(now)  # a move after the flag fell comes too late
            if flagged.sends:
                await self.carry(room, flagged)
            back = room.present(player.id, now)  # before its answer, which it then hears
            if back.sends:
                await self.carry(room, back)
            await self.bots.check_command(player, message, room)
            out = await self._run(room, player, message, now)
            await self.carry(room, out)
        if room_id not in self.lobby.rooms:
            self.lock.drop(room_id)

    async def berserk(self, player: Player, room_id: str, game_id: str) -> None:
        """``player`` halves its own clock in ``room_id``'s game ``game_id`` (an arena's:
        the tournament desk checked that it may), under the room's lock like any room
        command: stored, then announced, the flag timer following the new time."""
        if self.stopping.is_set():
            raise errors.InternalError("this server is stopping; reconnect and send that again")
        room_id = self.lobby.room(room_id).id
        async with self.lock(room_id):
            room = self.lobby.room(room_id)
            now = self.now()
            flagged = room.check_flag(now)  # a flag that fell first ends the game first
            if flagged.sends:
                await self.carry(room, flagged)
            await self.carry(room, room.berserk(player.id, game_id, now))

    async def _run(self, room: Room, player: Player, message: p.RoomCommand,
                   now: float) -> Outcome:
        if isinstance(message, p.Move):
            try:
                plan = room.check_move(player.id, message.ply, message.move, now)
            except (errors.StalePly, errors.NotYourTurn, errors.GameFinished):
                await self._check_current(room)
                raise
            try:
                await self.store.append_move(self.fenced(room, plan.record))
            except DuplicateMove:
                raise errors.StalePly("that ply is already played",
                                      expected=len(room.moves) + 1) from None
            except Fenced:
                self.let_go(room)
                raise RoomMoved(room.id) from None
            return room.apply_move(plan, now)
        if isinstance(message, p.JoinRoom):
            sitting = room.status == "waiting" and room.seat_of(player.id) is None
            rating = None
            if sitting:
                await self.placement.check_room_limit(player.id)
                rating = (await self.ratings.seat_ratings(room.game.name, [player.id]))[player.id]
            return self.lobby.join(player, room.id, now, rating)
        if isinstance(message, p.Spectate):
            return self.lobby.spectate(player, room.id, now)
        if isinstance(message, p.TakeBack):
            plies = room.check_take_back(player.id)
            await self.store.take_back(room.game_id, len(room.moves) - plies, room.epoch)
            return room.take_back(plies, now)
        if isinstance(message, p.AnswerDraw):
            return room.answer_draw(player.id, message.accept, now)
        if isinstance(message, p.Leave):
            return self.lobby.leave(player.id, room.id, now)
        return self._simple[type(message)](room, player.id, now)

    _simple: Mapping[type, Callable[[Room, str, float], Outcome]] = {
        p.Resign: lambda room, pid, now: room.resign(pid, now),
        p.OfferRematch: lambda room, pid, now: room.offer_rematch(
            pid, game_id_of(room.id, room.round + 1), now),
        p.AcceptRematch: lambda room, pid, now: room.accept_rematch(
            pid, game_id_of(room.id, room.round + 1), now),
        p.Claim: lambda room, pid, now: room.claim(pid, now),
        p.OfferDraw: lambda room, pid, now: room.offer_draw(pid, now),
    }

    # --- presence -----------------------------------------------------------------------------

    def reconnected(self, player_id: str) -> None:
        """A connection of the player said hello here: its rooms see it back."""
        self.outbox.deliver(self.lobby.reconnect(player_id, self.now()))

    def away(self, player_id: str) -> None:
        """The player's last connection anywhere closed: its grace periods start."""
        self.outbox.deliver(self.lobby.disconnect(player_id, self.now()))

    async def presence(self, room_id: str, player_id: str, online: bool) -> None:
        """Another node saw the player come or go (a room of this node's)."""
        room = self.lobby.rooms.get(room_id)
        if room is None:
            return
        async with self.lock(room_id):
            now = self.now()
            out = room.reconnect(player_id, now) if online else room.disconnect(player_id, now)
            await self.carry(room, out)

    # --- carrying an outcome ------------------------------------------------------------------

    async def carry(self, room: Room | None, out: Outcome) -> None:
        """Save the game row if it changed, then announce, then rate a game that just
        finished, then start the AI if it is due. A room this node does not own yet (a new
        one) is claimed first, and what other nodes see of it is brought up to date before
        the announcement (what people hear of is what other nodes see)."""
        if room is None:
            self.outbox.deliver(out)
            return
        await self.placement.hold(room)
        record = None
        if out.save_game:
            record = self.fenced(room, room.record())
            # A guest's row is written from its first game, in the game's own commit.
            rows = await self.people.unsaved(record.players)
            await self.store.save_game(record, rows)
            self.people.kept(rows)
        await self.placement.registered(room)
        self.outbox.deliver(out)
        if record is not None and any(isinstance(s.message, p.GameOver) for s in out.sends):
            await self._rate(room, record)
        if out.ai is not None:
            self._start_ai(room, out.ai)
        self._arm_flag(room)
        if out.forced is not None:
            await self._play_forced(room, out.forced)

    def fenced(self, room: Room, record: Any) -> Any:
        """``record`` (a game or a move) as this instance of the room writes it (a move's
        plan carries the epoch already: ``dataclasses.replace`` costs tens of microseconds
        on a hot path)."""
        return record if record.epoch == room.epoch else replace(record, epoch=room.epoch)

    async def _check_current(self, room: Room) -> None:
        """Before refusing a move as out of turn: if the store holds more of the game than
        this instance (another node took the room over and played on; this one has not
        noticed yet), the instance is stale: it goes, and the sender is told to send again
        (to the room's real owner), not that its correct move is wrong."""
        loaded = await self.store.load_game(room.game_id)
        if loaded is None:
            return
        record, moves = loaded
        if record.epoch > room.epoch or len(moves) > len(room.moves):
            self.let_go(room)
            raise RoomMoved(room.id)

    def is_current(self, room: Room) -> bool:
        """Whether ``room`` is still the instance this node runs (not closed, not replaced
        by a takeover, its lease not lost)."""
        return self.lobby.rooms.get(room.id) is room and self.placement.holds(room)

    def let_go(self, room: Room) -> None:
        """Another node runs the room now, or this instance is stale: forget it here (with
        its timer; its AI search in flight finds itself stale and is dropped)."""
        if self.lobby.rooms.get(room.id) is not room:
            return
        self.placement.let_go(room)
        self.forget(room.id)

    def forget(self, room_id: str) -> None:
        timer = self.flag_timers.pop(room_id, None)
        if timer is not None:
            timer.cancel()
        self.lobby.close(room_id)

    async def _rate(self, room: Room, record: GameRecord) -> None:
        """Rate a game whose finish was just stored and announced, then tell ``on_finish``;
        a failure is logged, never the caller's: the game's result stands either way."""
        try:
            await self.ratings.rate(room.id, record)
        except Exception:
            log.exception("could not rate game %s", record.id)
        for listener in self.on_finish:
            try:
                await listener(record)
            except Exception:
                log.exception("a listener failed on the end of game %s", record.id)

    async def show_ratings(self, room: Room) -> None:
        """Hand ``room`` the ratings of everyone seated (and of its AI levels)."""
        people = [s.player.id for s in room.seats if s.kind == "human" and s.player is not None]
        levels = [s.level for s in room.seats if s.kind == "ai"]
        room.note_ratings(await self.ratings.seat_ratings(
            room.game.name, people, levels[0] if levels else None))
        for level in levels[1:]:  # two levels playing each other
            room.note_ratings(await self.ratings.seat_ratings(room.game.name, [], level))

    # --- restore: the one way a room comes back from the store --------------------------------

    async def restore(self, record: GameRecord, moves: Sequence[MoveRecord], epoch: int,
                      online: Callable[[str], Any] | None = None,
                      watchers: Iterable[str] = ()) -> Room | None:
        """Run a stored game here again (after a restart, or taking a room over): its people
        are away until they come back, or back at once where ``online`` (awaitable) says
        they are connected somewhere; ``watchers`` spectate again. A game whose stored moves
        already end it is settled (stored as finished, rated) rather than run. The caller
        holds the room's lock. None if the game cannot be replayed."""
        people = await self.people.people(record.players)
        for person in people.values():
            self.people.remember(person)
        self.lobby.close(record.id.rpartition("-")[0])  # a copy left from an earlier lease
        try:
            room, out = self.lobby.restore(record, moves, people, self.now())
        except (ValueError, KeyError):
            log.exception("cannot restore game %s", record.id)
            return None
        room.epoch = epoch
        await self.show_ratings(room)
        if online is not None:
            for player_id in people:
                if await online(player_id):
                    out.extend(room.reconnect(player_id, self.now()))
            for player_id in watchers:
                if await online(player_id):
                    known = (await self.people.people([player_id]))[player_id]
                    out.extend(self.lobby.spectate(known, room.id, self.now()))
        await self.carry(room, out)
        return room

    # --- clocks ---------------------------------------------------------------------------------

    def _arm_flag(self, room: Room) -> None:
        """Have the room's flag checked when its running clock runs out (``Room.deadline``):
        a game ends on time even when nobody sends anything. The sweep checks every flag
        too, in case a timer is lost."""
        timer = self.flag_timers.pop(room.id, None)
        if timer is not None:
            timer.cancel()
        deadline = room.deadline()
        if deadline is None or self.stopping.is_set():
            return
        delay = max(0.0, deadline - self.now()) + FLAG_MARGIN_SECONDS
        self.flag_timers[room.id] = asyncio.get_running_loop().call_later(
            delay, self._flag_due, room)

    def _flag_due(self, room: Room) -> None:
        self.flag_timers.pop(room.id, None)
        self._spawn(self.check_flag(room))

    async def check_flag(self, room: Room) -> None:
        """End the game if the flag fell (else arm the timer again)."""
        if self.stopping.is_set() or not self.is_current(room):
            return
        async with self.lock(room.id):
            out = room.check_flag(self.now())
            if not out.sends:  # woken a little early: the clock still runs
                self._arm_flag(room)
                return
            try:
                await self.carry(room, out)
            except Exception:
                log.exception("failed to end room %s on time", room.id)

    async def _play_forced(self, room: Room, plan: PlannedMove) -> None:
        """Store and announce the pass the server plays for a person (``Outcome.forced``);
        the caller holds the room's lock. If it cannot be stored, the person may still send
        the pass, as in an untimed game."""
        try:
            await self.store.append_move(self.fenced(room, plan.record))
        except Fenced:
            self.let_go(room)
            return
        except Exception:
            log.exception("could not store a forced pass in room %s", room.id)
            return
        await self.carry(room, room.apply_move(plan, self.now()))

    def stop_timers(self) -> None:
        for timer in self.flag_timers.values():
            timer.cancel()
        self.flag_timers.clear()

    # --- work outside a command: the AI's turns, flag checks --------------------------------------

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _start_ai(self, room: Room, turn: AiTurn) -> None:
        self._spawn(self.ai_turns.play(room, turn))

    # --- housekeeping ---------------------------------------------------------------------------

    async def sweep(self) -> None:
        """Close abandoned rooms, check flags whose timer was lost, ask the AI again where
        its last move could not be stored: a chunk of rooms per turn of the loop
        (``server.turns``; a room closed meanwhile is skipped)."""
        async for rooms in in_turns(list(self.lobby.rooms.values())):
            await self._sweep(rooms)

    async def _sweep(self, rooms: Sequence[Room]) -> None:
        for room in self.lobby.overdue(self.now(), rooms):
            await self.check_flag(room)
        for room, out in self.lobby.sweep(self.now(), rooms):
            try:
                await self.carry(room, out)
            except Exception:
                log.exception("failed to close room %s", room.id)
            self.lock.drop(room.id)
        for room, turn in self.lobby.stalled_ai(rooms):
            self._start_ai(room, turn)

    async def quiesce(self) -> None:
        """Wait for every room command under way to finish (at shutdown, after
        ``stopping``: new ones are refused)."""
        for lock in self.lock.all():
            async with lock:
                pass

    async def wait_tasks(self, timeout: float) -> None:
        """Let AI moves and flag checks under way finish (``stopping`` makes AI answers
        return at once); one still running after ``timeout`` is cancelled."""
        _, late = await asyncio.wait(list(self.tasks), timeout=timeout) if self.tasks else (
            set(), set())
        for task in late:
            log.warning("cancelling a task still running at shutdown: %r", task)
            task.cancel()
        if late:
            with contextlib.suppress(Exception):
                await asyncio.wait(late, timeout=timeout)
