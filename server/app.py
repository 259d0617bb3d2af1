"""The server's one ``main()``: websockets' asyncio server wired to rooms, workers and storage.

One port serves the page and the health checks over plain HTTP (``server.http``) and the
protocol on the websocket at ``/ws``. This module is glue, and the map of the server:

- ``server.connection``: one websocket and its rate limits; ``server.protocol``: messages;
- ``server.rooms``: the rules of rooms (sans-I/O), run here under each room's lock;
- ``server.engines`` (local processes, or ``discus worker`` processes anywhere,
  through Redis): AI moves; ``server.store`` / ``server.storage``: durability;
- ``server.admin``, ``server.bot_desk``: the admin's and the bots' messages;
- ``server.cluster`` (leases, inboxes, events in Redis) and ``server.node`` (what a node
  does with them): several servers on one database and one Redis.

Ordering guarantees: every command on a room runs under that room's lock; a move is written
with ``store.append_move`` before anybody hears of it; all frames go out through one
synchronous path (``broadcast``), so each client sees a room's messages in the order they
were produced — its full ``room_state`` first, then events.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import os
import secrets
import signal
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.http11 import Request, Response

import games
from ai.levels import DEFAULT_LEVELS, Level, find, levels_of
from ai.review import ANALYSIS_SOLVE_SECONDS
from server import errors, history, overload
from server import protocol as p
from server.admin import ADMIN_MESSAGES, AdminDesk
from server.bot_desk import BotDesk
from server.bot_limits import (
    DEFAULT_BOT_LIMITS,
    DEFAULT_REGISTRATION_LIMITS,
    BotLimits,
    RegistrationLimits,
)
from server.clocks import TIME_CONTROLS, TimeControl
from server.cluster import Cluster
from server.connection import Client, TokenBucket
from server.engines import (
    COUNTED,
    AiJob,
    AiPool,
    Pool,
    Progress,
    quick_move_off_loop,
    win_in,
)
from server.gc_policy import Collector, release_transport
from server.http import HttpSide
from server.node import ClusterNode
from server.overload import LoadGauge
from server.players import AccountDesk
from server.rating_desk import RatingDesk
from server.reviews import ReviewDesk
from server.rooms import (
    ROOM_CODE_ALPHABET,
    ROOM_CODE_LENGTH,
    AiTurn,
    Lobby,
    Outcome,
    PlannedMove,
    Player,
    Room,
    game_id_of,
    round_seconds,
)
from server.shared_challenges import SharedChallengeBook
from server.shared_limits import SharedBotLimiter, SharedNameLimiter
from server.store import (
    DuplicateMove,
    Fenced,
    GameRecord,
    MemoryStore,
    MoveRecord,
    PlayerRecord,
    Store,
)

log = logging.getLogger("discus.server")


STATIC_DIR = Path(__file__).resolve().parent / "static"

RECONNECT_REASON = "this server is stopping; reconnect"
"""The reason of the 1012 (service restart) close a cluster node sends its clients when it
stops: another node runs their rooms, and the page and the reference bot reconnect at once."""

MIN_AI_MOVE_SECONDS = 0.45
"""``discus serve``'s ``Settings.min_ai_move_seconds``: a little longer than the page's
drop and flip animations."""

SHUTDOWN_SECONDS = 10.0
"""How long shutdown waits for AI moves and room sweeps already under way to be stored."""

FLAG_MARGIN_SECONDS = 0.005
"""A flag timer wakes this long after the clock's deadline, so the check finds it run out."""


@dataclass(frozen=True)
class Settings:
    """Published limits (``welcome.limits``) and server knobs, named in one place."""

    max_message_bytes: int = 4096
    messages_per_second: float = 20.0
    burst: int = 40
    flood_strikes: int = 20
    """Refused (rate-limited) messages allowed within ``flood_window_seconds``; one more
    closes the connection with 1008. Accepted messages in between do not forgive them, so a
    client that keeps sending faster than the rate is closed, not throttled forever."""
    flood_window_seconds: float = 10.0
    hello_seconds: float = 20.0
    """A connection that has not said hello this long after opening gets ``hello_required``
    and is closed with 1008."""
    grace_seconds: float = 60.0
    max_rooms: int = 10
    sweep_seconds: float = 5.0
    """How often rooms everyone left are closed."""
    max_buffered_bytes: int = 1 << 20
    """A client that reads nothing while this much waits for it is disconnected."""
    thinking_interval: float = 0.1
    """At most one ``ai_thinking`` per room in this many seconds (fast levels finish many
    iterations in a millisecond; people need only see that the AI is working)."""
    max_challenges: int = 10
    """Challenges one player may have waiting for an answer."""
    bots: BotLimits = DEFAULT_BOT_LIMITS
    """The limits of bot accounts (``welcome.limits.bot`` on a bot's connection)."""
    bot_registration: bool = False
    """Whether a connection may make a bot account for itself with ``register_bot``
    (``discus serve --bot-registration``). Off, bot accounts come from admins only."""
    bot_registration_limits: RegistrationLimits = DEFAULT_REGISTRATION_LIMITS
    """Bounds on ``register_bot`` (``welcome.limits.bot_registration`` while it is on)."""
    max_connections: int = 20_000
    """Open websocket connections past which new ones are shed (``server.overload``)."""
    shed_lag_seconds: float = 0.5
    """New connections are shed for 2 s after the event loop runs this late."""
    min_ai_move_seconds: float = 0.0
    """The AI's move is shown no sooner than this after the person's (``discus serve``:
    ``MIN_AI_MOVE_SECONDS``): a quick level answers in milliseconds, and a reply landing in
    the same frame as one's own move is not seen to happen."""
    analysis_seconds: float = ANALYSIS_SOLVE_SECONDS
    """Most the analysis board spends proving one Connect Four move (on a low-priority
    worker); a move past it is shown without a value."""
    time_controls: Mapping[str, TimeControl] = field(default_factory=lambda: dict(TIME_CONTROLS))
    """The time controls rooms may be made with, by name (``server.clocks``); tests add a
    quick one here rather than through the protocol."""
    store_retry_seconds: tuple[float, ...] = (0.1, 0.5, 2.0)
    """Pauses before each new attempt to store an AI move the store refused; when the last
    attempt fails too, the move is not played and the room is told (the sweeper asks the AI
    again later)."""

    def limits(self) -> p.ServerLimits:
        return p.ServerLimits(
            max_message_bytes=self.max_message_bytes,
            messages_per_second=self.messages_per_second,
            burst=self.burst,
            grace_seconds=self.grace_seconds,
            max_rooms=self.max_rooms,
            max_challenges=self.max_challenges,
        )


