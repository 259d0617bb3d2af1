"""``discus bot --engine CMD --protocol P`` from the command line: an engine program plays a
game on a real server and the bot exits after ``--stop-after``; an engine that cannot play
the game asked for is refused before anything starts."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clients.bot import BotCore
from server import protocol as p
from server.app import Running, running
from server.bots.accounts import Accounts
from server.cli import main
from server.storage import SqlStore

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "tests" / "clients" / "engines" / "columns_engine.py"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    async with running(port=0, store=SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'd.sqlite3'}")
                       ) as srv:
        yield srv


async def test_discus_bot_plays_a_game_with_an_engine_program_in_its_directory(
        server: Running, tmp_path: Path) -> None:
    store = server.app.store
    assert isinstance(store, SqlStore)
    token = (await Accounts(store.engine).create("Solver")).token
    workdir = tmp_path / "engine"
    workdir.mkdir()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "bot", "--url", server.url, "--token", token,
        "--engine", f"{sys.executable} {ENGINE} --scores", "--protocol", "columns",
        "--engine-dir", str(workdir), "--create", "connect4/beginner", "--stop-after", "1",
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "ENGINE_FAULT": "illegal",
                       "ENGINE_FAULT_AT": "99"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert out.startswith(b"connect4 room ") and b"(end)" in out
    assert b"the bridge keeps 300 ms of every clock" in err
    assert not (workdir / "faulted").exists()  # it ran there, and never reached request 99


def test_an_engine_for_another_game_is_refused_before_it_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bot", "--engine", "no-such-program", "--protocol", "nboard",
                 "--create", "connect4/beginner"])
    assert code != 0
    assert "plays othello, not connect4" in capsys.readouterr().err


def test_a_bot_declines_challenges_to_games_its_engine_does_not_play() -> None:
    core = BotCore(plays=frozenset({"othello"}))
    offer = p.ChallengeOffer(challenge="c1", challenger=p.PlayerView(id="x", name="X"),
                             game="connect4", seat=0, time_control=None)
    (answer,) = core.receive(offer)
    assert isinstance(answer, p.DeclineChallenge) and "othello" in (answer.reason or "")
