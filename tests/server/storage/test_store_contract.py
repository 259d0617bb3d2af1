"""The ``Store`` contract, run against MemoryStore and SqlStore on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from server.storage.store import (
    ChatLineRecord,
    DuplicateMove,
    Fenced,
    GameRecord,
    MoveRecord,
    PlayerRecord,
    ReviewRecord,
    Store,
    replace,
)

T0 = 1_763_700_000.123456


def a_game(game_id: str, *, created_at: float = T0, players=("p1", None), **changes) -> GameRecord:
    record = GameRecord(
        id=game_id,
        game="connect4",
        players=players,
        ai_level="level-3",
        ai_seat=1,
        status="active",
        start_position="",
        created_at=created_at,
    )
    return replace(record, **changes) if changes else record


def a_move(game_id: str, ply: int, move: str = "4", **changes) -> MoveRecord:
    return MoveRecord(
        game_id=game_id,
        ply=ply,
        move=move,
        seat=ply % 2,
        seconds=0.25 + ply,
        created_at=T0 + ply,
        **changes,
    )


async def test_a_saved_player_loads_back_equal(store: Store) -> None:
    player = PlayerRecord(id="p1", name="Ada", kind="guest", created_at=T0)
    await store.save_player(player)
    assert await store.load_player("p1") == player


async def test_saving_a_player_again_updates_it(store: Store) -> None:
    await store.save_player(PlayerRecord(id="p1", name="Ada", kind="guest", created_at=T0))
    await store.save_player(PlayerRecord(id="p1", name="Ada L.", kind="admin", created_at=T0))
    loaded = await store.load_player("p1")
    assert loaded is not None and (loaded.name, loaded.kind) == ("Ada L.", "admin")


async def test_an_unknown_player_or_game_is_none(store: Store) -> None:
    assert await store.load_player("nobody") is None
    assert await store.load_game("nothing") is None


async def test_a_saved_game_loads_back_with_its_moves_in_ply_order(store: Store) -> None:
    game = a_game("g1")
    await store.save_game(game)
    ai = {"ai_depth": 12, "ai_score": -3, "ai_nodes": 5_000_000_000}
    moves = [a_move("g1", 0, "4"), a_move("g1", 1, "3", **ai), a_move("g1", 2, "5")]
    for move in moves:
        await store.append_move(move)
    assert await store.load_game("g1") == (game, moves)


async def test_a_timed_game_loads_back_with_its_control_and_both_clocks_after_each_move(
    store: Store,
) -> None:
    game = a_game("g1", time_control="3+2", clock_initial_ms=180_000, clock_increment_ms=2_000)
    await store.save_game(game)
    moves = [a_move("g1", 0, "4", clock0_ms=179_750, clock1_ms=None),
             a_move("g1", 1, "3", clock0_ms=179_750, clock1_ms=2_147_000_000)]
    for move in moves:
        await store.append_move(move)
    assert await store.load_game("g1") == (game, moves)
    assert await store.unfinished_games() == [(game, moves)]


async def test_a_game_between_two_levels_loads_back_with_both(store: Store) -> None:
    game = a_game("g1", players=(None, None), ai_level="easy", ai_seat=0,
                  other_ai_level="hard")
    await store.save_game(game)
    await store.append_move(a_move("g1", 0))
    loaded = await store.load_game("g1")
    assert loaded is not None and loaded[0] == game
    assert (loaded[0].level_of(0), loaded[0].level_of(1)) == ("easy", "hard")
    assert await store.unfinished_games() == [(game, [a_move("g1", 0)])]
    one = a_game("g2")  # one AI seat: the other seat is the person's
    assert (one.level_of(0), one.level_of(1)) == (None, "level-3")


async def test_a_game_showing_the_engines_evaluation_loads_back_showing_it(store: Store) -> None:
    shown, hidden = a_game("g1", evaluation=True), a_game("g2")
    for game in (shown, hidden):
        await store.save_game(game)
    assert [(await store.load_game(g))[0].evaluation for g in ("g1", "g2")] == [  # type: ignore[index]
        True, False]


async def test_many_games_load_in_one_go_with_their_moves(store: Store) -> None:
    for game_id in ("g1", "g2", "g3"):
        await store.save_game(a_game(game_id))
    for ply in range(3):
        await store.append_move(a_move("g1", ply))
    await store.append_move(a_move("g3", 0))
    loaded = await store.load_games(["g3", "g1", "missing", "g2"])
    assert sorted(loaded) == ["g1", "g2", "g3"]
    for game_id in loaded:
        assert loaded[game_id] == await store.load_game(game_id)
    assert [len(loaded[g][1]) for g in ("g1", "g2", "g3")] == [3, 0, 1]
    assert await store.load_games([]) == {}


async def test_a_casual_game_loads_back_casual(store: Store) -> None:
    for game in (a_game("g1", rated=False), a_game("g2")):
        await store.save_game(game)
    assert [(await store.load_game(g))[0].rated for g in ("g1", "g2")] == [  # type: ignore[index]
        False, True]


async def test_saving_a_game_again_records_its_result_and_keeps_its_moves(store: Store) -> None:
    await store.save_game(a_game("g1"))
    await store.append_move(a_move("g1", 0))
    finished = a_game("g1", status="finished", result=18, reason="four", finished_at=T0 + 60)
    await store.save_game(finished)
    assert await store.load_game("g1") == (finished, [a_move("g1", 0)])


async def test_a_second_move_for_the_same_ply_is_a_duplicate(store: Store) -> None:
    await store.save_game(a_game("g1"))
    await store.append_move(a_move("g1", 0, "4"))
    with pytest.raises(DuplicateMove):
        await store.append_move(a_move("g1", 0, "5"))
    loaded = await store.load_game("g1")
    assert loaded is not None and [m.move for m in loaded[1]] == ["4"]


async def test_the_same_ply_in_another_game_is_not_a_duplicate(store: Store) -> None:
    await store.save_game(a_game("g1"))
    await store.save_game(a_game("g2"))
    await store.append_move(a_move("g1", 0))
    await store.append_move(a_move("g2", 0))
    loaded = await store.load_game("g2")
    assert loaded is not None and len(loaded[1]) == 1


async def test_unfinished_games_are_listed_with_their_moves(store: Store) -> None:
    await store.save_game(a_game("waiting", status="waiting", players=(None, None)))
    await store.save_game(a_game("active"))
    await store.save_game(a_game("done", status="finished", result=1, finished_at=T0))
    await store.save_game(a_game("gone", status="aborted", finished_at=T0))
    for ply in range(3):
        await store.append_move(a_move("active", ply))
    await store.append_move(a_move("done", 0))
    found = {game.id: moves for game, moves in await store.unfinished_games()}
    assert set(found) == {"waiting", "active"}
    assert found["waiting"] == []
    assert [m.ply for m in found["active"]] == [0, 1, 2]


async def test_a_players_games_come_newest_first_in_either_seat(store: Store) -> None:
    await store.save_game(a_game("old", created_at=T0, players=("p1", "p2")))
    await store.save_game(a_game("new", created_at=T0 + 20, players=("p3", "p1")))
    await store.save_game(a_game("mid", created_at=T0 + 10, players=("p1", None)))
    await store.save_game(a_game("other", created_at=T0 + 30, players=("p2", "p3")))
    assert [g.id for g in await store.games_of_player("p1")] == ["new", "mid", "old"]
    assert [g.id for g in await store.games_of_player("p1", limit=2)] == ["new", "mid"]
    assert await store.games_of_player("nobody") == []


async def test_move_counts_come_for_many_games_at_once(store: Store) -> None:
    await store.save_game(a_game("played"))
    await store.save_game(a_game("empty"))
    for ply in range(3):
        await store.append_move(a_move("played", ply, str(ply + 1)))
    assert await store.count_moves(["played", "empty", "unknown"]) == {
        "played": 3, "empty": 0, "unknown": 0}
    assert await store.count_moves([]) == {}


async def test_moves_appended_at_once_in_many_games_are_all_stored_in_order(
    store: Store,
) -> None:
    ids = [f"g{i}" for i in range(12)]
    for game_id in ids:
        await store.save_game(a_game(game_id))

    async def play(game_id: str) -> None:
        for ply in range(10):
            await store.append_move(a_move(game_id, ply, str(ply % 7 + 1)))

    # A write queued just as a commit loop found the queue empty must not be stranded.
    await asyncio.wait_for(asyncio.gather(*(play(game_id) for game_id in ids)), 30)
    for game_id in ids:
        loaded = await store.load_game(game_id)
        assert loaded is not None and [m.ply for m in loaded[1]] == list(range(10))


async def test_moves_committed_together_come_back_field_for_field(store: Store) -> None:
    # On SQLite a batch of moves is one INSERT with a row of values each: every field must
    # land in its own column, and each move in its own row.
    await store.save_game(a_game("g1"))
    await store.save_game(a_game("g2"))
    written = [
        dataclasses.replace(a_move("g1", 0, "4", clock0_ms=59_000), seconds=1.5,
                            created_at=T0 + 0.125),
        dataclasses.replace(a_move("g2", 0, "3"), seconds=0.5, created_at=T0 + 0.25),
        a_move("g1", 1, "5", ai_depth=7, ai_score=-3, ai_nodes=12_345_678_901,
               clock0_ms=59_000, clock1_ms=58_250),
    ]
    await asyncio.gather(store.append_move(written[0]), store.append_move(written[1]))
    await asyncio.gather(store.append_move(written[2]), store.save_game(a_game("g3")))
    g1, g2 = await store.load_game("g1"), await store.load_game("g2")
    assert g1 is not None and g2 is not None
    assert g1[1] == [written[0], written[2]] and g2[1] == [written[1]]


async def test_two_moves_racing_for_one_ply_store_one_and_refuse_the_other(
    store: Store,
) -> None:
    await store.save_game(a_game("g1"))
    await store.save_game(a_game("g2"))
    outcomes = await asyncio.gather(
        store.append_move(a_move("g1", 0, "4")),
        store.append_move(a_move("g1", 0, "5")),
        store.append_move(a_move("g2", 0, "1")),
        return_exceptions=True,
    )
    assert [type(o) for o in outcomes].count(DuplicateMove) == 1
    assert outcomes[2] is None  # a bystander in the same commit is not affected
    loaded = await store.load_game("g1")
    assert loaded is not None and len(loaded[1]) == 1
    winner = "4" if outcomes[0] is None else "5"
    assert loaded[1][0].move == winner


async def test_a_game_its_first_move_and_a_player_written_at_once_are_all_stored(
    store: Store,
) -> None:
    # Queued together, they share one commit on SQL stores: the game's row must go in
    # before its move, and a duplicate among them must fail only its own caller.
    await store.save_game(a_game("old"))
    await store.append_move(a_move("old", 0, "4"))
    outcomes = await asyncio.gather(
        store.save_game(a_game("new")),
        store.append_move(a_move("new", 0, "3")),
        store.append_move(a_move("old", 0, "5")),
        store.save_player(PlayerRecord("p9", "Nine", "guest", T0)),
        store.append_move(a_move("new", 1, "3")),
        return_exceptions=True,
    )
    assert [type(o).__name__ for o in outcomes] == [
        "NoneType", "NoneType", "DuplicateMove", "NoneType", "NoneType"]
    new = await store.load_game("new")
    assert new is not None and [m.move for m in new[1]] == ["3", "3"]
    old = await store.load_game("old")
    assert old is not None and [m.move for m in old[1]] == ["4"]
    assert await store.load_player("p9") == PlayerRecord("p9", "Nine", "guest", T0)


async def test_a_fenced_game_refuses_moves_and_rows_from_an_older_epoch(store: Store) -> None:
    await store.save_game(a_game("g1", epoch=1))
    await store.append_move(a_move("g1", 1, epoch=1))
    await store.fence("g1", 2)  # another node took the room over
    with pytest.raises(Fenced):
        await store.append_move(a_move("g1", 2, epoch=1))
    with pytest.raises(Fenced):
        await store.save_game(a_game("g1", epoch=1, status="finished", result=0))
    await store.append_move(a_move("g1", 2, "3", epoch=2))
    loaded = await store.load_game("g1")
    assert loaded is not None
    record, moves = loaded
    assert (record.status, record.epoch) == ("active", 2)
    assert [(m.ply, m.move, m.epoch) for m in moves] == [(1, "4", 1), (2, "3", 2)]


async def test_a_game_saved_with_its_guests_rows_stores_them_together(store: Store) -> None:
    guest = PlayerRecord("g-guest", "Guest 1234", "guest", T0)
    await store.save_game(a_game("g1", players=("g-guest", None)), [guest])
    loaded = await store.load_game("g1")
    assert loaded is not None and loaded[0].players == ("g-guest", None)
    assert await store.load_player("g-guest") == guest


async def test_a_refused_game_row_stores_none_of_the_rows_saved_with_it(store: Store) -> None:
    await store.save_game(a_game("g1", epoch=2))
    late = PlayerRecord("late", "Guest 5678", "guest", T0)
    with pytest.raises(Fenced):
        await store.save_game(a_game("g1", epoch=1, players=("late", None)), [late])
    assert await store.load_player("late") is None
    loaded = await store.load_game("g1")
    assert loaded is not None and loaded[0].players == ("p1", None)


async def test_a_fence_never_goes_back_and_unfenced_writes_keep_it(store: Store) -> None:
    await store.save_game(a_game("g1", epoch=3))
    with pytest.raises(Fenced):
        await store.fence("g1", 2)
    await store.save_game(a_game("g1", status="finished", result=1))  # no epoch: not a node's
    loaded = await store.load_game("g1")
    assert loaded is not None and (loaded[0].status, loaded[0].epoch) == ("finished", 3)


async def test_a_takeover_under_the_games_own_epoch_is_refused(store: Store) -> None:
    # Redis restarted empty: a new lease can repeat the epoch the running owner writes with.
    await store.save_game(a_game("g1", epoch=1))
    with pytest.raises(Fenced):
        await store.fence("g1", 1)
    await store.append_move(a_move("g1", 1, epoch=1))  # the owner still writes
    await store.fence("g1", 2)  # a newer lease takes over
    with pytest.raises(Fenced):
        await store.append_move(a_move("g1", 2, epoch=1))


async def test_a_stale_move_in_a_group_commit_fails_alone(store: Store) -> None:
    await store.save_game(a_game("g1", epoch=1))
    await store.save_game(a_game("g2", epoch=1))
    await store.fence("g1", 2)
    stale, fresh = await asyncio.gather(
        store.append_move(a_move("g1", 1, epoch=1)),
        store.append_move(a_move("g2", 1, epoch=1)),
        return_exceptions=True,
    )
    assert isinstance(stale, Fenced) and fresh is None
    assert await store.count_moves(["g1", "g2"]) == {"g1": 0, "g2": 1}


async def test_a_take_back_deletes_the_moves_from_a_ply_on_unless_fenced(store: Store) -> None:
    await store.save_game(a_game("g1", epoch=1))
    for ply in range(4):
        await store.append_move(a_move("g1", ply, str(ply + 1), epoch=1))
    await store.take_back("g1", 2, epoch=1)
    loaded = await store.load_game("g1")
    assert loaded is not None and [m.move for m in loaded[1]] == ["1", "2"]
    await store.append_move(a_move("g1", 2, "7", epoch=1))  # the ply is free again
    await store.fence("g1", 2)
    with pytest.raises(Fenced):
        await store.take_back("g1", 0, epoch=1)
    assert (await store.count_moves(["g1"]))["g1"] == 3


def a_review(game_id: str, verdict: str = "best", created_at: float = T0 + 100) -> ReviewRecord:
    return ReviewRecord(
        game_id=game_id,
        review={"game_id": game_id, "game": "connect4", "values": [1, -1, None],
                "moves": [{"ply": 0, "move": "4", "verdict": verdict, "label": "win in 21"}]},
        created_at=created_at,
    )


async def test_a_stored_review_loads_back_equal(store: Store) -> None:
    await store.save_game(a_game("g1", status="finished"))
    assert await store.load_review("g1") is None
    review = a_review("g1")
    assert await store.save_review(review) == review
    assert await store.load_review("g1") == review
    assert await store.load_review("g2") is None


async def test_a_second_review_of_a_game_keeps_the_first(store: Store) -> None:
    await store.save_game(a_game("g1", status="finished"))
    first, second = a_review("g1", "best"), a_review("g1", "blunder", created_at=T0 + 200)
    await store.save_review(first)
    assert await store.save_review(second) == first
    assert await store.load_review("g1") == first


async def test_reviews_stored_at_once_by_two_writers_leave_one(store: Store) -> None:
    await store.save_game(a_game("g1", status="finished"))
    first, second = a_review("g1", "best"), a_review("g1", "blunder", created_at=T0 + 200)
    stored = await asyncio.gather(store.save_review(first), store.save_review(second))
    assert stored[0] == stored[1] and stored[0] in (first, second)
    assert await store.load_review("g1") == stored[0]


async def test_a_review_of_an_unknown_game_is_refused(store: Store) -> None:
    with pytest.raises(KeyError):
        await store.save_review(a_review("nothing"))
    assert await store.load_review("nothing") is None


def a_line(game_id: str | None, text: str, channel: str = "players",
           player: str = "p1") -> ChatLineRecord:
    return ChatLineRecord(0, game_id, "lobby" if game_id is None else channel,  # type: ignore[arg-type]
                          player, "Ada", text, T0)


async def test_chat_lines_keep_their_game_their_channel_and_growing_ids(store: Store) -> None:
    await store.save_game(a_game("g1", players=("p1", "p2")))
    first = await store.add_chat_line(a_line("g1", "hi"), lobby_kept=10)
    second = await store.add_chat_line(a_line("g1", "watching", "spectators", "p3"), 10)
    lobby = await store.add_chat_line(a_line(None, "<b>hello</b>"), 10)
    assert 0 < first.id < second.id < lobby.id
    assert first == ChatLineRecord(first.id, "g1", "players", "p1", "Ada", "hi", T0)
    assert await store.chat_lines("g1", ["players", "spectators"], 10) == [first, second]
    assert await store.chat_lines("g1", ["spectators"], 10) == [second]
    assert await store.chat_lines(None, ["lobby"], 10) == [lobby]
    assert await store.chat_lines("g1", ["players", "spectators"], 1) == [second]


async def test_the_lobby_keeps_its_newest_lines_and_games_keep_all_theirs(store: Store) -> None:
    await store.save_game(a_game("g1"))
    kept = [await store.add_chat_line(a_line(None if n % 2 else "g1", f"line {n}"), 2)
            for n in range(8)]
    assert [c.text for c in await store.chat_lines(None, ["lobby"], 10)] == ["line 5", "line 7"]
    assert len(await store.chat_lines("g1", ["players"], 10)) == 4
    assert kept[-1].id > kept[0].id


async def test_a_deleted_line_is_shown_no_more_and_cannot_be_deleted_twice(store: Store) -> None:
    await store.save_game(a_game("g1"))
    line = await store.add_chat_line(a_line("g1", "rude"), 10)
    other = await store.add_chat_line(a_line("g1", "fine"), 10)
    assert await store.delete_chat_line(line.id, T0 + 1) == line
    assert await store.delete_chat_line(line.id, T0 + 2) is None
    assert await store.delete_chat_line(999_999, T0 + 2) is None
    assert await store.chat_lines("g1", ["players"], 10) == [other]


async def test_a_silence_is_kept_until_lifted(store: Store) -> None:
    assert await store.chat_silenced_until("p1") is None
    await store.silence_chat("p1", T0 + 600)
    await store.silence_chat("p1", T0 + 60)
    assert await store.chat_silenced_until("p1") == T0 + 60
    await store.silence_chat("p1", None)
    assert await store.chat_silenced_until("p1") is None


async def test_a_silence_holds_its_addresses_until_lifted_with_it(store: Store) -> None:
    await store.silence_chat("p1", T0 + 600, ["10.0.0.1", "2001:db8::/64"])
    await store.silence_chat("p2", T0 + 60, ["10.0.0.1"])
    assert await store.chat_silenced_until("p9", "10.0.0.1") == T0 + 600  # the latest
    assert await store.chat_silenced_until("p9", "2001:db8::/64") == T0 + 600
    assert await store.chat_silenced_until("p9", "10.0.0.2") is None
    assert await store.chat_silenced_until("p9") is None
    await store.silence_chat("p1", T0 + 30, ["10.0.0.3"])  # its addresses kept, for as long
    assert await store.chat_silenced_until("p9", "2001:db8::/64") == T0 + 30
    assert await store.chat_silenced_until("p9", "10.0.0.3") == T0 + 30
    assert await store.chat_silenced_until("p9", "10.0.0.1") == T0 + 60
    assert await store.chat_silenced_until("p1") == T0 + 30
    await store.silence_chat("p1", None)
    await store.silence_chat("p2", None)
    for source in ("10.0.0.1", "10.0.0.3", "2001:db8::/64"):
        assert await store.chat_silenced_until("p9", source) is None


async def test_pruning_deletes_the_lobbys_and_the_games_lines_past_their_own_times(
    store: Store,
) -> None:
    await store.save_game(a_game("g1"))
    for at, game_id in ((T0, None), (T0 + 10, None), (T0, "g1"), (T0 + 10, "g1")):
        line = dataclasses.replace(a_line(game_id, f"{game_id} at {at - T0:g}"), created_at=at)
        await store.add_chat_line(line, 10)
    await store.silence_chat("p1", T0 + 5, ["10.0.0.1"])
    assert await store.prune_chat(lobby_before=T0 + 5, games_before=T0 - 1) == 1
    assert [c.text for c in await store.chat_lines(None, ["lobby"], 10)] == ["None at 10"]
    assert len(await store.chat_lines("g1", ["players"], 10)) == 2
    assert await store.prune_chat(lobby_before=T0 + 5, games_before=T0 + 11) == 2
    assert await store.chat_lines("g1", ["players"], 10) == []
    assert await store.chat_silenced_until("p1", "10.0.0.1") == T0 + 5  # not ended by T0 - 1
    await store.prune_chat(lobby_before=T0 + 6, games_before=T0 + 6)
    assert await store.chat_silenced_until("p1", "10.0.0.1") is None


async def test_an_older_form_guest_token_is_spent_once(store: Store) -> None:
    assert await store.spend_guest_token("p1", T0)
    assert not await store.spend_guest_token("p1", T0 + 1)
    assert await store.spend_guest_token("p2", T0 + 1)
    spent = await asyncio.gather(*(store.spend_guest_token("p3", T0) for _ in range(4)))
    assert sorted(spent) == [False, False, False, True]
