"""Standing challenges without sockets: who may answer, how many may wait, when they expire,
and the clock a challenge asks for, kept in memory and in a real Redis."""

from __future__ import annotations

import itertools
import json
import uuid

import pytest
import redis.asyncio as aioredis

from server import errors
from server.challenges.rules import ChallengeBook
from server.challenges.shared import SharedChallengeBook
from server.connections.player import Player
from server.play.clocks import TIME_CONTROLS
from server.storage import keys
from tests.server.storage.conftest import REDIS_URL

ANN, BOB, CAT = Player("a1", "Ann"), Player("b2", "Bob"), Player("c3", "Cat")


def book(**options: float) -> ChallengeBook:
    counter = itertools.count()
    return ChallengeBook(ids=lambda: f"c{next(counter)}", **options)  # type: ignore[arg-type]


def test_only_the_challenged_player_can_find_a_challenge_to_answer_it() -> None:
    challenges = book()
    made = challenges.make(ANN, BOB, "othello", 0, now=0.0)
    assert challenges.for_target(made.id, BOB.id, now=1.0) == made
    for wrong in (ANN.id, CAT.id):
        with pytest.raises(errors.UnknownChallenge):
            challenges.for_target(made.id, wrong, now=1.0)


def test_a_challenger_at_the_cap_is_refused_until_one_is_answered() -> None:
    challenges = book(per_challenger=2)
    first = challenges.make(ANN, BOB, "connect4", 0, now=0.0)
    challenges.make(ANN, CAT, "connect4", 1, now=0.0)
    with pytest.raises(errors.LimitExceeded) as refused:
        challenges.make(ANN, BOB, "othello", 0, now=0.0)
    assert refused.value.detail == {"limit": "max_challenges", "allowed": 2,
                                    "retry_after": None}
    assert len(challenges) == 2  # the refusal added nothing
    challenges.make(BOB, ANN, "connect4", 0, now=0.0)  # others are not held back
    challenges.remove(first.id)
    challenges.make(ANN, BOB, "othello", 0, now=0.0)


def test_challenges_expire_after_their_time_to_live() -> None:
    challenges = book(ttl=10.0)
    made = challenges.make(ANN, BOB, "connect4", 0, now=0.0)
    assert [c.id for c in challenges.waiting_for(BOB.id, now=9.9)] == [made.id]
    assert challenges.waiting_for(BOB.id, now=10.0) == []
    with pytest.raises(errors.UnknownChallenge):
        challenges.for_target(made.id, BOB.id, now=10.0)


def test_waiting_challenges_come_oldest_first() -> None:
    challenges = book()
    late = challenges.make(CAT, BOB, "othello", 0, now=5.0)
    early = challenges.make(ANN, BOB, "connect4", 1, now=1.0)
    assert challenges.waiting_for(BOB.id, now=6.0) == [early, late]


def test_a_challenge_keeps_the_time_control_it_was_made_with() -> None:
    challenges = book()
    timed = challenges.make(ANN, BOB, "othello", 0, now=0.0, time_control=TIME_CONTROLS["5+3"])
    untimed = challenges.make(CAT, BOB, "othello", 0, now=1.0)
    assert challenges.for_target(timed.id, BOB.id, now=2.0).time_control == TIME_CONTROLS["5+3"]
    assert challenges.for_target(untimed.id, BOB.id, now=2.0).time_control is None


async def test_a_shared_challenge_keeps_its_time_control_through_redis() -> None:
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    client = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    counter = itertools.count()
    shared = SharedChallengeBook(client, prefix, ids=lambda: f"c{next(counter)}")
    try:
        timed = await shared.make(ANN, BOB, "connect4", 1, now=0.0,
                                  time_control=TIME_CONTROLS["10+5"])
        await shared.make(CAT, BOB, "connect4", 0, now=1.0)
        # Another node reads them back from Redis alone.
        elsewhere = SharedChallengeBook(client, prefix, ids=lambda: "unused")
        found = await elsewhere.for_target(timed.id, BOB.id, now=2.0)
        assert found == timed and found.time_control == TIME_CONTROLS["10+5"]
        waiting = await elsewhere.waiting_for(BOB.id, now=2.0)
        assert [c.time_control for c in waiting] == [TIME_CONTROLS["10+5"], None]
        # A challenge stored before challenges had clocks stands, untimed.
        await client.hset(keys.challenges(prefix), "old", json.dumps({
            "id": "old", "game": "othello", "seat": 0, "made_at": 1.5,
            "challenger": ["a1", "Ann", False], "target": ["b2", "Bob", False]}))
        old = await elsewhere.for_target("old", BOB.id, now=2.0)
        assert (old.game, old.time_control) == ("othello", None)
    finally:
        await client.delete(keys.challenges(prefix))
        await client.aclose()
