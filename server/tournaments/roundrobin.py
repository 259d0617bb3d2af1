"""Round-robin schedules: FIDE Berger tables (Handbook C.05, annex 1).

Every entrant meets every other once, in ``n - 1`` rounds for an even ``n`` and ``n``
rounds for an odd one (a phantom ``n + 1``-th entrant: whoever meets it has a bye that
round, so each entrant has exactly one bye). The tables come from ``caissify_pairings``,
whose rotation is checked against the published FIDE tables; this module only numbers
entrants from 0 and turns the phantom into byes.
"""

from __future__ import annotations

from caissify_pairings.engines.round_robin import berger_round

Board = tuple[int, int | None]
"""``(first, second)`` by entrant index (0 the first seeded); ``second`` None: a bye."""


def rounds_needed(entrants: int) -> int:
    """How many rounds a single round-robin of ``entrants`` takes."""
    if entrants < 2:
        raise ValueError("a round-robin needs at least two entrants")
    return entrants - 1 if entrants % 2 == 0 else entrants


def schedule(entrants: int) -> list[list[Board]]:
    """Every round of a single round-robin of ``entrants`` (the first seeded is 0), each a
    list of boards; the first of a board moves first, a bye is listed last."""
    size = entrants + entrants % 2
    rounds_needed(entrants)  # refuses fewer than two
    out: list[list[Board]] = []
    for number in range(1, size):
        boards: list[Board] = []
        byes: list[Board] = []
        for first, second in berger_round(size, number):
            if second > entrants:
                byes.append((first - 1, None))
            elif first > entrants:
                byes.append((second - 1, None))
            else:
                boards.append((first - 1, second - 1))
        out.append(boards + byes)
    return out
