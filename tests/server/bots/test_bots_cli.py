"""``discus bots`` and ``discus bot`` as an admin and a bot author use them."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Running, running
from server.cli import main
from server.storage import SqlStore

ROOT = Path(__file__).resolve().parents[3]


def test_bots_create_prints_the_token_once_and_list_and_revoke_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'discus.sqlite3'}"
    assert main(["bots", "create", "Randy", "--database-url", url]) == 0
    created = capsys.readouterr().out
    token = created.strip().splitlines()[-1]
    assert token.startswith("discus_bot_") and "shown only this once" in created
    assert main(["bots", "list", "--database-url", url]) == 0
    listed = capsys.readouterr().out
    assert "Randy" in listed and token not in listed
    assert main(["bots", "revoke", "Randy", "--database-url", url]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["bots", "revoke", "Randy", "--database-url", url]) == 2
    assert "no live bot" in capsys.readouterr().err


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'discus.sqlite3'}"


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[Running]:
    async with running(port=0, store=SqlStore(database_url)) as srv:
        yield srv


async def test_discus_bot_plays_games_until_it_is_stopped(
    server: Running, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # ``discus bots create`` writes to the database the server reads tokens from.
    created = asyncio.to_thread(main, ["bots", "create", "Randy", "--database-url", database_url])
    assert await created == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server.cli", "bot", "--url", server.url, "--token",
        token, "--engine", "random", "--create", "connect4/beginner",
        "--games", "2",
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line.startswith(b"connect4 room ") and b"(end)" in line
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
