"""How much the durable position cache holds proven: ``discus book proven``.

Every position a review, an analysis or a move proved is a row of ``position_cache`` with
``exact`` set; a position whose win or loss, not its score, a weak solve proved (the expert's,
an idle worker's) is a proven bound, counted apart. The report counts the proven ones by
stones on the board (a canonical key is the two
sides' bitboards, so its bit count is the stones), how many were last saved on each of the
last seven days (how the proven set grows: reviews, analyses, the expert and the idle
workers, ``server.engines.idle_proving``), and how much of what people play it covers: of the
positions the newest stored games reach, how many are proven (in the cache or the shipped
book), and of the most reached ones.
"""

from __future__ import annotations

import importlib
import time
from collections import Counter, deque
from dataclasses import dataclass

import games
from ai import review
from server.storage import repository as repo
from server.storage.sql_store import SqlStore
from server.storage.store import GameRecord, MoveRecord
from server.storage.symmetry import canonical

DAY = 86_400.0
DAYS = 7
"""Days of growth the report shows, one count each."""
GAMES = 1000
"""The newest stored games whose positions the coverage counts."""
TOP = 100
"""The most reached positions whose coverage is counted apart."""


@dataclass(frozen=True)
class ProvenReport:
    game: str
    by_stones: dict[int, int]
    last_day: int
    last_week: int
    by_day: tuple[int, ...] = ()
    """Saved on each of the last ``DAYS`` days, today's (the last 24 hours) first."""
    reached: int = 0
    """Positions the newest ``GAMES`` stored games reach (mirror images as one)."""
    reached_proven: int = 0
    top: int = 0
    """The most reached of them counted apart (at most ``TOP``), and how many are proven."""
    top_proven: int = 0
    outcomes: int = 0
    """Positions with only their outcome proven (a weak solve's win or loss), not in
    ``by_stones``."""

    @property
    def total(self) -> int:
        return sum(self.by_stones.values())

    def lines(self) -> list[str]:
        out = [f"{self.game}: {self.total} positions proven in the position cache "
               f"({self.last_day} saved in the last day, {self.last_week} in the last week)"]
        if self.outcomes:
            out.append(f"  and {self.outcomes} with only their outcome proven (a win or a "
                       f"loss, its size unknown)")
        if self.by_day:
            out.append("  saved a day, the last 24 hours first: "
                       + " ".join(str(n) for n in self.by_day))
        if self.reached:
            out.append(f"  of the {self.reached} positions the newest {GAMES} stored games "
                       f"reach, {self.reached_proven} are proven (cache or book); of the "
                       f"{self.top} reached most, {self.top_proven}")
        out += [f"  {stones:2d} stones: {count}" for stones, count in sorted(
            self.by_stones.items())]
        return out


