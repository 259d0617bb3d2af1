"""Game reviews and the analysis board over real websockets: ``request_review`` / ``review``
and ``analyse`` / ``analysis``, their errors, and the review kept with the game."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from wsclient import Client, friends_game

import games
from ai import review, tt
from ai.connect4 import solver
from server.app import Running, Settings, running
from server.engines import AiPool
from server.storage import open_store
from server.storage.memory import MemoryStore
from server.storage.store import Store

GAME = ["4", "4", "3", "3", "5", "7", "2"]
"""Red wins on the bottom row (columns 2-5): Yellow did not block its three in time."""
DEEP = list("4444443215155617537")
"""Off the book from ply 9: its positions from ply 14 on are analysed by a worker, each
move's proof in about a second (the book's are answered by the server at once, without a
worker: see below)."""
SLOW = 60.0
"""Seconds a review or an analysis may take here: the first starts the engine process."""


@pytest.fixture(params=["memory", "sqlite"])
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Running]:
    store: Store = (MemoryStore() if request.param == "memory"
                    else open_store(f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}"))
    async with running(port=0, store=store, settings=Settings(grace_seconds=0.5)) as srv:
        yield srv


async def finished_game(server: Running) -> tuple[Client, Client, str]:
    ann, bob, room = await friends_game(server.url)
    for ply, text in enumerate(GAME):
        await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move=text)
        await ann.expect("move_made", ply=ply)
    await ann.expect("game_over")
    return ann, bob, f"{room}-1"


def exact(moves: list[str]) -> int:
    state = games.load("connect4").parse_moves("".join(moves))
    if state.is_over():
        return state.result() if state.to_move == 0 else -state.result()
    cells, scores = solver.new_buffers()
    return int(solver.solve(np.uint64(state.current), np.uint64(state.mask), tt.new_table(16),
                            0, solver.new_control(), np.zeros(1, dtype=np.int64), cells,
                            scores))


@pytest.mark.slow
async def test_a_finished_game_is_reviewed_and_the_second_look_is_the_stored_review(
    server: Running,
) -> None:
    ann, bob, game_id = await finished_game(server)
    await ann.send(type="request_review", game_id=game_id, id="r1")
    answer = (await ann.expect("review", timeout=SLOW))["review"]
    assert answer["game_id"] == game_id and answer["game"] == "connect4"
    assert [m["move"] for m in answer["moves"]] == GAME
    assert len(answer["values"]) == len(GAME) + 1
    last = answer["moves"][-1]
    assert last["verdict"] == "best" and last["label_after"] == "win in 1"
    # The engine's own values (tests/ai/test_review.py holds them to separate solves).
    truth = review.review("connect4", [int(m) - 1 for m in GAME])
    for mv, engine in zip(answer["moves"], truth.moves, strict=True):
        assert (mv["before"], mv["after"], mv["verdict"], mv["best"]) == (
            engine.before, engine.after, engine.verdict,
            None if engine.best is None else str(engine.best + 1))
    assert answer["values"] == list(truth.values)
    assert any(m["verdict"] in ("mistake", "blunder") for m in answer["moves"][1::2])
    stored = await server.app.store.load_review(game_id)
    assert stored is not None and stored.review == answer
    await bob.send(type="request_review", game_id=game_id)
    again = (await bob.expect("review", timeout=2))["review"]
    assert again == answer


async def test_reviewing_an_unknown_or_unfinished_game_is_refused_and_stores_nothing(
    server: Running,
) -> None:
    ann, bob, room = await friends_game(server.url)
    await ann.send(type="move", room=room, ply=0, move="4")
    await ann.expect("move_made", ply=0)
    await ann.send(type="request_review", game_id=f"{room}-1", id=7)
    error = await ann.expect("error")
    assert (error["code"], error["ref"]) == ("game_not_finished", 7)
    await ann.send(type="request_review", game_id="NOSUCHGAME-1", id=8)
    error = await ann.expect("error")
    assert (error["code"], error["ref"]) == ("unknown_game_id", 8)
    assert await server.app.store.load_review(f"{room}-1") is None
    # The game goes on untouched.
    await bob.send(type="move", room=room, ply=1, move="4")
    assert (await ann.expect("move_made", ply=1))["move"] == "4"


@pytest.mark.slow
async def test_the_analysis_board_values_every_legal_move_exactly(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    position = list("44532671444")
    await ann.send(type="analyse", game="connect4", moves=position, id="a")
    answer = await ann.expect("analysis", timeout=SLOW)
    assert answer["moves"] == position and answer["to_move"] == 1
    values = {v["move"]: v for v in answer["values"]}
    state = games.load("connect4").parse_moves("".join(position))
    assert sorted(values) == [str(m + 1) for m in state.legal_moves()]
    for move, v in values.items():
        assert v["exact"] and v["value"] == -exact([*position, move]), move


@pytest.mark.parametrize(("message", "code"), [
    ({"game": "chess", "moves": []}, "unknown_game"),
    ({"game": "connect4", "moves": ["4", "9"]}, "invalid_notation"),
    ({"game": "othello", "moves": ["a1"]}, "illegal_move"),
])
async def test_an_analysis_of_a_position_that_has_none_is_refused(
    server: Running, message: dict, code: str,
) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="analyse", id="x", **message)
    error = await ann.expect("error")
    assert (error["code"], error["ref"]) == (code, "x")


@pytest.mark.slow
async def test_a_finished_position_is_analysed_as_its_result(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="analyse", id="x", game="connect4", moves=list("1212121"))
    answer = await ann.expect("analysis")
    # Red's fourth stone wins: Pons' score 22 - 4, from Red's side.
    assert (answer["values"], answer["to_move"], answer["result"]) == ([], None, 18)
    await ann.send(type="analyse", id="y", game="connect4", moves=list("121212"))
    answer = await ann.expect("analysis", timeout=SLOW)
    assert answer["result"] is None and len(answer["values"]) == 7


@pytest.mark.slow
async def test_a_player_may_have_one_analysis_under_way_and_a_second_is_refused_at_once(
    server: Running,
) -> None:
    ann = await Client.open(server.url, "Ann")
    for ref, moves in (("a", DEEP[:14]), ("b", DEEP[:15])):
        await ann.send(type="analyse", game="connect4", moves=moves, id=ref)
    error = await ann.expect("error", timeout=SLOW)
    assert (error["code"], error["ref"], error["detail"]["limit"]) == (
        "rate_limited", "b", "analyses_per_player")
    assert error["detail"]["retry_after"] > 0
    assert (await ann.expect("analysis", timeout=SLOW))["moves"] == DEEP[:14]
    await ann.send(type="analyse", game="connect4", moves=DEEP[:16], id="d")
    assert (await ann.expect("analysis", timeout=SLOW))["moves"] == DEEP[:16]


@pytest.mark.slow
async def test_sixteen_analyses_from_one_address_are_mostly_refused_and_another_is_answered(
    server: Running,
) -> None:
    flood = [await Client.open(server.url, f"Flood {n}", source="127.0.0.2") for n in range(16)]
    await asyncio.gather(*(c.send(type="analyse", game="connect4", moves=DEEP[:14 + n % 5],
                                  id=n) for n, c in enumerate(flood)))
    answers = await asyncio.gather(*(c.recv(timeout=SLOW) for c in flood))
    refused = [a for a in answers if a["type"] == "error"]
    assert len(refused) >= 14, answers
    assert {(a["code"], a["detail"]["limit"]) for a in refused} == {
        ("rate_limited", "analyses_per_source")}
    assert all(a["detail"]["retry_after"] > 0 for a in refused)
    ann = await Client.open(server.url, "Ann", source="127.0.0.3")
    started = time.perf_counter()
    await ann.send(type="analyse", game="connect4", moves=DEEP, id="mine")
    answer = await ann.expect("analysis", timeout=SLOW)
    assert answer["moves"] == DEEP
    assert time.perf_counter() - started < 10.0
    assert server.app.reviews._held.get(("source", "127.0.0.2"), 0) == 0


async def test_an_analysis_is_cancelled_when_its_connection_closes(server: Running) -> None:
    ann = await Client.open(server.url, "Ann", source="127.0.0.2")
    await ann.send(type="analyse", game="connect4", moves=DEEP[:14], id="a")
    for _ in range(100):
        if server.app.reviews.tasks:
            break
        await asyncio.sleep(0.01)
    (task,) = server.app.reviews.tasks
    assert not server.app.reviews.local.started or not task.done()
    await ann.close()
    # Long before the low-priority engine process (started by this request) could answer.
    await asyncio.wait_for(asyncio.shield(task), 0.5)
    assert not server.app.reviews._held and not server.app.reviews._of



@pytest.mark.slow
async def test_with_two_ai_workers_the_review_is_computed_on_the_pool() -> None:
    pool = AiPool(processes=2, games=("connect4",))
    await pool.start(wait_ready=True, timeout=120)
    try:
        async with running(port=0, store=MemoryStore(), pool=pool) as server:
            ann, _, game_id = await finished_game(server)
            await ann.send(type="request_review", game_id=game_id)
            answer = (await ann.expect("review", timeout=SLOW))["review"]
            assert [m["move"] for m in answer["moves"]] == GAME
            assert server.app.reviews.runs == {"pool": 1}, "the pool's lane comes first"
    finally:
        await pool.close()


def test_the_positions_these_tests_analyse_on_a_worker_are_not_the_books() -> None:
    game = games.load("connect4")
    for plies in range(14, len(DEEP) + 1):
        assert review.analyse_known(game.parse_moves("".join(DEEP[:plies]))) is None


async def test_every_move_of_the_first_plies_is_answered_from_the_book_by_the_server_itself(
    server: Running,
) -> None:
    # No worker and no process of the review desk's own: the shipped book's values, at once,
    # and not rationed (answers in a row from one connection). The first five are in
    # book.txt's lines; the others where the book's second file holds them.
    ann = await Client.open(server.url, "Ann")
    game = games.load("connect4")
    asked = 0
    for moves in ([], ["4"], ["4", "4"], ["3", "4"], ["4", "4", "4"], ["1"], ["3", "3"],
                  ["7", "1"], ["2", "6"]):
        state = game.parse_moves("".join(moves))
        known = review.analyse_known(state)
        if known is None:
            continue
        await ann.send(type="analyse", game="connect4", moves=moves, id="k")
        answer = await ann.expect("analysis")
        assert [v["value"] for v in answer["values"]] == [v.value for v in known]
        assert [v["move"] for v in answer["values"]] == [str(v.move + 1) for v in known]
        assert all(v["exact"] for v in answer["values"])
        asked += 1
    assert asked >= 5
    assert not server.app.reviews.local.started and not server.app.reviews.tasks