def new_room_code() -> str:
    """A fresh room code (also the invite code people type): see ``ROOM_CODE_ALPHABET``."""
    return "".join(secrets.choice(ROOM_CODE_ALPHABET) for _ in range(ROOM_CODE_LENGTH))


class DiscusServer:
    """Rooms, players and connections of one running server.

    ``pool`` finds AI moves; without one (tests of the glue alone) the AI plays
    ``workers.quick_move``. ``levels`` is read at every AI move, so replacing it takes effect
    from the next move. ``secret`` signs resume tokens (default ``$DISCUS_SECRET``, else
    random per process: then tokens do not survive a restart).
    """

    def __init__(
        self,
        store: Store,
        pool: Pool | None,
        settings: Settings | None = None,
        levels: Mapping[str, Sequence[Level]] = DEFAULT_LEVELS,
        static_dir: Path = STATIC_DIR,
        secret: bytes | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.settings = settings or Settings()
        self.levels = levels
        self.lobby = Lobby(
            levels={g: [lv.name for lv in levels_of(g, levels)] for g in games.names()},
            ids=new_room_code,
            grace=self.settings.grace_seconds,
            max_rooms=self.settings.max_rooms,
            time_controls=self.settings.time_controls,
        )
        self.players: dict[str, Player] = {}
        self.secret = secret or os.environb.get(b"DISCUS_SECRET") or secrets.token_bytes(32)
        self.clients: dict[str, set[Client]] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.http = HttpSide(self, static_dir)
        """The page, its files, game downloads and the health checks."""
        self.ai_tasks: set[asyncio.Task[None]] = set()
        self.flag_timers: dict[str, asyncio.TimerHandle] = {}
        """Per timed room, the timer that checks its flag when the running clock runs out."""
        self.stopping = asyncio.Event()
        """Set at shutdown: AI answers arriving after it are dropped, the sweeper stops."""
        self._games = [self._game_info(name) for name in games.names()]
        self.desk = AdminDesk(self, None)
        """Admin messages and live levels; ``running`` gives it the store's database."""
        self.bots = BotDesk(self, None)
        """Bot logins, limits and challenges; ``running`` gives it the store's database."""
        self.reviews = ReviewDesk(self)
        """Game reviews and the analysis board, at low priority (``server.reviews``)."""
        self.accounts = AccountDesk(self)
        """People's accounts: sign up, sign in, sessions (``server.players``)."""
        self.ratings = RatingDesk(self)
        """Ratings at game over, the leaderboard and profiles (``server.rating_desk``)."""
        self.gauge = LoadGauge(self.settings.shed_lag_seconds, self.settings.max_connections)
        """Whether this node is saturated and sheds new connections (``server.overload``)."""
        self.cluster: Cluster | None = None
        """This node's part in a cluster of nodes (``server.cluster``), or None alone."""
        self.node: ClusterNode | None = None
        """The glue between this server and ``cluster`` (``server.node``), or None alone."""
        self.cache: Any = None
        """The server's ``PositionCache`` (``running(cache=...)``); ``stats`` reads the
        counters every process on the same Redis shares from it."""

    def set_levels(self, levels: Mapping[str, Sequence[Level]]) -> None:
        """Replace the difficulty levels (an admin edit): new rooms, ``welcome`` and the very
        next AI move of every room use them. A room whose level disappeared plays the weakest."""
        self.levels = levels
        self.lobby.levels = {g: [lv.name for lv in levels_of(g, levels)] for g in games.names()}
        self._games = [self._game_info(name) for name in games.names()]

    def _game_info(self, name: str) -> p.GameInfo:
        from server.rooms import COLOURS

        game = games.load(name)
        return p.GameInfo(
            name=name,
            title=game.title,
            players=list(COLOURS.get(name, game.players)),
            rows=game.rows,
            cols=game.cols,
            levels=[p.LevelInfo(name=lv.name, order=lv.order, description=lv.description)
                    for lv in levels_of(name, self.levels)],
        )

    @staticmethod
    def now() -> float:
        """Wall-clock seconds: rooms write these times into stored games and moves, which
        outlive the process (history dates, GGF ``DT``, restored games' grace periods)."""
        return time.time()

    def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | Awaitable[Response] | None:
        """websockets' hook before a handshake: the HTTP side (``server.http``)."""
        return self.http.respond(connection, request)

    # --- history ---------------------------------------------------------------------------

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]:
        """The players behind stored ids: those online as they are, others from the store."""
        people: dict[str, Player] = {}
        for player_id in player_ids:
            if player_id is None or player_id in people:
                continue
            known = self.players.get(player_id)
            if known is None:
                stored = await self.store.load_player(player_id)
                known = (Player(player_id, stored.name, bot=stored.kind == "bot")
                         if stored is not None else Player(player_id, "Player"))
            people[player_id] = known
        return people

    async def _history(self, player_id: str, limit: int) -> p.History:
        """The player's finished games, newest first (unfinished ones are in the lobby)."""
        # A player sits in at most ``max_rooms`` unfinished games, so this many rows hold
        # ``limit`` past ones.
        records = await self.store.games_of_player(player_id, limit + self.settings.max_rooms)
        past = [r for r in records if r.status in history.PAST_STATUSES][:limit]
        counts = await self.store.count_moves([r.id for r in past])
        lines = []
        for record in past:
            people = await self.people(record.players)
            lines.append(history.past_game(record, counts[record.id], people))
        return p.History(player=player_id, games=lines)

    async def replay(self, game_id: str) -> p.GameReplay:
        """A stored game as ``game_record`` sends it; ``unknown_game_id`` if there is none."""
        loaded = await self.store.load_game(game_id)
        if loaded is None:
            raise errors.UnknownGameId(f"there is no stored game {game_id!r}")
        record, moves = loaded
        return history.replay(record, moves, await self.people(record.players))

    # --- sending ---------------------------------------------------------------------------

    def send_to(self, clients: Iterable[Client], message: BaseModel) -> None:
        targets = [c.ws for c in clients]
        if targets:
            self.send_raw(targets, p.encode(message))

    def send_raw(self, targets: list[ServerConnection], data: str) -> None:
        if targets:
            broadcast(targets, data)
            for ws in targets:
                transport = ws.transport
                if transport is not None and (
                    transport.get_write_buffer_size() > self.settings.max_buffered_bytes
                ):
                    log.warning("closing a client that stopped reading")
                    transport.abort()

    def deliver(self, out: Outcome) -> None:
        for send in out.sends:
            self.to_players(send.to, send.message)

    def to_players(self, player_ids: Sequence[str], message: BaseModel) -> None:
        """Send to every connection of these players: this node's, and in a cluster the
        other nodes' (through ``Cluster.publish``)."""
        data = p.encode(message)
        self.deliver_local(player_ids, data)
        if self.cluster is not None:
            self.cluster.publish(player_ids, data)

    def deliver_local(self, player_ids: Iterable[str], data: str) -> None:
        """Send an encoded message to this node's connections of these players."""
        self.send_raw([c.ws for pid in player_ids for c in self.clients.get(pid, ())], data)

    async def carry(self, room: Room | None, out: Outcome) -> None:
        """Save the game row if it changed, then announce, then rate a game that just
        finished (``server.rating_desk``), then start the AI if it is due. In a cluster, a
        room this node does not hold a lease on yet (a new one) is claimed first, and the
        registry of live rooms is brought up to date before the announcement (what people
        hear of is what other nodes see)."""
        if room is not None and self.node is not None:
            await self.node.hold(room)
        record = None
        if out.save_game and room is not None:
            record = self.fenced(room.record())
            await self.store.save_game(record)
        if room is not None and self.node is not None:
            await self.node.registered(room)
        self.deliver(out)
        if (room is not None and record is not None
                and any(isinstance(send.message, p.GameOver) for send in out.sends)):
            await self._rate(room, record)
        if out.ai is not None and room is not None:
            self._start_ai(room, out.ai)
        if room is not None:
            self._arm_flag(room)
            if out.forced is not None:
                await self._play_forced(room, out.forced)

    async def _play_forced(self, room: Room, plan: PlannedMove) -> None:
        """Store and announce the pass the server plays for a person (``Outcome.forced``);
        the caller holds the room's lock. If it cannot be stored, the person may still send
        the pass, as in an untimed game."""
        try:
            await self.store.append_move(self.fenced(plan.record))
        except Fenced:
            self.let_go(room.id)
            return
        except Exception:
            log.exception("could not store a forced pass in room %s", room.id)
            return
        await self.carry(room, room.apply_move(plan, self.now()))

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
            delay, self._spawn_flag_check, room)

    def _spawn_flag_check(self, room: Room) -> None:
        self.flag_timers.pop(room.id, None)
        task = asyncio.create_task(self._check_flag(room))
        self.ai_tasks.add(task)
        task.add_done_callback(self.ai_tasks.discard)

    async def _check_flag(self, room: Room) -> None:
        """The timer's check: end the game if the flag fell (else arm the timer again)."""
        if self.stopping.is_set() or self.lobby.rooms.get(room.id) is not room:
            return  # closed, or run by another node of the cluster now
        async with self.lock(room.id):
            out = room.check_flag(self.now())
            if not out.sends:  # woken a little early: the clock still runs
                self._arm_flag(room)
                return
            try:
                await self.carry(room, out)
            except Exception:
                log.exception("failed to end room %s on time", room.id)

    async def show_ratings(self, room: Room) -> None:
        """Look up the ratings of everyone seated in ``room`` (and its AI level) and hand
        them to it, for the messages made from now on (a room brought back from storage)."""
        people = [s.player.id for s in room.seats if s.kind == "human" and s.player is not None]
        level = next((s.level for s in room.seats if s.kind == "ai"), None)
        room.note_ratings(await self.ratings.seat_ratings(room.game.name, people, level))

    async def _rate(self, room: Room, record: GameRecord) -> None:
        """Rate a game whose finish was just stored and announced (``rating_change`` goes
        out after ``game_over``). A failure is logged, never the caller's: the game's
        result stands either way."""
        try:
            await self.ratings.rate(room.id, record)
        except Exception:
            log.exception("could not rate game %s", record.id)

    def fenced(self, record: Any) -> Any:
        """``record`` (a game or a move) as this server writes it: in a cluster, with this
        node's epoch for its room (``ClusterNode.fenced``)."""
        return record if self.node is None else self.node.fenced(record)

    def epoch(self, room_id: str) -> int:
        """The fencing token this server writes the room's game with (0 alone)."""
        return 0 if self.node is None else self.node.epoch(room_id)

    def let_go(self, room_id: str) -> None:
        """Another node of the cluster runs the room now: forget it here (its clocks too:
        the node that runs it checks its flag)."""
        timer = self.flag_timers.pop(room_id, None)
        if timer is not None:
            timer.cancel()
        if self.node is not None:
            self.node.let_go(room_id)

    def _start_ai(self, room: Room, turn: AiTurn) -> None:
        task = asyncio.create_task(self._ai_move(room, turn))
        self.ai_tasks.add(task)
        task.add_done_callback(self.ai_tasks.discard)

    def lock(self, room_id: str) -> asyncio.Lock:
        lock = self.locks.get(room_id)
        if lock is None:
            lock = self.locks[room_id] = asyncio.Lock()
        return lock

    # --- connections -----------------------------------------------------------------------

    async def handler(self, ws: ServerConnection) -> None:
        """One connection: hello first, then commands until it closes. A saturated node
        closes it at once (1013, with the reason) instead."""
        busy = self.gauge.busy(time.monotonic())
        if busy is not None:
            await ws.close(CloseCode.TRY_AGAIN_LATER, f"{busy}; try again shortly")
            return
        self.gauge.connections += 1
        try:
            await self._serve_connection(ws)
        finally:
            self.gauge.connections -= 1
        await ws.wait_closed()
        release_transport(ws.transport)

    async def _serve_connection(self, ws: ServerConnection) -> None:
        client = Client(ws, TokenBucket(self.settings.messages_per_second,
                                         self.settings.burst, self.now()))
        timer = asyncio.get_running_loop().call_later(self.settings.hello_seconds,
                                                      self._hello_overdue, client)
        try:
            async for frame in ws:
                if client.closing is not None:
                    continue
                verdict = self._admit(client, frame)
                if verdict != "ok":
                    continue
                message: BaseModel | None = None
                try:
                    message = p.parse_client(frame)
                    await self._dispatch(client, message)
                except errors.ProtocolError as exc:
                    self.refuse(client, exc, message)
                    if exc.close_code is not None:
                        client.close(exc.close_code, exc.code)
                except ConnectionClosed:
                    raise
                except Exception:
                    log.exception("failed to handle a message")
                    self.refuse(client, errors.InternalError("the server failed; try again"),
                                 message)
        except ConnectionClosed:
            pass
        finally:
            timer.cancel()
            await self._gone(client)

    def _hello_overdue(self, client: Client) -> None:
        if client.player is None and client.closing is None:
            exc = errors.HelloRequired(
                f"no hello within {self.settings.hello_seconds:g} s; closing the connection")
            self.refuse(client, exc, None)
            client.close(1008, exc.code)

    def refuse(self, client: Client, exc: errors.ProtocolError,
                message: BaseModel | None) -> None:
        ref = getattr(message, "id", None) if message is not None else exc.ref
        room = getattr(message, "room", None)
        self.send_to([client], p.error_message(exc, ref=ref, room=room))

    def _admit(self, client: Client, frame: str | bytes) -> str:
        """Size and rate checks before parsing: ``ok``, ``skip`` (refused) or ``close``."""
        size = len(frame) if isinstance(frame, bytes) else len(frame.encode("utf-8"))
        if size > self.settings.max_message_bytes:
            self.refuse(client, errors.MessageTooBig(
                f"a message may be at most {self.settings.max_message_bytes} bytes; "
                f"this one was {size}", limit=self.settings.max_message_bytes), None)
            client.close(1009, "message too big")
            return "close"
        now = self.now()
        wait = client.bucket.take(now)
        if wait > 0:
            strikes = client.strikes
            strikes.append(now)
            while strikes[0] <= now - self.settings.flood_window_seconds:
                strikes.popleft()
            if len(strikes) > self.settings.flood_strikes:
                client.close(1008, "too many messages")
                return "close"
            self.refuse(client, errors.RateLimited(
                f"too many messages: at most {self.settings.messages_per_second:g} a second "
                f"(bursts of {self.settings.burst})", retry_after=round(wait, 3)), None)
            return "skip"
        return "ok"

    async def _gone(self, client: Client) -> None:
        await self.bots.gone(client)
        self.desk.gone(client)
        self.accounts.forget(client)
        player = client.player
        if player is None:
            return
        mine = self.clients.get(player.id)
        if mine is None:
            return
        mine.discard(client)
        if mine:
            return
        del self.clients[player.id]
        if (self.cluster is not None and not self.stopping.is_set()
                and await self.cluster.connected(player.id, online=False)):
            return  # still connected through another node: not away
        out = self.lobby.disconnect(player.id, self.now())
        self.deliver(out)

    # --- commands --------------------------------------------------------------------------

    async def _dispatch(self, client: Client, message: BaseModel) -> None:
        if isinstance(message, p.Hello):
            await self._hello(client, message)
            return
        player = client.player
        if player is None:
            raise errors.HelloRequired("send hello first")
        if isinstance(message, p.Ping):
            self.send_to([client], p.Pong(id=message.id))
        elif isinstance(message, p.ListRooms):
            self.send_to([client], self.lobby.open_rooms() if self.node is None
                         else await self.node.open_rooms())
        elif isinstance(message, p.ListHistory):
            self.send_to([client], await self._history(message.player or player.id,
                                                        message.limit))
        elif isinstance(message, p.GetStats):
            self.send_to([client], await self.stats())
        elif isinstance(message, p.GetGame):
            record = await self.replay(message.game_id)
            self.send_to([client], p.GameRecordMessage(record=record))
        elif isinstance(message, p.RequestReview | p.Analyse):
            await self.reviews.handle(client, message)
        elif isinstance(message, p.CreateRoom):
            await self.bots.check_games(player.id)
            if self.node is not None:
                await self.node.check_room_limit(player.id)
            level = (message.opponent.level if isinstance(message.opponent, p.AiOpponent)
                     else None)
            ratings = await self.ratings.seat_ratings(message.game, [player.id], level)
            room, out = self.lobby.create(player, message.game, message.opponent,
                                          message.seat, self.now(), message.time_control,
                                          ratings)
            async with self.lock(room.id):
                await self.carry(room, out)
        elif isinstance(message, p.ROOM_COMMANDS):
            if self.node is not None and await self.node.forwarded(client, player, message):
                return
            await self.room_command(player, message)
        elif isinstance(message, p.CHALLENGE_CLIENT_MESSAGES):
            await self.bots.handle(client, player, message)
        elif isinstance(message, p.RegisterBot):
            self.send_to([client], await self.bots.register(client, message.name))
        elif isinstance(message, ADMIN_MESSAGES):
            await self.desk.handle(client, message)
        elif isinstance(message, p.ACCOUNT_MESSAGES):
            await self.accounts.handle(client, player, message)
        elif isinstance(message, p.RATING_MESSAGES):
            await self.ratings.handle(client, player, message)
        else:  # pragma: no cover - the union is exhaustive
            raise errors.UnknownType(f"unhandled message {type(message).__name__}")

    async def room_command(self, player: Player, message: p.RoomCommand) -> None:
        if self.node is not None:
            await self.node.settled(message.room)
        room_id = self.lobby.room(message.room).id  # unknown_room before waiting for any lock
        async with self.lock(room_id):
            room = self.lobby.room(room_id)  # it may have closed while we waited
            now = self.now()
            flagged = room.check_flag(now)  # a move after the flag fell comes too late
            if flagged.sends:
                await self.carry(room, flagged)
            await self.bots.check_command(player.id, message, room)
            if isinstance(message, p.Move):
                plan = room.check_move(player.id, message.ply, message.move, now)
                try:
                    await self.store.append_move(self.fenced(plan.record))
                except DuplicateMove:
                    raise errors.StalePly("that ply is already played",
                                          expected=len(room.moves) + 1) from None
                except Fenced:
                    self.let_go(room_id)
                    raise errors.InternalError(f"room {room_id} is run by another server "
                                               "now; send that again") from None
                out = room.apply_move(plan, now)
            elif isinstance(message, p.JoinRoom):
                sitting = room.status == "waiting" and room.seat_of(player.id) is None
                if self.node is not None and sitting:
                    await self.node.check_room_limit(player.id)
                rating = None
                if sitting:
                    rating = (await self.ratings.seat_ratings(
                        room.game.name, [player.id]))[player.id]
                out = self.lobby.join(player, room_id, now, rating)
            elif isinstance(message, p.Spectate):
                out = self.lobby.spectate(player, room_id, now)
            elif isinstance(message, p.Resign):
                out = room.resign(player.id, now)
            elif isinstance(message, p.OfferRematch):
                out = room.offer_rematch(player.id, game_id_of(room.id, room.round + 1), now)
            elif isinstance(message, p.AcceptRematch):
                out = room.accept_rematch(player.id, game_id_of(room.id, room.round + 1), now)
            elif isinstance(message, p.Claim):
                out = room.claim(player.id, now)
            elif isinstance(message, p.TakeBack):
                plies = room.check_take_back(player.id)
                await self.store.take_back(room.game_id, len(room.moves) - plies,
                                           self.epoch(room.id))
                out = room.take_back(plies, now)
            elif isinstance(message, p.OfferDraw):
                out = room.offer_draw(player.id, now)
            elif isinstance(message, p.AnswerDraw):
                out = room.answer_draw(player.id, message.accept, now)
            else:
                out = self.lobby.leave(player.id, room_id, now)
            await self.carry(room, out)
        if room_id not in self.lobby.rooms:
            self.locks.pop(room_id, None)

    def token_for(self, player_id: str) -> str:
        """The resume token of ``player_id``: the id signed with the server's secret, so it
        is checked without a lookup and stays valid across restarts sharing the secret."""
        mac = hmac.new(self.secret, player_id.encode(), hashlib.sha256).digest()[:18]
        return f"{player_id}.{base64.urlsafe_b64encode(mac).decode()}"

    async def _resumed(self, token: str, client: Client) -> Player:
        if self.accounts.is_session(token):
            return await self.accounts.resume(client, token)
        player_id = token.rpartition(".")[0]
        if not player_id or not hmac.compare_digest(self.token_for(player_id), token):
            raise errors.BadResumeToken("that resume token is not valid here; say hello without it")
        player = self.players.get(player_id)
        if player is None:
            record = await self.store.load_player(player_id)
            if record is None:
                raise errors.BadResumeToken("that player is unknown here; say hello without it")
            player = self.players[player_id] = Player(record.id, record.name,
                                                      bot=record.kind == "bot")
        return player

    async def _guest_name(self, name: str) -> str:
        """The name a guest asking for ``name`` is shown by: ``name`` itself unless an account
        holds it (in any letter case), then ``"name (guest)"``, so nobody can pass for a
        signed-up person. Bots and admins cannot take an account's name at all; guests are
        not refused, since a page says hello with its name on its own."""
        if await self.store.find_account(name) is None:
            return name
        return f"{name} (guest)"

    async def _rename(self, player: Player, name: str) -> Player:
        """The guest ``player`` now goes by ``name`` (as ``_guest_name`` has it): stored, and
        shown in the rooms it sits in (from the next message that carries seats) and on its
        other connections."""
        name = await self._guest_name(name)
        renamed = Player(player.id, name, bot=player.bot)
        record = await self.store.load_player(player.id)
        created = record.created_at if record is not None else time.time()
        await self.store.save_player(PlayerRecord(player.id, name, "guest", created))
        self.players[player.id] = renamed
        self.lobby.rename(renamed)
        for client in self.clients.get(player.id, ()):
            client.player = renamed
        return renamed

    async def restore(self) -> int:
        """Bring back the unfinished games of the store (after a restart); returns how many.

        Their players are away until they say hello with their resume token (within the
        grace period); an AI whose turn it is moves at once.
        """
        count = 0
        if self.node is not None:
            return await self.node.adopt_unfinished()
        for record, moves in await self.store.unfinished_games():
            people = await self.people(record.players)
            for player in people.values():
                self.players.setdefault(player.id, player)
            try:
                room, out = self.lobby.restore(record, moves, people, self.now())
            except (ValueError, KeyError):
                log.exception("cannot restore game %s", record.id)
                continue
            await self.show_ratings(room)
            await self.carry(room, out)
            count += 1
        return count

    async def _hello(self, client: Client, hello: p.Hello) -> None:
        if client.player is not None:
            raise errors.HelloRequired("this connection already said hello")
        if hello.version != p.PROTOCOL_VERSION:
            raise errors.UnsupportedVersion(
                f"this server speaks protocol version {p.PROTOCOL_VERSION}, "
                f"not {hello.version}", supported=p.PROTOCOL_VERSION)
        if hello.token is not None:
            player = await self.bots.login(client, hello.token)
            token = self.token_for(player.id)
        elif hello.resume is not None:
            player = await self._resumed(hello.resume, client)
            await self.bots.refuse_resume(player.id)
            await self.accounts.refuse_resume(client, player.id)
            token = hello.resume
            name = (hello.name or "").strip()
            if name and name != player.name and client.account is None:  # accounts keep theirs
                player = await self._rename(player, name)
        else:
            name = (hello.name or "").strip() or f"Guest {secrets.randbelow(9000) + 1000}"
            name = await self._guest_name(name)
            player = Player(secrets.token_hex(6), name)
            token = self.token_for(player.id)
            self.players[player.id] = player
            await self.store.save_player(PlayerRecord(player.id, name, "guest", time.time()))
        client.player = player
        self.clients.setdefault(player.id, set()).add(client)
        self.send_to([client], p.Welcome(
            version=p.PROTOCOL_VERSION, player=player.view(), resume=token,
            limits=self.bots.limits(client, self.settings.limits()), games=self._games,
            time_controls=[c.view() for c in self.settings.time_controls.values()],
        ))
        self.deliver(self.lobby.reconnect(player.id, self.now()))
        if self.cluster is not None and len(self.clients[player.id]) == 1:
            await self.cluster.connected(player.id, online=True)
        await self.bots.greet(client, player.id)

    async def stats(self) -> p.Stats:
        """The ``stats`` message: the AI pool and its position cache (see docs/PROTOCOL.md)."""
        pool = cache = shared = None
        settings = self.pool.cache if self.pool is not None else None
        if self.pool is not None:
            s = self.pool.snapshot()
            pool = p.PoolView(
                workers=s.workers, ready=s.ready, busy=s.busy, idle=s.ready - s.busy,
                queued=s.queued, jobs=s.jobs, fallbacks=s.fallbacks, from_cache=s.from_cache,
                restarts=s.restarts, move_seconds_p50=s.percentile(0.5),
                move_seconds_p99=s.percentile(0.99),
            )
            if settings is not None:
                cache = _cache_view(s.cache, settings.tiers(), settings.database_url is not None)
        if settings is not None and settings.redis_url and self.cache is not None:
            try:
                counters = await self.cache.shared_stats()
            except Exception:  # Redis down: say nothing rather than fail the request
                log.warning("shared cache counters unavailable", exc_info=True)
            else:
                shared = _cache_view({k: int(counters.get(k, 0)) for k in COUNTED},
                                     settings.tiers(), settings.database_url is not None)
        return p.Stats(pool=pool, cache=cache, shared_cache=shared)

    # --- the AI ----------------------------------------------------------------------------

    async def _ai_move(self, room: Room, turn: AiTurn) -> None:
        """Find, store and announce the AI's move; a stale answer is dropped quietly.

        The game never stalls on the AI: a pool that fails (a worker that died while idle, a
        closed pool) is replaced by ``quick_move``; a move the store refuses is retried after
        each pause of ``Settings.store_retry_seconds``. A move that never gets stored is not
        played: the room stops showing the AI as thinking and its people get an
        ``internal_error`` naming the room; the sweeper asks the AI again later.
        """
        seed = zlib.crc32(f"{room.game_id}:{turn.ply}".encode())
        asked_at = time.monotonic()
        try:
            await self.desk.refresh_levels()  # any server's level edit counts from this move on
            move, thought = await self._think(room, turn, seed)
            shown_after = self.settings.min_ai_move_seconds - (time.monotonic() - asked_at)
            if shown_after > 0 and turn.ply > 0:
                await asyncio.sleep(shown_after)  # let the person see their own move land
            if self.stopping.is_set():
                return  # not stored, so not played: the restarted server asks again
            if self.cluster is not None and not self.cluster.holds(room.id):
                return  # another node runs the room now and asks its own AI
            async with self.lock(room.id):
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
                if await self._store_ai_move(room, plan.record):
                    await self.carry(room, room.apply_move(plan, self.now()))
                    return
        except Fenced:
            log.warning("room %s was taken over while its AI thought; letting it go", room.id)
            self.let_go(room.id)
            return
        except Exception:
            log.exception("the AI's move in room %s failed", room.id)
        self._ai_failed(room, turn)

    async def _think(self, room: Room, turn: AiTurn, seed: int
                     ) -> tuple[int, p.AiThought | None]:
        """The AI's move and what its search saw: the pool's if it answers, else
        ``quick_move``'s (no thought). A long search's iterations go out as ``ai_thinking``
        meanwhile, at most one each ``Settings.thinking_interval``."""
        if self.pool is None:
            return await quick_move_off_loop(turn.state, seed), None
        try:
            level = find(turn.game, turn.level, self.levels)
        except KeyError:
            level = levels_of(turn.game, self.levels)[0]
        last_sent = [-1.0]

        def progress(step: Progress) -> None:
            now = self.now()
            if now - last_sent[0] < self.settings.thinking_interval:
                return
            last_sent[0] = now
            self.deliver(room.ai_progress(
                turn.round, turn.ply, step.depth, step.score, step.nodes, step.seconds,
                step.exact, win_in(turn.game, turn.ply, step.score, step.exact),
                line=turn.line))

        try:
            answer = await self.pool.think(AiJob(turn.game, turn.moves, level, seed), progress)
        except Exception:
            log.warning("the AI pool failed in room %s; playing a quick move", room.id,
                        exc_info=True)
            return await quick_move_off_loop(turn.state, seed), None
        if answer.depth is None:
            return answer.move, None
        return answer.move, p.AiThought(
            depth=answer.depth, score=answer.score, nodes=answer.nodes or 0,
            seconds=round_seconds(answer.seconds), exact=answer.exact,
            win_in=None if answer.score is None
            else win_in(turn.game, turn.ply, answer.score, answer.exact))

    async def _store_ai_move(self, room: Room, record: MoveRecord) -> bool:
        """Store the AI's move, retrying after each pause of ``store_retry_seconds``; True
        once it is stored (also when an attempt reported failure but the store has it).
        ``Fenced`` if another node took the room over."""
        pauses = self.settings.store_retry_seconds
        record = self.fenced(record)
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

    def _ai_failed(self, room: Room, turn: AiTurn) -> None:
        """The AI's move for ``turn`` was not played: if the room still waits for it, stop
        showing the AI as thinking and tell the room's people why."""
        out = room.ai_failed(turn.round, turn.ply, line=turn.line)
        if not out.sends:
            return
        self.deliver(out)
        clients = [c for pid in room.members() for c in self.clients.get(pid, ())]
        self.send_to(clients, p.error_message(errors.InternalError(
            "the AI's move could not be saved, so it was not played; the server will try "
            "again in a few seconds"), room=room.id))

    # --- housekeeping ----------------------------------------------------------------------

    async def shut_down(self, ws_server: WsServer, sweeper: asyncio.Task[None]) -> None:
        """Stop taking work and let what touches the store finish, without cancelling it.

        A task cancelled in the middle of a database call makes SQLAlchemy close its aiosqlite
        connection from a task of its own, and with the CPU busy that close was seen never to
        finish (the event loop then hung at exit: 8 of 25 runs of a bot test), so nothing here
        is cancelled while it may be using the store. The sweeper and the AI tasks are told to
        stop; the admin desk cancels a calibration under way (recorded as failed) before the
        pool answers what is still thinking at once (answers that ``_ai_move`` drops); then
        the tasks are awaited. One still running after ``SHUTDOWN_SECONDS`` is cancelled as a
        last resort.
        """
        self.stopping.set()
        for timer in self.flag_timers.values():
            timer.cancel()
        self.flag_timers.clear()
        if self.cluster is not None:
            # Other nodes run this node's rooms from now on: come back through them at once.
            ws_server.close(code=CloseCode.SERVICE_RESTART, reason=RECONNECT_REASON)
        else:
            ws_server.close()
        await ws_server.wait_closed()
        await self.desk.close()  # before the pool: a calibration must not finish on quick moves
        if self.pool is not None:
            await self.pool.close()
        await self.reviews.close()
        pending = [sweeper, *self.ai_tasks]
        _, late = await asyncio.wait(pending, timeout=SHUTDOWN_SECONDS)
        for task in late:
            log.warning("cancelling a task still running at shutdown: %r", task)
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=SHUTDOWN_SECONDS)

    async def sweep_forever(self) -> None:
        """Every few seconds until ``stopping`` is set: close abandoned rooms, ask the AI
        again where its last move could not be stored, cut the connections of bots whose
        token was revoked elsewhere, and end admin sessions whose token was revoked."""
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.settings.sweep_seconds)
                return
            for room in self.lobby.overdue(self.now()):
                await self._check_flag(room)
            for room, out in self.lobby.sweep(self.now()):
                try:
                    await self.carry(room, out)
                except Exception:
                    log.exception("failed to close room %s", room.id)
                self.locks.pop(room.id, None)
            for room, turn in self.lobby.stalled_ai():
                self._start_ai(room, turn)
            try:
                await self.bots.cut_revoked()
            except Exception:
                log.exception("failed to check the bot tokens for revocations")
            try:
                await self.desk.cut_revoked()
            except Exception:
                log.exception("failed to check the admin tokens for revocations")


