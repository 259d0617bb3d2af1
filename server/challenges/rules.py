"""Standing challenges between players, sans-I/O: who asked whom for which game.

A challenge lives in memory until it is accepted, declined or expires (``ttl`` seconds);
a server restart forgets them (challengers simply ask again). Each player may have at most
``per_challenger`` challenges waiting, so nobody can fill the server's memory with them.
Nothing here sends, stores or reads a clock: callers pass ``now`` and turn the results into
messages (``server.bots.desk``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from server import errors
from server.connections.player import Player
from server.play.clocks import TimeControl


@dataclass(frozen=True)
class Pending:
    """One challenge: ``challenger`` asks ``target`` for a game of ``game`` in which the
    challenger holds ``seat`` (the target the other one), played under ``time_control``
    (None: untimed). The control is kept whole, not just its name, so the target is shown
    the clock it was asked for; the caller has checked that the server offers it."""

    id: str
    challenger: Player
    target: Player
    game: str
    seat: int
    made_at: float
    time_control: TimeControl | None = None
    source: str = ""
    """The address the challenger sent it from (``server.connections.client.source_of``)."""


PER_TARGET_PER_SOURCE = 3
"""Challenges one address may have waiting for one player: twenty guests from one address
cannot bury somebody in offers."""


def check_per_target(standing: Iterable[Pending], target: Player, source: str) -> None:
    """``LimitExceeded`` (``challenges_per_target``) if ``source`` has its share of
    challenges waiting for ``target``."""
    if not source:
        return
    waiting = sum(1 for c in standing if c.target.id == target.id and c.source == source)
    if waiting >= PER_TARGET_PER_SOURCE:
        raise errors.LimitExceeded(
            f"{target.name} already has {waiting} challenges from this address waiting; wait "
            "for an answer", limit="challenges_per_target", allowed=PER_TARGET_PER_SOURCE,
            retry_after=None)


@dataclass
class ChallengeBook:
    """Every standing challenge of one server. ``ids`` makes fresh challenge ids."""

    ids: Callable[[], str]
    per_challenger: int = 10
    ttl: float = 3600.0
    _all: dict[str, Pending] = field(default_factory=dict)

    def make(self, challenger: Player, target: Player, game: str, seat: int,
             now: float, time_control: TimeControl | None = None,
             source: str = "") -> Pending:
        """A new challenge; ``LimitExceeded`` (limit ``max_challenges``) when the challenger
        already has ``per_challenger`` waiting. Nothing changes on a refusal."""
        self.expire(now)
        waiting = sum(1 for c in self._all.values() if c.challenger.id == challenger.id)
        if waiting >= self.per_challenger:
            raise errors.LimitExceeded(
                f"you already have {waiting} challenges waiting for an answer, the most "
                "allowed; wait for one to be answered",
                limit="max_challenges", allowed=self.per_challenger, retry_after=None,
            )
        check_per_target(self._all.values(), target, source)
        challenge_id = self.ids()
        while challenge_id in self._all:
            challenge_id = self.ids()
        made = Pending(challenge_id, challenger, target, game, seat, now, time_control, source)
        self._all[challenge_id] = made
        return made

    def for_target(self, challenge_id: str, player_id: str, now: float) -> Pending:
        """The standing challenge ``challenge_id`` addressed to ``player_id``; else
        ``UnknownChallenge``. It stays until ``remove``."""
        self.expire(now)
        found = self._all.get(challenge_id)
        if found is None or found.target.id != player_id:
            raise errors.UnknownChallenge(
                f"there is no challenge {challenge_id!r} waiting for you (answered, "
                "withdrawn by a restart, or expired)")
        return found

    def remove(self, challenge_id: str) -> None:
        self._all.pop(challenge_id, None)

    def put_back(self, made: Pending) -> None:
        """An accepted challenge whose game could not start stands again."""
        self._all[made.id] = made

    def waiting_for(self, player_id: str, now: float) -> list[Pending]:
        """The challenges addressed to ``player_id``, oldest first."""
        self.expire(now)
        mine = [c for c in self._all.values() if c.target.id == player_id]
        return sorted(mine, key=lambda c: c.made_at)

    def expire(self, now: float) -> None:
        for stale in [c.id for c in self._all.values() if now - c.made_at >= self.ttl]:
            del self._all[stale]

    def __len__(self) -> int:
        return len(self._all)
