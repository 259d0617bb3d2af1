"""The reference bot against a real server over real websockets: it plays the AI, plays another
bot, and finishes its game after the server drops its connection."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Sequence

import pytest

from clients.bot import AiEngine, Backoff, BotCore, BotRunner, CreateSpec, RandomEngine
from server.app import Running, Settings, running
from server.storage.memory import MemoryStore


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with running(port=0, store=MemoryStore(), settings=Settings(grace_seconds=5.0)) as srv:
        yield srv


class SlowRandom(RandomEngine):
    """A random player that takes its time, so a test can act in the middle of a game."""

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        time.sleep(0.03)
        return super().choose(game, moves, legal, seed)


async def stored_games(server: Running) -> list[tuple[str, str | None, int]]:
    """(status, reason, number of moves) of every game the server stored."""
    store = server.app.store
    assert isinstance(store, MemoryStore)
    found: list[tuple[str, str | None, int]] = []
    for game_id in list(store._games):
        loaded = await store.load_game(game_id)
        assert loaded is not None
        found.append((loaded[0].status, loaded[0].reason, len(loaded[1])))
    return found


async def test_the_bot_plays_a_whole_game_against_the_weakest_ai(server: Running) -> None:
    core = BotCore(name="RandBot", create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    finished = await asyncio.wait_for(BotRunner(server.url, core, RandomEngine()).run(), 60)
    (game,) = finished
    assert game.result is not None and game.result.reason == "end"
    assert game.outcome in ("won", "lost", "draw")
    ((status, reason, plies),) = await stored_games(server)
    assert status == "finished" and reason == "end"
    assert plies >= 7  # a Connect Four game cannot end sooner


async def test_the_bot_plays_a_timed_othello_game_against_the_ai_to_its_end(
    server: Running,
) -> None:
    spec = CreateSpec("othello", "ai", "beginner", time_control="5+3")
    core = BotCore(name="ClockBot", create=spec, stop_after=1)
    (game,) = await asyncio.wait_for(BotRunner(server.url, core, RandomEngine()).run(), 120)
    assert game.result is not None and game.result.reason == "end"
    store = server.app.store
    assert isinstance(store, MemoryStore)
    ((record, moves),) = [await store.load_game(g) for g in list(store._games)]  # type: ignore[misc]
    assert record.time_control == "5+3"
    bot_seat = 1 - record.ai_seat
    left = [(m.clock0_ms, m.clock1_ms)[bot_seat] for m in moves]
    assert all(ms is not None and 0 < ms <= 300_000 + 3_000 * len(moves) for ms in left)


async def test_the_bot_with_an_ai_engine_plays_the_ai_to_the_end(server: Running) -> None:
    core = BotCore(name="AiBot", create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    runner = BotRunner(server.url, core, AiEngine("beginner"))
    (game,) = await asyncio.wait_for(runner.run(), 120)
    assert game.result is not None and game.result.reason == "end"
    assert game.result.score is not None  # played out to the end of the rules


async def test_two_bots_play_a_whole_game_against_each_other(server: Running) -> None:
    host = BotCore(name="Host", create=CreateSpec.parse("connect4/open"), stop_after=1)
    guest = BotCore(name="Guest", stop_after=1)
    runs = [BotRunner(server.url, host, RandomEngine()).run(),
            BotRunner(server.url, guest, RandomEngine(), poll_seconds=0.1).run()]
    (mine,), (theirs,) = await asyncio.wait_for(asyncio.gather(*runs), 60)
    assert mine.room == theirs.room and mine.seat != theirs.seat
    assert mine.result == theirs.result and mine.result is not None
    assert mine.result.reason == "end"
    assert {mine.outcome, theirs.outcome} in ({"won", "lost"}, {"draw"})


@pytest.mark.parametrize("clock", [None, "5+3"])
async def test_a_bot_challenges_another_by_name_and_they_play_it_out(
    server: Running, clock: str | None,
) -> None:
    target = BotCore(name="Target", stop_after=1)  # accepts challenges while it wants a game
    spec = dataclasses.replace(CreateSpec.challenge("Target/connect4"), time_control=clock)
    caller = BotCore(name="Caller", create=spec, stop_after=1)
    runs = [BotRunner(server.url, target, RandomEngine(), poll_seconds=0.1).run(),
            BotRunner(server.url, caller, RandomEngine(), poll_seconds=0.1).run()]
    (theirs,), (mine,) = await asyncio.wait_for(asyncio.gather(*runs), 60)
    assert mine.room == theirs.room and mine.seat != theirs.seat
    assert mine.result == theirs.result and mine.result is not None
    assert mine.result.reason == "end"
    loaded = await server.app.store.load_game(f"{mine.room}-1")
    assert loaded is not None and loaded[0].time_control == clock


async def test_several_games_are_played_at_once(server: Running) -> None:
    core = BotCore(name="Multi", games=3, create=CreateSpec.parse("connect4/beginner"),
                   stop_after=3)
    runner = BotRunner(server.url, core, SlowRandom())
    task = asyncio.create_task(runner.run())
    most = 0
    while not task.done():
        most = max(most, len(core.rooms))
        await asyncio.sleep(0.005)
    finished = task.result()
    assert len(finished) == 3 and len({g.room for g in finished}) == 3
    assert most == 3
    assert all(g.result is not None and g.result.reason == "end" for g in finished)


async def test_a_bot_dropped_mid_game_reconnects_and_finishes_the_game(server: Running) -> None:
    core = BotCore(name="Phoenix", create=CreateSpec.parse("connect4/beginner"), stop_after=1)
    runner = BotRunner(server.url, core, SlowRandom(), backoff=Backoff(first=0.05))
    task = asyncio.create_task(runner.run())
    # Wait until the game is under way, then cut the bot off from the server's side.
    while not core.rooms or next(iter(core.rooms.values())).ply < 4:
        assert not task.done()
        await asyncio.sleep(0.01)
    room = next(iter(core.rooms))
    assert core.player_id is not None
    for client in list(server.app.outbox.connections(core.player_id)):
        transport = client.ws.transport
        assert transport is not None
        transport.abort()
    (game,) = await asyncio.wait_for(task, 60)
    assert core.connections >= 2
    assert game.room == room and game.result is not None
    assert game.result.reason == "end"  # played out, not lost by abandonment
    ((status, reason, _),) = await stored_games(server)
    assert status == "finished" and reason == "end"


class FirstMoveSlow(RandomEngine):
    """Thinks for a second over its first move: longer than the server waits for a pong."""

    def __init__(self) -> None:
        self.calls = 0

    def choose(self, game: str, moves: Sequence[str], legal: Sequence[str], seed: int) -> str:
        self.calls += 1
        if self.calls == 1:
            time.sleep(1.0)
        return super().choose(game, moves, legal, seed)


async def test_the_bot_answers_pings_while_its_engine_thinks() -> None:
    async with running(port=0, store=MemoryStore(), ping_interval=0.1,
                       ping_timeout=0.3) as server:
        core = BotCore(name="Patient", create=CreateSpec.parse("connect4/beginner"),
                       stop_after=1)
        runner = BotRunner(server.url, core, FirstMoveSlow(), backoff=Backoff(first=0.05))
        # The bot gets its own thread and event loop, as in its own process: were its engine
        # to block the bot's loop, the server's loop would still time out the missing pongs.
        run = asyncio.to_thread(asyncio.run, runner.run())  # type: ignore[arg-type]
        (game,) = await asyncio.wait_for(run, 60)
    assert core.connections == 1  # never dropped for missing a pong
    assert game.result is not None and game.result.reason == "end"