def _cache_view(counts: Mapping[str, int], tiers: tuple[str, str], durable: bool
                ) -> p.CacheView:
    """Cache counters as ``stats`` shows them: the hot tier sees every lookup, the durable
    tier only the hot tier's misses."""
    lookups, hot, deep, misses = (counts[k] for k in COUNTED)

    def rate(hits: int, asked: int) -> float:
        return round(hits / asked, 4) if asked else 0.0

    views = [p.CacheTierView(tier=tiers[0], hits=hot, misses=lookups - hot,  # type: ignore[arg-type]
                             hit_rate=rate(hot, lookups))]
    if durable:
        views.append(p.CacheTierView(tier=tiers[1], hits=deep, misses=misses,  # type: ignore[arg-type]
                                     hit_rate=rate(deep, deep + misses)))
    return p.CacheView(lookups=lookups, hits=hot + deep, misses=misses,
                       hit_rate=rate(hot + deep, lookups), tiers=views)


@dataclass
class Running:
    """A started server: its address, the glue object, and how to stop it."""

    app: DiscusServer
    ws_server: WsServer
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"


@contextlib.asynccontextmanager
async def running(
    host: str = "127.0.0.1",
    port: int = 0,
    store: Store | None = None,
    pool: Pool | None = None,
    settings: Settings | None = None,
    secret: bytes | None = None,
    cache: Any = None,
    redis_url: str | None = None,
    cluster: Cluster | None = None,
    **server_options: Any,
) -> AsyncIterator[Running]:
    """Serve until the block ends, then close connections (1001), the pool, the position
    cache and the store.

    ``port=0`` picks a free port (``Running.port`` says which). The caller owns ``pool``'s
    start (and opens ``cache``, a ``PositionCache``); this closes them. With a SQL store the
    levels are the database's, kept current through ``redis_url`` (else by polling it).
    With ``cluster`` this is one node of several: it runs the rooms it creates or takes
    over, and gives them up when the block ends.
    """
    store = store if store is not None else MemoryStore()
    await store.open()
    settings = settings or Settings()
    app = DiscusServer(store, pool, settings, secret=secret)
    app.cache = cache
    app.desk = AdminDesk(app, getattr(store, "engine", None), redis_url)
    app.bots = BotDesk(app, getattr(store, "engine", None))
    await app.desk.open()
    if cluster is not None:
        app.cluster = cluster
        app.node = ClusterNode(app, cluster)
        await cluster.open(app.node)
        app.bots.shared = SharedBotLimiter(cluster.redis, cluster.prefix, cluster.node,
                                           app.bots.limiter.limits)
        app.accounts.shared = SharedNameLimiter(
            cluster.redis, cluster.prefix, app.accounts.by_name.limit,
            app.accounts.by_name.window)
        app.bots.shared_challenges = SharedChallengeBook(
            cluster.redis, cluster.prefix, app.bots.challenges.ids,
            app.bots.challenges.per_challenger, app.bots.challenges.ttl)
    restored = await app.restore()
    if restored:
        log.info("restored %d unfinished games", restored)
    ws_server = await serve(
        app.handler,
        host,
        port,
        process_request=app.process_request,
        max_size=settings.max_message_bytes * 4,
        max_queue=4,
        compression=None,  # messages are small; per-connection zlib state costs ~100 KB
        server_header="discus",
        **server_options,
    )
    sweeper = asyncio.create_task(app.sweep_forever())
    if cluster is not None:
        cluster.start()
    gauging = asyncio.create_task(overload.watch(app.gauge))
    sock = next(iter(ws_server.sockets))
    actual_port = sock.getsockname()[1]
    try:
        yield Running(app, ws_server, host, actual_port)
    finally:
        gauging.cancel()
        await app.shut_down(ws_server, sweeper)
        if cluster is not None:
            await cluster.close()
        if cache is not None:
            await cache.close()
        await store.close()


