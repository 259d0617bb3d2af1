"""A real cluster on loopback: two ``discus serve`` nodes and two ``discus worker`` processes
on one PostgreSQL database and one Redis, behind HAProxy (Debian's, with the repository's
``deploy/haproxy.cfg``). Nodes are killed with SIGKILL and frozen with SIGSTOP mid-game.

What must hold: every game goes on to its end; every move a client saw acknowledged is stored
once, in order; a frozen node that lost its rooms writes nothing more to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cluster_nodes import free_port, wait_ready
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from wsclient import Client

from server.storage import SqlStore
from server.storage.store import MoveRecord
from tests.server.storage.conftest import REDIS_URL, create_database, drop_database, drop_keys

ROOT = Path(__file__).resolve().parents[3]
SECRET = "the cluster test's fixed secret"
LEASE = 2.0
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
PATIENCE = 15.0
"""Seconds a client waits for a message: each crosses processes, Redis and a database commit,
and on a busy machine the test client's default (``wsclient.PATIENCE``) was once missed in the
middle of a game."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(HAPROXY).exists(), reason="haproxy is not installed"),
]


@dataclass
class Cluster:
    """The processes of one test, and where to reach them."""

    database_url: str
    prefix: str
    logs: Path
    nodes: dict[str, tuple[subprocess.Popen[bytes], int]]
    workers: list[subprocess.Popen[bytes]]
    haproxy: subprocess.Popen[bytes] | None = None
    lb_port: int = 0

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DISCUS_")}
        env.update(DATABASE_URL=self.database_url, REDIS_URL=REDIS_URL,
                   DISCUS_REDIS_PREFIX=self.prefix, DISCUS_SECRET=SECRET,
                   DISCUS_DATA_DIR=str(self.logs), PYTHONPATH=str(ROOT))
        return env

    def spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{name}.log", "ab") as log:
            return subprocess.Popen([sys.executable, "-m", "server.cli", *args], cwd=ROOT,
                                    env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def url(self, node: str | None = None) -> str:
        port = self.lb_port if node is None else self.nodes[node][1]
        return f"ws://127.0.0.1:{port}/ws"

    async def client(self, name: str, node: str | None = None) -> Client:
        """A player connected to ``node`` (None: through HAProxy), waiting ``PATIENCE``."""
        return await Client.open(self.url(node), name, patience=PATIENCE)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def report(self) -> None:
        """Print what every process logged, but the health checks' lines: pytest shows it
        with a failed test, where a timeout alone says little of what the nodes did."""
        noise = ("HTTP response sent", "connection open", "connection closed")
        for path in sorted(self.logs.glob("*.log")):
            lines = [line for line in path.read_text(errors="replace").splitlines()
                     if not any(n in line for n in noise)]
            print(f"--- {path.name}", *lines[-60:], sep="\n")

    def stop_all(self) -> None:
        procs = [p for p, _ in self.nodes.values()] + self.workers
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGCONT)
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.kill()
            self.haproxy.wait(timeout=10)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    url, name = await create_database()
    prefix = f"discus-test-{uuid.uuid4().hex[:12]}"
    made = Cluster(url, prefix, tmp_path, {}, [])
    try:
        migrate = made.spawn("migrate", "migrate")
        assert migrate.wait(timeout=120) == 0, made.log("migrate")
        for i in (1, 2):
            made.workers.append(made.spawn(f"worker{i}", "worker", "--processes", "1"))
        for node in ("node1", "node2"):
            port = free_port()
            made.nodes[node] = (made.spawn(node, "serve", "--port", str(port), "--workers",
                                           "0", "--lease", str(LEASE),
                                           "--trusted-proxy", "127.0.0.1"), port)
        for node, (proc, port) in made.nodes.items():
            await wait_ready(port, node, proc, made.logs / f"{node}.log")
        made.lb_port = free_port()
        env = dict(os.environ, DISCUS_LB_BIND=f"127.0.0.1:{made.lb_port}",
                   DISCUS_NODE1=f"127.0.0.1:{made.nodes['node1'][1]}",
                   DISCUS_NODE2=f"127.0.0.1:{made.nodes['node2'][1]}")
        with open(tmp_path / "haproxy.log", "wb") as log:
            made.haproxy = subprocess.Popen(
                [HAPROXY, "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg")], env=env,
                stdout=log, stderr=subprocess.STDOUT)
        await wait_ready(made.lb_port, "haproxy", made.haproxy, tmp_path / "haproxy.log")
        yield made
    finally:
        made.stop_all()
        made.report()
        await drop_database(name)
        await drop_keys(prefix)


