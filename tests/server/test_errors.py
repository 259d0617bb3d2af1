"""What a refusal says about when to try again."""

from __future__ import annotations

import pytest

from server.errors import try_again_in


@pytest.mark.parametrize(("seconds", "said"), [
    (0.2, "try again in 1 s"), (12.3, "try again in 13 s"), (89, "try again in 89 s"),
    (90, "try again in 2 minutes"), (3300, "try again in 55 minutes"),
    (5339, "try again in 89 minutes"), (5400, "try again in 1 h 30 min"),
    (86400, "try again in 24 h 00 min"),
])
def test_a_wait_is_said_in_seconds_then_minutes_then_hours(seconds: float, said: str) -> None:
    assert try_again_in(seconds) == said
