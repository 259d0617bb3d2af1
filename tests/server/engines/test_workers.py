"""The AI pool answers every job with a legal move, even when a worker hangs or dies; its
quick fallback is a real (shallow) search."""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import time
from collections.abc import AsyncIterator

import pytest

import games
from ai.connect4.evaluation import WIN
from ai.levels import Level
from server.engines import AiJob, AiPool, Progress, quick_move, win_in
from server.engines.engine_process import ENGINE_NICE, PROGRESS_EVERY
from server.engines.fallback import rails_move
from server.engines.local import take_frames

HANGS = f"{__name__}:hang_while_warming_up"
"""Loaded by path in the worker process (which inherits this run's ``sys.path``)."""


def hang_while_warming_up(game_name: str) -> float:
    """A warm-up that never finishes and never dies (a compile stuck on a lock, say)."""
    time.sleep(3600)
    return 0.0

C4 = games.load("connect4")
OTHELLO = games.load("othello")
FAST = Level("test", 0, "", None, 0.1, 0.2, None, candidates=1, margin=0, rails=False)
PATIENT = Level("patient", 0, "", None, 5.0, 10.0, None, candidates=1, margin=0, rails=False)


async def started_pool(search: str, margin: float = 0.3) -> AiPool:
    pool = AiPool(processes=1, games=("connect4",), margin=margin,
                  search=f"scripted_engines:{search}", warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    return pool


@pytest.fixture
async def steady_pool() -> AsyncIterator[AiPool]:
    pool = await started_pool("steady")
    yield pool
    await pool.close()


@pytest.mark.slow
async def test_engine_processes_run_below_the_servers_priority(steady_pool: AiPool) -> None:
    """With every core searching, the server's event loop (a person's move, its store and
    acknowledgement) goes first: the engine processes are niced."""
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    (pid,) = steady_pool.pids()
    assert pid is not None
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + ENGINE_NICE) > mine
    # A job still gets its search.
    answer = await steady_pool.think(AiJob("connect4", (3, 3), FAST, seed=1))
    assert not answer.fallback and answer.depth == 3


@pytest.mark.slow
async def test_a_quick_search_sends_no_progress_and_its_answer_carries_the_last_iteration(
    steady_pool: AiPool,
) -> None:
    seen: list[Progress] = []
    answer = await steady_pool.think(AiJob("connect4", (3, 3), FAST, seed=1), seen.append)
    assert answer.move == 6 and not answer.fallback
    assert seen == []  # a quick level, three iterations in milliseconds: the answer says it
    assert answer.depth == 3 and answer.nodes == 60 and answer.score == 3
    assert not answer.exact


@pytest.mark.slow
async def test_a_patient_level_shows_its_first_iteration_then_one_each_fifth_of_a_second(
) -> None:
    pool = await started_pool("unhurried")
    try:
        seen: list[Progress] = []
        answer = await pool.think(AiJob("connect4", (3,), PATIENT, seed=1), seen.append)
    finally:
        await pool.close()
    assert answer.depth == 8 and not answer.fallback
    depths = [p.depth for p in seen]
    assert depths[0] == 1 and depths == sorted(set(depths)) and len(depths) < 8
    gaps = [b.seconds - a.seconds for a, b in itertools.pairwise(seen)]
    assert min(gaps) >= PROGRESS_EVERY


async def test_jobs_queue_behind_a_busy_worker_and_all_get_answers(steady_pool: AiPool) -> None:
    jobs = [AiJob("connect4", (m,), FAST, seed=m) for m in range(7)]
    answers = await asyncio.gather(*(steady_pool.think(job) for job in jobs))
    assert all(a.move == 6 and not a.fallback for a in answers)
    assert steady_pool.snapshot().jobs == 7


@pytest.mark.slow
async def test_a_stuck_worker_is_replaced_and_the_move_is_made_anyway() -> None:
    pool = await started_pool("stuck", margin=0.3)
    try:
        old = pool.pids()
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        beat = asyncio.create_task(heartbeat())
        started = time.monotonic()
        # The stuck search sleeps for an hour: any answer at all means the pool stopped
        # waiting for it (the timeout is only there so a regression fails instead of hanging).
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 60)
        waited = time.monotonic() - started
        beat.cancel()
        assert answer.fallback and answer.move in C4.initial().legal_moves()
        assert waited >= 0.4  # it gave the search its hard time 0.2 s and margin 0.3 s first
        assert ticks > 20, "the event loop kept running while the worker was stuck"
        assert pool.pids() != old and pool.snapshot().restarts == 1
    finally:
        await pool.close()


@pytest.mark.slow
async def test_a_worker_that_dies_mid_search_is_replaced_and_the_game_goes_on() -> None:
    pool = await started_pool("dies")
    try:
        old = pool.pids()
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 5)
        assert answer.fallback and answer.move in C4.initial().legal_moves()
        assert pool.pids() != old
        await asyncio.sleep(0)
        assert pool.snapshot().workers == 1
    finally:
        await pool.close()


