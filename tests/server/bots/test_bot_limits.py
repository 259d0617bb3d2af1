"""The bot limiter without sockets or clocks: each limit triggers, says when to retry, and
recovers."""

from __future__ import annotations

import pytest

from server.bots.limits import DEFAULT_BOT_LIMITS, BotLimiter, BotLimits, LimitExceeded


def test_the_published_limits_are_the_dataclass_fields() -> None:
    published = DEFAULT_BOT_LIMITS.published()
    assert set(published) == {"concurrent_games", "moves_per_minute", "move_burst",
                              "connections_per_token"}
    assert all(value > 0 for value in published.values())


def test_a_burst_of_moves_passes_then_the_next_is_refused_with_its_wait() -> None:
    limiter = BotLimiter(BotLimits(moves_per_minute=60, move_burst=3))
    for _ in range(3):
        limiter.take_move("bot", now=100.0)
    with pytest.raises(LimitExceeded) as refused:
        limiter.take_move("bot", now=100.0)
    assert refused.value.limit == "moves_per_minute"
    assert refused.value.retry_after == pytest.approx(1.0)  # one move a second
    assert refused.value.detail() == {"limit": "moves_per_minute", "allowed": 60,
                                      "retry_after": refused.value.retry_after}


def test_a_refused_move_is_not_counted_and_waiting_retry_after_is_enough() -> None:
    limiter = BotLimiter(BotLimits(moves_per_minute=30, move_burst=1))
    limiter.take_move("bot", now=0.0)
    with pytest.raises(LimitExceeded) as first:
        limiter.take_move("bot", now=0.5)
    assert first.value.retry_after == pytest.approx(1.5)
    with pytest.raises(LimitExceeded) as again:  # refusals did not drain the bucket further
        limiter.take_move("bot", now=1.0)
    assert again.value.retry_after == pytest.approx(1.0)
    wait = first.value.retry_after
    assert wait is not None
    limiter.take_move("bot", now=0.5 + wait)


def test_the_move_rate_holds_over_a_long_run() -> None:
    limiter = BotLimiter(BotLimits(moves_per_minute=120, move_burst=10))
    passed = 0
    now = 0.0
    while now < 60.0:
        try:
            limiter.take_move("bot", now)
            passed += 1
        except LimitExceeded:
            pass
        now += 0.01
    assert 120 + 10 - 2 <= passed <= 120 + 10 + 1


def test_each_bot_has_its_own_move_bucket() -> None:
    limiter = BotLimiter(BotLimits(move_burst=1))
    limiter.take_move("a", 0.0)
    limiter.take_move("b", 0.0)
    with pytest.raises(LimitExceeded):
        limiter.take_move("a", 0.0)


def test_a_connection_beyond_the_limit_is_refused_and_the_others_are_kept() -> None:
    limiter = BotLimiter(BotLimits(connections_per_token=2))
    limiter.open_connection("tok")
    limiter.open_connection("tok")
    with pytest.raises(LimitExceeded) as refused:
        limiter.open_connection("tok")
    assert refused.value.limit == "connections_per_token"
    assert limiter.connections("tok") == 2
    limiter.close_connection("tok")
    limiter.open_connection("tok")
    limiter.close_connection("tok")
    limiter.close_connection("tok")
    limiter.close_connection("tok")  # one close too many does not go negative
    assert limiter.connections("tok") == 0
