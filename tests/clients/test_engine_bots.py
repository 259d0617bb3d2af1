"""Engine programs as bots through the bridge, on a real server over real websockets: the
test engines in ``engines/`` (NBoard, GTP, ``columns``) play the server's AI levels and
each other; a crash, a hang or an illegal answer costs one game, and the next is played."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clients.bot import BotCore, BotRunner, CreateSpec, Finished
from clients.bridges import EngineBridge, bridge_from
from server.app import Running, Settings, running
from server.bots.accounts import Accounts
from server.storage import SqlStore

ENGINES = Path(__file__).resolve().parent / "engines"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Running]:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}")
    async with running(port=0, store=store, settings=Settings(grace_seconds=5.0)) as srv:
        yield srv


async def new_bot(server: Running, name: str) -> str:
    store = server.app.store
    assert isinstance(store, SqlStore)
    return (await Accounts(store.engine).create(name)).token


def engine(tmp_path: Path, script: str, protocol: str, *args: str, fault: str | None = None,
           at: int = 1, **options: float) -> EngineBridge:
    """A bridge to a test engine run in a working directory of its own."""
    workdir = tmp_path / f"{script}-{fault or 'sound'}"
    workdir.mkdir()
    env = dict(os.environ)
    if fault is not None:
        env.update(ENGINE_FAULT=fault, ENGINE_FAULT_AT=str(at))
    command = " ".join([sys.executable, str(ENGINES / f"{script}.py"), *args])
    bridge = bridge_from(command, protocol, cwd=workdir, env=env, **options)  # type: ignore[arg-type]
    bridge.start()  # as ``discus bot`` does, before it connects
    return bridge


async def play(server: Running, core: BotCore, bridge: EngineBridge,
               timeout: float = 60) -> list[Finished]:
    try:
        return await asyncio.wait_for(BotRunner(server.url, core, bridge).run(), timeout)
    finally:
        bridge.close()


def lost_by_resigning(game: Finished) -> bool:
    return game.result is not None and game.result.reason == "resigned" and \
        game.result.winner == 1 - game.seat


async def test_an_nboard_engine_that_crashes_loses_that_game_and_plays_the_next(
    server: Running, tmp_path: Path,
) -> None:
    bridge = engine(tmp_path, "nboard_engine", "nboard", fault="crash", at=3)
    core = BotCore(token=await new_bot(server, "Crashy"), stop_after=2,
                   create=CreateSpec.parse("othello/beginner"))
    first, second = await play(server, core, bridge)
    assert lost_by_resigning(first)
    assert second.result is not None and second.result.reason == "end"
    assert bridge.starts == 2 and len(bridge.faults) == 1 and "crash" in bridge.faults[0]
    assert bridge.identity is not None and bridge.identity.text() == "NTester"


async def test_a_gtp_engine_that_hangs_loses_that_game_at_the_bound_and_plays_the_next(
    server: Running, tmp_path: Path,
) -> None:
    bridge = engine(tmp_path, "gtp_engine", "gtp", fault="hang", at=2, move_seconds=1.0)
    core = BotCore(token=await new_bot(server, "Hangy"), stop_after=2,
                   create=CreateSpec.parse("othello/beginner"))
    first, second = await play(server, core, bridge)
    assert lost_by_resigning(first)
    assert second.result is not None and second.result.reason == "end"
    assert bridge.starts == 2 and "no answer in time" in bridge.faults[0]
    assert bridge.identity is not None and bridge.identity.text() == "GoTester 0.3"


async def test_a_columns_engine_with_an_illegal_answer_loses_that_game_and_plays_the_next(
    server: Running, tmp_path: Path,
) -> None:
    bridge = engine(tmp_path, "columns_engine", "columns", "--scores", fault="illegal", at=2)
    core = BotCore(token=await new_bot(server, "Columnist"), stop_after=2,
                   create=CreateSpec.parse("connect4/beginner"))
    first, second = await play(server, core, bridge)
    assert lost_by_resigning(first)
    assert second.result is not None and second.result.reason == "end"
    assert bridge.starts == 2 and "illegal" in bridge.faults[0]


async def test_an_nboard_and_a_gtp_engine_play_each_other_on_a_clock(
    server: Running, tmp_path: Path,
) -> None:
    gtp = engine(tmp_path, "gtp_engine", "gtp")
    nboard = engine(tmp_path, "nboard_engine", "nboard")
    said = gtp.process
    accepter = BotCore(token=await new_bot(server, "GtpBot"), stop_after=1)
    accepting = asyncio.create_task(play(server, accepter, gtp))
    while not accepter.synced:
        await asyncio.sleep(0.01)
    challenge = CreateSpec.challenge("GtpBot/othello")
    challenger = BotCore(token=await new_bot(server, "NbBot"), stop_after=1,
                         create=CreateSpec(challenge.game, "challenge", challenge.level, "1+0"))
    (mine,) = await play(server, challenger, nboard)
    (theirs,) = await asyncio.wait_for(accepting, 30)
    assert mine.room == theirs.room and mine.result == theirs.result
    assert mine.result is not None and mine.result.reason == "end"
    assert not gtp.faults and not nboard.faults
    assert said is not None and any(line.startswith("> time_left b ") or
                                    line.startswith("> time_left w ") for line in said.transcript)