class Reached:
    """The positions the last ``window`` games added reach (each once per game, mirror
    images as one), kept as games come: idle proving counts each stored game once, as it
    ends, instead of replaying the newest thousand every round (which held the server's
    event loop for a third of a second). ``add`` and the rankings are pure CPU: a server
    calls them off its event loop."""

    def __init__(self, game: games.Game, window: int) -> None:
        self.game = game
        self.window = window
        self._start = game.format_position(game.initial())
        self._counts: Counter[str] = Counter()
        self._lines: dict[str, tuple[int, ...]] = {}
        """A line (moves from the start) to each counted position: the first game's."""
        self._games: deque[tuple[str, ...]] = deque()
        """Each counted game's positions, the oldest game first."""
        self._children: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
        """Each position's children not over, once worked out (``unreached_children``)."""

    @property
    def counted(self) -> int:
        """Games counted (at most ``window``)."""
        return len(self._games)

    def add(self, played: list[tuple[GameRecord, list[MoveRecord]]]) -> None:
        """Count the games ``played``, oldest first; the oldest counted leave the window.
        Games that start elsewhere than the initial position, or that the rules refuse,
        are left out (a position is handed to a worker as moves from the start)."""
        for record, moves in played:
            if record.start_position and record.start_position != self._start:
                continue
            lines = self._positions(moves)
            if lines is None:
                continue
            self._games.append(tuple(lines))
            self._counts.update(lines.keys())
            for key, line in lines.items():
                self._lines.setdefault(key, line)
            while len(self._games) > self.window:
                self._forget(self._games.popleft())

    def _positions(self, moves: list[MoveRecord]) -> dict[str, tuple[int, ...]] | None:
        """The game's positions not over, each once with the moves that first reach it;
        None if the rules refuse a move."""
        game = self.game
        state = game.initial()
        numbers: list[int] = []
        seen: dict[str, tuple[int, ...]] = {}
        try:
            for move in moves:
                seen.setdefault(self._key(state), tuple(numbers))
                number = game.parse_move(state, move.move)
                numbers.append(number)
                state = state.play(number)
        except (games.InvalidNotation, games.IllegalMove):
            return None  # a stored game the rules refuse is no position anybody reaches
        if not state.is_over():
            seen.setdefault(self._key(state), tuple(numbers))
        return seen

    def _key(self, state: games.State) -> str:
        return canonical(self.game.name, self.game.cells(state), state.to_move).key

    def _forget(self, keys: tuple[str, ...]) -> None:
        self._counts.subtract(keys)
        for key in keys:
            if self._counts[key] <= 0:
                del self._counts[key]
                self._lines.pop(key, None)
                self._children.pop(key, None)

    def ranked(self) -> list[tuple[str, tuple[int, ...], int]]:
        """(canonical key, moves from the start, games) of each position counted, most
        reached first, then deepest first (a deeper position proves sooner and its proof
        helps the shallower ones')."""
        lines = self._lines
        ranked = sorted(self._counts.items(), key=lambda kv: (-kv[1], -len(lines[kv[0]]), kv[0]))
        return [(key, lines[key], n) for key, n in ranked]

    def unreached_children(self, min_visits: int = 2) -> list[tuple[str, tuple[int, ...]]]:
        """(canonical key, moves from the start) of each position one move from a position
        at least ``min_visits`` games reach, not over and not reached itself: where the next
        game to leave a well-trodden line goes. In the parents' order (``ranked``), so the
        children of the most reached come first; mirror images once."""
        known = set(self._counts)
        out: list[tuple[str, tuple[int, ...]]] = []
        for parent, line, visits in self.ranked():
            if visits < min_visits:
                break
            for key, child_line in self._children_of(parent, line):
                if key not in known:
                    known.add(key)
                    out.append((key, child_line))
        return out

    def _children_of(self, parent: str, line: tuple[int, ...]
                     ) -> list[tuple[str, tuple[int, ...]]]:
        children = self._children.get(parent)
        if children is None:
            game = self.game
            state = game.initial()
            for move in line:
                state = state.play(move)
            children = []
            for move in state.legal_moves():
                child = state.play(move)
                if not child.is_over():
                    children.append((self._key(child), (*line, move)))
            self._children[parent] = children
        return children


def visited(game: games.Game, played: list[tuple[GameRecord, list[MoveRecord]]]
            ) -> list[tuple[str, tuple[int, ...], int]]:
    """``Reached.ranked`` of the games ``played``, all of them."""
    reached = Reached(game, max(1, len(played)))
    reached.add(played)
    return reached.ranked()


def stones(key: str) -> int:
    """Stones (or discs) of a canonical key: the bits set in both sides' boards."""
    return int(key, 16).bit_count()


async def proven_report(database_url: str | None, game: str,
                        now: float | None = None) -> ProvenReport:
    """Count the proven positions of ``game`` in the database at ``database_url`` (else
    ``$DATABASE_URL``, else the SQLite file); the database is migrated first if need be."""
    store = SqlStore(database_url)
    await store.open()
    try:
        async with store.engine.connect() as conn:
            rows = await repo.proven_positions(conn, game)
            outcomes = await repo.proven_outcome_count(conn, game)
        played = await store.recent_games(game, GAMES)
    finally:
        await store.close()
    now = time.time() if now is None else now
    by_day = [0] * DAYS
    for _, saved in rows:
        day = int((now - saved) // DAY)
        if 0 <= day < DAYS:
            by_day[day] += 1
    reached = _reached(game, played, {key for key, _ in rows})
    top = reached[:TOP]
    return ProvenReport(
        game,
        dict(Counter(stones(key) for key, _ in rows)),
        sum(1 for _, saved in rows if now - saved <= DAY),
        sum(1 for _, saved in rows if now - saved <= 7 * DAY),
        tuple(by_day), len(reached), sum(reached), len(top), sum(top), outcomes,
    )


def _reached(game_name: str, played: list[tuple[GameRecord, list[MoveRecord]]],
             proven: set[str]) -> list[bool]:
    """Whether each position the games reach is proven, most reached first."""
    game = games.load(game_name)
    try:
        solver = review.rules_of(game_name).solver
    except ValueError:
        solver = None
    known = getattr(importlib.import_module(solver), "known_value", None) if solver else None
    found = []
    for key, line, _ in visited(game, played):
        state = game.initial()
        for move in line:
            state = state.play(move)
        found.append(key in proven or (known is not None and known(state) is not None))
    return found
