"""Game reviews and the analysis board: the glue between the protocol, the store and
``ai.review``, which does the valuing.

The engine's work runs at low priority, never in the event loop and never in a live move's
way, on ``AnalysisLimits.lanes`` lanes (two) shared fairly among addresses (``FairShare``: one
address holds at most half of them, so another's quick question starts at once): on the AI
pool's idle workers (``AiPool.run_task``: only while no move waits and another worker stays
idle) as far as it has them (a pool of two runs one task), the other lanes in engine processes
of this node's own at the lowest CPU priority (``LowPriorityRunner``; all of them where the
pool cannot run tasks: one worker, or a cluster node whose moves are found by ``discus worker``
processes over Redis). A review concerns a finished
game, so any node may compute it; the store keeps the first one stored (insert if absent), so
two nodes computing the same review is harmless, and a second request costs a read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import games
from ai import review as engine_review
from server import errors
from server import protocol as p
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.engines import AiPool, CacheSettings, Pool
from server.engines.engine_process import use_proven_cache
from server.reviews.fair_share import FairShare
from server.settings import DEFAULT_ANALYSIS_LIMITS, AnalysisLimits
from server.storage.store import GameRecord, MoveRecord, ReviewRecord, Store

log = logging.getLogger(__name__)

REVIEW_TASK = "ai.review:review_moves"
ANALYSIS_TASK = "ai.review:analyse_moves"
REVIEWABLE = frozenset({"finished", "aborted"})
"""Statuses of a game that can be reviewed: it is over, so its moves never change."""
REFUSED_RETRY_SECONDS = 30.0
"""``retry_after`` of ``engine_help_refused``: a hint; the position frees when its game moves on."""


class LiveGames(Protocol):
    """The positions of live games the engine must not help in
    (``server.reviews.live_positions.LivePositions``)."""

    def standing(self, game: games.Game, state: games.State) -> str | None: ...

    def first_standing(self, game: games.Game, states: Sequence[games.State]
                       ) -> tuple[int, str] | None: ...

    async def elsewhere(self, game: games.Game, states: Sequence[games.State]
                        ) -> int | None: ...


class NoLiveGames:
    """No game is guarded (a desk on its own, as some tests build it)."""

    def standing(self, game: games.Game, state: games.State) -> str | None:
        return None

    def first_standing(self, game: games.Game, states: Sequence[games.State]
                       ) -> tuple[int, str] | None:
        return None

    async def elsewhere(self, game: games.Game, states: Sequence[games.State]
                        ) -> int | None:
        return None


def _lower_priority(cache: CacheSettings | None = None) -> None:
    """In the low-priority process, before its first task: the lowest CPU priority, the
    engines loaded, so a live move's worker always gets the CPU first, and the position
    cache opened for what reviews prove (as in the AI pool's processes)."""
    with contextlib.suppress(OSError):
        os.nice(19)
    import ai

    for name in games.names():
        with contextlib.suppress(ImportError, ValueError):
            ai.warm_up(name)
    use_proven_cache(cache)


def _call(path: str, args: tuple[Any, ...]) -> Any:
    module, _, name = path.partition(":")
    import importlib

    return getattr(importlib.import_module(module), name)(*args)


class LowPriorityRunner:
    """``processes`` engine processes of this node's own, at the lowest CPU priority, started
    on first use: the review lanes the AI pool cannot run. ``close`` stops them at once, a
    review under way included (its callers get ``RuntimeError``)."""

    def __init__(self, cache: CacheSettings | None = None, processes: int = 1) -> None:
        self.cache = cache
        self.processes = processes
        self._pool: Any = None
        self._starting: asyncio.Task[Any] | None = None
        self._waiting: set[asyncio.Future[Any]] = set()
        self.warm: asyncio.Future[Any] | None = None
        """Settled once a process has loaded the engines (``start``)."""

    @property
    def started(self) -> bool:
        """Whether the processes were started (with the first task, or ``start``)."""
        return self._starting is not None

    def start(self) -> None:
        """Start the processes now, off the event loop (spawning takes a while, loading the
        engines seconds), so the lanes they serve are ready when a request needs them."""
        if self._starting is None and self.processes > 0:
            self._starting = asyncio.ensure_future(asyncio.to_thread(
                multiprocessing.get_context("spawn").Pool, self.processes, _lower_priority,
                (self.cache,)))
            self.warm = asyncio.ensure_future(self.run("builtins:len", ()))
            self.warm.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def run(self, path: str, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        self.start()
        assert self._starting is not None, "a runner of no process runs nothing"
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting.add(future)
        try:
            if self._pool is None:
                self._pool = await asyncio.shield(self._starting)

            def settle(outcome: Any, failed: bool) -> None:
                if future.done():
                    return
                if failed:
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)

            self._pool.apply_async(
                _call, (path, tuple(args)),
                callback=lambda result: loop.call_soon_threadsafe(settle, result, False),
                error_callback=lambda exc: loop.call_soon_threadsafe(settle, exc, True),
            )
            return await future
        finally:
            self._waiting.discard(future)

    async def close(self) -> None:
        if self._starting is not None and self._pool is None:
            with contextlib.suppress(Exception):
                self._pool = await self._starting
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.terminate)
            await asyncio.to_thread(pool.join)
        for future in self._waiting:
            if not future.done():
                future.set_exception(RuntimeError("the server is stopping"))


