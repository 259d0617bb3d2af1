"""A game the server has never heard of, defined only under ``tests/thirdgame``: registered,
it is offered, played by two people and against its AI (in the AI worker processes, which
learn it from ``$DISCUS_PLUGINS``), stored, replayed and reviewed through the real server on
SQLite, with no line of ``server/`` naming it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from wsclient import Client, friends_game

import ai
from server.app import Running, Settings, running
from server.engines import AiPool
from server.storage import open_store
from tests import thirdgame

CROSSES_WIN = ["a1", "b1", "a2", "b2", "a3"]
"""X takes the left column; O's two in the middle column come too late."""
SLOW = 60.0


@pytest.fixture
async def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Running]:
    monkeypatch.setenv(ai.PLUGINS_VARIABLE, thirdgame.PLUGIN)
    thirdgame.register()
    # Two workers: the review runs on the pool's idle one, which knows the game as well.
    pool = AiPool(processes=2, games=(thirdgame.NAME,))
    try:
        await pool.start(wait_ready=True, timeout=300)
        store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'discus.db'}")
        async with running(port=0, store=store, pool=pool,
                           settings=Settings(grace_seconds=0.5)) as srv:
            yield srv
    finally:
        await pool.close()
        thirdgame.unregister()


async def test_the_third_game_is_offered_with_its_colours_and_levels(server: Running) -> None:
    ann = await Client.open(server.url, "Ann")
    welcome = ann.welcome
    offered = {g["name"]: g for g in welcome["games"]}
    assert offered[thirdgame.NAME]["players"] == ["Crosses", "Noughts"]
    assert [lv["name"] for lv in offered[thirdgame.NAME]["levels"]] == ["beginner", "perfect"]
    assert offered[thirdgame.NAME]["rows"] == offered[thirdgame.NAME]["cols"] == 3


@pytest.mark.slow
async def test_two_people_play_it_and_it_is_stored_replayed_and_reviewed(
    server: Running,
) -> None:
    ann, bob, room = await friends_game(server.url, game=thirdgame.NAME)
    for ply, move in enumerate(CROSSES_WIN):
        await (ann if ply % 2 == 0 else bob).send(type="move", room=room, ply=ply, move=move)
        await ann.expect("move_made", ply=ply)
    over = await ann.expect("game_over")
    assert over["result"]["winner"] == 0
    game_id = f"{room}-1"

    game = await stored(ann, game_id)
    assert game["game"] == thirdgame.NAME and game["moves"] == CROSSES_WIN
    assert len(game["boards"]) == len(CROSSES_WIN) + 1
    assert all(len(board) == 9 for board in game["boards"])
    assert game["winning"] == [0, 3, 6]
    assert [s["colour"] for s in game["seats"]] == ["Crosses", "Noughts"]
    assert game["exports"] == {"moves": "".join(CROSSES_WIN)}
    assert set(game["downloads"]) == {"txt"}

    await bob.send(type="request_review", game_id=game_id)
    review = (await bob.expect("review", timeout=SLOW))["review"]
    assert review["game"] == thirdgame.NAME
    assert [m["move"] for m in review["moves"]] == CROSSES_WIN
    # O's b1 beside X's corner, not the centre, lost a drawn game (X forks after a2).
    assert review["moves"][1]["verdict"] == "mistake"
    assert review["moves"][1]["best"] == "b2"
    assert [m["verdict"] for m in review["moves"][2:]] == ["best"] * 3
    assert review["moves"][-1]["verdict"] == "best"
    assert review["values"][-1] == 1


async def test_a_person_plays_it_against_its_ai_and_the_game_is_replayed(
    server: Running,
) -> None:
    ann = await Client.open(server.url, "Ann")
    await ann.send(type="create_room", game=thirdgame.NAME,
                   opponent={"kind": "ai", "level": "perfect"}, seat=1)
    state = await ann.expect("room_state")
    room = state["room"]["id"]
    made = await ann.expect("move_made", ply=0, timeout=SLOW)
    assert made["thought"] is not None  # the AI's move, found by its engine in a worker
    while made["status"] != "finished":
        ply = made["position"]["ply"]
        await ann.send(type="move", room=room, ply=ply, move=made["position"]["legal_moves"][0])
        made = await ann.expect("move_made", ply=ply)
        if made["status"] != "finished":
            made = await ann.expect("move_made", ply=ply + 1, timeout=SLOW)
            assert made["thought"] is not None
    over = await ann.expect("game_over")
    assert over["result"]["winner"] in (0, None)  # the perfect level never loses

    replay = await stored(ann, f"{room}-1")
    assert replay["game"] == thirdgame.NAME and len(replay["moves"]) >= 5
    assert [s["kind"] for s in replay["seats"]] == ["ai", "human"]
    assert replay["seats"][0]["level"] == "perfect"


async def stored(client: Client, game_id: str) -> dict:
    """The stored game ``game_id`` as ``get_game`` answers it."""
    await client.send(type="get_game", game_id=game_id)
    record: dict = (await client.expect("game_record"))["record"]
    return record
