"""Calibration: AI-vs-AI matches between difficulty levels, and an Elo estimate per level.

An admin wants to know whether level N really beats level N-1, and by how much. This module
plays the matches and fits the ratings; it knows nothing of databases or terminals (the
``discus calibrate`` command stores and prints what it returns).

- ``schedule`` lists the games: every pair of levels (``pairs="all"``) or each level against
  the next (``pairs="adjacent"``), each opening twice with the colours swapped, openings
  taken from ``OPENINGS`` in a seeded order.
- ``play_game`` plays one game exactly as live games are played: each move is
  ``choose_move(state, level, seed, last_iteration)`` after ``ai.search`` within
  ``level.limits()``, as ``server.engines`` does.
- ``run_calibration`` plays a schedule on worker processes (warmed up once each) and returns
  a ``CalibrationReport``: per-pair wins/draws/losses and ``fit_elo``'s ratings.
- ``fit_elo`` is the maximum-likelihood Elo fit (Bradley-Terry with draws as half points),
  anchored at the weakest level = 0, with a standard error per level from the curvature of
  the likelihood. A few virtual draws per pair (``prior_draws``) keep a perfect score finite.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import random
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any, Literal

import numpy as np

import ai
import games
from ai.levels import Level, choose_move
from ai.views import EngineView

PairMode = Literal["adjacent", "all"]

OPENINGS: Mapping[str, tuple[str, ...]] = EngineView("openings")
"""Short opening lines per game (each engine's ``ai.Engine.openings``), in the game's
notation, played before the levels take over so that a pair's games are not all the same
game."""

ELO_PER_NATURAL = 400 / math.log(10)  # Elo points per unit of the logistic's natural scale


@dataclass(frozen=True)
class MatchGame:
    """One game to play: ``first`` (a level name) moves first after ``opening``."""

    index: int
    first: str
    second: str
    opening: str
    seed: int


@dataclass(frozen=True)
class GameResult:
    """How one scheduled game ended. ``result`` is from the first player's side (its sign
    names the winner, 0 a draw); ``moves`` is the whole game, opening included."""

    match: MatchGame
    result: int
    moves: str
    plies: int
    seconds: float
    cpu: tuple[float, float] = (0.0, 0.0)
    """CPU seconds the first and the second level spent on their searched moves."""
    searched: tuple[int, int] = (0, 0)
    """Moves the first and the second level searched (a forced move needs no search)."""

    def score_of(self, level: str) -> float:
        """1 for a win of ``level``, 0.5 for a draw, 0 for a loss."""
        if self.result == 0:
            return 0.5
        first_won = self.result > 0
        return 1.0 if first_won == (level == self.match.first) else 0.0


@dataclass
class PairRecord:
    """Results between ``a`` (the weaker by order) and ``b``, from ``a``'s side."""

    a: str
    b: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    a_first: int = 0  # games in which ``a`` moved first (colours alternate: half of them)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """``a``'s points (a win 1, a draw 0.5)."""
        return self.wins + 0.5 * self.draws


@dataclass(frozen=True)
class Rating:
    """A level's Elo relative to the weakest (0), with one standard error (0 for the anchor)."""

    level: str
    elo: float
    error: float
    games: int
    score: float
    cpu_per_move: float | None = None
    """Mean CPU seconds of the level's searched moves: what one of its moves costs a worker
    (None: it searched none)."""