@pytest.mark.slow
async def test_closing_the_pool_answers_what_is_still_queued() -> None:
    pool = await started_pool("stuck", margin=5.0)
    waiting = [asyncio.create_task(pool.think(AiJob("connect4", (), FAST, seed=s)))
               for s in range(3)]
    await asyncio.sleep(0.1)
    await pool.close()
    answers = await asyncio.gather(*waiting)
    assert all(a.fallback for a in answers)
    assert pool.pids() == []


@pytest.mark.slow
async def test_workers_that_die_while_warming_up_are_given_up_and_moves_still_come() -> None:
    pool = AiPool(processes=1, games=("connect4",), queue_timeout=0.5,
                  search="scripted_engines:steady", warm_up="scripted_engines:crash_on_start")
    await pool.start()
    try:
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 30)
        assert answer.fallback and answer.move in C4.initial().legal_moves()
        for _ in range(300):
            if not pool.pids():
                break
            await asyncio.sleep(0.05)
        assert pool.pids() == [] and pool.snapshot().restarts == 2
    finally:
        await pool.close()


def test_the_quick_answer_takes_a_win_in_one() -> None:
    assert quick_move(C4.parse_moves("121212"), seed=5) == 0


def test_the_quick_answer_blocks_a_win_in_one() -> None:
    for seed in range(10):
        assert quick_move(C4.parse_moves("12121"), seed=seed) == 0


@pytest.mark.slow
async def test_a_worker_that_hangs_while_warming_up_is_replaced_after_the_deadline() -> None:
    pool = AiPool(processes=1, games=("connect4",), queue_timeout=0.5, warm_up_timeout=1.5,
                  search="scripted_engines:steady", warm_up=HANGS)
    await pool.start()
    try:
        first = pool.pids()
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 5)
        assert answer.fallback and answer.move in C4.initial().legal_moves()
        await asyncio.sleep(0.5)
        assert pool.pids() == first, "not replaced before its deadline"
        seen = set(first)
        for _ in range(200):
            seen.update(pool.pids())
            if not pool.pids():
                break
            await asyncio.sleep(0.05)
        # Replaced at each deadline, then given up as a start that keeps failing.
        assert len(seen) == 3 and pool.pids() == [] and pool.snapshot().restarts == 2
    finally:
        await pool.close()


def test_the_quick_answer_plays_the_winning_open_three() -> None:
    # Red holds c1 and d1 with b1 and e1 open: either makes an open three on the bottom
    # row, whose two ends cannot both be blocked. Rails alone (no win or loss in one here)
    # would pick at random.
    state = C4.parse_moves("4433")
    for seed in range(5):
        assert quick_move(state, seed) in (1, 4)


def test_the_quick_answer_plays_what_a_deep_search_plays_in_othello() -> None:
    # Black (X) to move, 11 moves. Taking the a1 corner looks best at a glance (the hand-made
    # evaluation played it at 3 plies), but 11-ply searches with either evaluation put e3
    # first and a1 only second (hand-made) or fourth (patterns): the quick answer's 3 plies
    # with the learned evaluation already find e3, whatever the seed.
    board = ("--------" "-OOX----" "--OX-O--" "-X-OO---"
             "-XXXO---" "--X-OX--" "--OX----" "--------")
    state = OTHELLO.parse_position(f"{board} X")
    assert len(state.legal_moves()) == 11
    for seed in range(5):
        assert OTHELLO.format_move(quick_move(state, seed)) == "e3"


def test_the_quick_answer_takes_milliseconds() -> None:
    busy = OTHELLO.parse_moves("f5d6c3d3c4f4f6f3e6e7d7c5b6")  # many moves each side
    for state in (busy, C4.parse_moves("4453"), C4.parse_moves("44")):
        quick_move(state, 0)  # the kernels load once per process
        started = time.perf_counter()
        for seed in range(10):
            quick_move(state, seed)
        assert (time.perf_counter() - started) / 10 < 0.05


def test_a_proven_connect_four_score_reads_as_the_moves_to_the_win() -> None:
    # Pons' score 18: the winner's fourth stone. At ply 6 the side to move has three down.
    assert win_in("connect4", 6, 18, exact=True) == 1
    # The heuristic search scores a win it found as WIN plus Pons' score.
    assert win_in("connect4", 6, WIN + 18, exact=False) == 1
    # At ply 5 the opponent has three stones and wins with its next one.
    assert win_in("connect4", 5, -18, exact=True) == -1
    assert win_in("connect4", 5, -(WIN + 18), exact=False) == -1
    # The empty board is a first-player win with its 21st stone (Pons' score 1).
    assert win_in("connect4", 0, 1, exact=True) == 21
    assert win_in("connect4", 6, 12, exact=False) is None, "an evaluation proves nothing"
    assert win_in("connect4", 6, 0, exact=True) is None, "a draw has no winner"
    assert win_in("othello", 50, 6, exact=True) is None, "Othello scores are discs"


