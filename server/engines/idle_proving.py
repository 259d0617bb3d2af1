"""Idle AI workers extend the proven positions, most visited first.

A review or an analysis of a position the durable position cache holds proven is answered at
once; one it does not hold may take the solver minutes. So while the AI pool has nothing to
do, the positions people actually reach (counted over the last stored games to end, each
position once per game, mirror images together; each game read once, as it ends:
``Reached``) that are not known proven are handed to a worker, most visited first, as a
background task (``AiPool.run_background``: ``ai.review.prove_positions``),
which keeps each proof in the cache as it is made (first the position's outcome, a weak
solve's win or loss, then its exact score: one too hard for the exact proof still leaves its
outcome for the expert). A background task starts only when no move
or task waits or runs, and is given up the moment one comes, so a live move or a review never
waits for it; the next round starts again after ``IdleProving.pause_seconds``.

Only for games with a solver (``ai.review.ReviewRules.solver``: Connect Four), and only on a
pool that runs tasks (two workers or more): a node's own, or a ``discus worker``'s
(``server.engines.remote_worker``), whose rounds take a ``RoundLock`` in Redis first so that
the cluster's workers never prove the same batch twice. What a worker reported known or
proved is not handed out again until a restart; a position too hard for ``IdleProving.seconds``
is tried again, once no new position waits, with ``RETRY_FACTOR`` times the budget, at most
``RETRIES`` times (``ProvingPlan``, which ``bench.review_corpus`` runs as well).

Once every reached position is settled, the workers go on one move past them: the unreached
children of positions at least two games reached (``Reached.unreached_children``). A game
reviewed later is a new game, and where it first leaves the trodden lines (most often early,
where reviews are slowest) its position is then proven already.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import games
from ai import review as engine_review
from server.engines import AiPool, Pool
from server.engines.low_priority import TASK_SECONDS, BackgroundYielded, TaskFailed
from server.settings import IdleProving
from server.storage.proven import Reached
from server.storage.store import Store

log = logging.getLogger(__name__)

PROVE_TASK = "ai.review:prove_positions"
RETRY_FACTOR = 4.0
"""A position too hard for one budget is tried again with this many times that budget."""
RETRIES = 2
"""Times a too-hard position is tried again (each with ``RETRY_FACTOR`` times the last
budget) before it is left until a restart."""


@dataclass
class ProvingCounts:
    """What idle proving has done since the server started (tests and operators read it)."""

    rounds: int = 0
    proved: int = 0
    known: int = 0
    unproved: int = 0
    outcomes: int = 0
    """Of the unproved, those whose win or loss (not its size) was proven and kept."""
    given_back: int = 0
    """Background tasks given up for a move or a task that came."""
    locked_out: int = 0
    """Rounds left to another prover holding the round's lock."""


class ProvingPlan:
    """Which positions a round hands out, within what budget, and what became of them.

    Positions are ranked as ``visited`` ranks them (most visited first). A round hands out
    positions never tried, within ``IdleProving.seconds`` each; when none is left, those too
    hard once, within ``RETRY_FACTOR`` times as long, and so on up to ``RETRIES`` retries:
    a new game's positions are never kept waiting behind a long proof. A budget never
    exceeds what the pool allows a task (``TASK_SECONDS``, after which it kills the worker).
    """

    def __init__(self, settings: IdleProving) -> None:
        self.settings = settings
        self._settled: set[tuple[str, str]] = set()
        """(game, canonical key) of positions reported known or proved, or past retrying."""
        self._tries: dict[tuple[str, str], int] = {}
        """(game, canonical key) of positions reported too hard: how many times."""

    def seconds(self, tries: int) -> float:
        """The budget of one position's proof after ``tries`` too-hard reports."""
        return min(self.settings.seconds * RETRY_FACTOR ** tries, TASK_SECONDS * 0.8)

    def batch(self, seconds: float) -> int:
        """Positions in one task: ``IdleProving.batch``, fewer if their proofs could outlast
        the pool's patience with a task."""
        fits = int(TASK_SECONDS * 0.8 / seconds)
        return max(1, min(self.settings.batch, fits))

    def next_round(self, name: str, reached: Reached
                   ) -> tuple[list[tuple[str, tuple[int, ...]]], float]:
        """(canonical key, moves from the start) of the positions ``reached`` to prove
        next, and each one's budget in seconds; no positions when all are settled. The
        reached positions first (retries included), then the unreached children of the
        well-trodden ones, ranked and retried alike."""
        # The children only when no reached position waits: most rounds never need them.
        for rank in (lambda: [(key, line) for key, line, _ in reached.ranked()],
                     reached.unreached_children):
            ranked = [(key, line) for key, line in rank() if (name, key) not in self._settled]
            for tries in range(RETRIES + 1):
                wanted = [(key, line) for key, line in ranked
                          if self._tries.get((name, key), 0) == tries]
                if wanted:
                    seconds = self.seconds(tries)
                    return wanted[: self.batch(seconds)], seconds
        return [], self.settings.seconds

    def record(self, name: str, wanted: list[tuple[str, tuple[int, ...]]],
               done: engine_review.Proved, counts: ProvingCounts) -> None:
        """Take in what a worker did with ``wanted`` (``prove_positions``' answer)."""
        for index in (*done.proved, *done.known):
            self._settled.add((name, wanted[index][0]))
        for index in done.unproved:
            key = (name, wanted[index][0])
            self._tries[key] = self._tries.get(key, 0) + 1
            if self._tries[key] > RETRIES:
                self._settled.add(key)
        for indices, counter in ((done.proved, "proved"), (done.known, "known"),
                                 (done.unproved, "unproved"), (done.outcomes, "outcomes")):
            setattr(counts, counter, getattr(counts, counter) + len(indices))


