"""``discus book proven``: the positions the durable position cache holds proven, by stones."""

from __future__ import annotations

import asyncio

import pytest

import games
from server.cli import main
from server.storage import CachedResult, SqlStore, open_cache
from tests.storage.conftest import sqlite_url  # noqa: F401 - fixture


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
    assert out[1:] == ["   4 stones: 3", "   5 stones: 1"]


def test_an_unknown_game_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["book", "proven", "chess"])