def test_an_opening_book_answer_is_not_kept_in_the_position_cache() -> None:
    """Else the cache would answer for the book, always with the same one of its moves."""
    import ai
    from ai.levels import DEFAULT_LEVELS
    from server.engines.engine_process import think
    from server.engines.messages import Think

    class Pipe:
        def send(self, message: object) -> None:
            pass

    expert = DEFAULT_LEVELS["othello"][-1]
    opening, learned = think(Pipe(), Think("1", AiJob("othello", (), expert, 7)), ai.search,
                             False)
    assert opening.nodes == 0  # the book's move: no node searched
    assert learned is None
    searching = Level("searching", 0, "", 6, 1.0, 2.0, None, candidates=1, margin=0,
                      rails=False)
    _, learned = think(Pipe(), Think("2", AiJob("othello", (), searching, 7)), ai.search,
                       False)
    assert learned is not None  # a search's answer is kept


@pytest.mark.slow
async def test_until_a_first_worker_is_ready_moves_come_at_once_from_the_rules_alone() -> None:
    pool = AiPool(processes=1, games=("connect4",), search="scripted_engines:steady",
                  warm_up="scripted_engines:slow_warm_up")
    await pool.start()
    try:
        asked = time.monotonic()
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 30)
        assert time.monotonic() - asked < 1.5, "not kept waiting for the warm-up"
        assert answer.fallback and answer.move == 3  # the centre column
        for _ in range(200):
            if pool.snapshot().ready:
                break
            await asyncio.sleep(0.05)
        answer = await asyncio.wait_for(pool.think(AiJob("connect4", (), FAST, seed=1)), 30)
        assert not answer.fallback and answer.move == 6  # the scripted engine's last column
    finally:
        await pool.close()


def test_the_rules_alone_take_a_win_block_a_loss_and_prefer_the_centre() -> None:
    assert rails_move(C4.parse_moves("121212"), seed=5) == 0
    for seed in range(5):
        assert rails_move(C4.parse_moves("12121"), seed=seed) == 0
        assert rails_move(C4.initial(), seed=seed) == 3
    othello = games.load("othello")
    # From the start every Othello move leaves three replies: any of the four, by the seed.
    assert {rails_move(othello.initial(), seed) for seed in range(20)} <= set(
        othello.initial().legal_moves())


def test_a_slow_cache_lookup_comes_out_of_the_levels_time_not_on_top_of_it() -> None:
    """The level's hard time counts from the job's arrival in the process: a cache miss that
    took a while leaves the search only what is left of the level's times."""
    from ai.limits import Iteration, Limits
    from server.engines.engine_process import think
    from server.engines.messages import COUNTED, Think

    class Pipe:
        def send(self, message: object) -> None:
            pass

    class SlowMissingCache:
        """A cache tier that answers nothing, slowly (a loaded Redis, say)."""

        def stats(self) -> dict[str, int]:
            return dict.fromkeys(COUNTED, 0)

        def lookup(self, states: list[object], timeout: float) -> list[None]:
            time.sleep(0.25)
            return [None] * len(states)

    given: list[Limits] = []

    def search(state: games.base.State, limits: Limits) -> list[Iteration]:
        given.append(limits)
        move = state.legal_moves()[0]
        return [Iteration(1, 0, move, (move,), 1, 0.0)]

    level = Level("timed", 0, "", None, 0.5, 1.0, None, candidates=1, margin=0, rails=False)
    job = Think("1", AiJob("connect4", (), level, 7))
    think(Pipe(), job, search, False)
    assert given[-1].soft_time == 0.5 and given[-1].hard_time == 1.0, "no cache, no lookup"
    think(Pipe(), job, search, False, SlowMissingCache())
    hard, soft = given[-1].hard_time, given[-1].soft_time
    assert hard is not None and soft is not None
    assert 0.25 <= hard <= 0.75 + 1e-9 and soft <= 0.25 + 1e-9


def test_messages_read_in_pieces_come_out_whole_and_in_order() -> None:
    parent, child = multiprocessing.Pipe()
    sent = [b"a" * n for n in (1, 300, 70_000, 5)]
    for data in sent:
        child.send_bytes(data)
    child.close()
    raw = b""
    while chunk := os.read(parent.fileno(), 1 << 20):
        raw += chunk
    unread = bytearray()
    got: list[bytes] = []
    for i in range(0, len(raw), 4093):  # pieces that cut headers and bodies alike
        unread += raw[i:i + 4093]
        got += take_frames(unread)
    assert got == sent and unread == bytearray()
    parent.close()


@pytest.mark.slow
async def test_answers_several_workers_send_at_once_all_arrive_with_their_progress() -> None:
    pool = AiPool(processes=3, games=("connect4",), search="scripted_engines:unhurried",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    try:
        seen: dict[int, list[int]] = {n: [] for n in range(6)}
        answers = await asyncio.gather(*(
            pool.think(AiJob("connect4", (n,), PATIENT, n),
                       lambda step, n=n: seen[n].append(step.depth)) for n in range(6)))
    finally:
        await pool.close()
    assert [a.depth for a in answers] == [8] * 6 and not any(a.fallback for a in answers)
    assert all(depths and depths[0] == 1 for depths in seen.values())
