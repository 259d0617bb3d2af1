"""The limits published to bots, and a pure limiter that enforces them.

``BotLimits`` is the one named place for the numbers (the server would publish them in
``welcome.limits``). ``BotLimiter`` keeps the counters and buckets; it does no I/O and reads
no clock: every call takes ``now`` (seconds, any monotonic origin). Each check raises
``LimitExceeded`` *before* counting anything, so a refused request leaves no trace, and says
which limit it hit and when to retry.

- ``concurrent_games``: unfinished games one bot may sit in. Refused until one ends; there
  is no clock to wait on, so ``retry_after`` is None.
- ``moves_per_minute``: a token bucket per bot holding ``move_burst`` moves, refilled at
  ``moves_per_minute / 60`` a second. ``retry_after`` is the time until one move is back.
- ``connections_per_token``: websockets open at once with one token. A further connection
  is refused with a clear error (close code 1008) and never kicks an earlier one.

``RegistrationLimits`` and ``RegistrationLimiter`` bound bot self-registration
(``register_bot``, when the server enables it) the same way, with the same error:

- ``registrations_per_connection``: accounts one connection may create. Refused for good on
  that connection, so ``retry_after`` is None.
- ``registrations_per_minute``: accounts the whole server creates in any 60 seconds.
  ``retry_after`` is the time until the oldest of them is a minute old.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Hashable
from dataclasses import dataclass, field

from server.errors import Detail


@dataclass(frozen=True)
class BotLimits:
    """Published limits for bot accounts."""

    concurrent_games: int = 5
    """Unfinished games one bot may sit in at once."""
    moves_per_minute: float = 120.0
    """Sustained move rate per bot, over all its games and connections."""
    move_burst: int = 20
    """Moves allowed at once before ``moves_per_minute`` applies."""
    connections_per_token: int = 2
    """Websockets open at once with one token (a second one lets a bot restart without
    waiting for the old connection to time out)."""

    def published(self) -> dict[str, int | float]:
        """The figures as a bot reads them (``welcome.limits`` once the server sends them)."""
        return {
            "concurrent_games": self.concurrent_games,
            "moves_per_minute": self.moves_per_minute,
            "move_burst": self.move_burst,
            "connections_per_token": self.connections_per_token,
        }


DEFAULT_BOT_LIMITS = BotLimits()


class LimitExceeded(ValueError):
    """A published limit refused a request. ``limit`` names it (a ``BotLimits`` field);
    ``allowed`` is its value; ``retry_after`` is seconds until it would pass, or None when
    it passes only once something ends (a game, a connection).

    Protocol form: ``error`` with code ``limit_exceeded`` and ``detail`` = ``detail()``.
    """

    code = "limit_exceeded"

    def __init__(self, limit: str, allowed: int | float, retry_after: float | None,
                 message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.allowed = allowed
        self.retry_after = retry_after
        self.message = message

    def detail(self) -> Detail:
        return {"limit": self.limit, "allowed": self.allowed, "retry_after": self.retry_after}


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class BotLimiter:
    """Connection counters and move buckets for every bot of one server. Keys are opaque
    strings: the bot's player id for moves, its token id for connections. Concurrent games
    are counted from the rooms themselves (``BotDesk.check_games``), not kept here."""

    limits: BotLimits = DEFAULT_BOT_LIMITS
    _connections: dict[str, int] = field(default_factory=dict)
    _moves: dict[str, _Bucket] = field(default_factory=dict)

    # --- connections -----------------------------------------------------------------------

    def open_connection(self, token_id: str) -> None:
        """Count a new connection, or raise if the token already has the most allowed."""
        held = self._connections.get(token_id, 0)
        allowed = self.limits.connections_per_token
        if held >= allowed:
            raise LimitExceeded(
                "connections_per_token", allowed, None,
                f"this bot token already has {held} open connection(s), the most allowed; "
                "close one first (earlier connections are kept)",
            )
        self._connections[token_id] = held + 1

    def close_connection(self, token_id: str) -> None:
        held = self._connections.get(token_id, 0) - 1
        if held > 0:
            self._connections[token_id] = held
        else:
            self._connections.pop(token_id, None)

    def connections(self, token_id: str) -> int:
        return self._connections.get(token_id, 0)

    # --- moves -----------------------------------------------------------------------------

    def take_move(self, bot_id: str, now: float) -> None:
        """Count one move at ``now``, or raise with ``retry_after`` if the bucket is empty."""
        rate = self.limits.moves_per_minute / 60.0
        burst = float(self.limits.move_burst)
        bucket = self._moves.get(bot_id)
        tokens = burst if bucket is None else min(burst, bucket.tokens + (now - bucket.stamp)
                                                  * rate)
        if tokens < 1.0:
            wait = math.ceil((1.0 - tokens) / rate * 1000) / 1000  # never round down to early
            raise LimitExceeded(
                "moves_per_minute", self.limits.moves_per_minute, wait,
                f"a bot may make {self.limits.moves_per_minute:g} moves a minute "
                f"(bursts of {self.limits.move_burst}); retry in {wait:g} s",
            )
        self._moves[bot_id] = _Bucket(tokens - 1.0, now)



# --- self-registration ---------------------------------------------------------------------


@dataclass(frozen=True)
class RegistrationLimits:
    """Published bounds on ``register_bot`` (``welcome.limits.bot_registration``)."""

    registrations_per_connection: int = 3
    """Bot accounts one connection may create."""
    registrations_per_minute: int = 5
    """Bot accounts the whole server creates in any 60 seconds, over all connections."""

    def published(self) -> dict[str, int]:
        return {
            "registrations_per_connection": self.registrations_per_connection,
            "registrations_per_minute": self.registrations_per_minute,
        }


DEFAULT_REGISTRATION_LIMITS = RegistrationLimits()

WINDOW_SECONDS = 60.0
"""The span ``registrations_per_minute`` counts over."""


@dataclass
class RegistrationLimiter:
    """Registrations of one server. ``take`` reserves one (or raises ``LimitExceeded``
    before counting anything); the caller must ``give_back`` a reservation whose account was
    not created (a bad or taken name), so only accounts that exist count. Connection keys
    are opaque; ``forget`` one when its connection ends."""

    limits: RegistrationLimits = DEFAULT_REGISTRATION_LIMITS
    _by_connection: dict[Hashable, int] = field(default_factory=dict)
    _recent: collections.deque[float] = field(default_factory=collections.deque)
    """When the registrations of the last ``WINDOW_SECONDS`` were taken, oldest first."""

    def take(self, connection: Hashable, now: float) -> None:
        """Count one registration by ``connection`` at ``now``, or raise if it would pass a
        limit (the per-connection one first: waiting never lifts it)."""
        made = self._by_connection.get(connection, 0)
        allowed = self.limits.registrations_per_connection
        if made >= allowed:
            raise LimitExceeded(
                "registrations_per_connection", allowed, None,
                f"a connection may register at most {allowed} bot(s) and this one has "
                f"registered {made}",
            )
        recent = self._recent
        while recent and recent[0] <= now - WINDOW_SECONDS:
            recent.popleft()
        per_minute = self.limits.registrations_per_minute
        if len(recent) >= per_minute:
            wait = math.ceil((recent[0] + WINDOW_SECONDS - now) * 1000) / 1000
            raise LimitExceeded(
                "registrations_per_minute", per_minute, wait,
                f"this server registers at most {per_minute} bots a minute; retry in "
                f"{wait:g} s",
            )
        recent.append(now)
        self._by_connection[connection] = made + 1

    def give_back(self, connection: Hashable, now: float) -> None:
        """Undo the ``take`` made at ``now`` by ``connection``: it created no account."""
        made = self._by_connection.get(connection, 0)
        if made <= 1:
            self._by_connection.pop(connection, None)
        else:
            self._by_connection[connection] = made - 1
        # Reservations of other connections may have come after it: remove this very stamp.
        for i in range(len(self._recent) - 1, -1, -1):
            if self._recent[i] == now:
                del self._recent[i]
                break

    def registered(self, connection: Hashable) -> int:
        return self._by_connection.get(connection, 0)

    def forget(self, connection: Hashable) -> None:
        """The connection ended (its count goes; its registrations still count server-wide)."""
        self._by_connection.pop(connection, None)
