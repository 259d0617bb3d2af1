"""The AI's turns in this node's rooms: the engines asked, the move stored, then played.

Its own module because an AI move is the one room command nobody sends, and the only one
that waits: it starts from an ``AiTurn`` a room hands out, leaves the room's lock while the
engines think (seconds, on other processes or other nodes), and comes back to a room that may
have moved on, been rematched, closed or taken over meanwhile. On the way the pool may fail
and the store may refuse the move; a game must never stall on either. This module owns that
path, from the question to the stored and announced move (or the room told it failed), and
its figures. The room runner (``server.play.runner``) starts each turn and carries the move's
outcome as it carries any command's.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from collections.abc import Callable
from typing import Any, Protocol

from ai.levels import find, levels_of
from server import errors
from server import protocol as p
from server.connections.outbox import Outbox
from server.engines import AiJob, Pool, Progress, QueueWait, quick_move_off_loop, win_in
from server.engines.live_levels import LiveLevels
from server.play.locks import RoomLocks
from server.play.outcome import AiTurn, Outcome
from server.play.rooms import Room, round_seconds
from server.settings import Settings
from server.storage.store import DuplicateMove, Fenced, MoveRecord, Store

log = logging.getLogger("discus.runner")


class Carrier(Protocol):
    """The room runner, as an AI turn needs it (``server.play.runner.RoomRunner``)."""

    def is_current(self, room: Room) -> bool: ...

    def let_go(self, room: Room) -> None: ...

    def fenced(self, room: Room, record: Any) -> Any: ...

    async def carry(self, room: Room | None, out: Outcome) -> None: ...


class AiTurns:
    """Plays the AI's moves for the room runner ``runner``; ``stopping`` is the server's
    shutdown flag, ``lock`` the rooms' locks."""

    def __init__(self, runner: Carrier, store: Store, outbox: Outbox, pool: Pool | None,
                 levels: LiveLevels, settings: Settings, stopping: asyncio.Event,
                 lock: RoomLocks, now: Callable[[], float]) -> None:
        self.runner = runner
        self.store = store
        self.outbox = outbox
        self.pool = pool
        self.levels = levels
        self.settings = settings
        self.stopping = stopping
        self.lock = lock
        self.now = now
        self.observe: Callable[[float], None] = lambda seconds: None
        """Told how long each AI move took to come back (``server.metrics``)."""
        self.fallbacks = 0
        """AI moves made by the quick move because the pool failed."""

    async def play(self, room: Room, turn: AiTurn) -> None:
        """Find, store and announce the AI's move; a stale answer is dropped quietly.

        The game never stalls on the AI: a pool that fails is replaced by ``quick_move``; a
        move the store refuses is retried after each pause of
        ``Settings.store_retry_seconds``. A move that never gets stored is not played: the
        room stops showing the AI as thinking and its people get an ``internal_error``
        naming the room; the sweeper asks the AI again later.
        """
        seed = zlib.crc32(f"{room.game_id}:{turn.ply}".encode())
        asked_at = time.monotonic()
        try:
            await self.levels.refresh()  # any server's level edit counts from this move on
            move, thought = await self._think(room, turn, seed)
            shown_after = self.settings.min_ai_move_seconds - (time.monotonic() - asked_at)
            if shown_after > 0 and turn.ply > 0:
                await asyncio.sleep(shown_after)  # let the person see their own move land
            if self.stopping.is_set() or not self.runner.is_current(room):
                return  # not stored, so not played: whoever runs the room asks again
            async with self.lock(room.id):
                if not self.runner.is_current(room):
                    return
                try:
                    plan = room.check_ai_move(turn.round, turn.ply, move, self.now(),
                                              thought, line=turn.line)
                except errors.StalePly:
                    return  # the room moved on (resigned, left, rematched) while the AI thought
                except errors.IllegalMove:
                    log.error("the AI chose an illegal move in room %s; playing a quick one",
                              room.id)
                    plan = room.check_ai_move(turn.round, turn.ply,
                                              await quick_move_off_loop(turn.state, seed),
                                              self.now(), line=turn.line)
                if await self._store(room, plan.record):
                    await self.runner.carry(room, room.apply_move(plan, self.now()))
                    return
        except Fenced:
            log.warning("room %s was taken over while its AI thought; letting it go", room.id)
            self.runner.let_go(room)
            return
        except Exception:
            log.exception("the AI's move in room %s failed", room.id)
        self._failed(room, turn)

    async def _think(self, room: Room, turn: AiTurn, seed: int
                     ) -> tuple[int, p.AiThought | None]:
        """The AI's move and what its search saw: the pool's if it answers, else
        ``quick_move``'s (no thought). A long search's iterations go out as ``ai_thinking``
        meanwhile, at most one each ``Settings.thinking_interval``."""
        if self.pool is None:
            return await quick_move_off_loop(turn.state, seed), None
        levels = self.levels.current
        try:
            level = find(turn.game, turn.level, levels)
        except KeyError:
            level = levels_of(turn.game, levels)[0]
        last_sent = [-1.0]

        def progress(step: Progress) -> None:
            now = self.now()
            if now - last_sent[0] < self.settings.thinking_interval:
                return
            last_sent[0] = now
            self.outbox.deliver(room.ai_progress(
                turn.round, turn.ply, step.depth, step.score, step.nodes, step.seconds,
                step.exact, win_in(turn.game, turn.ply, step.score, step.exact),
                line=turn.line))

        def waiting(wait: QueueWait) -> None:
            told = room.ai_waiting(turn.round, turn.ply, wait.position, wait.length,
                                   wait.seconds, line=turn.line)
            if told is not None:
                self.outbox.to_players(room.members(), told)

        asked = time.perf_counter()
        try:
            answer = await self.pool.think(AiJob(turn.game, turn.moves, level, seed), progress,
                                           room=room.id, on_wait=waiting)
        except Exception:
            log.warning("the AI pool failed in room %s; playing a quick move", room.id,
                        exc_info=True)
            self.fallbacks += 1
            return await quick_move_off_loop(turn.state, seed), None
        self.observe(time.perf_counter() - asked)
        if answer.depth is None:
            return answer.move, None
        return answer.move, p.AiThought(
            depth=answer.depth, score=answer.score, nodes=answer.nodes or 0,
            seconds=round_seconds(answer.seconds), exact=answer.exact, book=answer.book,
            cached=answer.cached,
            win_in=None if answer.score is None
            else win_in(turn.game, turn.ply, answer.score, answer.exact))

    async def _store(self, room: Room, record: MoveRecord) -> bool:
        """Store the AI's move, retrying after each pause of ``store_retry_seconds``; True
        once it is stored (also when an attempt reported failure but the store has it).
        ``Fenced`` if this instance of the room is stale."""
        pauses = self.settings.store_retry_seconds
        record = self.runner.fenced(room, record)
        for attempt in range(len(pauses) + 1):
            if attempt:
                await asyncio.sleep(pauses[attempt - 1])
            try:
                await self.store.append_move(record)
                return True
            except Fenced:
                raise
            except DuplicateMove:
                # An earlier attempt may have been stored although it seemed to fail.
                return await self._is_stored(record)
            except Exception:
                log.warning("could not store the AI's move in room %s (attempt %d of %d)",
                            room.id, attempt + 1, len(pauses) + 1, exc_info=True)
        return False

    async def _is_stored(self, record: MoveRecord) -> bool:
        try:
            loaded = await self.store.load_game(record.game_id)
        except Exception:
            log.warning("could not check game %s", record.game_id, exc_info=True)
            return False
        return loaded is not None and any(
            m.ply == record.ply and m.move == record.move for m in loaded[1])

    def _failed(self, room: Room, turn: AiTurn) -> None:
        """The AI's move for ``turn`` was not played: if the room still waits for it, stop
        showing the AI as thinking and tell the room's people why."""
        out = room.ai_failed(turn.round, turn.ply, line=turn.line)
        if not out.sends:
            return
        self.outbox.deliver(out)
        clients = [c for pid in room.members() for c in self.outbox.connections(pid)]
        self.outbox.send(clients, p.error_message(errors.InternalError(
            "the AI's move could not be saved, so it was not played; the server will try "
            "again in a few seconds"), room=room.id))
