"""Tournaments in every store (memory, SQLite, PostgreSQL): rows read back as written, and an
arena or a Swiss saved as it is played comes back the same from a store opened anew."""

from __future__ import annotations

import random

import pytest

from server.storage import SqlStore
from server.storage.store import EntrantRecord, Fenced, PairingRecord, Store, TournamentRecord
from server.tournaments import Entrant
from server.tournaments.arena import Arena
from server.tournaments.records import (
    arena_from_records,
    arena_pairing_record,
    entrant_record,
    round_entrant_record,
    round_pairing_records,
    rounds_from_records,
)
from server.tournaments.rounds import RoundEvent


def arena_record(tid: str, starts_at: float = 100.0, status: str = "running",
                 private: bool = False) -> TournamentRecord:
    return TournamentRecord(tid, "arena", "connect4", f"Arena {tid}", "blitz-3+2", True, None,
                            50.0, starts_at, starts_at + 1800.0, None, True, private,
                            status)  # type: ignore[arg-type]


async def test_a_tournament_reads_back_as_written_and_is_replaced_by_its_id(store: Store
                                                                            ) -> None:
    swiss = TournamentRecord("s1", "swiss", "othello", "Swiss", None, False, "ann", 1.5, 200.0,
                             None, 7, False, True, "upcoming")
    await store.save_tournament(swiss)
    assert await store.load_tournament("s1") == swiss
    assert await store.load_tournament("nope") is None
    finished = TournamentRecord(**{**swiss.__dict__, "status": "finished"})
    await store.save_tournament(finished)
    assert await store.load_tournament("s1") == finished


async def test_tournaments_are_listed_by_status_soonest_first(store: Store) -> None:
    for tid, start, status in [("a", 300.0, "upcoming"), ("b", 100.0, "running"),
                               ("c", 200.0, "upcoming"), ("d", 50.0, "finished")]:
        await store.save_tournament(arena_record(tid, start, status, private=tid == "c"))
    listed = await store.list_tournaments(["upcoming", "running"])
    assert [t.id for t in listed] == ["b", "c", "a"]
    assert [t.id for t in await store.list_tournaments(["upcoming"], limit=1)] == ["c"]
    assert [t.id for t in await store.list_tournaments(["finished"])] == ["d"]


async def test_entrants_and_pairings_read_back_in_order(store: Store) -> None:
    await store.save_tournament(arena_record("t1"))
    await store.save_tournament(arena_record("t2"))
    bob = EntrantRecord("t1", "bob", "Bob", 1612.5, "active", 110.0)
    ann = EntrantRecord("t1", "ann", "Ann", 1500.0, "active", 101.0)
    await store.save_entrant(bob)
    await store.save_entrant(ann)
    await store.save_entrant(EntrantRecord("t2", "cy", "Cy", 1400.0, "active", 90.0))
    paused = EntrantRecord("t1", "bob", "Bob", 1612.5, "paused", 110.0)
    await store.save_entrant(paused)
    assert await store.tournament_entrants("t1") == [ann, paused]
    later = PairingRecord("t1", "t1-2", 1, 0, "bob", "ann", 130.0)
    bye = PairingRecord("t1", "r1-cy", 0, 1, "cy", None, 120.0, result=1.0)
    await store.save_pairing(later)
    await store.save_pairing(bye)
    assert await store.tournament_pairings("t1") == [bye, later]
    done = PairingRecord("t1", "t1-2", 1, 0, "bob", "ann", 130.0, "g7", ("ann", "bob"), 0.5,
                         False, 190.25)
    await store.save_pairing(done)
    assert await store.tournament_pairings("t1") == [bye, done]
    assert await store.tournament_pairings("t2") == []