class ReviewDesk:
    """``request_review`` and ``analyse`` for one server. ``pool`` runs the work on an idle
    AI worker where it can (else a low-priority process of the desk's own); ``stopping`` is
    the server's shutdown flag (failures after it are not logged)."""

    def __init__(self, store: Store, outbox: Outbox, pool: Pool | None,
                 analysis_seconds: float, stopping: asyncio.Event,
                 limits: AnalysisLimits = DEFAULT_ANALYSIS_LIMITS,
                 live: LiveGames | None = None) -> None:
        self.store = store
        self.live: LiveGames = live or NoLiveGames()
        """Refuses the engine's help in live rated, tournament and ladder games."""
        self.outbox = outbox
        self.pool = pool
        self.analysis_seconds = analysis_seconds
        self.stopping = stopping
        self.share = FairShare(limits.lanes)
        """The engine lanes, shared fairly among addresses."""
        self.pool_lanes = (min(limits.lanes, pool.size - 1)
                           if isinstance(pool, AiPool) and pool.runs_tasks else 0)
        """Lanes below this run on the AI pool's idle workers, the others locally."""
        self.runs: Counter[str] = Counter()
        """Reviews and analyses run so far on the ``pool`` and ``local``ly."""
        self.local = LowPriorityRunner(pool.cache if isinstance(pool, AiPool) else None,
                                       limits.lanes - self.pool_lanes)
        self.tasks: set[asyncio.Task[None]] = set()
        self._computing: dict[str, asyncio.Future[ReviewRecord]] = {}
        self.limits = limits
        self.seconds = 1.0
        """A moving average of one request's engine time, for ``retry_after``."""
        self._held: Counter[tuple[str, str]] = Counter()
        """Requests in flight per (``player``/``source``/``all``, key)."""
        self._of: dict[Client, set[asyncio.Task[None]]] = {}
        """Each connection's requests in flight, cancelled when it closes (``forget``)."""

    async def handle(self, client: Client, message: p.RequestReview | p.Analyse) -> None:
        """Check the request now (a bad one raises its protocol error and changes nothing),
        then answer it when the engine is done, from a task of its own: the connection's
        other messages are not held up meanwhile."""
        if isinstance(message, p.RequestReview):
            record, moves = await self._finished_game(message.game_id)
            await self._refuse_live_review(record, moves)
            stored = await self.store.load_review(record.id)
            if stored is not None:
                self.outbox.send([client], _message(stored))
                return
            holds = self._ration(client, message.type)
            self._spawn(client, message, self._review(record, moves, holds[1][1]), holds)
        else:
            game, state, played = _position(message.game, message.moves)
            if state.is_over():  # nothing to search, so nothing to ration: its result
                self.outbox.send([client], p.Analysis(
                    game=game.name, moves=[game.format_move(m) for m in played],
                    board=p.board_text(game.cells(state)), to_move=None, values=[],
                    result=state.result()))
                return
            known = engine_review.analyse_known(state)
            if known is not None:  # the shipped book's values: no proof, so nothing to ration
                self.outbox.send([client], _analysis(game, state, played, known))
                return
            holds = self._ration(client, message.type)  # first: the look below reads every room
            if (self.live.standing(game, state) is not None
                    or await self.live.elsewhere(game, [state]) is not None):
                raise errors.EngineHelpRefused(
                    "this position stands, stood a few moves ago or is one move away on the "
                    "board of a rated, tournament or ladder game being played; the engine "
                    "helps nobody in such a game, so it is not analysed until that game "
                    "moves on or ends", retry_after=REFUSED_RETRY_SECONDS)
            self._spawn(client, message, self._analyse(game, state, played, holds[1][1]),
                        holds)

    def forget(self, client: Client) -> None:
        """The connection closed: its requests in flight are cancelled (one waiting for a
        lane is dropped; one running is not answered, its lane held until it is done)."""
        for task in self._of.pop(client, set()):
            task.cancel()

    def _ration(self, client: Client, kind: str) -> list[tuple[str, str]]:
        """The counters a new request of ``kind`` would hold, or its refusal at once."""
        lim = self.limits
        player = client.player.id if client.player is not None else str(id(client))
        holds = [("player", f"{kind}:{player}"), ("source", source_of(client)), ("all", "")]
        retry = round(max(0.5, self.seconds), 1)
        if self._held[holds[0]] >= lim.per_player:
            raise errors.RateLimited(
                f"you have a {kind} under way already; ask again when it is answered",
                limit="analyses_per_player", allowed=lim.per_player, retry_after=retry)
        if self._held[holds[1]] >= lim.per_source:
            raise errors.RateLimited(
                "too many reviews and analyses under way from this address; "
                f"{errors.try_again_in(retry)}",
                limit="analyses_per_source", allowed=lim.per_source, retry_after=retry)
        if self._held[holds[2]] >= lim.at_once:
            wait = round(retry * (1 + self._held[holds[2]] / 2), 1)
            raise errors.Busy("the engine's share for reviews and analyses is taken; "
                              f"{errors.try_again_in(wait)}", limit="analyses",
                              retry_after=wait)
        return holds

    async def close(self) -> None:
        """At shutdown, after the AI pool has closed (failing the tasks it held): stop the
        low-priority process, then let the answers (errors, by now) go out."""
        await self.local.close()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=5)

    async def run(self, path: str, *args: Any, source: str = "") -> Any:
        """``module:function(*args)`` at low priority (see the module docstring), once
        ``source``'s turn gives it an engine lane (``FairShare``). The lane is held until the
        engine is done, even if the caller is cancelled meanwhile (its connection closed):
        the work goes on there, so the lane is not free before."""
        lane = await self.share.acquire(source)
        pool = self.pool
        if lane < self.pool_lanes and isinstance(pool, AiPool):
            self.runs["pool"] += 1
            job = asyncio.ensure_future(pool.run_task(path, *args))
        else:
            self.runs["local"] += 1
            job = asyncio.ensure_future(self.local.run(path, *args))

        def done(job: asyncio.Future[Any]) -> None:
            if not job.cancelled():
                job.exception()  # retrieved: the caller may be gone
            self.share.release(source, lane)

        job.add_done_callback(done)
        return await asyncio.shield(job)

    def _spawn(self, client: Client, message: p.RequestReview | p.Analyse, work: Any,
               holds: list[tuple[str, str]]) -> None:
        self.local.start()  # its lanes load the engines while the pool's lane starts
        for hold in holds:
            self._held[hold] += 1
        started = time.monotonic()

        async def answer() -> None:
            try:
                self.outbox.send([client], await work)
                self.seconds = 0.8 * self.seconds + 0.2 * (time.monotonic() - started)
            except asyncio.CancelledError:
                return  # its connection closed: nobody to answer
            except errors.ProtocolError as exc:
                self.outbox.refuse(client, exc, message)
            except Exception:
                if self.stopping.is_set():
                    return  # the pool or the low-priority process stopped under it
                log.exception("a %s failed", message.type)
                self.outbox.refuse(client, errors.InternalError(
                    f"the {message.type} could not be computed; try again"), message)
            finally:
                for hold in holds:
                    self._held[hold] -= 1
                    if not self._held[hold]:
                        del self._held[hold]

        task = asyncio.create_task(answer())
        self.tasks.add(task)
        mine = self._of.setdefault(client, set())
        mine.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self.tasks.discard(task)
            mine.discard(task)
            if not mine and self._of.get(client) is mine:
                del self._of[client]

        task.add_done_callback(done)

    async def _finished_game(self, game_id: str) -> tuple[GameRecord, list[MoveRecord]]:
        loaded = await self.store.load_game(game_id)
        if loaded is None:
            raise errors.UnknownGameId(f"there is no stored game {game_id!r}")
        record, moves = loaded
        if record.status not in REVIEWABLE:
            raise errors.GameNotFinished(
                f"game {game_id!r} is still {record.status}: only a finished game is reviewed")
        return record, moves

    async def _refuse_live_review(self, record: GameRecord, moves: list[MoveRecord]
                                  ) -> None:
        """``engine_help_refused`` if the finished game passes through a position that a
        live guarded game stands in (or near), on this node or, on a cluster, any: its
        review would value that position."""
        game = games.load(record.game)
        state = game.initial()
        states = [state]
        for move in moves:
            state = state.play(game.parse_move(state, move.move))
            states.append(state)
        found = self.live.first_standing(game, states)
        if found is None:
            elsewhere = await self.live.elsewhere(game, states)
            found = None if elsewhere is None else (elsewhere, "")
        if found is not None:
            raise errors.EngineHelpRefused(
                f"the position after ply {found[0]} of this game stands, stood a few moves "
                "ago or is one move away on the board of a rated, tournament or ladder game "
                "being played; the engine helps nobody in such a game, so this game is not "
                "reviewed until that game moves on or ends", ply=found[0],
                retry_after=REFUSED_RETRY_SECONDS)

    async def _review(self, record: GameRecord, moves: list[MoveRecord], source: str
                      ) -> p.ReviewMessage:
        """The game's review: computed once per node at a time, stored, then read back (the
        stored one wins if another node stored it first)."""
        computing = self._computing.get(record.id)
        if computing is None:
            computing = asyncio.get_running_loop().create_future()
            self._computing[record.id] = computing
            try:
                stored = await self._compute(record, moves, source)
            except BaseException as exc:
                if isinstance(exc, asyncio.CancelledError):
                    # Its asker's connection closed: whoever else waits for the same review
                    # is told to ask again (which computes it anew), not left unanswered.
                    computing.set_exception(errors.Busy(
                        "the review was interrupted; ask again", retry_after=1.0,
                        limit="analyses"))
                else:
                    computing.set_exception(exc)
                computing.exception()  # retrieved: waiters, if any, get it too
                raise
            finally:
                del self._computing[record.id]
            computing.set_result(stored)
            return _message(stored)
        return _message(await asyncio.shield(computing))

    async def _compute(self, record: GameRecord, moves: list[MoveRecord], source: str
                       ) -> ReviewRecord:
        game = games.load(record.game)
        state = game.initial()
        played = []
        for move in moves:
            number = game.parse_move(state, move.move)
            played.append(number)
            state = state.play(number)
        result: engine_review.Review = await self.run(REVIEW_TASK, record.game, tuple(played),
                                                      source=source)
        view = review_view(record.id, game, played, result, time.time())
        return await self.store.save_review(
            ReviewRecord(record.id, view.model_dump(mode="json"), view.created_at))

    async def _analyse(self, game: games.Game, state: games.State, played: list[int],
                       source: str) -> p.Analysis:
        found: list[engine_review.MoveValue] = await self.run(
            ANALYSIS_TASK, game.name, tuple(played), self.analysis_seconds, source=source)
        return _analysis(game, state, played, found)


