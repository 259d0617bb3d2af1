"""Othello passes play themselves: when the side to move has no legal move, the server plays
the pass at once, for a person in an untimed game as for the AI, stores it and announces it
as forced; a pass a client still sends for that ply is stale and changes nothing."""

from __future__ import annotations

import pytest
from scripted_engines import OTHELLO_LINE
from wsclient import Client, friends_game

from server.app import running
from server.engines import AiPool
from server.storage.memory import MemoryStore


async def test_in_an_untimed_game_a_persons_forced_pass_is_played_stored_and_announced(
) -> None:
    async with running(store=MemoryStore()) as server:
        ann, bob, room = await friends_game(server.url, game="othello")
        for ply, text in enumerate(OTHELLO_LINE):
            await (ann, bob)[ply % 2].send(type="move", room=room, ply=ply, move=text)
            await ann.expect("move_made", ply=ply)
        for client in (ann, bob):
            passed = await client.expect("move_made", ply=8)
            assert (passed["move"], passed["seat"], passed["forced"]) == ("pass", 0, True)
            assert passed["position"]["to_move"] == 1
            legal = passed["position"]["legal_moves"]
            assert legal and "pass" not in legal
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None and [m.move for m in stored[1]][-1] == "pass"
        # A client that still sends the pass is told the game has moved on.
        await ann.send(type="move", room=room, ply=8, move="pass", id="late")
        late = await ann.expect("error")
        assert late["code"] == "stale_ply"
        await bob.send(type="move", room=room, ply=9, move=legal[0])  # the game goes on
        made = await ann.expect("move_made", ply=9)
        assert made["forced"] is False


@pytest.mark.slow
async def test_the_ais_forced_pass_is_played_without_asking_its_engine() -> None:
    # The scripted engine plays the line as Black and fails if asked to search a pass.
    pool = AiPool(processes=1, games=("othello",), search="scripted_engines:othello_line",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    async with running(store=MemoryStore(), pool=pool) as server:
        bob = await Client.open(server.url, "Bob")
        await bob.send(type="create_room", game="othello",
                       opponent={"kind": "ai", "level": "beginner"}, seat=1)
        room = (await bob.expect("room_state"))["room"]["id"]
        for ply in range(0, 8, 2):
            await bob.expect("move_made", ply=ply)
            await bob.send(type="move", room=room, ply=ply + 1, move=OTHELLO_LINE[ply + 1])
            await bob.expect("move_made", ply=ply + 1)
        passed = await bob.expect("move_made", ply=8)
        assert (passed["move"], passed["seat"], passed["forced"]) == ("pass", 0, True)
        assert passed["thought"] is None and passed["position"]["to_move"] == 1
        stored = await server.app.store.load_game(f"{room}-1")
        assert stored is not None and [m.move for m in stored[1]][-1] == "pass"


@pytest.mark.slow
async def test_a_take_back_goes_past_a_forced_pass_to_the_persons_last_real_move() -> None:
    pool = AiPool(processes=1, games=("othello",), search="scripted_engines:othello_line",
                  warm_up="scripted_engines:warm_up")
    await pool.start(wait_ready=True, timeout=60)
    async with running(store=MemoryStore(), pool=pool) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="othello",
                       opponent={"kind": "ai", "level": "beginner"}, seat=0)
        room = (await ann.expect("room_state"))["room"]["id"]
        for ply in range(0, 8, 2):  # the AI (White) answers each move from the line
            await ann.send(type="move", room=room, ply=ply, move=OTHELLO_LINE[ply])
            await ann.expect("move_made", ply=ply + 1)
        passed = await ann.expect("move_made", ply=8)  # Ann's pass, played for her
        assert (passed["move"], passed["seat"], passed["forced"]) == ("pass", 0, True)
        await ann.expect("move_made", ply=9)  # the AI moves again
        await ann.send(type="take_back", room=room)
        state = await ann.expect("room_state")
        # Back to before Ann's g6 (ply 6): taking back only to the pass would force it again.
        assert state["room"]["position"]["ply"] == 6, state["room"]["moves"]
        assert state["room"]["position"]["to_move"] == 0
        assert (await ann.expect("room_event"))["event"] == "took_back"
