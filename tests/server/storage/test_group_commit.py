"""Group commit (``sql_store._WriteBatcher``): writes of games playing at the same time share
commits, a lone write is never held back, a write's caller returns only once its commit has,
a commit that fails fails only the writes it held, and a write refused on its own account
(the fence, a repeated ply) fails alone."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from server.storage.sql_store import Write, _WriteBatcher
from server.storage.store import Fenced, MoveRecord


def a_move(game: int, ply: int) -> MoveRecord:
    return MoveRecord(f"g{game}", ply, "4", ply % 2, 0.1, 0.0)


class Disk:
    """Where the batcher commits: what each commit held, in order, and a way to fail one."""

    def __init__(self) -> None:
        self.commits: list[list[Write]] = []
        self.attempts: list[list[Write]] = []
        self.fail_next = False
        self.fenced: set[Write] = set()
        self.slow: set[Write] = set()

    async def commit(self, writes: Sequence[Write]) -> None:
        self.attempts.append(list(writes))
        # A commit takes a while: others queue meanwhile.
        await asyncio.sleep(0.05 if self.slow.intersection(writes) else 0.001)
        if self.fail_next:
            self.fail_next = False
            raise OSError("the disk is full")
        if self.fenced.intersection(writes):
            raise Fenced("the room is another node's now")
        self.commits.append(list(writes))

    def stored(self) -> list[Write]:
        return [write for commit in self.commits for write in commit]


async def test_a_lone_writer_is_never_held_back_by_the_gathering_window() -> None:
    disk = Disk()
    batcher = _WriteBatcher(disk.commit, gather_seconds=60.0)
    for ply in range(5):  # a minute's wait for company would time the test out
        await asyncio.wait_for(batcher.run(a_move(0, ply)), 10)
    assert disk.commits == [[a_move(0, ply)] for ply in range(5)]


async def test_games_writing_at_once_share_commits_and_keep_each_games_order() -> None:
    disk = Disk()
    batcher = _WriteBatcher(disk.commit, gather_seconds=0.01)

    async def play(game: int) -> None:
        for ply in range(5):
            await batcher.run(a_move(game, ply))
            assert a_move(game, ply) in disk.stored()  # committed before run returned

    await asyncio.wait_for(asyncio.gather(*(play(game) for game in range(20))), 30)
    stored = disk.stored()
    assert sorted(stored, key=lambda m: (m.game_id, m.ply)) == sorted(
        (a_move(game, ply) for game in range(20) for ply in range(5)),
        key=lambda m: (m.game_id, m.ply))
    for game in range(20):
        assert [m.ply for m in stored if m.game_id == f"g{game}"] == list(range(5))
    assert len(disk.commits) <= 20  # 100 writes; one commit each would be 100


async def test_writes_arriving_apart_while_others_write_are_gathered_into_fewer_commits(
) -> None:
    async def commits_with(gather_seconds: float) -> int:
        disk = Disk()
        batcher = _WriteBatcher(disk.commit, gather_seconds=gather_seconds)

        async def play(game: int) -> None:
            await asyncio.sleep(0.003 * game)  # the games move at their own moments
            for ply in range(4):
                await batcher.run(a_move(game, ply))
                await asyncio.sleep(0.002)

        await asyncio.wait_for(asyncio.gather(*(play(game) for game in range(10))), 30)
        assert len(disk.stored()) == 40
        return len(disk.commits)

    assert await commits_with(0.05) < await commits_with(0.0)


async def test_a_failed_commit_fails_its_own_writes_and_no_later_ones() -> None:
    disk = Disk()
    batcher = _WriteBatcher(disk.commit)
    disk.fail_next = True
    first = await asyncio.gather(*(batcher.run(a_move(game, 0)) for game in range(3)),
                                 return_exceptions=True)
    assert all(isinstance(outcome, OSError) for outcome in first)
    assert disk.stored() == []
    await asyncio.gather(*(batcher.run(a_move(game, 0)) for game in range(3)))
    assert sorted(m.game_id for m in disk.stored()) == ["g0", "g1", "g2"]


async def test_a_write_refused_on_its_own_account_fails_alone() -> None:
    disk = Disk()
    batcher = _WriteBatcher(disk.commit)
    disk.slow.add(a_move(9, 0))  # holds the batch's commit while the next five queue
    disk.fenced.add(a_move(2, 0))
    holder = asyncio.ensure_future(batcher.run(a_move(9, 0)))
    await asyncio.sleep(0.01)
    outcomes = await asyncio.gather(*(batcher.run(a_move(game, 0)) for game in range(5)),
                                    return_exceptions=True)
    await holder
    assert isinstance(outcomes[2], Fenced)
    assert [outcome for game, outcome in enumerate(outcomes) if game != 2] == [None] * 4
    assert sorted(m.game_id for m in disk.stored()) == ["g0", "g1", "g3", "g4", "g9"]
    assert [a_move(game, 0) for game in range(5)] in disk.attempts  # tried together first


@pytest.mark.parametrize("gather_seconds", [0.0, 0.005])
async def test_draining_waits_for_every_queued_write(gather_seconds: float) -> None:
    disk = Disk()
    batcher = _WriteBatcher(disk.commit, gather_seconds=gather_seconds)
    writes = [asyncio.ensure_future(batcher.run(a_move(game, 0))) for game in range(8)]
    await asyncio.sleep(0)
    await batcher.drain()
    assert all(w.done() for w in writes) and len(disk.stored()) == 8
