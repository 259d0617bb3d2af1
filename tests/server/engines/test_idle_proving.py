"""Idle AI workers prove the positions of stored games, most visited first, and give their
worker back the moment a live move comes.

A real server with real AI worker processes on a real SQLite database (the proofs kept in its
``position_cache`` table), the games stored as a server stores them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time

import pytest
from wsclient import Client

import ai
import games
from ai import review
from ai.connect4 import engine
from ai.levels import find
from ai.limits import Limits
from ai.review import Proved, Review
from server.app import running
from server.engines import AiPool, CacheSettings, idle_proving
from server.engines.engine_process import _cached_answer, use_proven_cache
from server.engines.idle_proving import (
    RETRIES,
    RETRY_FACTOR,
    IdleProver,
    ProvingCounts,
    ProvingPlan,
)
from server.engines.low_priority import TASK_SECONDS
from server.engines.remote_worker import Worker
from server.reviews.desk import REVIEW_TASK
from server.settings import IdleProving, Settings
from server.storage import SqlStore
from server.storage.memory import MemoryStore
from server.storage.proven import proven_report, visited
from server.storage.store import GameRecord, MoveRecord, Store
from server.storage.symmetry import canonical
from tests.server.storage.conftest import (  # noqa: F401 - fixtures
    REDIS_URL,
    backend,
    database_url,
    pg_url,
    redis_prefix,
    sqlite_url,
)
from tests.server.storage.conftest import store as any_store  # noqa: F401 - the fixture

C4 = games.load("connect4")
GAME = (3, 3, 3, 3, 3, 3, 2, 1, 0, 4, 0, 4, 4, 5, 0, 6, 4, 2, 6, 1)
"""Twenty plies: the book's opening, then positions the solver proves in about a second."""
OTHER = (*GAME[:16], 5, 2, 1)
"""Another game leaving the first at ply 16."""
HARD = (0, 0, 6, 6, 0)
"""A game whose deepest position (ply 5, "11771") takes the solver minutes to prove exactly.
Its outcome (a win) is in the book's outcomes file, which leaves the exact score to prove; a
drawn one would be proven at once (a draw's outcome is its exact score)."""
NO_TIME = 1e-4
"""A proof budget in which the solver proves none of these positions."""


async def _store_game(store: Store, game_id: str, moves: tuple[int, ...], at: float,
                      ended: float | None = None, status: str = "finished") -> GameRecord:
    """A game of ``moves`` begun at ``at``; ended (unless still ``active``) a second after
    its last move, or at ``ended``."""
    if status == "active":
        ended = None
    elif ended is None:
        ended = at + len(moves)
    record = GameRecord(
        id=game_id, game="connect4", players=(None, None), ai_level=None, ai_seat=None,
        status=status, start_position=C4.format_position(C4.initial()),  # type: ignore[arg-type]
        created_at=at, finished_at=ended)
    await store.save_game(record)
    for ply, move in enumerate(moves):
        await store.append_move(MoveRecord(game_id, ply, C4.format_move(move), ply % 2, 1.0,
                                           at + ply))
    return record


