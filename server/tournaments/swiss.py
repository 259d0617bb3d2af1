"""Swiss pairings by the FIDE Dutch system (Handbook C.04.3), through ``caissify_pairings``.

That library pairs one round from each player's history (score, seats, floats, byes,
opponents) and is cross-checked by its authors against bbpPairings, a FIDE-endorsed
program. This module feeds it the history in its terms and then checks what it returned
against the rules that must never break, so a fault there cannot start a wrong round:
each player once, no pairing repeated, at most one bye, never a second bye to a player.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from caissify_pairings import generate_pairings

Board = tuple[str, str | None]
"""``(first, second)`` by player id; ``second`` None: a bye for ``first``."""

SEAT_NAMES = {0: "white", 1: "black", None: "none"}


class NoPairing(ValueError):
    """No pairing of this round keeps the rules (too few players left for the rounds)."""


@dataclass(frozen=True)
class SwissPlayer:
    """A player's history before the round to pair, rounds in order. ``seats`` holds the
    seat played each round (0 first, 1 second, None unplayed: a bye or absent); ``floats``
    "up", "down" or "none" per round (met a higher or lower score group, or a bye:
    "down"); ``byes`` the byes received."""

    id: str
    rating: float
    score: float
    seats: tuple[int | None, ...]
    floats: tuple[str, ...]
    byes: int
    opponents: frozenset[str]


def pair(players: Sequence[SwissPlayer], round_number: int, total_rounds: int) -> list[Board]:
    """The boards of round ``round_number`` (from 1) among ``players``, given in their
    starting order (the strongest first). ``NoPairing`` when none keeps the rules."""
    if len(players) < 2:
        raise NoPairing("a Swiss round needs at least two players")
    number = {p.id: k + 1 for k, p in enumerate(players)}
    by_number = {k: pid for pid, k in number.items()}
    given = [{
        "id": number[p.id], "name": p.id, "score": p.score, "rating": round(p.rating),
        "starting_number": number[p.id], "color_hist": [SEAT_NAMES[s] for s in p.seats],
        "float_history": list(p.floats), "bye_count": p.byes,
    } for p in players]
    met = {(number[p.id], number[o]) for p in players for o in p.opponents if o in number}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # round 2 with no float yet is fine
            answer = generate_pairings("dutch", given, met, round_number, total_rounds)
    except Exception as failed:  # the library signals an impossible round by raising
        raise NoPairing(f"no Swiss pairing for round {round_number}: {failed}") from failed
    boards: list[Board] = []
    for row in answer:
        first = by_number[int(row["white_id"])]
        second = None if row.get("black_id") is None else by_number[int(row["black_id"])]
        boards.append((first, second))
    _check(players, boards)
    return sorted(boards, key=lambda b: b[1] is None)


def _check(players: Sequence[SwissPlayer], boards: list[Board]) -> None:
    seen = [pid for board in boards for pid in board if pid is not None]
    if sorted(seen) != sorted(p.id for p in players):
        raise NoPairing("the pairing does not seat every player exactly once")
    known = {p.id: p for p in players}
    byes = [first for first, second in boards if second is None]
    if len(byes) > len(players) % 2 or any(known[b].byes for b in byes):
        raise NoPairing("the pairing gives a second bye")
    for first, second in boards:
        if second is not None and second in known[first].opponents:
            raise NoPairing(f"the pairing repeats {first} against {second}")
