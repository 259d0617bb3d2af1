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
from collections import Counter
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


def visited(game: games.Game, played: list[tuple[GameRecord, list[MoveRecord]]]
            ) -> list[tuple[str, tuple[int, ...], int]]:
    """(canonical key, moves from the start, visits) of each position not over that the
    games reach, most visited first, then deepest first (a deeper position proves sooner and
    its proof helps the shallower ones'). Games that start elsewhere than the initial
    position are left out (a position is handed to a worker as moves from the start)."""
    start = game.format_position(game.initial())
    counts: Counter[str] = Counter()
    lines: dict[str, tuple[int, ...]] = {}
    for record, moves in played:
        if record.start_position and record.start_position != start:
            continue
        state = game.initial()
        numbers: list[int] = []
        seen: set[str] = set()
        try:
            for move in moves:
                key = canonical(game.name, game.cells(state), state.to_move).key
                if key not in seen:
                    seen.add(key)
                    counts[key] += 1
                    lines.setdefault(key, tuple(numbers))
                number = game.parse_move(state, move.move)
                numbers.append(number)
                state = state.play(number)
        except (games.InvalidNotation, games.IllegalMove):
            continue  # a stored game the rules refuse is no position anybody reaches
        if not state.is_over():
            key = canonical(game.name, game.cells(state), state.to_move).key
            if key not in seen:
                counts[key] += 1
                lines.setdefault(key, tuple(numbers))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], -len(lines[kv[0]]), kv[0]))
    return [(key, lines[key], n) for key, n in ranked]


def unreached_children(game: games.Game, reached: list[tuple[str, tuple[int, ...], int]],
                       min_visits: int = 2) -> list[tuple[str, tuple[int, ...]]]:
    """(canonical key, moves from the start) of each position one move from a position that
    ``reached`` (``visited``'s ranking) counts at least ``min_visits`` times, not over and not
    reached itself: where the next game to leave a well-trodden line goes. In the parents'
    order, so the children of the most visited come first; mirror images once."""
    known = {key for key, _, _ in reached}
    out: list[tuple[str, tuple[int, ...]]] = []
    for _, line, visits in reached:
        if visits < min_visits:
            continue
        state = game.initial()
        for move in line:
            state = state.play(move)
        for move in state.legal_moves():
            child = state.play(move)
            if child.is_over():
                continue
            key = canonical(game.name, game.cells(child), child.to_move).key
            if key not in known:
                known.add(key)
                out.append((key, (*line, move)))
    return out


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