async def _until(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


def _key(line: tuple[int, ...]) -> str:
    state = C4.parse_moves("".join(C4.format_move(m) for m in line))
    return canonical("connect4", C4.cells(state), state.to_move).key


async def test_positions_are_ranked_by_games_reaching_them_then_deepest_first() -> None:
    store = MemoryStore()
    await _store_game(store, "a", GAME, 1.0)
    await _store_game(store, "b", OTHER, 2.0)
    mirrored = tuple(6 - m for m in GAME[:9])  # GAME's first nine plies read right to left
    await _store_game(store, "c", mirrored, 3.0)
    recent = await store.recent_games("connect4", 2)
    assert [record.id for record, _ in recent] == ["c", "b"], "newest first"
    ranked = visited(C4, await store.recent_games("connect4", 10))
    order = [key for key, _, _ in ranked]
    counts = {key: n for key, _, n in ranked}
    assert counts[_key(())] == 3 and counts[_key(GAME[:9])] == 3, "mirror images are one"
    assert counts[_key(GAME[:16])] == 2 and counts[_key(GAME[:17])] == 1
    assert len(order) == len(set(order)) == 20 + 3
    assert (order.index(_key(GAME[:9])) < order.index(_key(())) < order.index(_key(GAME[:16]))
            < order.index(_key(GAME[:19]))), "most visited first, then deepest first"
    for key, line, _ in ranked:
        assert _key(line) == key


def _random_game(rng: random.Random) -> tuple[int, ...]:
    """Up to 16 plies, the first few from three columns so that games share positions."""
    state, line = C4.initial(), []
    for ply in range(rng.randrange(3, 17)):
        legal = [m for m in state.legal_moves() if ply >= 4 or m in (2, 3, 4)]
        move = rng.choice(legal)
        line.append(move)
        state = state.play(move)
        if state.is_over():
            break
    return tuple(line)


def _counted(ranked: list[tuple[str, tuple[int, ...], int]]) -> list[tuple[str, int]]:
    for key, line, _ in ranked:
        assert _key(line) == key
    return [(key, n) for key, _, n in ranked]


async def test_each_game_is_counted_once_as_it_ends_over_the_last_ones_to_end(
    any_store: Store, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    """Idle proving counts what the last ``IdleProving.games`` games to end reach, reading
    only the games that ended since its last round: the counts are those of counting the
    same games from scratch, a game still being played is counted once it ends, and games
    ending at the same instant are each read once."""
    monkeypatch.setattr(idle_proving, "READ_PAGE", 2)  # several pages a round
    rng = random.Random(45)
    ended: list[GameRecord] = []
    played: dict[str, tuple[int, ...]] = {}

    async def play(game_id: str, at: float, **kwargs: object) -> GameRecord:
        played[game_id] = _random_game(rng)
        return await _store_game(any_store, game_id, played[game_id], at, **kwargs)  # type: ignore[arg-type]

    for n in range(5):
        ended.append(await play(f"e{n}", 100.0 * n))
    unfinished = await play("u", 450.0, status="active")
    prover = IdleProver(any_store, None, IdleProving(enabled=True, games=4), asyncio.Event())

    def from_scratch() -> list[tuple[str, int]]:
        last = sorted(ended, key=lambda g: (g.finished_at, g.id))[-4:]
        return _counted(visited(C4, [(g, _moves(played[g.id])) for g in last]))

    reached = await prover.count_ended_games("connect4")
    assert reached.counted == 4 and _counted(reached.ranked()) == from_scratch()
    # The unfinished game ends, then two more at the same instant: the window keeps one
    # game of the first round.
    ended.append(dataclasses.replace(unfinished, status="finished", finished_at=900.0))
    await any_store.save_game(ended[-1])
    for game_id, at in (("e6", 950.0), ("e5", 950.0)):
        ended.append(await play(game_id, at - 20, ended=at))
    again = await prover.count_ended_games("connect4")
    assert again is reached and reached.counted == 4
    assert _counted(reached.ranked()) == from_scratch()
    assert _key(()) in dict(_counted(reached.ranked()))
    # Nothing new: nothing counted twice.
    before = _counted(reached.ranked())
    assert _counted((await prover.count_ended_games("connect4")).ranked()) == before


def _moves(line: tuple[int, ...]) -> list[MoveRecord]:
    return [MoveRecord("g", ply, C4.format_move(move), ply % 2, 1.0, float(ply))
            for ply, move in enumerate(line)]


async def test_off_unless_turned_on_and_only_with_a_pool_that_runs_tasks() -> None:
    stopping = asyncio.Event()
    assert not IdleProver(MemoryStore(), AiPool(processes=2), IdleProving(), stopping).active
    on = IdleProving(enabled=True)
    assert IdleProver(MemoryStore(), AiPool(processes=2), on, stopping).active
    assert not IdleProver(MemoryStore(), AiPool(processes=1), on, stopping).active
    assert not IdleProver(MemoryStore(), None, on, stopping).active
    assert not Settings().idle_proving.enabled


async def _server_parts(url: str, *lines: tuple[int, ...]) -> tuple[SqlStore, AiPool]:
    store = SqlStore(url)
    await store.open()
    for n, moves in enumerate(lines):
        await _store_game(store, f"g{n}", moves, 1000.0 + n)
    pool = AiPool(processes=2, games=("connect4",), cache=CacheSettings(None, url))
    await pool.start(wait_ready=True, timeout=120)
    return store, pool


@pytest.mark.slow
async def test_stored_games_positions_become_proven_while_the_workers_are_idle(
    sqlite_url: str,  # noqa: F811
) -> None:
    store, pool = await _server_parts(sqlite_url, GAME, OTHER)
    proving = IdleProving(enabled=True, pause_seconds=0.1, seconds=120.0)
    ranked = visited(C4, await store.recent_games("connect4", 10))
    async with running(store=store, pool=pool, settings=Settings(idle_proving=proving)) as srv:
        counts = srv.app.prover.counts
        # Then they go on past them (``unreached_children``): at least as many.
        await _until(lambda: counts.proved + counts.known + counts.unproved >= len(ranked),
                     240, f"idle workers settled {counts} of {len(ranked)} positions")
        assert counts.proved >= len(ranked) - 12 and counts.unproved == 0
        # What they proved is what a review reads: none of these positions proves in NO_TIME.
        reviewed: Review = await pool.run_task(REVIEW_TASK, "connect4", GAME, NO_TIME)
        assert all(reviewed.values_exact)
    report = await proven_report(sqlite_url, "connect4")
    assert report.total >= counts.proved and report.last_day == report.total


@pytest.mark.slow
async def test_a_live_move_takes_its_worker_back_from_idle_proving_at_once(
    sqlite_url: str,  # noqa: F811
) -> None:
    store, pool = await _server_parts(sqlite_url, HARD)
    proving = IdleProving(enabled=True, pause_seconds=0.1, seconds=600.0)
    async with running(store=store, pool=pool, settings=Settings(idle_proving=proving)) as srv:
        counts = srv.app.prover.counts
        await _until(lambda: counts.rounds == 1 and pool.snapshot().busy == 1, 60,
                     "a background proof is under way")
        await asyncio.sleep(1.0)  # well into the proof of HARD's deepest position
        ann = await Client.open(srv.url, "Ann")
        await ann.send(type="create_room", game="connect4", seat=0,
                       opponent={"kind": "ai", "level": "beginner"})
        room = (await ann.expect("room_state"))["room"]["id"]
        await ann.send(type="move", room=room, ply=0, move="4")
        await ann.expect("move_made", ply=1, timeout=30)
        # The move may go to the idle second worker at once; the proof's give-back is counted
        # when its worker says it stopped, which a loaded machine may report a little later.
        await _until(lambda: counts.given_back == 1, 10,
                     "the proof gave its worker back for the move")
        assert counts.proved == 0, "the long proof was abandoned, not finished"
        assert pool.snapshot().fallbacks == 0, "the move was searched by a worker"
        # Idle again once the game is over: the proof starts anew.
        await ann.send(type="resign", room=room)
        await ann.expect("game_over")
        await _until(lambda: counts.rounds >= 2, 30, "proving resumed when idle")


def _proved(wanted: list[tuple[str, tuple[int, ...]]], hard: set[str]) -> Proved:
    """A worker's answer: the positions of ``hard`` too hard, every other one proved."""
    too_hard = tuple(i for i, (key, _) in enumerate(wanted) if key in hard)
    return Proved(tuple(i for i in range(len(wanted)) if i not in too_hard), (), too_hard)


async def test_a_too_hard_position_is_tried_again_with_a_larger_budget_after_new_ones() -> None:
    store = MemoryStore()
    await _store_game(store, "a", GAME[:6], 1.0)
    prover = IdleProver(store, None, IdleProving(enabled=True, seconds=2.0, batch=4),
                        asyncio.Event())
    plan = prover.plan
    counts = ProvingCounts()
    hard = _key(GAME[:6])
    handed: list[tuple[list[str], float]] = []
    for _ in range(40):
        wanted, seconds = plan.next_round("connect4", await prover.count_ended_games("connect4"))
        if not wanted:
            break
        handed.append(([key for key, _ in wanted], seconds))
        plan.record("connect4", wanted, _proved(wanted, {hard}), counts)
        if len(handed) == 2:  # a new game comes: its positions go before the retry
            await _store_game(store, "b", OTHER[:8], 2.0)
    first = [key for keys, _ in handed[:2] for key in keys]
    assert hard in first and len(first) == 7 and all(s == 2.0 for _, s in handed[:2])
    assert handed[2] == ([_key(OTHER[:8]), _key(OTHER[:7])], 2.0), "new positions first"
    assert handed[3:3 + RETRIES] == [([hard], 2.0 * RETRY_FACTOR),
                                      ([hard], 2.0 * RETRY_FACTOR ** 2)]
    # Then one move past the positions both games reach (the first six plies): each
    # unreached child once (mirror images as one), at the first budget; the hard one is
    # left alone until a restart.
    reached = {_key(GAME[:k]) for k in range(7)} | {_key(OTHER[:k]) for k in range(9)}
    expected = {_key((*GAME[:k], col)) for k in range(7)
                for col in C4.parse_moves("".join(str(m + 1) for m in GAME[:k])).legal_moves()
                } - reached
    children = [key for keys, _ in handed[3 + RETRIES:] for key in keys]
    assert sorted(children) == sorted(expected) and hard not in children
    assert all(seconds == 2.0 for _, seconds in handed[3 + RETRIES:])
    assert counts.unproved == 1 + RETRIES and counts.proved == 6 + 2 + len(expected)


def test_a_budget_never_outlasts_the_pools_patience_with_a_task() -> None:
    plan = ProvingPlan(IdleProving(enabled=True, seconds=100.0, batch=40))
    assert plan.seconds(0) == 100.0 and plan.batch(100.0) == int(TASK_SECONDS * 0.8 / 100)
    assert plan.seconds(RETRIES) == TASK_SECONDS * 0.8 and plan.batch(plan.seconds(2)) == 1


@pytest.mark.slow
def test_a_position_too_hard_to_prove_exactly_keeps_its_outcome_for_the_expert(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, no_c4_outcomes: None,  # noqa: F811
) -> None:
    # The weak solve proves the win in about a second, the exact solve takes about four:
    # a budget of 2.5 s keeps the outcome and not the score.
    monkeypatch.delenv("REDIS_URL", raising=False)
    line = tuple(int(c) - 1 for c in "64171")
    state = C4.parse_moves("64171")
    asyncio.run(_migrate(sqlite_url))
    expert = find("connect4", "expert").limits()
    cache = use_proven_cache(CacheSettings(None, sqlite_url))
    try:
        engine.clear()
        done = review.prove_positions("connect4", [line], 2.5)
        assert (done.proved, done.unproved, done.outcomes) == ((), (0,), (0,))
        # Tried again (as a too-hard position is): the stored outcome is not proven anew.
        again = review.prove_positions("connect4", [line], NO_TIME)
        assert (again.unproved, again.outcomes) == ((0,), ())
        _, limits, _ = _cached_answer(cache, state, expert)
    finally:
        review.use_store(None)
        cache.close()
    assert limits.outcome == 1 and limits.outcome_move is not None
    engine.clear()
    assert ai.best(state.play(limits.outcome_move), Limits(exact=True)).score < 0
    report = asyncio.run(proven_report(sqlite_url, "connect4"))
    assert (report.total, report.outcomes) == (0, 1)
    assert "1 with only their outcome proven" in report.lines()[1]


async def _migrate(url: str) -> None:
    store = SqlStore(url)
    await store.open()
    await store.close()


async def _worker(url: str, prefix: str, proving: IdleProving) -> tuple[Worker, asyncio.Task[None]]:
    pool = AiPool(processes=2, games=("connect4",), cache=CacheSettings(REDIS_URL, url, prefix))
    worker = Worker(REDIS_URL, database_url=url, prefix=prefix, pool=pool,
                    idle_proving=proving)
    ready = asyncio.Event()
    task = asyncio.create_task(worker.run(ready))
    await asyncio.wait_for(ready.wait(), 120)
    return worker, task


@pytest.mark.slow
async def test_discus_workers_prove_stored_positions_while_idle_never_the_same_batch_twice(
    pg_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    """Two ``discus worker`` processes' pools on the servers' PostgreSQL database: between them they
    prove what the stored games reach, one round at a time (the Redis lock: while one
    spends its budget on HARD's deepest position, the other waits), so no position is
    proved by both."""
    store = SqlStore(pg_url)  # a server made the schema and stored the games
    await store.open()
    await _store_game(store, "g0", GAME, 1000.0)
    await _store_game(store, "g1", HARD, 1001.0)
    ranked = visited(C4, await store.recent_games("connect4", 10))
    await store.close()
    proving = IdleProving(enabled=True, pause_seconds=0.3, seconds=3.0, batch=4)
    proved_by: dict[int, list[str]] = {}
    record = ProvingPlan.record

    def spy(plan, name, wanted, done, counts):  # type: ignore[no-untyped-def]
        proved_by.setdefault(id(plan), []).extend(wanted[i][0] for i in done.proved)
        record(plan, name, wanted, done, counts)

    monkeypatch.setattr(ProvingPlan, "record", spy)
    workers = list(await asyncio.gather(*(_worker(pg_url, redis_prefix, proving)
                                          for _ in range(2))))
    try:
        await _until(lambda: all(w.prover is not None for w, _ in workers), 10,
                     "the provers started")
        settled = [w.prover.counts for w, _ in workers]  # type: ignore[union-attr]
        await _until(lambda: sum(c.proved + c.known + c.unproved for c in settled)
                     >= len(ranked) and sum(c.locked_out for c in settled) > 0, 120,
                     f"the workers settled {settled} of {len(ranked)} positions")
    finally:
        for worker, task in workers:
            worker.stop()
            await asyncio.wait_for(task, 60)
    proved = [proved_by.get(id(w.prover.plan), []) for w, _ in workers]  # type: ignore[union-attr]
    assert set(proved[0]).isdisjoint(proved[1]), "a position proved twice"
    assert len(set(proved[0] + proved[1])) == len(proved[0]) + len(proved[1]) > 0
