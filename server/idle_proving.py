"""Idle AI workers extend the proven positions, most visited first.

A review or an analysis of a position the durable position cache holds proven is answered at
once; one it does not hold may take the solver minutes. So while the AI pool has nothing to
do, the positions people actually reach (counted over the newest stored games, each position
once per game, mirror images together) that are not known proven are handed to a worker, most
visited first, as a background task (``AiPool.run_background``: ``ai.review.prove_positions``),
which keeps each proof in the cache as it is made. A background task starts only when no move
or task waits or runs, and is given up the moment one comes, so a live move or a review never
waits for it; the next round starts again after ``IdleProving.pause_seconds``.

Only for games with a solver (``ai.review.ReviewRules.solver``: Connect Four), and only on a
pool of this node's own that runs tasks (two workers or more); a cluster node whose moves
are found by ``discus worker`` processes proves nothing here. What a worker reported known,
proved or too hard for ``IdleProving.seconds`` is not handed out again until a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

import games
from ai import review as engine_review
from server.engines import AiPool, Pool
from server.engines.local import TASK_SECONDS, BackgroundYielded, TaskFailed
from server.settings import IdleProving
from server.storage.proven import visited
from server.store import Store

log = logging.getLogger(__name__)

PROVE_TASK = "ai.review:prove_positions"


@dataclass
class ProvingCounts:
    """What idle proving has done since the server started (tests and operators read it)."""

    rounds: int = 0
    proved: int = 0
    known: int = 0
    unproved: int = 0
    given_back: int = 0
    """Background tasks given up for a move or a task that came."""


class IdleProver:
    """Runs ``IdleProving`` rounds until ``stopping`` (``run``); does nothing unless
    enabled and the pool can run background tasks."""

    def __init__(self, store: Store, pool: Pool | None, settings: IdleProving,
                 stopping: asyncio.Event) -> None:
        self.store = store
        self.pool = pool
        self.settings = settings
        self.stopping = stopping
        self.counts = ProvingCounts()
        self._settled: set[tuple[str, str]] = set()
        """(game, canonical key) of positions reported known, proved or too hard."""

    @property
    def batch(self) -> int:
        """Positions in one task: ``IdleProving.batch``, fewer if their proofs could outlast
        the pool's patience with a task (``TASK_SECONDS``, after which it kills the worker)."""
        fits = int(TASK_SECONDS * 0.8 / self.settings.seconds)
        return max(1, min(self.settings.batch, fits))

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
        game = games.load(name)
        played = await self.store.recent_games(name, self.settings.games)
        wanted = [(key, line) for key, line, _ in visited(game, played)
                  if (name, key) not in self._settled][: self.batch]
        if not wanted:
            return True
        self.counts.rounds += 1
        try:
            done: engine_review.Proved = await self.pool.run_background(
                PROVE_TASK, name, tuple(line for _, line in wanted), self.settings.seconds)
        except BackgroundYielded:
            self.counts.given_back += 1
            return False
        except TaskFailed:
            if self.stopping.is_set():
                return False
            raise
        for indices, counter in ((done.proved, "proved"), (done.known, "known"),
                                 (done.unproved, "unproved")):
            for index in indices:
                self._settled.add((name, wanted[index][0]))
            setattr(self.counts, counter, getattr(self.counts, counter) + len(indices))
        if done.proved:
            log.info("idle workers proved %d %s positions (%d known, %d too hard)",
                     len(done.proved), name, len(done.known), len(done.unproved))
        return True
