"""An arena played by eight reference bots (``discus bot --arena``, real processes) on real
servers for about a minute: on one server restarted half way, and on a two-node cluster
behind HAProxy whose node pairing the arena is killed (SIGKILL) half way.

What must hold, read from the stored pairings and games and from the standings pushed to a
ninth entrant (paused, so never paired): a bot is paired again within ``PAIRED_WITHIN`` of a
game's end whenever another bot it may meet is free; never against the one it just met;
every score, sheet and streak is what the stored games give; the standings are pushed; no
game, result or standing is lost across the restart or the takeover, and pairing goes on
after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from cluster_nodes import HAPROXY, ROOT, Nodes, free_port, fresh_nodes, wait_ready
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from wsclient import Client

from server.bots.accounts import Accounts
from server.storage import SqlStore, keys
from server.storage.store import GameRecord, PairingRecord
from tests.server.storage.conftest import REDIS_URL

pytestmark = pytest.mark.slow

BOTS = 8
PAIRED_WITHIN = 2.0
"""Seconds from a game's end to its player's next pairing, whenever a partner is free."""
PLAY_SECONDS = 14.0
"""How long the bots play before the restart (or the kill), and again after it."""
WIN, DRAW = 2, 1
STREAK_AFTER = 2


# --- the processes ---------------------------------------------------------------------------


@dataclass
class Bots:
    """``discus bot --arena`` processes, each in a session of its own."""

    logs: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, url: str, tournament: str, tokens: list[str]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DISCUS_")}
        env["PYTHONPATH"] = str(ROOT)
        for k, token in enumerate(tokens):
            with open(self.logs / f"bot{k}.log", "ab") as log:
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-m", "server.cli", "bot", "--url", url, "--token", token,
                     "--engine", "random", "--arena", tournament],
                    cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-1500:]
                         for p in sorted(self.logs.glob("bot*.log")))


@dataclass
class Judge:
    """A ninth entrant, paused before the start: it is never paired and hears every push.
    It reconnects with its bot token wherever ``url`` leads."""

    url: str
    token: str
    client: Client | None = None
    pushes: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None

    async def connect(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                client = await Client.open(self.url, hello=False)
                await client.send(type="hello", version=1, token=self.token)
                client.welcome = await client.expect("welcome")
                break
            except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
                assert time.monotonic() < deadline, f"could not reach {self.url}"
                await asyncio.sleep(0.3)
        self.client = client
        self.reader = asyncio.create_task(self._read(client))

    async def _read(self, client: Client) -> None:
        with contextlib.suppress(ConnectionClosed, asyncio.CancelledError):
            async for frame in client.ws:
                message = json.loads(frame)
                if message["type"] in ("tournament", "error"):
                    self.pushes.append((time.time(), message))

    async def ask(self, **message: Any) -> dict[str, Any]:
        """Send, and the next ``tournament`` message after it (the answer, or a push)."""
        assert self.client is not None
        before = len(self.pushes)
        await self.client.send(**message)
        deadline = time.monotonic() + 10
        while len(self.pushes) == before:
            assert time.monotonic() < deadline, f"no answer to {message}"
            await asyncio.sleep(0.05)
        answer = self.pushes[before][1]
        assert answer["type"] == "tournament", answer
        return answer

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reader

    def last_standings(self, since: float = 0.0) -> dict[str, dict[str, Any]]:
        """The standings of the last push received after ``since``, by player id."""
        pushed = [m for at, m in self.pushes if at >= since and m["type"] == "tournament"]
        assert pushed, "no standings were pushed"
        return {row["player"]["id"]: row for row in pushed[-1]["standings"]}


def _timeless(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {pid: {k: v for k, v in row.items() if k != "rematch_in"} for pid, row in rows.items()}


async def open_arena(judge: Judge) -> str:
    """A person's account makes a connect4 arena starting in a few seconds (bots play in
    tournaments but do not make them); the judge enters it and pauses."""
    await judge.connect()
    maker = await Client.open(judge.url, "Maker")
    await maker.send(type="sign_up", name="ArenaMaker", password="the arena maker's password")
    await maker.expect("signed_in", timeout=30)
    await maker.send(type="create_tournament", game="connect4", name="Bots",
                     time_control="3+2", minutes=5, starts_in=4)
    tournament = str((await maker.expect("tournament"))["tournament"]["id"])
    await maker.close()
    await judge.ask(type="join_tournament", tournament=tournament)
    paused = await judge.ask(type="pause_tournament", tournament=tournament)
    assert paused["you"]["status"] == "paused"
    return tournament


async def bot_tokens(store: SqlStore) -> list[str]:
    """The judge's token, then the bots'."""
    accounts = Accounts(store.engine)
    return [(await accounts.create(f"ArenaBot{k}")).token for k in range(BOTS + 1)]


async def stored(database_url: str, tournament: str
                 ) -> tuple[list[PairingRecord], dict[str, GameRecord]]:
    store = SqlStore(database_url)
    await store.open()
    try:
        pairings = await store.tournament_pairings(tournament)
        games = {}
        for row in pairings:
            assert row.game_id is not None, row
            loaded = await store.load_game(row.game_id)
            if loaded is not None:
                games[row.game_id] = loaded[0]
        return pairings, games
    finally:
        await store.close()


# --- what must hold --------------------------------------------------------------------------


@dataclass(frozen=True)
class Played:
    opponent: str
    started_at: float
    finished_at: float | None
    points: int | None
    """None: not finished (or aborted, scoring nothing)."""


def games_of(pairings: list[PairingRecord], games: dict[str, GameRecord]
             ) -> dict[str, list[Played]]:
    """Each player's games in the order paired, scored from the stored games alone (2 a
    win, 4 a win after two wins running, 1 a draw, 0 a loss), checked against the pairing
    rows the arena wrote."""
    by_player: dict[str, list[Played]] = {}
    in_a_row: dict[str, int] = {}
    results = []
    for row in pairings:
        assert row.second is not None and row.game_id is not None, row
        if row.game_id not in games:
            # Paired just before its node died, its game never stored: cancelled.
            assert row.forfeit and row.result is None, row
            for me, them in ((row.first, row.second), (row.second, row.first)):
                by_player.setdefault(me, []).append(Played(them, row.started_at, None, None))
            continue
        game = games[row.game_id]
        assert game.players == (row.first, row.second), (row, game)
        result = game.result
        finished = game.status == "finished" and result is not None
        if result is not None and finished:
            assert row.result == (1.0 if result > 0 else 0.0 if result < 0 else 0.5), (
                row, game)
            assert row.finished_at == game.finished_at
        else:
            assert row.result is None, (row, game)
        results.append((row, game, finished))
    # Points depend on the order each player's games ended (their streaks).
    for row, game, finished in sorted(results, key=lambda r: (r[1].finished_at or 1e18)):
        second = row.second
        assert second is not None
        for seat, (me, them) in enumerate(((row.first, second), (second, row.first))):
            points = None
            if finished:
                assert game.result is not None
                won = game.result > 0 if seat == 0 else game.result < 0
                if game.result == 0:
                    points, in_a_row[me] = DRAW, 0
                elif won:
                    points = WIN * (2 if in_a_row.get(me, 0) >= STREAK_AFTER else 1)
                    in_a_row[me] = in_a_row.get(me, 0) + 1
                else:
                    points, in_a_row[me] = 0, 0
            by_player.setdefault(me, []).append(
                Played(them, row.started_at, game.finished_at if finished else None, points))
    for played in by_player.values():
        played.sort(key=lambda g: g.started_at)
    return by_player


def check_scores(played: dict[str, list[Played]], standings: dict[str, dict[str, Any]]
                 ) -> None:
    for player, games in played.items():
        ended = sorted((g for g in games if g.points is not None),
                       key=lambda g: g.finished_at or 0.0)
        row = standings[player]
        assert row["sheet"] == [g.points for g in ended], (player, row, ended)
        assert row["score"] == sum(g.points or 0 for g in ended)
        assert row["games"] == len(ended)
        in_a_row = 0
        for g in ended:
            in_a_row = in_a_row + 1 if g.points in (2, 4) else 0
        assert row["on_fire"] == (in_a_row >= STREAK_AFTER), (player, row)


def check_pairing(played: dict[str, list[Played]], until: float,
                  quiet: list[tuple[float, float]]) -> list[float]:
    """Never the same opponent twice running; and whenever two bots that may meet were both
    free (each since a game's end) for longer than ``PAIRED_WITHIN``, outside the ``quiet``
    windows (a restart, a takeover), that is a pairing missed. Returns every wait from a
    game's end to the player's next pairing."""
    waits = []
    free: dict[str, list[tuple[float, float, str]]] = {}
    for player, games in played.items():
        for before, after in zip(games, games[1:], strict=False):
            assert after.opponent != before.opponent, (player, before, after)
        for k, game in enumerate(games):
            if game.finished_at is None:
                continue
            if k + 1 < len(games) and games[k + 1].started_at < game.finished_at:
                raise AssertionError(f"{player} was paired before its game ended: {games}")
            nxt = games[k + 1].started_at if k + 1 < len(games) else until
            if k + 1 < len(games):
                waits.append(nxt - game.finished_at)
            free.setdefault(player, []).append((game.finished_at, nxt, game.opponent))
    players = sorted(free)
    for i, one in enumerate(players):
        for other in players[i + 1:]:
            for a_from, a_to, a_last in free[one]:
                for b_from, b_to, b_last in free[other]:
                    if a_last == other or b_last == one:
                        continue  # they just met: they wait for someone else
                    start, end = max(a_from, b_from), min(a_to, b_to)
                    if end - start <= PAIRED_WITHIN:
                        continue
                    if any(start < q_to and q_from < end for q_from, q_to in quiet):
                        continue
                    raise AssertionError(
                        f"{one} and {other} were both free from {start:.2f} to {end:.2f} "
                        f"({end - start:.2f} s) and not paired")
    return waits


def check_kept(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> None:
    """Every player's sheet before the restart or takeover goes on after it."""
    for player, row in before.items():
        sheet = after[player]["sheet"]
        assert sheet[:len(row["sheet"])] == row["sheet"], (player, row, after[player])


# --- one server, restarted -------------------------------------------------------------------


class Server:
    """``discus serve`` on SQLite with one AI worker, on a port it keeps across restarts."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.database_url = f"sqlite+aiosqlite:///{data_dir / 'discus.sqlite3'}"
        self.port = free_port()
        self.url = f"ws://127.0.0.1:{self.port}/ws"
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items()
               if k not in ("REDIS_URL", "DATABASE_URL") and not k.startswith("DISCUS_")}
        env.update(DISCUS_SECRET="the arena test's secret", DISCUS_DATA_DIR=str(self.data_dir),
                   PYTHONPATH=str(ROOT))
        with open(self.data_dir / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--port", str(self.port),
                 "--database-url", self.database_url, "--workers", "1",
                 "--hellos-per-minute", "1000", "--connections-per-address", "200"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        await wait_ready(self.port, "the server", self.proc, self.data_dir / "server.log")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0, self.log()

    def end(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def log(self) -> str:
        return (self.data_dir / "server.log").read_text(errors="replace")[-3000:]


async def test_eight_bots_play_an_arena_that_outlives_a_server_restart(tmp_path: Path) -> None:
    server = Server(tmp_path)
    bots = Bots(tmp_path)
    store = SqlStore(server.database_url)
    await store.open()
    tokens = await bot_tokens(store)
    await store.close()
    await server.start()
    judge = Judge(server.url, tokens[0])
    try:
        tournament = await open_arena(judge)
        bots.start(server.url, tournament, tokens[1:])
        await asyncio.sleep(PLAY_SECONDS)
        before = judge.last_standings()
        assert sum(row["games"] for row in before.values()) >= BOTS, bots.log()
        stopped_at = time.time()
        server.stop()
        await judge.close()
        await server.start()
        back_at = time.time()
        await judge.connect()
        await asyncio.sleep(PLAY_SECONDS)
        until = time.time()
        bots.stop()
        await asyncio.sleep(1.5)  # the last pushes (``standings_push_seconds``)
        after = judge.last_standings(since=back_at)
        state = await judge.ask(type="get_tournament", tournament=tournament)
        pairings, games = await stored(server.database_url, tournament)
    finally:
        bots.stop()
        await judge.close()
        server.end()
    asked = {row["player"]["id"]: row for row in state["standings"]}
    # ``rematch_in`` counts down from each message's own moment: it differs by the time between.
    assert _timeless(asked) == _timeless(after), "the last push is not the tournament's state"
    check_kept(before, after)
    played = games_of(pairings, games)
    assert len(played) == BOTS and set(played) < set(after)
    check_scores(played, after)
    # The bots reconnect with backoff and their games go on from the stored moves.
    waits = check_pairing(played, until, quiet=[(stopped_at, back_at + 10.0)])
    after_restart = [p for p in pairings if p.started_at > back_at]
    assert len(after_restart) >= BOTS // 2, "pairing did not go on after the restart"
    print(f"{len(pairings)} games; waits from a game's end to the next pairing: "
          f"{sum(w <= PAIRED_WITHIN for w in waits)} of {len(waits)} within "
          f"{PAIRED_WITHIN} s, median {sorted(waits)[len(waits) // 2]:.3f} s")


# --- a cluster, its arena's node killed ------------------------------------------------------


@pytest.fixture
async def nodes(tmp_path: Path) -> AsyncIterator[Nodes]:
    async with fresh_nodes(tmp_path) as made:
        yield made


@pytest.mark.skipif(not Path(HAPROXY).exists(), reason="haproxy is not installed")
async def test_a_cluster_arena_goes_on_when_the_node_pairing_it_is_killed(
        nodes: Nodes, tmp_path: Path) -> None:
    store = SqlStore(nodes.database_url)
    await store.open()
    tokens = await bot_tokens(store)
    await store.close()
    for name in ("node1", "node2"):
        await nodes.serve(name, "--workers", "0", "--trusted-proxy", "127.0.0.1",
                          "--hellos-per-minute", "1000", "--connections-per-address", "200")
    balancer = await nodes.balance("node1", "node2")
    bots = Bots(tmp_path)
    judge = Judge(nodes.url("node1"), tokens[0])  # so node1 pairs the arena
    redis = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        tournament = await open_arena(judge)
        lease = keys.room_owner(nodes.prefix, f"tournament:{tournament}")
        holder = (await redis.get(lease) or "").split()
        assert holder, "no node holds the arena's lease"
        bots.start(balancer, tournament, tokens[1:])
        await asyncio.sleep(PLAY_SECONDS)
        before = judge.last_standings()
        assert sum(row["games"] for row in before.values()) >= BOTS, bots.log()
        # HAProxy spread the bots over both nodes: those on node2 joined through node1's
        # inbox, play in node1's rooms through it, and hear the standings from it.
        elsewhere = [player for player in before if holder[0] not in await redis.smembers(
            keys.player_nodes(nodes.prefix, player))]
        assert elsewhere, "every bot is on the node pairing the arena"
        killed_at = time.time()
        os.killpg(nodes.procs["node1"].pid, signal.SIGKILL)
        await judge.close()
        judge.url = balancer
        await judge.connect()  # to node2, the one left
        deadline = time.monotonic() + 15
        while True:
            taken = (await redis.get(lease) or "").split()
            if taken and taken[0] != holder[0]:
                break
            assert time.monotonic() < deadline, "nobody took the arena over"
            await asyncio.sleep(0.2)
        taken_at = time.time()
        assert int(taken[1]) > int(holder[1])
        await asyncio.sleep(PLAY_SECONDS)
        until = time.time()
        bots.stop()
        await asyncio.sleep(1.5)
        after = judge.last_standings(since=taken_at)
        pairings, games = await stored(nodes.database_url, tournament)
    finally:
        bots.stop()
        await judge.close()
        await redis.aclose()
    print(f"arena taken over {taken_at - killed_at:.1f} s after the kill")
    check_kept(before, after)
    played = games_of(pairings, games)
    check_scores(played, after)
    waits = check_pairing(played, until, quiet=[(killed_at, taken_at + 10.0)])
    after_takeover = [p for p in pairings if p.started_at > taken_at]
    assert len(after_takeover) >= BOTS // 2, "pairing did not go on after the takeover"
    print(f"{len(pairings)} games; waits from a game's end to the next pairing: "
          f"{sum(w <= PAIRED_WITHIN for w in waits)} of {len(waits)} within "
          f"{PAIRED_WITHIN} s, median {sorted(waits)[len(waits) // 2]:.3f} s")