@dataclass
class CalibrationReport:
    game: str
    levels: tuple[Level, ...]
    games_per_pair: int
    seed: int
    pair_mode: PairMode
    pairs: list[PairRecord]
    ratings: list[Rating]
    results: list[GameResult] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for storage and the admin page); games are summarised, not kept."""
        return {
            "game": self.game,
            "levels": [level.to_dict() for level in self.levels],
            "games_per_pair": self.games_per_pair,
            "seed": self.seed,
            "pair_mode": self.pair_mode,
            "pairs": [
                {"a": p.a, "b": p.b, "wins": p.wins, "draws": p.draws, "losses": p.losses}
                for p in self.pairs
            ],
            "ratings": [
                {
                    "level": r.level,
                    "elo": r.elo,
                    "error": r.error,
                    "games": r.games,
                    "score": r.score,
                    "cpu_per_move": r.cpu_per_move,
                }
                for r in self.ratings
            ],
            "seconds": self.seconds,
        }


# --- scheduling ---------------------------------------------------------------------------


def pairings(names: Sequence[str], mode: PairMode) -> list[tuple[str, str]]:
    """The pairs to play, weaker first: neighbours in ``names`` or every pair."""
    if mode == "adjacent":
        return list(zip(names, names[1:], strict=False))
    if mode == "all":
        return list(combinations(names, 2))
    raise ValueError(f"pairs must be 'adjacent' or 'all', not {mode!r}")


def schedule(
    names: Sequence[str],
    games_per_pair: int,
    openings: Sequence[str],
    seed: int,
    mode: PairMode = "adjacent",
) -> list[MatchGame]:
    """Every game of a calibration, pair by pair.

    Within a pair, games go in twos on the same opening with the colours swapped, so neither
    level gets the better side of an opening more often; the openings come in a seeded order
    that differs from pair to pair. Each game gets its own seed for the levels' choices.
    """
    if games_per_pair < 1:
        raise ValueError("games per pair must be at least 1")
    if len(names) < 2:
        raise ValueError("calibration needs at least two levels")
    if len(set(names)) != len(names):
        raise ValueError("each level may be named once")
    if not openings:
        raise ValueError("calibration needs at least one opening (it may be empty: '')")
    rng = random.Random(seed)
    planned: list[MatchGame] = []
    for a, b in pairings(names, mode):
        order = list(openings)
        rng.shuffle(order)
        for k in range(games_per_pair):
            first, second = (a, b) if k % 2 == 0 else (b, a)
            opening = order[(k // 2) % len(order)]
            planned.append(MatchGame(len(planned), first, second, opening, rng.getrandbits(32)))
    return planned


# --- playing ------------------------------------------------------------------------------


def move_seed(game_seed: int, ply: int) -> int:
    """The seed of one move's choice, as the server derives one per game and ply."""
    return zlib.crc32(f"{game_seed}:{ply}".encode())


def play_game(game_name: str, levels: Mapping[str, Level], match: MatchGame) -> GameResult:
    """Play ``match`` to the end in this process (the engines should be warmed up)."""
    game = games.load(game_name)
    started = time.perf_counter()
    state = game.parse_moves(match.opening)
    played = [*opening_moves(game, match.opening)]
    seats = (levels[match.first], levels[match.second])
    cpu, searched = [0.0, 0.0], [0, 0]
    while not state.is_over():
        seat = state.to_move
        level = seats[seat]
        iterations = []
        # A forced move (or pass) needs no search, as in live games.
        searching = len(state.legal_moves()) > 1
        began = time.process_time()
        if searching:
            iterations = list(ai.search(state, level.limits()))
        move = choose_move(state, level, move_seed(match.seed, state.ply), iterations[-1:])
        if searching:
            cpu[seat] += time.process_time() - began
            searched[seat] += 1
        played.append(move)
        state = state.play(move)
    return GameResult(
        match, state.result(), game.format_moves(played), state.ply,
        time.perf_counter() - started, (cpu[0], cpu[1]), (searched[0], searched[1]))


def opening_moves(game: games.Game, line: str) -> list[int]:
    """The moves of an opening line (moves back to back, ``"44"``, ``"f5d6"``), as ints:
    each move is the shortest text from where the last ended that is a legal move."""
    state = game.initial()
    moves: list[int] = []
    pos = 0
    while pos < len(line):
        for end in range(pos + 1, min(len(line), pos + MAX_MOVE_TEXT) + 1):
            try:
                move = game.parse_move(state, line[pos:end])
            except ValueError:
                continue
            break
        else:
            raise games.InvalidNotation(f"no move of {game.name} at {pos + 1} of {line!r}")
        moves.append(move)
        state = state.play(move)
        pos = end
    return moves


MAX_MOVE_TEXT = 8
"""The longest move text (the protocol's ``move`` field holds at most 8 characters)."""


_WORKER_LEVELS: dict[str, Level] = {}
_WORKER_GAME = ""


def _init_worker(game_name: str, level_dicts: Sequence[dict[str, Any]]) -> None:
    """Warm the engine up once per process, so no game is charged for compiling."""
    global _WORKER_GAME
    _WORKER_GAME = game_name
    _WORKER_LEVELS.clear()
    for data in level_dicts:
        level = Level.from_dict(data)
        _WORKER_LEVELS[level.name] = level
    ai.warm_up(game_name)


def _play_in_worker(match: MatchGame) -> GameResult:
    return play_game(_WORKER_GAME, _WORKER_LEVELS, match)


