"""Round-robins and Swiss events without sockets: Berger tables, Dutch pairings, byes,
tie-breaks and the crosstable."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter
from itertools import combinations

import pytest

from server import errors
from server.tournaments import Entrant, roundrobin
from server.tournaments.rounds import RoundEvent


def event(kind: str, count: int, rounds: int | None = None, seed: int = 0) -> RoundEvent:
    rng = random.Random(seed)
    made = RoundEvent("e1", kind, rounds)  # type: ignore[arg-type]
    for k in range(count):
        made.enter(Entrant(f"p{k}", f"P{k}", float(rng.randint(1000, 2200))))
    return made


def play_round(made: RoundEvent, rng: random.Random) -> None:
    for board in made.pair_next():
        made.record(board.round, board.first, rng.choice([1.0, 0.5, 0.0]))


# --- round-robin --------------------------------------------------------------------------

# FIDE Handbook C.05, annex 1 (Berger tables), numbered from 1: (moves first, second).
FIDE_BERGER = {
    4: [[(1, 4), (2, 3)], [(4, 3), (1, 2)], [(2, 4), (3, 1)]],
    6: [[(1, 6), (2, 5), (3, 4)], [(6, 4), (5, 3), (1, 2)], [(2, 6), (3, 1), (4, 5)],
        [(6, 5), (1, 4), (2, 3)], [(3, 6), (4, 2), (5, 1)]],
}


@pytest.mark.parametrize("size", sorted(FIDE_BERGER))
def test_round_robin_rounds_are_the_fide_berger_tables(size: int) -> None:
    ours = [{(a + 1, b + 1) for a, b in rnd if b is not None}
            for rnd in roundrobin.schedule(size)]
    assert ours == [set(rnd) for rnd in FIDE_BERGER[size]]


@pytest.mark.parametrize("size", range(4, 11))
def test_round_robins_of_4_to_10_are_complete_and_balanced(size: int) -> None:
    table = roundrobin.schedule(size)
    assert len(table) == roundrobin.rounds_needed(size) == (size - 1 if size % 2 == 0 else size)
    met: Counter[frozenset[int]] = Counter()
    byes: Counter[int] = Counter()
    firsts: Counter[int] = Counter()
    seconds: Counter[int] = Counter()
    for rnd in table:
        seated = [p for board in rnd for p in board if p is not None]
        assert sorted(seated) == list(range(size)), "each entrant exactly once a round"
        assert sum(1 for _, b in rnd if b is None) == size % 2, "one bye a round when odd"
        for a, b in rnd:
            if b is None:
                byes[a] += 1
            else:
                met[frozenset((a, b))] += 1
                firsts[a] += 1
                seconds[b] += 1
    assert set(met) == {frozenset(pair) for pair in combinations(range(size), 2)}
    assert set(met.values()) == {1}
    assert byes == (Counter(range(size)) if size % 2 else Counter())
    assert all(abs(firsts[p] - seconds[p]) <= 1 for p in range(size))


def test_a_round_robin_needs_two_entrants() -> None:
    with pytest.raises(ValueError):
        roundrobin.schedule(1)
    with pytest.raises(errors.BadMessage):
        event("roundrobin", 1).pair_next()


# --- Swiss --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_a_swiss_of_9_has_a_bye_each_round_and_never_repeats_a_pairing(seed: int) -> None:
    rng = random.Random(seed)
    rounds = rng.randint(4, 7)
    made = event("swiss", 9, rounds, seed)
    for _ in range(rounds):
        play_round(made, rng)
    met: set[frozenset[str]] = set()
    bye_takers: list[str] = []
    for number, boards in enumerate(made.boards, 1):
        seated = [p for b in boards for p in (b.first, b.second) if p is not None]
        assert sorted(seated) == sorted(made.entrants), f"round {number}: each player once"
        byes = [b.first for b in boards if b.second is None]
        assert len(byes) == 1, f"round {number}: one bye"
        bye_takers += byes
        for b in boards:
            if b.second is not None:
                assert frozenset((b.first, b.second)) not in met, "pairing repeated"
                met.add(frozenset((b.first, b.second)))
    assert len(set(bye_takers)) == rounds, "no second bye to the same player"
    assert made.over


@pytest.mark.parametrize("seed", range(12))
def test_swiss_seats_follow_the_colour_rules(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(6, 16)
    rounds = min(count - 2, rng.randint(3, 7))
    made = event("swiss", count, rounds, seed)
    for _ in range(rounds):
        play_round(made, rng)
    for pid in made.entrants:
        # Before the last round (where FIDE lets top scorers break them): never the same
        # seat three times running, and never two more games first than second or back.
        seats = [0 if b.first == pid else 1 for boards in made.boards[:-1] for b in boards
                 if b.second is not None and pid in (b.first, b.second)]
        assert all(len(set(seats[k:k + 3])) > 1 for k in range(len(seats) - 2)), seats
        assert abs(seats.count(0) - seats.count(1)) <= 2, seats


def test_round_one_of_a_swiss_pairs_the_top_half_against_the_bottom_half() -> None:
    made = RoundEvent("e1", "swiss", 3)
    for k in range(8):
        made.enter(Entrant(f"p{k}", f"P{k}", 2000.0 - 100 * k))
    pairs = {frozenset((b.first, b.second)) for b in made.pair_next()}
    assert pairs == {frozenset((f"p{k}", f"p{k + 4}")) for k in range(4)}


def test_a_withdrawn_swiss_player_is_not_paired_again() -> None:
    rng = random.Random(3)
    made = event("swiss", 8, 4)
    play_round(made, rng)
    made.withdraw("p3")
    boards = made.pair_next()
    assert all("p3" not in (b.first, b.second) for b in made.boards[-1])
    assert sum(1 for b in made.boards[-1] if b.second is None) == 1  # seven left: a bye
    assert len(boards) == 3
    assert [s for s in made.standings() if s.id == "p3"][0].withdrawn


def test_a_withdrawn_round_robin_player_forfeits_its_remaining_games() -> None:
    made = event("roundrobin", 4)
    play_round(made, random.Random(1))
    made.withdraw("p0")
    games = made.pair_next()
    (forfeit,) = [b for b in made.boards[-1] if "p0" in (b.first, b.second)]
    assert forfeit.forfeit and forfeit not in games
    assert forfeit.score_of("p0") == 0.0


# --- results, tie-breaks and the crosstable -----------------------------------------------


def test_tie_breaks_are_buchholz_and_sonneborn_berger() -> None:
    made = RoundEvent("e1", "roundrobin")
    for name, rating in [("a", 1900), ("b", 1800), ("c", 1700), ("d", 1600)]:
        made.enter(Entrant(name, name.upper(), rating))
    # Results by pair (from the first named's side): a beats b, c draws a, a loses to d;
    # b beats c and d; c beats d. Scores: a 1.5, b 2, c 1.5, d 1.
    wanted = {("a", "b"): 1.0, ("a", "c"): 0.5, ("a", "d"): 0.0, ("b", "c"): 1.0,
              ("b", "d"): 1.0, ("c", "d"): 1.0}
    while not made.over:
        for board in made.pair_next():
            assert board.second is not None
            key = tuple(sorted((board.first, board.second)))
            points = wanted[key]  # type: ignore[index]
            made.record(board.round, board.first,
                        points if key[0] == board.first else 1.0 - points)
    rows = {s.id: s for s in made.standings()}
    assert {k: r.score for k, r in rows.items()} == {"a": 1.5, "b": 2, "c": 1.5, "d": 1}
    # a met b (2), c (1.5), d (1): Buchholz 4.5; beat b, drew c: SB 2 + 0.75.
    assert (rows["a"].buchholz, rows["a"].sonneborn_berger) == (4.5, 2.75)
    # c met a (1.5), b (2), d (1): beat d, drew a: SB 1 + 0.75.
    assert (rows["c"].buchholz, rows["c"].sonneborn_berger) == (4.5, 1.75)
    assert [s.id for s in made.standings()] == ["b", "a", "c", "d"]  # a ahead of c on SB


def test_the_crosstable_csv_has_a_row_per_entrant_and_a_cell_per_round() -> None:
    rng = random.Random(5)
    made = event("swiss", 5, 3)
    for _ in range(3):
        play_round(made, rng)
    rows = list(csv.reader(io.StringIO(made.crosstable_csv())))
    assert rows[0] == ["rank", "name", "rating", "1", "2", "3", "score", "buchholz",
                       "sonneborn_berger"]
    standings = made.standings()
    assert [r[1] for r in rows[1:]] == [s.name for s in standings]
    rank = {s.name: s.rank for s in standings}
    for row in rows[1:]:
        assert float(row[6]) == next(s.score for s in standings if s.name == row[1])
        for cell in row[3:6]:
            assert cell == "bye" or (cell[-1] in "1=0" and cell[-2] in "fs")
    # Each game appears twice, as mirror images.
    for boards in made.boards:
        for b in boards:
            if b.second is None:
                continue
            first = made.entrants[b.first].name
            second = made.entrants[b.second].name
            cell = rows[rank[first]][2 + b.round]
            back = rows[rank[second]][2 + b.round]
            assert cell.startswith(f"{rank[second]}f") and back.startswith(f"{rank[first]}s")
            assert {cell[-1], back[-1]} in ({"1", "0"}, {"="})


def test_bad_commands_are_refused_and_change_nothing() -> None:
    made = event("swiss", 4, 2)
    with pytest.raises(errors.NotEntered):
        made.withdraw("nobody")
    (board, _) = made.pair_next()
    with pytest.raises(errors.TournamentClosed):
        made.enter(Entrant("late", "Late", 1500))
    with pytest.raises(errors.GameNotFinished):
        made.pair_next()
    with pytest.raises(errors.BadMessage):
        made.record(1, board.first, 0.7)
    with pytest.raises(errors.NotEntered):
        made.record(1, "nobody", 1.0)
    with pytest.raises(errors.NotEntered):
        made.record(2, board.first, 1.0)
    assert board.result is None and len(made.boards) == 1
    made.record(1, board.first, 1.0)
    with pytest.raises(errors.NotEntered):
        made.record(1, board.first, 0.0)  # already has its result
    assert board.result == 1.0
    with pytest.raises(errors.BadMessage):
        RoundEvent("e2", "swiss")
    with pytest.raises(errors.BadMessage):
        RoundEvent("e2", "knockout")  # type: ignore[arg-type]


def test_after_the_last_round_nothing_more_is_paired() -> None:
    made = event("roundrobin", 3)
    rng = random.Random(2)
    for _ in range(3):
        play_round(made, rng)
    assert made.over
    with pytest.raises(errors.TournamentClosed):
        made.pair_next()
    with pytest.raises(errors.TournamentClosed):
        made.withdraw("p0")


@pytest.mark.parametrize("name", ["=1+2", "+1 555", "-2+3", "@SUM(A1)", "\tcmd"])
def test_a_name_a_spreadsheet_would_run_is_neutralised_in_the_crosstable_csv(name: str) -> None:
    """Accounts' names begin with a letter or digit, but a bot's may begin with ``= + - @``
    (any printable name): such a cell gets a single quote before it, so a spreadsheet shows
    the name instead of running it."""
    made = RoundEvent("e1", "roundrobin", None)
    made.enter(Entrant("p0", name, 1500.0))
    made.enter(Entrant("p1", "Plain", 1500.0))
    rows = list(csv.reader(io.StringIO(made.crosstable_csv())))
    assert sorted(row[1] for row in rows[1:]) == sorted([f"'{name}", "Plain"])
