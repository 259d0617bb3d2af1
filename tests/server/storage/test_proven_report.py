"""``discus book proven``: the positions the durable position cache holds proven, by stones."""

from __future__ import annotations

import asyncio
import time

import pytest

import games
from server.cli import main
from server.storage import CachedResult, SqlStore, open_cache
from server.storage.proven import DAY, proven_report
from server.storage.store import GameRecord, MoveRecord
from tests.server.storage.conftest import sqlite_url  # noqa: F401 - fixture


async def _fill(url: str) -> None:
    game = games.load("connect4")
    store = SqlStore(url)
    await store.open()
    cache = await open_cache(None, store)
    try:
        proven = [game.parse_moves(m) for m in ("4453", "4454", "1234", "44536")]
        unproven = game.parse_moves("445361")
        await cache.save([(s, CachedResult(42 - s.ply, 1, 3, 0, True)) for s in proven]
                         + [(unproven, CachedResult(20, 5, 3, 0, False))])
        await cache.flush()
    finally:
        await cache.close()
        await store.close()


def test_the_report_counts_proven_positions_by_stones_and_leaves_the_rest_out(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    asyncio.run(_fill(sqlite_url))
    assert main(["book", "proven", "connect4", "--database-url", sqlite_url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("connect4: 4 positions proven") and "4 saved in the last day" in out[0]
    assert out[2:] == ["   4 stones: 3", "   5 stones: 1"]  # no stored game: no coverage


def test_an_unknown_game_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["book", "proven", "chess"])


async def _play(url: str, game_id: str, moves: str) -> None:
    """Store a game of ``moves`` (columns 1-7) as the server does."""
    game = games.load("connect4")
    store = SqlStore(url)
    await store.open()
    try:
        await store.save_game(GameRecord(
            id=game_id, game="connect4", players=(None, None), ai_level=None, ai_seat=None,
            status="finished", start_position=game.format_position(game.initial()),
            created_at=time.time()))
        for ply, move in enumerate(moves):
            await store.append_move(MoveRecord(game_id, ply, move, ply % 2, 1.0, time.time()))
    finally:
        await store.close()


def test_the_report_shows_growth_by_day_and_how_much_of_the_positions_played_is_proven(
    sqlite_url: str  # noqa: F811
) -> None:
    asyncio.run(_fill(sqlite_url))
    # Its first four positions (to 445) are the shipped book's, 4453 and 44536 are proven
    # above; 44536 1 (only bounded) and 4453612 are not.
    asyncio.run(_play(sqlite_url, "g1", "4453612"))
    now = time.time()
    today = asyncio.run(proven_report(sqlite_url, "connect4", now))
    assert today.by_day == (4, 0, 0, 0, 0, 0, 0)
    later = asyncio.run(proven_report(sqlite_url, "connect4", now + 2.5 * DAY))
    assert later.by_day == (0, 0, 4, 0, 0, 0, 0) and later.last_day == 0
    assert today.reached == 8 and today.reached_proven == 6
    assert today.top == 8 and today.top_proven == 6
    lines = today.lines()
    assert lines[1] == "  saved a day, the last 24 hours first: 4 0 0 0 0 0 0"
    assert "of the 8 positions the newest 1000 stored games reach, 6 are proven" in lines[2]
