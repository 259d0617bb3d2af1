"""docs/BOTS.md's complete example, run as a newcomer would run it, against a real server."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Running, running
from server.bots.accounts import Accounts
from server.storage import SqlStore

BOTS_MD = Path(__file__).resolve().parents[3] / "docs" / "BOTS.md"


def example_code() -> str:
    """The Python block under the "A complete example" heading."""
    text = BOTS_MD.read_text(encoding="utf-8")
    section = text.split("## A complete example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the example section has no python block"
    return match.group(1)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(port=0, store=store) as srv:
        yield srv


async def test_the_example_is_one_complete_program() -> None:
    code = example_code()
    compile(code, "random_bot.py", "exec")
    assert "asyncio.run(main())" in code


async def test_the_example_bot_plays_a_whole_game_against_the_ai(server: Running,
                                                                 tmp_path: Path) -> None:
    script = tmp_path / "random_bot.py"
    script.write_text(example_code(), encoding="utf-8")
    store = server.app.store
    assert isinstance(store, SqlStore)
    made = await Accounts(store.engine).create("RandomBot")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), server.url, made.token,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert re.search(r"game over: (won|lost|draw) .*'reason': 'end'", out.decode()), out
    assert b"refused" not in err
    (record,) = await store.games_of_player(made.account.player_id, 10)
    assert record.status == "finished" and record.game == "connect4"