async def serve_forever(host: str = "127.0.0.1", port: int = 8000, store: Store | None = None,
                        workers: int | None = None, secret: bytes | None = None,
                        redis_url: str | None = None, settings: Settings | None = None,
                        lease: float | None = None) -> None:
    """Run until SIGINT or SIGTERM, then shut down cleanly.

    The store is opened (and migrated) first; then the position cache (Redis at
    ``redis_url``, else ``$REDIS_URL``, else in-process LRUs, over the store's table when it
    is SQL), then the workers, which open the same cache themselves. With Redis and a SQL
    store the server is a node of a cluster (``server.cluster``) sharing both: leases of
    ``lease`` seconds (default ``ClusterSettings``), renewed three times as often.
    """
    from server.engines import CacheSettings
    from server.storage import SqlStore, open_cache
    from server.storage import redis_url as resolve_redis_url

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    store = store if store is not None else MemoryStore()
    await store.open()
    cache = await open_cache(redis_url, store)
    sql_url = store.url if isinstance(store, SqlStore) else None
    shared = resolve_redis_url(redis_url)
    pool: Pool
    if workers == 0:
        if shared is None:
            raise ValueError("a server without AI workers needs Redis (REDIS_URL or "
                             "--redis-url), where `discus worker` processes take its AI moves")
        from server.engines import QueuedPool

        pool = QueuedPool(shared, database_url=sql_url)
    else:
        pool = AiPool(processes=workers, cache=CacheSettings(shared, sql_url))
    await pool.start()
    cluster = None
    if shared is not None and sql_url is not None:
        from server.cluster import ClusterSettings

        timing = ClusterSettings() if lease is None else ClusterSettings(
            lease_seconds=lease, renew_seconds=lease / 3)
        cluster = Cluster(shared, settings=timing)
    async with running(host, port, store=store, pool=pool, settings=settings, secret=secret,
                       cache=cache, redis_url=shared, cluster=cluster) as server:
        collector = Collector()
        collector.start()
        log.info("Discus on http://%s:%d/ (websocket %s)", host, server.port, server.url)
        print(f"Discus serving http://{host}:{server.port}/ — Ctrl-C to stop", flush=True)
        await stop.wait()
        collector.stop()
        print("Discus shutting down", flush=True)