async def test_an_arena_saved_as_it_is_played_comes_back_with_the_same_standings(
        store: Store, database_url: str | None) -> None:
    rng = random.Random(7)
    record = arena_record("t1")
    await store.save_tournament(record)
    assert record.ends_at is not None
    arena = Arena("t1", record.starts_at, record.ends_at, True)
    names = [f"p{k}" for k in range(9)]
    now = record.starts_at
    for name in names:
        arena.join(Entrant(name, name.upper(), rng.uniform(1200, 1900)), now)
        await store.save_entrant(entrant_record(arena, name, now))
    for _ in range(60):
        now += 3.0
        for game in arena.pair(now):
            arena.games[game.game_id].stored_as = f"g-{game.game_id}"
            await store.save_pairing(arena_pairing_record(arena, game.game_id))
            if rng.random() < 0.3:
                arena.berserk(game.first, game.game_id)
                await store.save_pairing(arena_pairing_record(arena, game.game_id))
        if arena.under_way() and rng.random() < 0.8:
            ended = rng.choice(arena.under_way())
            arena.finish(ended.game_id, rng.choice([0, 1, None]), now)
            await store.save_pairing(arena_pairing_record(arena, ended.game_id))
        if rng.random() < 0.1:
            who = rng.choice(names)
            arena.pause(who)
            await store.save_entrant(entrant_record(arena, who, record.starts_at))
    if isinstance(store, SqlStore):
        assert database_url is not None
        store = SqlStore(database_url)  # a server started anew: nothing in memory
        await store.open()
    try:
        loaded = await store.load_tournament("t1")
        assert loaded is not None
        back = arena_from_records(loaded, await store.tournament_entrants("t1"),
                                  await store.tournament_pairings("t1"))
    finally:
        if database_url is not None:
            await store.close()
    assert back.standings() == arena.standings()
    assert sorted(back.free_players()) == sorted(arena.free_players())
    assert {(g.game_id, g.stored_as) for g in back.under_way()} == {
        (g.game_id, g.stored_as) for g in arena.under_way()}
    assert back.standings()[0].score > 0


async def test_a_swiss_saved_round_by_round_resumes_from_a_store_opened_anew(
        store: Store, database_url: str | None) -> None:
    rng = random.Random(11)
    record = TournamentRecord("s1", "swiss", "othello", "Swiss", None, True, None, 1.0, 10.0,
                              None, 6, False, False, "running")
    await store.save_tournament(record)
    event = RoundEvent("s1", "swiss", 6)
    people = [Entrant(f"p{k}", f"P{k}", float(rng.randint(1200, 2000))) for k in range(10)]
    for k, entrant in enumerate(people):
        event.enter(entrant)
        await store.save_entrant(round_entrant_record(event, entrant, float(k)))
    event.withdraw("p9")  # before the start: out of the event
    await store.save_entrant(round_entrant_record(event, people[9], 9.0))
    for number in range(1, 4):
        event.pair_next()
        for board in event.boards[-1]:
            if board.result is None:
                event.record(number, board.first, rng.choice([1.0, 0.5, 0.0]))
        for row in round_pairing_records(event, number, 100.0 * number, 100.0 * number + 50):
            await store.save_pairing(row)
        if number == 2:
            event.withdraw("p4")
            await store.save_entrant(round_entrant_record(event, people[4], 4.0))
    if isinstance(store, SqlStore):
        assert database_url is not None
        store = SqlStore(database_url)
        await store.open()
    try:
        loaded = await store.load_tournament("s1")
        assert loaded is not None
        back = rounds_from_records(loaded, await store.tournament_entrants("s1"),
                                   await store.tournament_pairings("s1"))
    finally:
        if database_url is not None:
            await store.close()
    assert back.standings() == event.standings()
    assert back.seeds == event.seeds and "p9" not in back.entrants
    assert back.withdrawn == {"p4"}
    # Both pair round 4 alike: the saved history is all the pairing needs.
    assert [(b.first, b.second) for b in back.pair_next()] == [
        (b.first, b.second) for b in event.pair_next()]
    assert [(b.first, b.second) for b in back.boards[-1]] == [
        (b.first, b.second) for b in event.boards[-1]]


async def test_a_fenced_tournament_refuses_writes_from_an_older_epoch(store: Store) -> None:
    """A node whose lease on a tournament was taken over can no longer write any of its
    rows; the new holder can, and an unfenced write (a single node's) never lowers it."""
    await store.save_tournament(arena_record("t1"), epoch=1)
    entrant = EntrantRecord("t1", "ann", "Ann", 1500.0, "active", 101.0)
    await store.save_entrant(entrant, epoch=1)
    await store.fence_tournament("t1", 2)  # another node took the tournament over
    pairing = PairingRecord("t1", "p1", 1, 0, "ann", "bob", 120.0)
    finished = TournamentRecord(**{**arena_record("t1").__dict__, "status": "finished"})
    for stale in (store.save_tournament(finished, epoch=1),
                  store.save_entrant(entrant, epoch=1), store.save_pairing(pairing, epoch=1)):
        with pytest.raises(Fenced) as refused:
            await stale
        assert refused.value.held == 2
    assert await store.load_tournament("t1") == arena_record("t1")
    assert await store.tournament_pairings("t1") == []
    await store.save_pairing(pairing, epoch=2)
    await store.save_pairing(pairing)  # epoch 0: not fenced, and the fence stays
    assert await store.tournament_pairings("t1") == [pairing]
    with pytest.raises(Fenced):
        await store.fence_tournament("t1", 2)  # a takeover under the held epoch
    await store.fence_tournament("t1", 3)
    with pytest.raises(Fenced):
        await store.save_entrant(entrant, epoch=2)
