"""Standing challenges kept in Redis, so a challenge made on one node of a cluster can be
seen, accepted or declined by its target on any other.

The same rules as ``server.challenges.rules.ChallengeBook`` (at most ``per_challenger`` waiting
per challenger, gone after ``ttl`` seconds), with one addition that only several nodes
need: taking a challenge to accept or decline it is one ``HDEL``, so when its target
answers on two nodes at once exactly one answer wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from server import errors
from server.challenges.rules import Pending, check_per_target
from server.connections.player import Player
from server.play.clocks import TimeControl
from server.storage import keys


def _encode(made: Pending) -> str:
    control = made.time_control
    return json.dumps({
        "id": made.id, "game": made.game, "seat": made.seat, "made_at": made.made_at,
        "challenger": [made.challenger.id, made.challenger.name, made.challenger.bot],
        "target": [made.target.id, made.target.name, made.target.bot],
        "time_control": None if control is None
        else [control.name, control.initial_ms, control.increment_ms],
        "source": made.source,
    })


def _decode(text: str) -> Pending:
    raw = json.loads(text)
    # A challenge stored by a node from before challenges had clocks has no "time_control".
    control = raw.get("time_control")
    return Pending(raw["id"], Player(*raw["challenger"]), Player(*raw["target"]), raw["game"],
                   raw["seat"], raw["made_at"],
                   None if control is None else TimeControl(*control), raw.get("source", ""))


class SharedChallengeBook:
    """Every standing challenge of a cluster, in one Redis hash."""

    def __init__(self, client: Any, prefix: str, ids: Callable[[], str],
                 per_challenger: int = 10, ttl: float = 3600.0) -> None:
        self._client = client
        self._key = keys.challenges(prefix)
        self.ids = ids
        self.per_challenger = per_challenger
        self.ttl = ttl

    async def _standing(self, now: float) -> list[Pending]:
        found = [_decode(v) for v in (await self._client.hgetall(self._key)).values()]
        stale = [c.id for c in found if now - c.made_at >= self.ttl]
        if stale:
            await self._client.hdel(self._key, *stale)
        return [c for c in found if c.id not in stale]

    async def make(self, challenger: Player, target: Player, game: str, seat: int,
                   now: float, time_control: TimeControl | None = None,
                   source: str = "") -> Pending:
        standing = await self._standing(now)
        waiting = sum(1 for c in standing if c.challenger.id == challenger.id)
        if waiting >= self.per_challenger:
            raise errors.LimitExceeded(
                f"you already have {waiting} challenges waiting for an answer, the most "
                "allowed; wait for one to be answered",
                limit="max_challenges", allowed=self.per_challenger, retry_after=None,
            )
        check_per_target(standing, target, source)
        made = Pending(self.ids(), challenger, target, game, seat, now, time_control, source)
        await self._client.hset(self._key, made.id, _encode(made))
        return made

    async def for_target(self, challenge_id: str, player_id: str, now: float) -> Pending:
        text = await self._client.hget(self._key, challenge_id)
        found = None if text is None else _decode(text)
        if found is None or found.target.id != player_id or now - found.made_at >= self.ttl:
            raise errors.UnknownChallenge(
                f"there is no challenge {challenge_id!r} waiting for you (answered, "
                "withdrawn, or expired)")
        return found

    async def take(self, made: Pending) -> None:
        """Remove the challenge to answer it; ``UnknownChallenge`` if another answer (on
        another node) took it first."""
        if not await self._client.hdel(self._key, made.id):
            raise errors.UnknownChallenge(f"challenge {made.id!r} was answered already")

    async def put_back(self, made: Pending) -> None:
        """An accepted challenge whose game could not start stands again."""
        await self._client.hset(self._key, made.id, _encode(made))

    async def waiting_for(self, player_id: str, now: float) -> list[Pending]:
        mine = [c for c in await self._standing(now) if c.target.id == player_id]
        return sorted(mine, key=lambda c: c.made_at)
