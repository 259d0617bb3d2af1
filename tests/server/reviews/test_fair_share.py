"""Engine time for analyses is shared fairly among addresses: one address that keeps asking
for slow positions never holds every lane, so another person's quick question is answered
within two seconds (a real server, the real AI pool, SQLite)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from wsclient import Client

import games
from ai import review
from server.app import Running, Settings, running
from server.engines import AiPool
from server.reviews.fair_share import FairShare
from server.storage import open_store

SLOW_POSITIONS = ["136724366", "444444321", "171714312", "714545154"]
"""Off the book at ply 9: each analysis takes seconds of engine time (3 to 10 s here, a move
whose proof passes 3 s left unvalued), mirrored as well below."""
QUICK_POSITIONS = ["444444321515561753775337776322", "444444321515561753772127131577",
                   "444444321515561753776676362137", "444444321515561753735766776766"]
"""Off the book at ply 30: each analysis is milliseconds of engine time."""
FLOOD = "127.0.0.2"
SLOW = 60.0


def mirrored(moves: str) -> str:
    return "".join(str(8 - int(m)) for m in moves)


def test_the_positions_here_are_off_the_book_and_not_over() -> None:
    c4 = games.load("connect4")
    for moves in [*SLOW_POSITIONS, *QUICK_POSITIONS]:
        state = c4.parse_moves(moves)
        assert not state.is_over() and review.analyse_known(state) is None


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    pool = AiPool(processes=2, games=("connect4",))
    await pool.start(wait_ready=True, timeout=120)
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}")
    async with running(port=0, store=store, pool=pool, settings=Settings()) as srv:
        yield srv


async def keep_asking(client: Client, positions: list[str], stop: asyncio.Event) -> int:
    """Ask for one slow analysis after another (after a refusal, again a moment later)
    until ``stop``; how many were answered."""
    answered = 0
    n = 0
    while not stop.is_set():
        moves = positions[n % len(positions)]
        n += 1
        await client.send(type="analyse", game="connect4", moves=list(moves), id=n)
        answer = await client.recv(timeout=SLOW)
        if answer["type"] == "analysis":
            answered += 1
        else:
            assert answer["code"] in ("rate_limited", "busy"), answer
            await asyncio.sleep(0.2)
    return answered


@pytest.mark.slow
async def test_one_address_flooding_slow_analyses_leaves_anothers_quick_one_under_two_seconds(
    server: Running,
) -> None:
    reviews = server.app.reviews
    reviews.local.start()  # as the first request would: the server's own lane loads its engines
    assert reviews.local.warm is not None
    await asyncio.wait_for(reviews.local.warm, 120)
    slow = [*SLOW_POSITIONS, *map(mirrored, SLOW_POSITIONS)]
    flood = [await Client.open(server.url, f"Flood {n}", source=FLOOD) for n in range(4)]
    stop = asyncio.Event()
    flooding = [asyncio.create_task(keep_asking(c, slow[n::2], stop))
                for n, c in enumerate(flood)]
    held = reviews._held
    try:
        for _ in range(600):  # both of the address's requests in flight
            if held.get(("source", FLOOD), 0) == 2:
                break
            await asyncio.sleep(0.05)
        assert held.get(("source", FLOOD), 0) == 2
        ann = await Client.open(server.url, "Ann", source="127.0.0.3")
        for moves in QUICK_POSITIONS:
            assert held.get(("source", FLOOD), 0) >= 1, "the flood goes on meanwhile"
            started = time.perf_counter()
            await ann.send(type="analyse", game="connect4", moves=list(moves))
            answer = await ann.expect("analysis", timeout=SLOW)
            seconds = time.perf_counter() - started
            assert answer["moves"] == list(moves) and answer["values"]
            assert seconds < 2.0, f"another's quick analysis took {seconds:.1f} s"
    finally:
        stop.set()
        for task in flooding:
            task.cancel()
        await asyncio.gather(*flooding, return_exceptions=True)


async def test_a_free_lane_goes_to_the_address_served_longest_ago_within_half_each() -> None:
    share = FairShare(2)
    first = await share.acquire("flood")
    flood_again = asyncio.create_task(share.acquire("flood"))
    await asyncio.sleep(0)
    assert not flood_again.done(), "one address holds at most half of the lanes"
    other = await asyncio.wait_for(share.acquire("other"), 1)
    assert {first, other} == {0, 1}
    late = asyncio.create_task(share.acquire("late"))
    await asyncio.sleep(0)
    share.release("flood", first)  # the flood asked before "late", but was served already
    assert await asyncio.wait_for(late, 1) == first
    assert not flood_again.done()
    share.release("other", other)
    assert await asyncio.wait_for(flood_again, 1) == other
    assert (share.running("flood"), share.running("late"), share.waiting) == (1, 1, 0)
