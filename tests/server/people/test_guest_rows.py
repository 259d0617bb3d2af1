"""A guest's ``players`` row is written with its first stored game, in that game's commit:
both are stored or neither is, and a commit that failed leaves the row to the next game
(SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Sequence

from wsclient import Client

from server.app import running
from server.storage import SqlStore
from server.storage.store import GameRecord, PlayerRecord


class FailsOnce(SqlStore):
    """A real SQL store whose first game row written with a guest's row fails before anything
    reaches the database (a full disk, a lost connection)."""

    failed = False

    async def save_game(self, game: GameRecord, players: Sequence[PlayerRecord] = ()) -> None:
        if players and not self.failed:
            self.failed = True
            raise OSError("the disk is full")
        await super().save_game(game, players)


async def test_a_guest_and_its_first_game_are_stored_together_or_not_at_all(
    database_url: str,
) -> None:
    store = FailsOnce(database_url)
    async with running(port=0, store=store) as server:
        ann = await Client.open(server.url, "Ann")
        assert await store.load_player(ann.player_id) is None  # a hello alone writes nothing
        refused = await ann.request("create_room", game="connect4",
                                    opponent={"kind": "friend"}, seat=0)
        assert refused["type"] == "error" and refused["code"] == "internal_error"
        assert await store.load_player(ann.player_id) is None
        assert await store.games_of_player(ann.player_id) == []
        await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
        state = await ann.expect("room_state")
        row = await store.load_player(ann.player_id)
        assert row is not None and (row.name, row.kind) == ("Ann", "guest")
        stored = await store.games_of_player(ann.player_id)
        assert [g.players for g in stored] == [(ann.player_id, None)]
        assert state["room"]["status"] == "waiting"
