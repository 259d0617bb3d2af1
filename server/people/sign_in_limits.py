"""How many password guesses, sign-ups and admin logins a client may make, and where they
are counted: pure rules over a ``Counts`` store (this process's memory, or Redis on a
cluster: ``server.people.shared_counts.SharedCounts``).

The rules are built so that a guesser cannot lock the owner out of an account:

- failures are counted per (name, source): past ``free_failures`` each further attempt from
  that source on that name waits a delay that doubles, up to ``max_delay``;
- failures for a name from everywhere (``per_name`` within the window) slow the name down,
  but only for sources that have failed on it: the owner, signing in from an address with no
  failures for the name, still gets in at once;
- failures from one source across every name (``per_source``: a sprayer trying one password
  on many names) stop that source's sign-ins for the window;
- sign-ups per source (``sign_ups_per_source`` an hour) and admin logins per source
  (``admin_logins_per_source`` failures in the window) are limited too.

A *source* is the client's address as ``server.connections.client.source_of`` gives it.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SignInLimits:
    """Attempts allowed, named in one place (``Settings.sign_in``)."""

    per_connection: int = 10
    """``sign_up`` and ``sign_in`` attempts of one connection in the window, successful or
    not."""
    free_failures: int = 3
    """Failed passwords for one name from one source before delays start."""
    first_delay: float = 2.0
    """Seconds the next attempt on the name from that source waits after the first failure
    past ``free_failures``; each further failure doubles it."""
    max_delay: float = 300.0
    per_name: int = 20
    """Failed passwords for one name from every source in the window, past which sources
    that have failed on the name are refused (a source with no failure on it still passes)."""
    per_source: int = 30
    """Failed passwords from one source across every name in the window (a sprayer)."""
    sign_ups_per_source: int = 10
    """Accounts one source may make in ``sign_up_window``."""
    sign_up_window: float = 3600.0
    admin_logins_per_source: int = 10
    """Failed ``admin_login``s from one source in the window."""
    window_seconds: float = 300.0
    hashes_at_once: int = 2
    """Argon2 computations (about 0.1 s of a core each) running at once
    (``server.people.hash_queue``)."""
    hashes_per_source: int = 3
    """Hashes one source may have waiting or running; more get ``busy`` at once."""
    hashes_waiting: int = 64
    """Hashes waiting from everyone; more get ``busy`` at once."""


DEFAULT_SIGN_IN_LIMITS = SignInLimits()


class Counts(Protocol):
    """Timestamps of events per key over a sliding window: this process's or a cluster's.
    Times are wall-clock seconds (every node counts them alike)."""

    async def recent(self, key: str, now: float, window: float) -> tuple[int, float]:
        """How many events ``key`` had in the last ``window`` seconds, and when the latest
        was (0 for none)."""
        ...

    async def oldest(self, key: str, now: float, window: float) -> float:
        """When the oldest event still in the window was (``now`` for none)."""
        ...

    async def note(self, key: str, now: float, window: float) -> None: ...

    async def forget(self, key: str) -> None: ...


class LocalCounts:
    """``Counts`` in this process's memory."""

    def __init__(self) -> None:
        self._seen: dict[str, collections.deque[float]] = {}

    def _trim(self, key: str, now: float, window: float) -> collections.deque[float] | None:
        seen = self._seen.get(key)
        if seen is None:
            return None
        while seen and seen[0] <= now - window:
            seen.popleft()
        if not seen:
            del self._seen[key]
            return None
        return seen

    async def recent(self, key: str, now: float, window: float) -> tuple[int, float]:
        seen = self._trim(key, now, window)
        return (0, 0.0) if seen is None else (len(seen), seen[-1])

    async def oldest(self, key: str, now: float, window: float) -> float:
        seen = self._trim(key, now, window)
        return now if seen is None else seen[0]

    async def note(self, key: str, now: float, window: float) -> None:
        self._trim(key, now, window)
        self._seen.setdefault(key, collections.deque()).append(now)

    async def forget(self, key: str) -> None:
        self._seen.pop(key, None)


class Refused(Exception):
    """An attempt that must wait: ``limit`` names the rule, ``retry_after`` the seconds."""

    def __init__(self, limit: str, retry_after: float, why: str) -> None:
        super().__init__(why)
        self.limit = limit
        self.retry_after = retry_after


def _pair(name_key: str, source: str) -> str:
    return f"pair:{source}:{name_key}"


class SignInGuard:
    """The rules of the module docstring over ``counts``."""

    def __init__(self, counts: Counts, limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) -> None:
        self.counts = counts
        self.limits = limits

    async def check_password(self, name_key: str, source: str, now: float) -> None:
        """Before a password is checked for ``name_key`` from ``source``: ``Refused`` if it
        must wait."""
        lim = self.limits
        sprayed, _ = await self.counts.recent(f"source:{source}", now, lim.window_seconds)
        if sprayed >= lim.per_source:
            oldest = await self.counts.oldest(f"source:{source}", now, lim.window_seconds)
            raise Refused("sign_in_source", oldest + lim.window_seconds - now,
                          "too many failed sign-ins from this address")
        mine, latest = await self.counts.recent(_pair(name_key, source), now,
                                                lim.window_seconds)
        if mine >= lim.free_failures:
            delay = min(lim.first_delay * 2 ** (mine - lim.free_failures), lim.max_delay)
            if now < latest + delay:
                raise Refused("sign_in", latest + delay - now,
                              "too many failed sign-ins for that name from this address")
        if mine:
            everyone, _ = await self.counts.recent(f"name:{name_key}", now, lim.window_seconds)
            if everyone >= lim.per_name:
                oldest = await self.counts.oldest(f"name:{name_key}", now, lim.window_seconds)
                raise Refused("sign_in", oldest + lim.window_seconds - now,
                              "too many failed sign-ins for that name")

    async def failed(self, name_key: str, source: str, now: float) -> None:
        window = self.limits.window_seconds
        for key in (_pair(name_key, source), f"name:{name_key}", f"source:{source}"):
            await self.counts.note(key, now, window)

    async def succeeded(self, name_key: str, source: str) -> None:
        """The right password: this source's failures on the name are forgiven (the name's
        own count stays, so a guesser elsewhere stays slowed down)."""
        await self.counts.forget(_pair(name_key, source))

    async def sign_up(self, source: str, now: float) -> None:
        """Count a sign-up from ``source``, or ``Refused`` if it made its share."""
        lim = self.limits
        key = f"sign_up:{source}"
        made, _ = await self.counts.recent(key, now, lim.sign_up_window)
        if made >= lim.sign_ups_per_source:
            oldest = await self.counts.oldest(key, now, lim.sign_up_window)
            raise Refused("sign_up_source", oldest + lim.sign_up_window - now,
                          "too many accounts made from this address")
        await self.counts.note(key, now, lim.sign_up_window)

    async def check_admin_login(self, source: str, now: float) -> None:
        lim = self.limits
        key = f"admin:{source}"
        failed, _ = await self.counts.recent(key, now, lim.window_seconds)
        if failed >= lim.admin_logins_per_source:
            oldest = await self.counts.oldest(key, now, lim.window_seconds)
            raise Refused("admin_login", oldest + lim.window_seconds - now,
                          "too many failed admin logins from this address")

    async def admin_login_failed(self, source: str, now: float) -> None:
        await self.counts.note(f"admin:{source}", now, self.limits.window_seconds)
