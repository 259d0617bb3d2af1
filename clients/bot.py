"""The reference bot: ``discus bot --url URL --token TOKEN --engine random|ai:LEVEL``.

It speaks the documented protocol (``docs/PROTOCOL.md``, ``docs/BOTS.md``) with the models of
``server.protocol``, like any other client. Two layers, as in ``server.play.rooms``:

- ``BotCore`` is sans-I/O: server messages in, ``Action``s out (messages to send now, a
  ``Think`` asking for a move, a ``Later`` to send after a delay). It knows which games it
  plays, whose turn it is, what it already sent, and what to do after a reconnect. Tests
  drive it without sockets.
- ``BotRunner`` is the glue: one websocket at a time, engines in a worker thread (so the
  event loop keeps answering pings while a search runs), and reconnection with exponential
  backoff and jitter after a dropped connection.

A reconnect resumes every game: ``hello`` carries the ``resume`` token of the last
``welcome`` (and the bot token), the server answers with ``welcome`` and the full
``room_state`` of each unfinished game, then the bot sends ``ping`` ``sync``. When the
``pong`` comes back every ``room_state`` is in (the server answers messages in order), so a
game that got none has ended while the bot was away. A move chosen while disconnected is kept
and sent at once after the resync; a move whose answer was lost is re-sent with the same ply,
which the server either plays or refuses as ``stale_ply`` — never plays twice. The backoff is
capped at a quarter of ``limits.grace_seconds`` so the bot is back before its seats may be
claimed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import random
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from clients.turns import EngineFault, EngineName, Turn, TurnClock, TurnEngine
from server import protocol as p

log = logging.getLogger("discus.bot")

SYNC_ID = "sync"
"""``ping`` id sent right after ``hello``; its ``pong`` means every ``room_state`` is in."""

FATAL_CODES = frozenset({"bad_token", "revoked_token", "unsupported_version"})
"""Error codes after which reconnecting cannot help: the bot stops (``BotCore.fatal``)."""

RETRY_CODES = frozenset({"rate_limited", "limit_exceeded"})
"""Error codes that carry ``detail.retry_after``: send the same message again after it."""

QUIET_TICKS_AFTER_DECLINE = 5
"""Ticks (one per poll, 2 s by default) the bot lets pass after a start was refused or a
challenge declined, before it asks again: a busy opponent is not asked every poll."""


# --- engines ---------------------------------------------------------------------------------


class Engine(Protocol):
    """Picks a move. Called in a worker thread: it may take its time, but must return a move
    from ``legal`` (notation text)."""

    name: str

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        ...


class RandomEngine:
    """A uniformly random legal move (seeded, so a game can be replayed)."""

    name = "random"

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        return random.Random(seed).choice(list(legal))


class AiEngine:
    """The server's own AI at one of its levels: ``ai.search`` within the level's limits,
    then ``ai.levels.choose_move`` (the same weakening the server's AI seats use)."""

    def __init__(self, level: str) -> None:
        self.level = level
        self.name = f"ai:{level}"

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        import ai
        import games
        from ai.levels import choose_move, find

        rules = games.load(game)
        state = rules.initial()
        for text in moves:
            state = state.play(rules.parse_move(state, text))
        level = find(game, self.level)
        chosen = choose_move(state, level, seed, list(ai.search(state, level.limits()))[-1:])
        return rules.format_move(chosen)


def engine_from(spec: str) -> Engine:
    """``random`` or ``ai:LEVEL``; ``ValueError`` for anything else."""
    if spec == "random":
        return RandomEngine()
    kind, _, level = spec.partition(":")
    if kind == "ai" and level:
        return AiEngine(level)
    raise ValueError(f"unknown engine {spec!r}: use random or ai:LEVEL (e.g. ai:beginner)")


# --- the sans-I/O core -----------------------------------------------------------------------


@dataclass(frozen=True)
class Think:
    """Find a move for ``room`` at ``ply``, then call ``BotCore.thought`` with it."""

    room: str
    ply: int
    game: str
    moves: tuple[str, ...]
    legal: tuple[str, ...]
    seed: int
    clock: TurnClock | None = None
    """A timed game's clocks as the message that made it our turn said."""


@dataclass(frozen=True)
class Later:
    """Send ``message`` after ``delay`` seconds (a limit said when to retry)."""

    delay: float
    message: BaseModel


Action = BaseModel | Think | Later
"""A ``BaseModel`` is a client message to send now."""


@dataclass(frozen=True)
class CreateSpec:
    """How the bot starts its games: ``--create GAME/LEVEL`` (a room against an AI level),
    ``--create GAME/open`` (a room for anyone), or ``--challenge PLAYER/GAME`` (a challenge
    to a named bot or player; ``level`` then holds the player). ``time_control`` (``--clock``)
    makes the rooms it creates, or the games it challenges to, timed."""

    game: str
    opponent: Literal["ai", "open", "challenge"]
    level: str | None = None
    time_control: str | None = None

    @classmethod
    def parse(cls, text: str) -> CreateSpec:
        game, _, level = text.partition("/")
        if not game or not level:
            raise ValueError(f"--create wants GAME/LEVEL or GAME/open, not {text!r}")
        if level == "open":
            return cls(game, "open")
        return cls(game, "ai", level)

    @classmethod
    def challenge(cls, text: str) -> CreateSpec:
        player, _, game = text.rpartition("/")
        if not player or not game:
            raise ValueError(f"--challenge wants PLAYER/GAME (e.g. RandyBot/connect4), "
                             f"not {text!r}")
        return cls(game, "challenge", player)

    def message(self, ref: str) -> p.CreateRoom | p.Challenge:
        if self.opponent == "challenge":
            return p.Challenge(id=ref, player=self.level or "", game=self.game,
                               time_control=self.time_control)
        opponent: p.AiOpponent | p.OpenOpponent = (
            p.OpenOpponent() if self.opponent == "open" else p.AiOpponent(level=self.level or "")
        )
        return p.CreateRoom(id=ref, game=self.game, opponent=opponent, seat=None,
                            time_control=self.time_control)


@dataclass(frozen=True)
class Finished:
    """A game the bot played to its end (``result`` None: it ended while the bot was away)."""

    room: str
    game: str
    seat: int
    result: p.Result | None

    @property
    def outcome(self) -> str:
        if self.result is None:
            return "unknown"
        if self.result.winner is None:
            return "draw"
        return "won" if self.result.winner == self.seat else "lost"


@dataclass
class GameView:
    """What the bot knows of one game it sits in."""

    room: str
    game: str
    seat: int
    status: p.RoomStatus
    moves: list[str]
    to_move: int | None
    legal: list[str]
    confirmed: bool = True
    """False from a (re)connect until this room's ``room_state`` arrives."""
    thinking: int | None = None
    """The ply the engine is working on."""
    sent: int | None = None
    """The ply of the move sent on this connection and not yet answered."""
    planned: dict[int, str] = field(default_factory=dict)
    """Moves chosen per ply, kept across reconnects so a lost answer costs no new search."""
    clock: p.ClockView | None = None
    """A timed game's clocks as last sent; None when untimed."""

    @property
    def ply(self) -> int:
        return len(self.moves)


class BotCore:
    """The bot's state machine. Feed it with ``connected``, ``receive``, ``thought``,
    ``tick`` and ``disconnected``; send what it returns, in order.

    ``games``: how many games to play at once. ``create``: make rooms of this kind; without
    it the bot joins open rooms it finds with ``list_rooms``. ``ladder``: a game whose engine
    ladder the bot enters on every (re)connect, then plays only the games the ladder starts
    for it (no rooms of its own). ``arena``: a tournament the bot joins on every (re)connect,
    then plays the games the tournament pairs it into, likewise. ``engine``: the program
    playing (an engine bridge's), named to the ladder when entering it. ``plays``: the games
    the engine plays (None: all); challenges to others are declined, their rooms not joined.
    ``stop_after``: finished games after which ``done`` becomes true (None: play until
    stopped).
    """

    def __init__(self, *, token: str | None = None, name: str | None = None, games: int = 1,
                 create: CreateSpec | None = None, stop_after: int | None = None,
                 seed: int = 0, ladder: str | None = None, arena: str | None = None,
                 engine: EngineName | None = None, plays: frozenset[str] | None = None
                 ) -> None:
        if games < 1:
            raise ValueError("a bot plays at least one game at once")
        self.token = token
        self.name = name
        self.games_at_once = games
        self.create = create
        self.ladder = ladder
        self.arena = arena
        self.engine = engine
        self.plays = plays
        self.stop_after = stop_after
        self.seed = seed
        self.player_id: str | None = None
        self.resume: str | None = None
        self.grace_seconds: float | None = None
        self.rooms: dict[str, GameView] = {}
        self.finished: list[Finished] = []
        self.online = False
        self.synced = False
        self.connections = 0
        self.pending_creates = 0
        self.pending_joins: set[str] = set()
        self.errors: list[p.Error] = []
        self.fatal: p.Error | None = None
        """Set by an error that reconnecting cannot cure (a bad or revoked token)."""
        self._refs = 0
        self._left: set[str] = set()
        self._quiet_ticks = 0

    # --- life cycle ------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        if self.fatal is not None:
            return True
        return (self.stop_after is not None and len(self.finished) >= self.stop_after
                and not self.rooms)

    def connected(self) -> list[Action]:
        """A new websocket is open: say hello (resuming if we can), then ask for the sync
        ``pong``."""
        self.online = True
        self.synced = False
        self.connections += 1
        self.pending_creates = 0
        self.pending_joins.clear()
        for view in self.rooms.values():
            view.confirmed = False
            view.sent = None
        return self._greeting()

    def _greeting(self) -> list[Action]:
        hello = p.Hello(version=p.PROTOCOL_VERSION, resume=self.resume, name=self.name,
                        token=self.token)
        return [hello, p.Ping(id=SYNC_ID)]

    def disconnected(self) -> None:
        self.online = False
        self.synced = False

    def tick(self) -> list[Action]:
        """Call every few seconds: looks for more games if the bot has room for them."""
        if not self.synced:
            return []
        if self._quiet_ticks > 0:
            self._quiet_ticks -= 1
            return []
        return self._top_up(poll=True)

    # --- input -----------------------------------------------------------------------------

    def receive(self, message: BaseModel) -> list[Action]:
        """One server message in; the actions it calls for out."""
        if isinstance(message, p.Welcome):
            if self.player_id is not None and message.player.id != self.player_id:
                # A new identity (the server forgot us): the old games cannot come back. (A
                # new ``resume`` alone is no such sign: a restarted server may sign anew.)
                for room in list(self.rooms):
                    self._end(room, None)
            self.player_id = message.player.id
            self.resume = message.resume
            self.grace_seconds = message.limits.grace_seconds
            return []
        if isinstance(message, p.RoomState):
            return self._room_state(message)
        if isinstance(message, p.MoveMade):
            return self._move_made(message)
        if isinstance(message, p.GameOver):
            return self._game_over(message.room, message.result)
        if isinstance(message, p.RoomEvent):
            view = self.rooms.get(message.room)
            if view is not None and message.event == "joined" and view.status == "waiting":
                view.status = "active"
                return self._maybe_think(view)
            return []
        if isinstance(message, p.Rooms):
            return self._join_some(message.rooms)
        if isinstance(message, p.ChallengeOffer):
            return self._answer(message)
        if isinstance(message, p.ChallengeDeclined):
            # Ours was turned down (busy, say): ask again after a few quiet ticks.
            self.pending_creates = max(0, self.pending_creates - 1)
            self._quiet_ticks = QUIET_TICKS_AFTER_DECLINE
            log.info("%s declined the challenge: %s", message.by.name, message.reason)
            return []
        if isinstance(message, p.Pong):
            return self._synced() if message.id == SYNC_ID else []
        if isinstance(message, p.Error):
            return self._error(message)
        return []  # ai_thinking and anything informative

    def thought(self, room: str, ply: int, move: str) -> list[Action]:
        """The engine's answer to a ``Think``; dropped if the game moved on meanwhile."""
        view = self.rooms.get(room)
        if view is None:
            return []
        view.planned[ply] = move
        if view.thinking == ply:
            view.thinking = None
        return self._maybe_think(view)

    def gave_up(self, room: str, ply: int) -> list[Action]:
        """The engine failed (or resigned) at ``ply``: resign that game, and that game
        only; the ``game_over`` that follows ends it as any other."""
        view = self.rooms.get(room)
        if view is None or view.ply != ply or view.status != "active":
            return []
        if view.thinking == ply:
            view.thinking = None
        return [p.Resign(id=f"resign:{room}", room=room)]

    # --- handlers --------------------------------------------------------------------------

    def _room_state(self, message: p.RoomState) -> list[Action]:
        room = message.room
        if message.you is None:
            return []  # watching: not ours to play
        known = self.rooms.get(room.id)
        if known is None and self.pending_creates > 0:
            self.pending_creates -= 1
        self.pending_joins.discard(room.id)
        view = GameView(room.id, room.game, message.you, room.status, list(room.moves),
                        room.position.to_move, list(room.position.legal_moves),
                        clock=room.clock)
        if known is not None:
            view.planned = known.planned
            view.thinking = known.thinking
        self.rooms[room.id] = view
        if room.status == "finished":
            return self._game_over(room.id, room.result)
        return self._maybe_think(view)

    def _move_made(self, message: p.MoveMade) -> list[Action]:
        view = self.rooms.get(message.room)
        if view is None or message.ply != view.ply:
            return []  # not ours, or already known (the full state came first)
        view.moves.append(message.move)
        view.status = message.status
        view.to_move = message.position.to_move
        view.legal = list(message.position.legal_moves)
        view.clock = message.clock
        view.sent = None
        view.planned = {ply: m for ply, m in view.planned.items() if ply >= view.ply}
        return self._maybe_think(view)

    def _game_over(self, room: str, result: p.Result | None) -> list[Action]:
        if room not in self.rooms:
            return []
        self._end(room, result)
        actions: list[Action] = []
        if self.online and room not in self._left:
            self._left.add(room)
            actions.append(p.Leave(id=f"leave:{room}", room=room))  # frees the seat count
        if self.synced:
            actions.extend(self._top_up())
        return actions

    def _end(self, room: str, result: p.Result | None) -> None:
        view = self.rooms.pop(room)
        self.finished.append(Finished(room, view.game, view.seat, result))

    def _synced(self) -> list[Action]:
        self.synced = True
        for room, view in list(self.rooms.items()):
            if not view.confirmed:
                self._end(room, None)  # it ended while we were away
        if self.ladder is not None:
            said = None
            if self.engine is not None and self.engine.name.strip():
                said = p.EngineView(name=self.engine.name.strip()[:64],
                                    version=(self.engine.version or "")[:64] or None)
            return [p.EnterLadder(id=f"ladder:{self.ladder}", game=self.ladder, engine=said)]
        if self.arena is not None:
            return [p.JoinTournament(id=f"arena:{self.arena}", tournament=self.arena)]
        return self._top_up()

    def _error(self, message: p.Error) -> list[Action]:
        self.errors.append(message)
        if message.code in FATAL_CODES:
            self.fatal = message
            return []
        if message.code == "bad_resume_token":
            # The server no longer knows us (it restarted): our games are gone; start afresh.
            log.warning("the server forgot this bot's session; saying hello anew")
            self.resume = None
            for room in list(self.rooms):
                self._end(room, None)
            return self._greeting()
        ref = str(message.ref) if message.ref is not None else ""
        kind, _, rest = ref.partition(":")
        retry = message.detail.get("retry_after")
        if kind == "move":
            room, _, ply = rest.rpartition(":")
            view = self.rooms.get(room)
            if view is None or str(view.ply) != ply:
                return []
            view.sent = None
            if message.code in RETRY_CODES and isinstance(retry, int | float):
                view.sent = view.ply
                move = p.Move(id=ref, room=room, ply=view.ply, move=view.planned[view.ply])
                return [Later(float(retry), move)]
            if message.code in ("game_finished", "unknown_room", "not_seated"):
                return self._game_over(room, None)
            return []  # stale_ply, not_your_turn: the events on their way resync us
        if kind in ("create", "accept"):
            self.pending_creates = max(0, self.pending_creates - 1)
            self._quiet_ticks = QUIET_TICKS_AFTER_DECLINE
        elif kind == "join":
            self.pending_joins.discard(rest)
        log.warning("server refused %s: %s (%s)", ref or "a request", message.code,
                    message.message)
        return []

    # --- decisions -------------------------------------------------------------------------

    def _maybe_think(self, view: GameView) -> list[Action]:
        """Send the planned move for the current ply, or ask for one, when it is our turn."""
        if view.status != "active" or view.to_move != view.seat or not view.legal:
            return []
        ply = view.ply
        if ply in view.planned:
            if self.online and view.sent != ply:
                view.sent = ply
                return [p.Move(id=f"move:{view.room}:{ply}", room=view.room, ply=ply,
                               move=view.planned[ply])]
            return []
        if view.thinking != ply:
            view.thinking = ply
            return [self._think(view)]
        return []

    def _answer(self, offer: p.ChallengeOffer) -> list[Action]:
        """Accept a challenge while the bot wants more games (its room counts as one being
        created until its ``room_state``), else decline it as busy."""
        if self.plays is not None and offer.game not in self.plays:
            return [p.DeclineChallenge(
                id=f"decline:{offer.challenge}", challenge=offer.challenge,
                reason=f"this engine plays {' and '.join(sorted(self.plays))} only")]
        if self._wanted() > 0:
            self.pending_creates += 1
            return [p.AcceptChallenge(id=f"accept:{offer.challenge}", challenge=offer.challenge)]
        return [p.DeclineChallenge(id=f"decline:{offer.challenge}", challenge=offer.challenge,
                                   reason="busy")]

    def _think(self, view: GameView) -> Think:
        seed = zlib.crc32(f"{self.seed}:{view.room}:{view.ply}".encode())
        return Think(view.room, view.ply, view.game, tuple(view.moves), tuple(view.legal), seed,
                     _turn_clock(view.clock, view.seat))

    def _wanted(self) -> int:
        """How many more games to start now."""
        busy = len(self.rooms) + self.pending_creates + len(self.pending_joins)
        wanted = self.games_at_once - busy
        if self.stop_after is not None:
            wanted = min(wanted, self.stop_after - len(self.finished) - busy)
        return max(0, wanted)

    def _top_up(self, poll: bool = False) -> list[Action]:
        wanted = self._wanted()
        if wanted == 0 or not self.online or self.ladder is not None or self.arena is not None:
            return []
        if self.create is not None:
            if poll and self.pending_creates:
                return []
            actions: list[Action] = []
            for _ in range(wanted):
                self._refs += 1
                self.pending_creates += 1
                actions.append(self.create.message(f"create:{self._refs}"))
            return actions
        return [p.ListRooms(id="list")]

    def _join_some(self, rooms: Sequence[p.RoomSummary]) -> list[Action]:
        if self.create is not None:
            return []
        actions: list[Action] = []
        wanted = self._wanted()
        for summary in rooms:
            if wanted == 0:
                break
            mine = any(s.player is not None and s.player.id == self.player_id
                       for s in summary.seats)
            if summary.status != "waiting" or mine or summary.id in self.rooms:
                continue
            if self.plays is not None and summary.game not in self.plays:
                continue
            self.pending_joins.add(summary.id)
            actions.append(p.JoinRoom(id=f"join:{summary.id}", room=summary.id))
            wanted -= 1
        return actions


def _turn_clock(clock: p.ClockView | None, seat: int) -> TurnClock | None:
    if clock is None:
        return None
    mine = clock.remaining_ms[seat]
    if mine is None:
        return None
    return TurnClock(mine, clock.remaining_ms[1 - seat], clock.control.initial_ms,
                     clock.control.increment_ms)


# --- the websocket glue ------------------------------------------------------------------------


@dataclass
class Backoff:
    """Exponential backoff with jitter: a delay between half and all of ``first`` doubled per
    failure, never above ``cap``; ``reset`` after a successful connection."""

    first: float = 0.25
    cap: float = 15.0
    failures: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next(self, cap: float | None = None) -> float:
        ceiling = min(self.cap if cap is None else cap, self.first * 2**self.failures)
        self.failures += 1
        return self.rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.failures = 0


def parse_server_message(frame: str | bytes) -> BaseModel | None:
    """The server message in ``frame``; an ``error`` with a code newer than these models
    still comes through (its code decides what to do), anything else unknown is None."""
    try:
        message: BaseModel = p.SERVER.validate_json(frame)
        return message
    except ValidationError:
        pass
    try:
        raw = json.loads(frame)
    except ValueError:
        return None
    if isinstance(raw, dict) and raw.get("type") == "error" and isinstance(raw.get("code"), str):
        detail = raw.get("detail") if isinstance(raw.get("detail"), dict) else {}
        return p.Error.model_construct(code=raw["code"], message=str(raw.get("message", "")),
                                       ref=raw.get("ref"), room=raw.get("room"), detail=detail)
    return None


class BotRunner:
    """Runs a ``BotCore`` over real websockets until it is done or ``stop()`` is called.

    ``poll_seconds``: how often ``tick`` runs (looking for open rooms).
    ``on_finished`` is called with each finished game (the CLI prints them).
    """

    def __init__(self, url: str, core: BotCore, engine: Engine, *, poll_seconds: float = 2.0,
                 backoff: Backoff | None = None,
                 on_finished: Callable[[Finished], None] | None = None) -> None:
        self.url = url
        self.core = core
        self.engine = engine
        self.poll_seconds = poll_seconds
        self.backoff = backoff or Backoff()
        self.on_finished = on_finished
        self.ws: ClientConnection | None = None
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._reported = 0
        # One search at a time: the engines share process-wide tables, and the event loop
        # must stay free to answer pings while they run.
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="bot-engine")

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> list[Finished]:
        """Play until ``core.done`` or ``stop()``; the finished games."""
        try:
            while not self.core.done and not self._stop.is_set():
                try:
                    await self._session()
                except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake) as exc:
                    log.info("connection lost: %s", exc)
                finally:
                    self.ws = None
                    self.core.disconnected()
                if self.core.done or self._stop.is_set():
                    break
                grace = self.core.grace_seconds
                delay = self.backoff.next(None if grace is None else max(0.5, grace / 4))
                log.info("reconnecting in %.2f s", delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
        finally:
            for task in list(self._tasks):
                task.cancel()
            self._pool.shutdown(wait=False, cancel_futures=True)
        return list(self.core.finished)

    async def _session(self) -> None:
        async with connect(self.url, open_timeout=10, max_size=1 << 20) as ws:
            self.ws = ws
            await self._perform(self.core.connected())
            ticker = asyncio.create_task(self._tick_forever())
            stopper = asyncio.create_task(self._stop.wait())
            try:
                reader = asyncio.create_task(self._read(ws))
                await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
                if reader.done():
                    reader.result()  # re-raise ConnectionClosed and the like
                else:
                    reader.cancel()
            finally:
                ticker.cancel()
                stopper.cancel()

    async def _read(self, ws: ClientConnection) -> None:
        async for frame in ws:
            message = parse_server_message(frame)
            if message is None:
                log.warning("ignoring a message this bot does not understand: %.200s", frame)
                continue
            if isinstance(message, p.Welcome):
                self.backoff.reset()
            await self._perform(self.core.receive(message))
            self._report()
            if self.core.done:
                await ws.close()
                return
        # ``async for`` ends quietly on a normal close; a server restart is worth a reconnect.
        raise ConnectionClosed(ws.protocol.close_rcvd, ws.protocol.close_sent,
                               ws.protocol.close_rcvd_then_sent)

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            await self._perform(self.core.tick())

    async def _perform(self, actions: Sequence[Action]) -> None:
        for action in actions:
            if isinstance(action, Think):
                # Stamped now: the message that made it our turn has just come in.
                self._spawn(self._think(action, time.monotonic()))
            elif isinstance(action, Later):
                self._spawn(self._later(action))
            else:
                await self._send(action)

    async def _send(self, message: BaseModel) -> None:
        ws = self.ws
        if ws is None:
            return  # the resync after the reconnect sends what is still needed
        try:
            await ws.send(p.encode(message))
        except ConnectionClosed:
            pass  # the reader sees the close and reconnects

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, job: Think, since: float) -> None:
        loop = asyncio.get_running_loop()
        try:
            if isinstance(self.engine, TurnEngine):
                turn = Turn(job.game, job.moves, job.legal, job.seed, job.clock, since)
                move = await loop.run_in_executor(self._pool, self.engine.choose_turn, turn)
            else:
                move = await loop.run_in_executor(self._pool, self.engine.choose, job.game,
                                                  job.moves, job.legal, job.seed)
        except EngineFault as fault:
            log.warning("room %s ply %d: %s; resigning this game", job.room, job.ply,
                        fault.reason)
            await self._perform(self.core.gave_up(job.room, job.ply))
            return
        except Exception:
            log.exception("the engine failed; playing a random legal move")
            move = RandomEngine().choose(job.game, job.moves, job.legal, job.seed)
        await self._perform(self.core.thought(job.room, job.ply, move))

    async def _later(self, job: Later) -> None:
        await asyncio.sleep(job.delay)
        await self._send(job.message)

    def _report(self) -> None:
        while self._reported < len(self.core.finished):
            if self.on_finished is not None:
                self.on_finished(self.core.finished[self._reported])
            self._reported += 1