async def _stored(database_url: str, game_id: str) -> list[MoveRecord]:
    store = SqlStore(database_url)
    await store.open()
    try:
        loaded = await store.load_game(game_id)
    finally:
        await store.close()
    assert loaded is not None
    return loaded[1]


async def _reconnect(url: str, name: str, resume: str) -> Client:
    """Open a connection through the load balancer, retrying while it finds no live node."""
    deadline = time.monotonic() + 20
    while True:
        try:
            client = await Client.open(url, name, resume=resume)  # a dead node: try again
        except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
            assert time.monotonic() < deadline, "could not reconnect in 20 s"
            await asyncio.sleep(0.2)
        else:
            client.patience = PATIENCE
            return client


def _moves(sequence: str) -> Iterator[tuple[int, str]]:
    return iter(enumerate(sequence))


async def test_players_on_two_nodes_and_a_spectator_through_haproxy_play_a_game_to_its_end(
    cluster: Cluster,
) -> None:
    ann = await cluster.client("Ann", "node1")
    bob = await cluster.client("Bob", "node2")
    eve = await cluster.client("Eve")
    await ann.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await eve.send(type="spectate", room=room)
    await eve.expect("room_state")
    sequence = "4455667"
    for ply, move in _moves(sequence):
        mover = (ann, bob)[ply % 2]
        await mover.send(type="move", room=room, ply=ply, move=move)
        for client in (ann, bob, eve):
            made = await client.expect("move_made", ply=ply)
            assert made["move"] == move
    for client in (ann, bob, eve):
        assert (await client.expect("game_over"))["result"]["winner"] == 0
    stored = await _stored(cluster.database_url, f"{room}-1")
    assert [(m.ply, m.move) for m in stored] == list(_moves(sequence))


async def test_killing_the_node_that_runs_two_games_loses_no_move_and_both_go_on(
    cluster: Cluster,
) -> None:
    """Bob (node1) plays Ann (node2) in a room node1 runs; Dan (node1) plays the AI there
    too. Node1 is killed while the AI thinks; Ann stays connected, Bob and Dan come back
    through HAProxy, and both games are played on to their end."""
    ann = await cluster.client("Ann", "node2")
    bob = await cluster.client("Bob", "node1")
    dan = await cluster.client("Dan", "node1")
    await bob.send(type="create_room", game="connect4", opponent={"kind": "friend"}, seat=0)
    room = (await bob.expect("room_state"))["room"]["id"]
    await ann.send(type="join_room", room=room)
    await ann.expect("room_state")
    await dan.send(type="create_room", game="connect4", seat=0,
                   opponent={"kind": "ai", "level": "hard"})
    ai_room = (await dan.expect("room_state"))["room"]["id"]
    sequence = "4455667"
    acknowledged = []
    for ply, move in _moves(sequence[:3]):
        mover = (bob, ann)[ply % 2]
        await mover.send(type="move", room=room, ply=ply, move=move)
        await ann.expect("move_made", ply=ply)
        acknowledged.append((ply, move))
    await dan.send(type="move", room=ai_room, ply=0, move="4")
    await dan.expect("move_made", ply=0)
    await dan.expect("ai_thinking", timeout=30)  # the job crosses Redis to a worker first
    killed_at = time.monotonic()
    os.killpg(cluster.nodes["node1"][0].pid, signal.SIGKILL)
    # Ann, on the survivor, moves as soon as she can: the room pauses until node2 takes over.
    ply, move = 3, sequence[3]
    await ann.send(type="move", room=room, ply=ply, move=move)
    while True:
        answer = await ann.recv(timeout=15)
        if answer["type"] == "move_made" and answer["ply"] == ply:
            break
        if answer["type"] == "error":  # the dead owner did not answer: send it again
            await asyncio.sleep(0.2)
            await ann.send(type="move", room=room, ply=ply, move=move)
    resumed = time.monotonic() - killed_at
    print(f"kill to Ann's next move stored: {resumed:.2f} s")
    assert resumed < LEASE + 5
    acknowledged.append((ply, move))
    bob = await _reconnect(cluster.url(), "Bob", bob.welcome["resume"])
    dan = await _reconnect(cluster.url(), "Dan", dan.welcome["resume"])
    for ply, move in _moves(sequence):
        if ply < 4:
            continue
        mover = (bob, ann)[ply % 2]
        await mover.send(type="move", room=room, ply=ply, move=move)
        await ann.expect("move_made", ply=ply)
        acknowledged.append((ply, move))
    assert (await bob.expect("game_over"))["result"]["winner"] == 0
    stored = await _stored(cluster.database_url, f"{room}-1")
    assert [(m.ply, m.move) for m in stored] == acknowledged
    # Dan's game: the AI's move comes from the survivor, then Dan plays on to the end.
    played, ai_moved_at = await _play_out(dan, ai_room)
    print(f"kill to the AI's move in the other game: {ai_moved_at - killed_at:.2f} s")
    assert ai_moved_at - killed_at < LEASE + 10
    stored = await _stored(cluster.database_url, f"{ai_room}-1")
    assert [m.ply for m in stored] == list(range(played))
    assert [m.move for m in stored][:1] == ["4"]