RoundLock = Callable[[str, float], contextlib.AbstractAsyncContextManager[bool]]
"""``lock(game, seconds)``: entered around one round of ``game``, it yields whether this
prover may run the round (False: another holds it); ``seconds`` bounds how long it is held
if the holder dies."""

READ_PAGE = 100
"""Stored games read at once while counting: on PostgreSQL their rows become records on the
event loop, a few milliseconds a page."""

LOCK_MARGIN_SECONDS = 30.0
"""Added to a round's longest proof time for its lock's expiry."""


class IdleProver:
    """Runs ``IdleProving`` rounds until ``stopping`` (``run``); does nothing unless
    enabled and the pool can run background tasks. ``lock``: where several provers share
    the stored games (the cluster's ``discus worker`` processes), each round holds it."""

    def __init__(self, store: Store, pool: Pool | None, settings: IdleProving,
                 stopping: asyncio.Event, lock: RoundLock | None = None) -> None:
        self.store = store
        self.pool = pool
        self.settings = settings
        self.stopping = stopping
        self.lock = lock
        self.counts = ProvingCounts()
        self.plan = ProvingPlan(settings)
        self.reached: dict[str, Reached] = {}
        """Each game's positions, counted over the last ``IdleProving.games`` games to end."""
        self._read_after: dict[str, tuple[float, str] | None] = {}
        """Each game's last game counted ((finished_at, id): ``Store.games_ended_after``)."""

    @property
    def active(self) -> bool:
        return (self.settings.enabled and isinstance(self.pool, AiPool)
                and self.pool.runs_tasks)

    def games(self) -> list[str]:
        """The pool's games that have a solver to prove positions with."""
        names = []
        for name in self.pool.games if self.pool is not None else ():
            try:
                if engine_review.rules_of(name).solver is not None:
                    names.append(name)
            except ValueError:
                continue
        return names

    async def run(self) -> None:
        if not self.active:
            return
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.settings.pause_seconds)
                return
            for name in self.games():
                try:
                    if not await self.prove_round(name):
                        break  # given back: wait for the pool to be idle again
                except Exception:
                    if self.stopping.is_set():
                        return
                    log.exception("idle proving of %s failed", name)

    async def prove_round(self, name: str) -> bool:
        """One background task proving the most visited positions of ``name`` not settled
        yet; False if it was given back (or the pool is closing)."""
        assert isinstance(self.pool, AiPool)
        reached = await self.count_ended_games(name)
        wanted, seconds = await asyncio.to_thread(self.plan.next_round, name, reached)
        if not wanted:
            return True
        if self.lock is None:
            done = await self._prove(name, wanted, seconds)
        else:
            async with self.lock(name, seconds * len(wanted) + LOCK_MARGIN_SECONDS) as held:
                if not held:
                    self.counts.locked_out += 1
                    return True
                done = await self._prove(name, wanted, seconds)
        if done is None:
            return False
        self.plan.record(name, wanted, done, self.counts)
        if done.proved or done.outcomes:
            log.info("idle workers proved %d %s positions (%d known, %d too hard, of which "
                     "%d with their outcome proven)", len(done.proved), name, len(done.known),
                     len(done.unproved), len(done.outcomes))
        return True

    async def count_ended_games(self, name: str) -> Reached:
        """``name``'s positions with the games that ended since the last round counted:
        read ``READ_PAGE`` games at a time (on a SQLite file in the store's reader thread),
        replayed off the event loop. The first round counts the last ``IdleProving.games``
        to end. A game whose end is stored after a later-ending one's was read (another
        node's clock, a slow commit) is missed: the counts are a sample of what people
        play, not a ledger."""
        reached = self.reached.get(name)
        if reached is None:
            reached = Reached(games.load(name), self.settings.games)
            self._read_after[name] = await self.store.ended_mark(name, self.settings.games)
            self.reached[name] = reached
        while True:
            page = await self.store.games_ended_after(name, self._read_after[name], READ_PAGE)
            if page:
                last = page[-1][0]
                assert last.finished_at is not None
                self._read_after[name] = (last.finished_at, last.id)
                await asyncio.to_thread(reached.add, page)
            if len(page) < READ_PAGE:
                return reached

    async def _prove(self, name: str, wanted: list[tuple[str, tuple[int, ...]]],
                     seconds: float) -> engine_review.Proved | None:
        """One background task proving ``wanted``; None if it was given back."""
        assert isinstance(self.pool, AiPool)
        self.counts.rounds += 1
        try:
            done: engine_review.Proved = await self.pool.run_background(
                PROVE_TASK, name, tuple(line for _, line in wanted), seconds)
        except BackgroundYielded:
            self.counts.given_back += 1
            return None
        except TaskFailed:
            if self.stopping.is_set():
                return None
            raise
        return done
