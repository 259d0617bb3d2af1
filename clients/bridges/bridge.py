"""The bridge: an engine process behind a dialect, as the bot's ``Engine``.

It keeps one process for every game, tells it each turn the game's moves (and the clock,
as its protocol allows), and plays its answer if it comes in time and is legal. Anything
else (an illegal answer, a late one, a crash, a hang, a process that will not start) is an
``EngineFault``: the bot resigns that game only, the bridge logs what it sent and read,
and a new process is started for the next turn.

The margin: the server measures a move from its ``move_made`` until the move arrives, so
the network's two trips and the bot's own overhead are on our clock. The bridge takes
``margin_ms`` (default 300 ms) and the time since the message arrived off the time left
before it tells the engine anything, and gives up on the engine at that point.
Untimed games: ``move_seconds`` (default 10 s) bounds every answer.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from clients.bridges.framing import Ask, Dialect, EngineId, IllegalAnswer, Position, Resigned
from clients.bridges.keeper import EngineCrashed, EngineProcess, EngineTimeout
from clients.turns import EngineFault, Turn, TurnClock

log = logging.getLogger("discus.bot.engine")

MARGIN_MS = 300
"""Kept off the clock for the network's round trip and the bot's own work."""
MOVE_SECONDS = 10.0
"""An untimed game's bound on each answer."""
START_SECONDS = 30.0
"""How long a starting engine may take to answer its opening (loading books, tables)."""
TRANSCRIPT_LINES = 40
"""How much of the transcript a fault logs."""


class EngineBridge:
    """``choose_turn`` for the bot (``clients.turns.TurnEngine``). ``dialect``: makes a
    fresh framing per process (each start says hello again); ``command``: the engine's
    command line, run in ``cwd``. ``start`` starts it at once (the CLI does, to learn its
    name before entering a ladder); otherwise the first turn does."""

    def __init__(self, command: str | Sequence[str], dialect: Callable[[], Dialect], *,
                 cwd: Path | None = None, env: dict[str, str] | None = None,
                 margin_ms: int = MARGIN_MS, move_seconds: float = MOVE_SECONDS,
                 start_seconds: float = START_SECONDS) -> None:
        self.command = command
        self.make_dialect = dialect
        self.dialect = dialect()
        words = command if isinstance(command, str) else " ".join(command)
        self.name = f"{self.dialect.protocol}:{words}"
        self.cwd = cwd
        self.env = env
        self.margin_ms = margin_ms
        self.move_seconds = move_seconds
        self.start_seconds = start_seconds
        self.process: EngineProcess | None = None
        self.starts = 0
        """Processes started so far (1 + restarts)."""
        self.faults: list[str] = []
        """Why each fault cost a game, oldest first."""
        self._lock = threading.Lock()
        self._closed = False

    @property
    def identity(self) -> EngineId | None:
        """The engine's name (and version) as it last reported them."""
        return self.dialect.identity()

    @property
    def games(self) -> frozenset[str]:
        return self.dialect.games

    def start(self) -> EngineId | None:
        """Start the engine and say the protocol's opening; ``EngineFault`` if it fails."""
        with self._lock:
            self._ensure()
            return self.identity

    def close(self) -> None:
        """Stop the engine for good (a restart under way is called off)."""
        with self._lock:
            self._closed = True
            if self.process is not None:
                self.process.stop()
                self.process = None

    # --- the Engine the bot calls ------------------------------------------------------------

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        return self.choose_turn(Turn(game, tuple(moves), tuple(legal), seed, None,
                                     time.monotonic()))

    def choose_turn(self, turn: Turn) -> str:
        """The engine's move for ``turn``, or ``EngineFault``."""
        with self._lock:
            if turn.game not in self.dialect.games:
                raise EngineFault(f"a {self.dialect.protocol} engine does not play {turn.game}")
            if turn.legal == ("pass",):
                # A forced pass is no choice, and engines differ on whether they are asked
                # for one (the next turn tells the engine the whole game, pass included).
                return "pass"
            try:
                self._ensure()
                deadline, clock = self._deadline(turn)
                position = Position(turn.game, turn.moves, turn.legal, clock)
                asks = self.dialect.turn(position)
                answer = self._exchange(asks, deadline)
                return self.dialect.move(answer, turn.legal)
            except Resigned:
                raise EngineFault("the engine resigned", resigned=True) from None
            except (IllegalAnswer, EngineCrashed, EngineTimeout) as exc:
                kind = ("an illegal answer" if isinstance(exc, IllegalAnswer)
                        else "a crash" if isinstance(exc, EngineCrashed) else "no answer in time")
                self._fault(f"{kind}: {exc}")
                raise EngineFault(f"{kind}: {exc}") from None

    # --- inside --------------------------------------------------------------------------------

    def _deadline(self, turn: Turn) -> tuple[float, TurnClock | None]:
        """When the bridge gives up on the engine, and the clock it tells the engine (the
        time since the turn came and the margin taken off). Untimed, ``move_seconds`` from
        now: waiting for the engine (another game's search, a restart) costs no clock."""
        if turn.clock is None:
            return time.monotonic() + self.move_seconds, None
        spent_ms = int((time.monotonic() - turn.since) * 1000)
        left_ms = turn.clock.mine_ms - spent_ms - self.margin_ms
        clock = dataclasses.replace(turn.clock, mine_ms=max(0, left_ms))
        return time.monotonic() + max(0, left_ms) / 1000, clock

    def _ensure(self) -> None:
        """A running, greeted process (started anew after a fault)."""
        if self.process is not None and self.process.alive:
            return
        if self._closed:
            raise EngineFault("the bridge is closed")
        if self.process is not None:
            self.process.stop()
        self.dialect = self.make_dialect()
        self.process = EngineProcess(self.command, self.cwd, self.env)
        self.starts += 1
        try:
            self.process.start()
            self._exchange(self.dialect.opening(), time.monotonic() + self.start_seconds)
        except (IllegalAnswer, EngineCrashed, EngineTimeout) as exc:
            self._fault(f"the engine did not start: {exc}", restart=False)
            raise EngineFault(f"the engine did not start: {exc}") from None
        identity = self.dialect.identity()
        log.info("engine started (pid %s)%s", self.process.pid,
                 f": {identity.text()}" if identity else "")

    def _exchange(self, asks: Sequence[Ask], deadline: float) -> object:
        """Send each ask and read its answer by ``deadline``; the last answer."""
        process = self.process
        assert process is not None
        answer: object = None
        for ask in asks:
            process.send(ask.line)
            until = ask.until
            if until is None:
                continue
            while True:
                value = until(process.read_line(deadline))
                if value is not None:
                    answer = value
                    break
        return answer

    def _fault(self, reason: str, restart: bool = True) -> None:
        """Log the fault with the transcript's tail, then stop the process and (``restart``)
        start the next one. A start that failed is not retried here, but at the next turn:
        a broken command costs each game once instead of spinning."""
        self.faults.append(reason)
        process = self.process
        lines = list(process.transcript)[-TRANSCRIPT_LINES:] if process is not None else []
        log.warning("engine fault, it costs this game: %s; the last lines (> sent, < read, "
                    "! stderr):\n%s", reason, "\n".join(f"  {line}" for line in lines))
        if process is not None:
            process.stop()
        if not restart or self._closed:
            return
        # Start the next one now, off the bot's path: the fault is reported at once, and the
        # next turn (often the next game's first) finds the engine ready.
        threading.Thread(target=self._restart, daemon=True, name="bot-engine-restart").start()

    def _restart(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._ensure()
            except EngineFault:
                pass  # logged; the next turn tries again