def persistent_secret() -> bytes:
    """``$DISCUS_SECRET``, else a random secret kept in the data directory (created once), so
    resume tokens stay valid across restarts. Servers sharing a database must share it."""
    from_env = os.environb.get(b"DISCUS_SECRET")
    if from_env:
        return from_env
    from server.storage.config import data_dir

    path = data_dir() / "server-secret"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_bytes(secrets.token_bytes(32))
    return path.read_bytes()


def run_loop(main: Coroutine[Any, Any, None], loop: str | None = None) -> None:
    """Run ``main`` on uvloop where it is installed (the ``fast`` extra), else on asyncio's
    own loop; ``loop`` (else ``$DISCUS_EVENT_LOOP``) ``"asyncio"`` forces the latter.
    uvloop is a drop-in loop written in C: ``bench.load --loop`` measures what it saves."""
    choice = loop or os.environ.get("DISCUS_EVENT_LOOP") or "uvloop"
    if choice == "uvloop":
        try:
            import uvloop
        except ImportError:
            choice = "asyncio"
        else:
            uvloop.run(main)
            return
    if choice != "asyncio":
        raise ValueError(f"unknown event loop {choice!r}: 'uvloop' or 'asyncio'")
    asyncio.run(main)


def run(host: str = "127.0.0.1", port: int = 8000, database_url: str | None = None,
        redis_url: str | None = None, workers: int | None = None,
        bot_registration: bool = False, lease: float | None = None) -> None:
    """``discus serve``: the whole server in this process plus its AI worker processes.

    Games are kept by ``server.storage``: ``database_url``, else ``$DATABASE_URL``, else the
    embedded SQLite file in the data directory; unfinished games come back on restart.
    The AI workers share a position cache: ``redis_url`` (else ``$REDIS_URL``) for the hot
    tier, else an LRU per process, over the database's ``position_cache`` table.
    ``bot_registration`` lets connections make bot accounts (``Settings.bot_registration``).
    """
    from server.storage import open_store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = Settings(bot_registration=bot_registration,
                        min_ai_move_seconds=MIN_AI_MOVE_SECONDS)
    run_loop(serve_forever(host, port, store=open_store(database_url), workers=workers,
                              secret=persistent_secret(), redis_url=redis_url,
                              settings=settings, lease=lease))


def main() -> None:
    """``python -m server.app``: serve on the defaults."""
    run()


if __name__ == "__main__":
    main()
