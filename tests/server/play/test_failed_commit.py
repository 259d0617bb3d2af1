"""A move whose commit fails is announced to nobody: its player is told the server failed,
the opponent hears nothing, and the same ply is played again once the store is back
(SQLite and PostgreSQL)."""

from __future__ import annotations

from wsclient import friends_game

from server.app import running
from server.storage import SqlStore
from server.storage.store import GameRecord, MoveRecord


class FailsOnce(SqlStore):
    """A real SQL store whose commit of one move fails (a full disk, a lost connection)."""

    fail_ply: int | None = 1

    async def append_move(self, move: MoveRecord) -> None:
        if move.ply == self.fail_ply:
            self.fail_ply = None
            raise OSError("the disk is full")
        await super().append_move(move)


async def test_a_move_whose_commit_failed_is_announced_to_nobody(database_url: str) -> None:
    store = FailsOnce(database_url)
    async with running(port=0, store=store) as server:
        ann, bob, room = await friends_game(server.url)
        await ann.send(type="move", room=room, ply=0, move="4")
        await bob.expect("move_made", ply=0)
        refused = await bob.request("move", room=room, ply=1, move="3")
        assert (refused["type"], refused["code"]) == ("error", "internal_error")
        await ann.send(type="ping", id="after")
        pong = await ann.expect("pong", id="after")  # everything before it has arrived
        assert pong and not [m for m in ann.seen if m["type"] == "move_made" and m["ply"] == 1]
        assert [m.ply for m in (await _only_game(store, ann.player_id))[1]] == [0]
        await bob.send(type="move", room=room, ply=1, move="5")
        made = await ann.expect("move_made", ply=1)
        assert made["move"] == "5"
        stored = await _only_game(store, ann.player_id)
        assert [(m.ply, m.move) for m in stored[1]] == [(0, "4"), (1, "5")]


async def _only_game(store: SqlStore, player_id: str) -> tuple[GameRecord, list[MoveRecord]]:
    games = await store.games_of_player(player_id)
    assert len(games) == 1
    loaded = await store.load_game(games[0].id)
    assert loaded is not None
    return loaded
