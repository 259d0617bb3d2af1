"""``bench.floor_duties``: a stored move is in the file when ``stored`` returns, moves that
arrive during a commit share the next one (more than one INSERT holds included), and the
engine process answers each job it is asked, in any order of asking."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from bench.floor_duties import CHUNK, Duties


async def test_a_stored_move_is_committed_and_later_ones_share_a_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "duties.sqlite3")
    duties = Duties(path)
    commits: list[int] = []
    commit = duties._commit
    duties._commit = lambda rows: (commits.append(len(rows)), commit(rows))[1]  # type: ignore[method-assign]
    try:
        await duties.stored(("a", 0, "4"))
        assert sqlite3.connect(path).execute("SELECT room, ply, move FROM moves").fetchall() \
            == [("a", 0, "4")]
        await asyncio.gather(*(duties.stored(("b", ply, "3")) for ply in range(20)))
        rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM moves").fetchone()[0]
        assert rows == 21
        assert commits[0] == 1 and sum(commits) == 21
        assert len(commits) <= 3, commits  # one alone, then at most two batches for twenty
        # More rows than one INSERT takes: the batch goes in several statements, one commit.
        await asyncio.gather(*(duties.stored(("c", ply, "2")) for ply in range(CHUNK + 5)))
        rows = sqlite3.connect(path).execute("SELECT COUNT(*) FROM moves").fetchone()[0]
        assert rows == 21 + CHUNK + 5
    finally:
        duties.close()


async def test_the_engine_process_answers_every_job_with_its_own_id(tmp_path: Path) -> None:
    duties = Duties(str(tmp_path / "duties.sqlite3"))
    try:
        answers = await asyncio.wait_for(asyncio.gather(
            *(duties.asked({"moves": [n]}) for n in range(50))), timeout=30)
        assert [a["id"] for a in answers] == list(range(1, 51))
        assert {a["move"] for a in answers} == {"4"}
    finally:
        duties.close()