Progress = Callable[[int, int, GameResult], None]
"""Called as ``on_progress(done, total, last_result)`` after each finished game."""


def run_calibration(
    game_name: str,
    levels: Sequence[Level],
    games_per_pair: int = 8,
    seed: int = 1,
    processes: int | None = None,
    mode: PairMode = "adjacent",
    openings: Sequence[str] | None = None,
    on_progress: Progress | None = None,
) -> CalibrationReport:
    """Play a calibration of ``levels`` (any order; they are sorted by ``order``) on
    ``processes`` worker processes (default: one per core) and fit the ratings.

    Blocking; an async caller runs it in a thread. Results do not depend on ``processes``
    except through the engines' clocks (a loaded machine searches less in the same time).
    """
    ladder, planned = prepare(game_name, levels, games_per_pair, seed, mode, openings)
    started = time.perf_counter()
    workers = max(1, min(processes or multiprocessing.cpu_count(), len(planned)))
    results: list[GameResult] = []
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(game_name, [level.to_dict() for level in ladder]),
    ) as pool:
        futures = [pool.submit(_play_in_worker, match) for match in planned]
        try:
            for future in concurrent.futures.as_completed(futures):
                results.append(future.result())
                if on_progress is not None:
                    on_progress(len(results), len(planned), results[-1])
        except BaseException:
            for pending in futures:
                pending.cancel()
            raise
    return build_report(game_name, ladder, games_per_pair, seed, mode, results,
                        time.perf_counter() - started)  # fmt: skip


def prepare(
    game_name: str,
    levels: Sequence[Level],
    games_per_pair: int,
    seed: int,
    mode: PairMode = "adjacent",
    openings: Sequence[str] | None = None,
) -> tuple[tuple[Level, ...], list[MatchGame]]:
    """The ladder (weakest first) and the schedule of a calibration; bad openings or level
    lists raise ``ValueError`` here, before anything is played."""
    ladder = tuple(sorted(levels, key=lambda level: level.order))
    lines = OPENINGS.get(game_name, ("",)) if openings is None else tuple(openings)
    game = games.load(game_name)
    for line in lines:
        game.parse_moves(line)
    names = [level.name for level in ladder]
    return ladder, schedule(names, games_per_pair, lines, seed, mode)


def build_report(
    game_name: str,
    ladder: Sequence[Level],
    games_per_pair: int,
    seed: int,
    mode: PairMode,
    results: Sequence[GameResult],
    seconds: float,
) -> CalibrationReport:
    """The table and the ratings of finished games (in any order)."""
    ordered = sorted(results, key=lambda r: r.match.index)
    names = [level.name for level in ladder]
    pairs = tabulate(ordered, names, mode)
    cost = cpu_per_move(ordered)
    return CalibrationReport(
        game=game_name,
        levels=tuple(ladder),
        games_per_pair=games_per_pair,
        seed=seed,
        pair_mode=mode,
        pairs=pairs,
        ratings=[replace(r, cpu_per_move=cost.get(r.level)) for r in fit_elo(names, pairs)],
        results=ordered,
        seconds=seconds,
    )


# --- the table and the fit ----------------------------------------------------------------


def cpu_per_move(results: Sequence[GameResult]) -> dict[str, float]:
    """Each level's mean CPU seconds per searched move over ``results`` (levels that searched
    none are left out): beside its rating, the cost an operator sizes workers by."""
    cpu: dict[str, float] = {}
    moves: dict[str, int] = {}
    for result in results:
        for level, seconds, count in zip((result.match.first, result.match.second), result.cpu,
                                         result.searched, strict=True):
            cpu[level] = cpu.get(level, 0.0) + seconds
            moves[level] = moves.get(level, 0) + count
    return {level: cpu[level] / count for level, count in moves.items() if count}


def tabulate(
    results: Sequence[GameResult], names: Sequence[str], mode: PairMode = "adjacent"
) -> list[PairRecord]:
    """Wins, draws and losses per pair, from the weaker level's side, in ladder order."""
    rank = {name: i for i, name in enumerate(names)}
    records = {pair: PairRecord(*pair) for pair in pairings(names, mode)}
    for result in results:
        a, b = sorted((result.match.first, result.match.second), key=rank.__getitem__)
        record = records.setdefault((a, b), PairRecord(a, b))
        points = result.score_of(a)
        if points == 1.0:
            record.wins += 1
        elif points == 0.5:
            record.draws += 1
        else:
            record.losses += 1
        record.a_first += result.match.first == a
    return list(records.values())


