"""A move whose ``append_move`` returned survives the process being killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from server.storage import SqlStore

HELPER = Path(__file__).with_name("append_moves.py")
ROOT = Path(__file__).resolve().parents[3]
ACKNOWLEDGED = 40


@pytest.fixture(params=["sqlite_url", "pg_url"])
def url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(request.param))


async def test_every_acknowledged_move_survives_a_killed_process(url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(HELPER), url, "g1"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    acknowledged = -1
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            acknowledged = int(line)
            if acknowledged + 1 >= ACKNOWLEDGED:
                break
        # Killed while appending: no chance to flush, close or clean up anything.
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert acknowledged + 1 >= ACKNOWLEDGED, "the helper stopped before acknowledging moves"

    store = SqlStore(url)
    await store.open()
    try:
        loaded = await store.load_game("g1")
    finally:
        await store.close()
    assert loaded is not None
    plies = [m.ply for m in loaded[1]]
    assert plies == list(range(len(plies))), "moves must be stored without gaps"
    assert len(plies) >= acknowledged + 1
