"""What the test engines share: legal moves from the rules in ``games``, and the faults a
test asks for.

``ENGINE_FAULT`` (``crash``, ``hang``, ``illegal``) makes the engine fail on its
``ENGINE_FAULT_AT``-th move request (default 1), once per working directory: it leaves a
file ``faulted`` there first, so the engine the bridge starts again plays on.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for games

import games  # noqa: E402

MARKER = Path("faulted")
_asked = 0


def warm(game: str) -> None:
    """Load the rules (their compiled kernels) before the first request, as a real engine
    loads its tables at start: the bridge allows a start more time than a move."""
    legal(game, [])


def legal(game: str, moves: list[str]) -> list[str]:
    rules = games.load(game)
    return [rules.format_move(m) for m in _state(game, tuple(moves)).legal_moves()]


@functools.lru_cache(maxsize=512)
def _state(game: str, moves: tuple[str, ...]) -> games.State:
    """The position after ``moves``, from the one before it (engines are told whole games
    again and again: each is one step past the last)."""
    rules = games.load(game)
    if not moves:
        return rules.initial()
    before = _state(game, moves[:-1])
    return before.play(rules.parse_move(before, moves[-1]))


def choose(game: str, moves: list[str]) -> str:
    """A legal move, the same for the same game (a seeded draw), or the fault asked for."""
    global _asked
    _asked += 1
    fault = os.environ.get("ENGINE_FAULT")
    if fault and _asked == int(os.environ.get("ENGINE_FAULT_AT", "1")) and not MARKER.exists():
        MARKER.write_text(fault)
        print(f"test engine: {fault} on request {_asked}", file=sys.stderr, flush=True)
        if fault == "crash":
            os._exit(3)
        if fault == "hang":
            time.sleep(3600)
        if fault == "illegal":
            return "a1" if game == "othello" else "9"
    return random.Random(" ".join(moves)).choice(legal(game, moves))