def _analysis(game: games.Game, state: games.State, played: list[int],
              found: list[engine_review.MoveValue]) -> p.Analysis:
    """The ``analysis`` message of a position not over, from its moves' values."""
    values = [
        p.MoveValueView(move=game.format_move(v.move), value=v.value, exact=v.exact,
                        label=engine_review.label(game.name, state.ply, v.value, v.exact,
                                                  book=v.book))
        for v in found
    ]
    return p.Analysis(game=game.name, moves=[game.format_move(m) for m in played],
                      board=p.board_text(game.cells(state)),
                      to_move=state.to_move,  # type: ignore[arg-type]
                      values=values)


def _position(game_name: str, texts: list[str]) -> tuple[games.Game, games.State, list[int]]:
    """The analysis board's position (perhaps a finished one); ``unknown_game``,
    ``invalid_notation`` or ``illegal_move`` if there is none."""
    try:
        game = games.load(game_name)
    except ValueError:
        raise errors.UnknownGame(f"unknown game {game_name!r}") from None
    state = game.initial()
    played = []
    for ply, text in enumerate(texts):
        try:
            move = game.parse_move(state, text)
            state = state.play(move)
        except games.InvalidNotation as exc:
            raise errors.InvalidNotation(f"move {ply + 1}: {exc}") from None
        except games.IllegalMove as exc:
            raise errors.IllegalMove(f"move {ply + 1}: {exc}") from None
        played.append(move)
    return game, state, played


def _message(stored: ReviewRecord) -> p.ReviewMessage:
    return p.ReviewMessage(review=p.GameReview.model_validate(stored.review))


def review_view(game_id: str, game: games.Game, played: list[int],
                result: engine_review.Review, now: float) -> p.GameReview:
    """``ai.review``'s answer as the protocol shows it (moves in notation, labels)."""
    views = []
    for mv in result.moves:
        views.append(p.MoveReviewView(
            ply=mv.ply, move=game.format_move(mv.move), seat=mv.seat,  # type: ignore[arg-type]
            best=None if mv.best is None else game.format_move(mv.best),
            before=mv.before, after=mv.after, loss=mv.loss, exact=mv.exact,
            verdict=mv.verdict,  # type: ignore[arg-type]
            label_before=engine_review.label(game.name, mv.ply, mv.before, mv.exact,
                                             book=mv.book),
            label_after=engine_review.label(game.name, mv.ply, mv.after, mv.exact,
                                            book=mv.book),
        ))
    return p.GameReview(game_id=game_id, game=game.name, moves=views,
                        values=list(result.values), values_exact=list(result.values_exact),
                        created_at=now)