def fit_elo(
    names: Sequence[str],
    pairs: Sequence[PairRecord],
    prior_draws: float = 1.0,
    iterations: int = 100,
) -> list[Rating]:
    """Maximum-likelihood Elo per level, the first of ``names`` anchored at 0.

    Each game scores 1, 0.5 or 0 and is modelled as P(win of i over j) = 1 / (1 + 10^(-(Ri -
    Rj)/400)). ``prior_draws`` virtual draws are added to every pair that played, which keeps
    the fit finite when a level won every game (its gap is then a lower bound rather than a
    measurement). Errors are one standard error, from the inverse of the likelihood's
    curvature with the anchor fixed. Levels that played nobody get ``nan``.
    """
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    games_ij = np.zeros((n, n))
    score_ij = np.zeros((n, n))  # points of i against j
    played = np.zeros(n)
    points = np.zeros(n)
    for p in pairs:
        if p.games == 0:
            continue
        i, j = index[p.a], index[p.b]
        total = p.games + prior_draws
        games_ij[i, j] = games_ij[j, i] = total
        score_ij[i, j] = p.score + prior_draws / 2
        score_ij[j, i] = total - score_ij[i, j]
        played[i] += p.games
        played[j] += p.games
        points[i] += p.score
        points[j] += p.games - p.score
    reachable = _connected_to_anchor(games_ij)
    free = [k for k in range(1, n) if reachable[k]]
    r = np.zeros(n)
    covariance: np.ndarray = np.zeros((len(free), len(free)))
    for _ in range(iterations):
        expected = 1 / (1 + np.exp(-(r[:, None] - r[None, :])))
        gradient = (score_ij - games_ij * expected).sum(axis=1)
        weight = games_ij * expected * (1 - expected)
        hessian = weight.copy()
        np.fill_diagonal(hessian, -weight.sum(axis=1))
        if not free:
            break
        reduced = hessian[np.ix_(free, free)]
        step = np.linalg.solve(reduced, -gradient[free])
        r[free] += step
        covariance = np.linalg.inv(-reduced)
        if np.max(np.abs(step)) < 1e-10:
            break
    errors = np.zeros(n)
    for k, level in enumerate(free):
        errors[level] = math.sqrt(max(covariance[k, k], 0.0))
    return [
        Rating(
            level=name,
            elo=float(r[k] * ELO_PER_NATURAL) if reachable[k] else math.nan,
            error=float(errors[k] * ELO_PER_NATURAL) if reachable[k] else math.nan,
            games=int(played[k]),
            score=float(points[k]),
        )
        for k, name in enumerate(names)
    ]


def _connected_to_anchor(games_ij: np.ndarray) -> list[bool]:
    seen = [False] * len(games_ij)
    if not seen:
        return seen
    seen[0] = True
    frontier = [0]
    while frontier:
        i = frontier.pop()
        for j in np.nonzero(games_ij[i])[0]:
            if not seen[j]:
                seen[j] = True
                frontier.append(int(j))
    return seen


def format_report(report: CalibrationReport) -> str:
    """The results as plain-text tables: pairs (from the weaker level's side), then Elo."""
    width = max(len(level.name) for level in report.levels)
    lines = [
        f"{report.game}: {len(report.results)} games, {report.games_per_pair} per pair "
        f"({report.pair_mode}), seed {report.seed}, {report.seconds:.0f}s",
        "",
        f"{'pair':<{2 * width + 4}} {'W':>4} {'D':>4} {'L':>4}  score",
    ]
    for p in report.pairs:
        share = f"{100 * p.score / p.games:5.1f}%" if p.games else "    -"
        lines.append(
            f"{p.a:<{width}} vs {p.b:<{width}}  {p.wins:>4} {p.draws:>4} {p.losses:>4}  {share}"
        )
    lines += ["", f"{'level':<{width}} {'Elo':>7}  {'± s.e.':>7}  games  score  CPU s/move"]
    for r in report.ratings:
        cost = "-" if r.cpu_per_move is None else f"{r.cpu_per_move:.3f}"
        lines.append(
            f"{r.level:<{width}} {r.elo:>7.0f}  {r.error:>7.0f}  {r.games:>5}  {r.score:>5.1f}"
            f"  {cost:>10}"
        )
    return "\n".join(lines)
