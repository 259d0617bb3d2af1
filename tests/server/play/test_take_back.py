"""Take-backs and draw offers through the server, on real databases: a take-back is stored
before anyone hears of it and survives a restart; a draw agreed is a stored result."""

from __future__ import annotations

from wsclient import Client, friends_game

from server.app import running
from server.storage import SqlStore
from tests.server.storage.conftest import pg_url, sql_url, sqlite_url  # noqa: F401 - fixtures

SECRET = b"the take-back test's secret"


async def test_a_take_back_is_stored_and_a_restarted_server_resumes_from_it(
    sql_url: str,  # noqa: F811 - fixture
) -> None:
    async with running(store=SqlStore(sql_url), secret=SECRET) as server:
        ann = await Client.open(server.url, "Ann")
        await ann.send(type="create_room", game="connect4", seat=0,
                       opponent={"kind": "ai", "level": "beginner"})
        room = (await ann.expect("room_state"))["room"]["id"]
        await ann.send(type="move", room=room, ply=0, move="4")
        await ann.expect("move_made", ply=1)  # the AI's reply
        await ann.send(type="move", room=room, ply=2, move="4")
        await ann.expect("move_made", ply=3)
        await ann.send(type="take_back", room=room)
        state = await ann.expect("room_state")
        assert state["room"]["position"]["ply"] == 2 and len(state["room"]["moves"]) == 2
        event = await ann.expect("room_event")
        assert event["event"] == "took_back"
        loaded = await server.app.store.load_game(f"{room}-1")
        assert loaded is not None and [m.ply for m in loaded[1]] == [0, 1]
        resume = ann.welcome["resume"]
        await ann.close()
    async with running(store=SqlStore(sql_url), secret=SECRET) as server:
        ann = await Client.open(server.url, "Ann", resume=resume)
        state = await ann.expect("room_state")
        assert state["room"]["position"]["ply"] == 2
        await ann.send(type="move", room=room, ply=2, move="1")  # another line from there
        made = await ann.expect("move_made", ply=2)
        assert made["move"] == "1"
        await ann.close()


async def test_take_backs_and_draw_offers_refused_change_nothing(
    sqlite_url: str,  # noqa: F811 - fixture
) -> None:
    async with running(store=SqlStore(sqlite_url), secret=SECRET) as server:
        ann, bob, room = await friends_game(server.url)
        await ann.send(type="move", room=room, ply=0, move="4")
        await bob.expect("move_made", ply=0)
        await ann.send(type="take_back", room=room, id="t")
        assert (await ann.expect("error", ref="t"))["code"] == "cannot_take_back"
        await bob.send(type="answer_draw", room=room, accept=True, id="d")
        assert (await bob.expect("error", ref="d"))["code"] == "no_draw_offer"
        loaded = await server.app.store.load_game(f"{room}-1")
        assert loaded is not None and len(loaded[1]) == 1
        await bob.send(type="offer_draw", room=room)
        assert (await ann.expect("room_event"))["event"] == "draw_offered"
        await ann.send(type="answer_draw", room=room, accept=True)
        over = await bob.expect("game_over")
        assert over["result"] == {"winner": None, "score": None, "reason": "agreed"}
        loaded = await server.app.store.load_game(f"{room}-1")
        assert loaded is not None and (loaded[0].status, loaded[0].reason) == (
            "finished", "agreed")
        await ann.close()
        await bob.close()