async def _play_out(client: Client, room: str) -> tuple[int, float]:
    """Play seat 0's first legal move at each of its turns until the game ends: (the plies
    of the game, when the first move after Dan's first one was seen)."""
    position: dict[str, Any] = {}
    seen_at = 0.0
    errors: list[dict[str, Any]] = []
    while True:
        try:
            message = await client.recv(timeout=30)
        except TimeoutError:
            # Say where the game stood and what the server refused: a move that went nowhere
            # after a takeover is otherwise a silent 30 s wait.
            raise AssertionError(f"nothing for 30 s at {position}; errors: {errors}") from None
        if message["type"] == "error":
            errors.append(message)
        if message["type"] == "room_state" and message["room"]["id"] == room:
            position = message["room"]["position"]
        elif message["type"] == "move_made" and message["room"] == room:
            position = message["position"]
        elif message["type"] == "game_over" and message["room"] == room:
            return int(position["ply"]), seen_at
        else:
            continue
        if position["ply"] >= 2 and not seen_at:
            seen_at = time.monotonic()
        if position["to_move"] == 0 and position["legal_moves"]:
            await client.send(type="move", room=room, ply=position["ply"],
                              move=position["legal_moves"][0])


async def test_a_frozen_node_writes_nothing_for_rooms_taken_over_and_lets_them_go(
    cluster: Cluster,
) -> None:
    """Node1 runs Dan's game against the AI and is frozen (SIGSTOP) while the AI thinks.
    Node2 takes the room over when the lease runs out and stores the AI's move. Woken
    (SIGCONT), node1 has an AI answer of its own to store: the store refuses it, node1 lets
    the room go, and Dan, still connected to node1, plays on through node2."""
    dan = await cluster.client("Dan", "node1")
    await dan.send(type="create_room", game="connect4", seat=0,
                   opponent={"kind": "ai", "level": "hard"})
    room = (await dan.expect("room_state"))["room"]["id"]
    await dan.send(type="move", room=room, ply=0, move="4")
    await dan.expect("move_made", ply=0)
    await dan.expect("ai_thinking", timeout=30)  # the job crosses Redis to a worker first
    frozen = cluster.nodes["node1"][0]
    os.killpg(frozen.pid, signal.SIGSTOP)
    deadline = time.monotonic() + LEASE + 10
    while len(await _stored(cluster.database_url, f"{room}-1")) < 2:
        assert time.monotonic() < deadline, "node2 did not take the room over"
        await asyncio.sleep(0.3)
    os.killpg(frozen.pid, signal.SIGCONT)
    while "letting it go" not in cluster.log("node1"):
        assert time.monotonic() < deadline + 10, "node1 did not let the room go"
        await asyncio.sleep(0.2)
    played, _ = await _play_out(dan, room)
    stored = await _stored(cluster.database_url, f"{room}-1")
    assert [m.ply for m in stored] == list(range(played))
    first_epoch = stored[0].epoch
    assert all(m.epoch > first_epoch for m in stored[1:])  # nothing from node1 after it
