"""Tournaments: their pure rules (who plays whom, how games score, who stands where) and the
desk that runs them (``desk``, with ``arena_desk``, ``round_desk``, ``held``,
``schedule_desk`` and ``watchers``).

The rules' modules (this one, ``arena``, ``rounds``, ``swiss``, ``roundrobin``,
``schedules``, ``records``) never send, store or read a clock: callers pass ``now`` and the
results of games, and turn what comes back (pairings to start, standings) into games and
messages. Every command checks first and raises a ``server.errors.ProtocolError`` before changing
anything, as ``server.play.rooms`` does.

- ``arena``: a timed arena (lichess's kind): a free player is paired as soon as another is
  free; wins 2, draws 1, streaks and berserk.
- ``rounds``: events in a fixed number of rounds: ``roundrobin`` (Berger tables) and
  ``swiss`` (FIDE Dutch) pair them; results, byes, tie-breaks and the crosstable are common.
- ``schedules``: an admin's recurring arenas: which occurrences are due, none twice.

Seats are the rooms' seats: 0 moves first (Othello's black, Connect Four's first player),
1 second. "Colours balanced" means each player moves first about as often as second.
"""

from __future__ import annotations

from dataclasses import dataclass

from server import errors


@dataclass(frozen=True)
class Entrant:
    """A player as a tournament sees it: an id, a display name and the rating it is seeded
    and paired by (its rating in the tournament's game when it joined)."""

    id: str
    name: str
    rating: float


def check_conditions(min_rating: int | None, max_rating: int | None) -> None:
    """Entry conditions that can be met: no minimum rating above the maximum."""
    if min_rating is not None and max_rating is not None and min_rating > max_rating:
        raise errors.BadMessage("the minimum rating is above the maximum", field="min_rating")
