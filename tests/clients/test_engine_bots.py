"""Engine programs as bots through the bridge, on a real server over real websockets: the
test engines in ``engines/`` (NBoard, GTP, ``columns``) play the server's AI levels and
each other; a crash, a hang or an illegal answer costs one game, and the next is played."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clients.bot import BotCore, BotRunner, CreateSpec, Finished
from clients.bridges import EngineBridge, bridge_from
from clients.turns import EngineFault, Turn
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


@pytest.mark.slow
async def test_a_crash_a_hang_or_an_illegal_answer_costs_that_game_only_and_the_next_is_played(
    server: Running, tmp_path: Path,
) -> None:
    # Three bots at once (the server is shared): an NBoard engine that crashes on its 3rd
    # move, a GTP engine that hangs on its 2nd (untimed: the bound is 1 s), a columns engine
    # answering its 2nd with an illegal column.
    cases = [("nboard_engine", "nboard", "crash", 3, "othello", "a crash", {}, "NTester"),
             ("gtp_engine", "gtp", "hang", 2, "othello", "no answer in time",
              {"move_seconds": 1.0}, "GoTester 0.3"),
             ("columns_engine", "columns", "illegal", 2, "connect4", "an illegal answer", {},
              "columns_engine")]
    bridges, runs = [], []
    for script, protocol, fault, at, game, _, options, _ in cases:
        bridge = engine(tmp_path, script, protocol, *(["--scores"] if fault == "illegal" else []),
                        fault=fault, at=at, **options)
        core = BotCore(token=await new_bot(server, f"{fault.title()}Bot"), stop_after=2,
                       create=CreateSpec.parse(f"{game}/beginner"))
        bridges.append(bridge)
        runs.append(play(server, core, bridge))
    played = await asyncio.gather(*runs)
    for (first, second), bridge, case in zip(played, bridges, cases, strict=True):
        _, _, _, _, _, kind, _, name = case
        assert lost_by_resigning(first), (case, first)
        assert second.result is not None and second.result.reason == "end", (case, second)
        assert bridge.starts == 2 and len(bridge.faults) == 1, (case, bridge.faults)
        assert bridge.faults[0].startswith(kind), (case, bridge.faults)
        assert bridge.identity is not None and bridge.identity.text() == name


@pytest.mark.slow
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


def test_an_engine_that_will_not_start_costs_each_turn_once_and_is_not_respawned_in_a_loop(
        tmp_path: Path) -> None:
    bridge = bridge_from(str(tmp_path / "no-such-engine"), "columns")
    turn = Turn("connect4", (), tuple("1234567"), 0, None, time.monotonic())
    for _ in range(2):
        with pytest.raises(EngineFault, match="did not start"):
            bridge.choose_turn(turn)
    time.sleep(0.2)
    assert bridge.starts == 2
    assert bridge.choose_turn(dataclasses.replace(turn, game="connect4", legal=("pass",))) \
        == "pass"  # a forced pass needs no engine
    bridge.close()
    with pytest.raises(EngineFault, match="closed"):
        bridge.choose_turn(turn)
