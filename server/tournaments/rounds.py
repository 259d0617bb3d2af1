"""Tournaments in rounds, sans-I/O: a round-robin or a Swiss, its results, tie-breaks and
crosstable.

The caller enters players, then calls ``pair_next`` for each round (once every game of the
round before has its result), starts the returned games and reports each result with
``record``. A game scores 1, a draw 0.5, a loss 0; a bye scores ``BYE_POINTS``. Standings
break ties by Buchholz and Sonneborn-Berger (Swiss: Buchholz first; round-robin:
Sonneborn-Berger first, as Buchholz tells nothing when everyone met everyone):

- Buchholz: the sum of the final scores of the opponents met over the board;
- Sonneborn-Berger: the sum of the final scores of the opponents beaten, plus half of
  those drawn.

Byes and forfeits add points to the score but nothing to either tie-break. A player who
withdraws after the start is not paired again in a Swiss; in a round-robin each of its
games still to come is a forfeit win for the opponent.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from server import errors
from server.tournaments import Entrant, roundrobin, swiss

Kind = Literal["swiss", "roundrobin"]
KINDS: tuple[Kind, ...] = ("swiss", "roundrobin")
BYE_POINTS = 1.0
RESULTS = (1.0, 0.5, 0.0)


@dataclass
class Board:
    """One board of a round: ``first`` moves first against ``second`` (None: a bye).
    ``result`` is ``first``'s score once known (a bye's is set when paired); ``forfeit``
    marks a game not played because a player had withdrawn."""

    round: int
    first: str
    second: str | None
    result: float | None = None
    forfeit: bool = False

    @property
    def played(self) -> bool:
        """A game over the board with a result (not a bye, not a forfeit)."""
        return self.second is not None and self.result is not None and not self.forfeit

    def score_of(self, player: str) -> float:
        assert self.result is not None
        return self.result if player == self.first else 1.0 - self.result


@dataclass(frozen=True)
class Standing:
    rank: int
    id: str
    name: str
    rating: float
    score: float
    buchholz: float
    sonneborn_berger: float
    withdrawn: bool


@dataclass
class RoundEvent:
    """A round-robin or Swiss. ``rounds`` is the number of rounds of a Swiss; a round-robin
    takes as many as its entrants need (``roundrobin.rounds_needed``), known at the start."""

    id: str
    kind: Kind
    rounds: int | None = None
    entrants: dict[str, Entrant] = field(default_factory=dict)
    seeds: list[str] = field(default_factory=list)
    """Entrants in starting order (rating, then id), fixed when round 1 is paired."""
    withdrawn: set[str] = field(default_factory=set)
    boards: list[list[Board]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise errors.BadMessage(f"a tournament in rounds is one of {KINDS}", field="kind")
        if self.kind == "swiss" and (self.rounds is None or self.rounds < 1):
            raise errors.BadMessage("a Swiss needs a number of rounds", field="rounds")

    @property
    def started(self) -> bool:
        return bool(self.boards)

    @property
    def over(self) -> bool:
        return (self.started and len(self.boards) == self.rounds
                and all(b.result is not None for b in self.boards[-1]))

    # --- commands --------------------------------------------------------------------------

    def enter(self, entrant: Entrant) -> None:
        """Enter a player (again: harmless) until round 1 is paired; ``TournamentClosed``
        after."""
        if self.started:
            raise errors.TournamentClosed("entries closed when round 1 was paired",
                                          reason="started")
        self.entrants[entrant.id] = entrant

    def withdraw(self, player_id: str) -> None:
        """Leave: before the start, the entry is gone; after, see the module's rules."""
        if player_id not in self.entrants or player_id in self.withdrawn:
            raise errors.NotEntered("you are not entered in this tournament")
        if self.over:
            raise errors.TournamentClosed("the tournament is over", reason="over")
        if not self.started:
            del self.entrants[player_id]
        else:
            self.withdrawn.add(player_id)

    def pair_next(self) -> list[Board]:
        """Pair the next round and return the games to play in it (byes and forfeits are
        scored already). ``GameNotFinished`` while a game of the round before lacks its
        result; ``TournamentClosed`` after the last round; ``swiss.NoPairing`` when a Swiss
        cannot pair this round within the rules (the caller ends the tournament)."""
        if self.boards and any(b.result is None for b in self.boards[-1]):
            raise errors.GameNotFinished("a game of this round has no result yet")
        if not self.started:
            if len(self.entrants) < 2:
                raise errors.BadMessage("a tournament needs at least two entrants",
                                        field="entrants")
            self.seeds = sorted(self.entrants, key=lambda pid: (-self.entrants[pid].rating,
                                                                  pid))
            if self.kind == "roundrobin":
                self.rounds = roundrobin.rounds_needed(len(self.seeds))
        if len(self.boards) == self.rounds:
            raise errors.TournamentClosed("the tournament is over", reason="over")
        number = len(self.boards) + 1
        if self.kind == "roundrobin":
            table = roundrobin.schedule(len(self.seeds))[number - 1]
            pairs = [(self.seeds[a], None if b is None else self.seeds[b]) for a, b in table]
        else:
            assert self.rounds is not None
            pairs = swiss.pair(self._swiss_histories(), number, self.rounds)
        made = [self._board(number, first, second) for first, second in pairs]
        self.boards.append(made)
        return [b for b in made if b.result is None]

    def record(self, round_number: int, first: str, result: float) -> None:
        """The result (``first``'s score: 1, 0.5 or 0) of the game ``first`` plays first in
        round ``round_number``. ``NotEntered`` when there is no such game waiting for one."""
        if result not in RESULTS:
            raise errors.BadMessage("a result is 1, 0.5 or 0", field="result")
        if not 1 <= round_number <= len(self.boards):
            raise errors.NotEntered(f"round {round_number} has not been paired")
        for board in self.boards[round_number - 1]:
            if board.first == first and board.second is not None and board.result is None:
                board.result = result
                return
        raise errors.NotEntered(f"no game of round {round_number} waits for a result with "
                                f"{first} moving first")

    # --- views -----------------------------------------------------------------------------

    def scores(self) -> dict[str, float]:
        out = {pid: 0.0 for pid in self.entrants}
        for board in self._finished_boards():
            out[board.first] += board.score_of(board.first)
            if board.second is not None:
                out[board.second] += board.score_of(board.second)
        return out

    def standings(self) -> list[Standing]:
        """Every entrant, best first: score, then the tie-breaks in the kind's order, then
        rating, then id."""
        scores = self.scores()
        buchholz = dict.fromkeys(self.entrants, 0.0)
        berger = dict.fromkeys(self.entrants, 0.0)
        for board in self._finished_boards():
            if not board.played:
                continue
            assert board.second is not None
            for me, foe in ((board.first, board.second), (board.second, board.first)):
                buchholz[me] += scores[foe]
                berger[me] += scores[foe] * board.score_of(me)

        def order(pid: str) -> tuple[float, ...]:
            breaks = (buchholz[pid], berger[pid])
            if self.kind == "roundrobin":
                breaks = breaks[::-1]
            return (-scores[pid], -breaks[0], -breaks[1], -self.entrants[pid].rating)

        ranked = sorted(self.entrants, key=lambda pid: (order(pid), pid))
        return [Standing(k + 1, pid, self.entrants[pid].name, self.entrants[pid].rating,
                         scores[pid], buchholz[pid], berger[pid], pid in self.withdrawn)
                for k, pid in enumerate(ranked)]

    def crosstable_csv(self) -> str:
        """The crosstable as CSV: one row per entrant in standing order (rank, name, rating,
        one column per round, score, Buchholz, Sonneborn-Berger). A round's cell is the
        opponent's rank, ``f`` (moved first) or ``s`` (second) and the result: ``1``, ``=``,
        ``0`` over the board, ``+`` or ``-`` by forfeit; ``bye`` for a bye, empty when not
        paired that round."""
        rows = self.standings()
        rank = {row.id: row.rank for row in rows}
        cells: dict[str, list[str]] = {pid: [""] * len(self.boards) for pid in self.entrants}
        for number, boards in enumerate(self.boards):
            for board in boards:
                if board.second is None:
                    cells[board.first][number] = "bye"
                    continue
                for me, foe, seat in ((board.first, board.second, "f"),
                                      (board.second, board.first, "s")):
                    mark = ""
                    if board.result is not None:
                        points = board.score_of(me)
                        mark = ({1.0: "+", 0.0: "-"} if board.forfeit else
                                {1.0: "1", 0.5: "=", 0.0: "0"})[points]
                    cells[me][number] = f"{rank[foe]}{seat}{mark}"
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rank", "name", "rating",
                         *(str(k + 1) for k in range(len(self.boards))),
                         "score", "buchholz", "sonneborn_berger"])
        for row in rows:
            writer.writerow([row.rank, csv_cell(row.name), round(row.rating), *cells[row.id],
                             _number(row.score), _number(row.buchholz),
                             _number(row.sonneborn_berger)])
        return out.getvalue()

    # --- inside ----------------------------------------------------------------------------

    def _finished_boards(self) -> Iterable[Board]:
        return (b for boards in self.boards for b in boards if b.result is not None)

    def _board(self, number: int, first: str, second: str | None) -> Board:
        if second is None:
            return Board(number, first, None, BYE_POINTS)
        if first in self.withdrawn or second in self.withdrawn:
            # Only a round-robin pairs a withdrawn player: its game is lost by forfeit.
            both = first in self.withdrawn and second in self.withdrawn
            result = 0.0 if both or first in self.withdrawn else 1.0
            return Board(number, first, second, result, forfeit=True)
        return Board(number, first, second)

    def _swiss_histories(self) -> list[swiss.SwissPlayer]:
        score = dict.fromkeys(self.seeds, 0.0)
        seats: dict[str, list[int | None]] = {pid: [] for pid in self.seeds}
        floats: dict[str, list[str]] = {pid: [] for pid in self.seeds}
        byes = dict.fromkeys(self.seeds, 0)
        met: dict[str, set[str]] = {pid: set() for pid in self.seeds}
        for number, boards in enumerate(self.boards, 1):
            before = dict(score)
            for board in boards:
                if board.second is None:
                    seats[board.first].append(None)
                    floats[board.first].append("down")
                    byes[board.first] += 1
                else:
                    pair = ((board.first, board.second, 0), (board.second, board.first, 1))
                    for me, foe, seat in pair:
                        seats[me].append(seat)
                        met[me].add(foe)
                        floats[me].append("down" if before[me] > before[foe] else
                                          "up" if before[me] < before[foe] else "none")
                assert board.result is not None
                score[board.first] += board.score_of(board.first)
                if board.second is not None:
                    score[board.second] += board.score_of(board.second)
            for pid in self.seeds:  # absent (withdrawn) this round
                if len(seats[pid]) < number:
                    seats[pid].append(None)
                    floats[pid].append("none")
        return [swiss.SwissPlayer(pid, self.entrants[pid].rating, score[pid],
                                  tuple(seats[pid]), tuple(floats[pid]), byes[pid],
                                  frozenset(met[pid]))
                for pid in self.seeds if pid not in self.withdrawn]


def _number(value: float) -> str:
    return f"{value:g}"


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection")."""


def csv_cell(text: str) -> str:
    """``text`` safe as a CSV cell opened in a spreadsheet: one beginning with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a single quote before it, as OWASP advises,
    so a player named ``=HYPERLINK(...)`` is shown, never run."""
    return f"'{text}" if text.startswith(_FORMULA_STARTS) else text
