"""Standing challenges without sockets: who may answer, how many may wait, when they expire."""

from __future__ import annotations

import itertools

import pytest

from server import errors
from server.challenges import ChallengeBook
from server.rooms import Player

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
