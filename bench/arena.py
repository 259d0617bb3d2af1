"""Arena run on loopback: N websocket clients in one Connect Four arena on one node.

``python -m bench.arena --players 1000 --minutes 3 [--push-seconds 0.5] [--think 0.05]``
starts the server in a child process (``--serve``: built from the server's modules as
``bench.load``'s is, in memory, no AI, the limits per source off, and a quick time control
``bench`` of 30 s a side added through ``Settings.time_controls``), signs one account up to
make the arena, and has N guests join it. Each plays a random legal move whenever it is to
move (after 0..``--think`` seconds), and so is paired again as soon as a game ends. Prints:

- pairings, games per second, the players that were paired at least once,
- p50/p99/max of the time from a game's end (its last ``move_made``, or its ``game_over``
  when a flag fell, arriving at a player) to that player's next pairing (the next room's
  ``room_state`` arriving),
- the server process's CPU seconds per pairing over the measured play (``/proc``, as
  ``bench.load`` measures it: its event loop and its threads), and the ``tournament``
  frames and bytes the clients received per second,

all over the measured play: from the moment every player has joined to the end. The
standings pushes are coalesced per ``--push-seconds`` (``Settings.standings_push_seconds``;
0: a push to every player on every event, as before); run it with both to see the effect.

A connection the server sheds while its loop runs late (1013, as under the join storm)
waits 1-3 s and connects again, as docs/PROTOCOL.md asks of clients: the report counts them
(``reconnected``, by why), says how long everyone took to join (``join_seconds``), and
counts errors by code (a closed connection by its close code).

Bounded: at most ``--players`` connections, ``--minutes`` of play plus the time to connect
(``--connect-timeout``). Target from the issue: 1,000 players, p99 under 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.load import UNLIMITED_SOURCES, cpu_seconds, raise_fd_limit

SHED = 1013
"""The close code of a connection a saturated server sheds (``server.engines.overload``)."""
CONTROL = "bench"
"""The quick time control the bench's server adds (30 s a side, no increment)."""


@dataclass
class Stats:
    waits: list[float] = field(default_factory=list)
    """Seconds from a game's end to the player's next pairing, over the measured play."""
    pairings: int = 0
    """Rooms seen by their first seat (one per pairing), over the measured play."""
    paired: set[int] = field(default_factory=set)
    joined: int = 0
    measuring: bool = False
    pushes: int = 0
    push_bytes: int = 0
    errors: list[str] = field(default_factory=list)
    sockets: list[Any] = field(default_factory=list)
    reconnected: collections.Counter[str] = field(default_factory=collections.Counter)
    """Connections that failed before their welcome, by why (``shed_1013``: the server shed
    it; a handshake cut off on a starved machine by its exception): each client waits and
    connects again, as the protocol asks."""


# --- the server child ---------------------------------------------------------------------------


async def _serve(port: int, push_seconds: float) -> None:
    from argon2 import PasswordHasher

    from server.app import Settings, running
    from server.people.sign_in_limits import SignInLimits
    from server.play.clocks import TIME_CONTROLS, TimeControl
    from server.web.sources import SourceLimits

    controls = {**TIME_CONTROLS, CONTROL: TimeControl(CONTROL, 30_000, 0)}
    settings = Settings(messages_per_second=1000.0, burst=1000,
                        sources=SourceLimits(**UNLIMITED_SOURCES), time_controls=controls,
                        standings_push_seconds=push_seconds, max_connections=100_000,
                        # Every player signs up (tournaments take no guests), all from here.
                        sign_in=SignInLimits(sign_ups_per_source=1_000_000,
                                             hashes_per_source=1_000_000,
                                             hashes_waiting=1_000_000))
    async with running("127.0.0.1", port, settings=settings, backlog=4096,
                       ping_interval=None) as server:
        # The players' sign-ups are the set-up, not what is measured: cheap hashes.
        server.app.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024,
                                                    parallelism=1)
        print(f"READY {server.port}", flush=True)
        await asyncio.Event().wait()


# --- the clients --------------------------------------------------------------------------------


async def _recv(ws: Any, stats: Stats) -> dict[str, Any]:
    text = await ws.recv()
    message: dict[str, Any] = json.loads(text)
    if message["type"] == "tournament" and stats.measuring:
        stats.pushes += 1
        stats.push_bytes += len(text)
    return message


async def _expect(ws: Any, stats: Stats, kind: str,
                  skipped: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The next message of ``kind``; the others before it go to ``skipped``."""
    while True:
        message = await _recv(ws, stats)
        if message["type"] == "error":
            raise RuntimeError(f"{message['code']}: {message['message']}")
        if message["type"] == kind:
            return message
        if skipped is not None:
            skipped.append(message)


async def _hello(url: str, name: str, stats: Stats) -> Any:
    """A connection welcomed by the server. One the server sheds (1013: its loop ran late,
    as it does under the join storm of a big arena) waits a few seconds and connects
    again, as docs/PROTOCOL.md asks a client to: the bench measures the arena once every
    player is in, not whether they all got in at the first try."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    rng = random.Random(name)
    while True:
        try:
            ws = await connect(url, max_size=None, compression=None, open_timeout=120,
                               ping_interval=None, close_timeout=2, max_queue=None)
            await ws.send(json.dumps({"type": "hello", "version": 1, "name": name}))
            await _expect(ws, stats, "welcome")
        except ConnectionClosed as exc:
            if exc.rcvd is None or exc.rcvd.code != SHED:
                raise
            stats.reconnected["shed_1013"] += 1
        except (InvalidHandshake, OSError) as exc:  # the server cut a handshake off
            stats.reconnected[type(exc).__name__] += 1
        else:
            stats.sockets.append(ws)
            return ws
        await asyncio.sleep(rng.uniform(1.0, 3.0))


async def _player(index: int, url: str, tournament: str, stats: Stats, stop_at: float,
                  think: float, gate: asyncio.Semaphore) -> Any:
    rng = random.Random(index)
    early: list[dict[str, Any]] = []  # a pairing's room_state may come before the answer
    async with gate:
        ws = await _hello(url, f"arena{index}", stats)
        await ws.send(json.dumps({"type": "sign_up", "name": f"arena{index}",
                                  "password": "bench-password-1"}))
        await _expect(ws, stats, "signed_in")
        await ws.send(json.dumps({"type": "join_tournament", "tournament": tournament}))
        await _expect(ws, stats, "tournament", early)
    stats.joined += 1
    rooms: set[str] = set()
    room: str | None = None
    me = -1
    ended_at: float | None = None

    async def move(position: dict[str, Any]) -> None:
        await asyncio.sleep(rng.uniform(0, think))
        await ws.send(json.dumps({"type": "move", "room": room, "ply": position["ply"],
                                  "move": rng.choice(position["legal_moves"])}))

    while time.monotonic() < stop_at:
        try:
            message = early.pop(0) if early else await asyncio.wait_for(
                _recv(ws, stats), stop_at - time.monotonic())
        except TimeoutError:
            break
        kind = message["type"]
        if kind == "error":
            stats.errors.append(f"{message['code']}: {message['message']}")
        elif kind == "room_state" and message["room"]["id"] not in rooms:
            room = message["room"]["id"]
            rooms.add(room)
            me = message["you"]
            if stats.measuring:
                if me == 0:
                    stats.pairings += 1
                if ended_at is not None:
                    stats.waits.append(time.perf_counter() - ended_at)
            stats.paired.add(index)
            ended_at = None
            position = message["room"]["position"]
            if message["room"]["status"] == "active" and position["to_move"] == me:
                await move(position)
        elif kind == "move_made" and message["room"] == room:
            if message["status"] != "active":
                ended_at = time.perf_counter()
            elif message["position"]["to_move"] == me:
                await move(message["position"])
        elif kind == "game_over" and message["room"] == room and ended_at is None:
            ended_at = time.perf_counter()  # on time (a slow client's flag), not by a move
    return ws


async def _drive(url: str, players: int, minutes: float, think: float,
                 connect_timeout: float, server_pid: int) -> dict[str, Any]:
    stats = Stats()
    maker = await _hello(url, "maker", stats)
    await maker.send(json.dumps({"type": "sign_up", "name": "ArenaMaker",
                                 "password": "bench-password-1"}))
    await _expect(maker, stats, "signed_in")
    await maker.send(json.dumps({"type": "create_tournament", "game": "connect4",
                                 "name": "Bench arena", "time_control": CONTROL,
                                 "minutes": max(5, int(minutes) + 5)}))
    tournament = (await _expect(maker, stats, "tournament"))["tournament"]["id"]
    gate = asyncio.Semaphore(100)
    stop_at = time.monotonic() + connect_timeout + minutes * 60
    tasks = [asyncio.create_task(_player(i, url, tournament, stats, stop_at, think, gate))
             for i in range(players)]
    connecting = time.monotonic()
    deadline = connecting + connect_timeout
    while stats.joined < players and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    started = time.monotonic()
    join_seconds = started - connecting
    cpu_start = cpu_seconds(server_pid)
    stats.measuring = True
    stop = started + minutes * 60
    await asyncio.sleep(max(0.0, stop - time.monotonic()))
    stats.measuring = False
    seconds = time.monotonic() - started
    cpu = cpu_seconds(server_pid) - cpu_start
    for task in tasks:
        task.cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    stats.errors += [_code(r) for r in done if isinstance(r, Exception)
                     and not isinstance(r, asyncio.CancelledError)]
    # All at once: a client closing waits for the server's close frame behind its pushes.
    await asyncio.gather(*(ws.close() for ws in stats.sockets))
    waits = sorted(stats.waits)

    def pct(q: float) -> float:
        return round(waits[min(len(waits) - 1, int(q * len(waits)))] * 1000, 1) if waits \
            else float("nan")

    return {
        "players": players, "joined": stats.joined, "join_seconds": round(join_seconds, 1),
        "paired_at_least_once": len(stats.paired),
        "measured_seconds": round(seconds, 1), "pairings": stats.pairings,
        "games_per_second": round(stats.pairings / seconds, 1),
        "end_to_next_pairing_ms": {"p50": pct(0.5), "p99": pct(0.99),
                                   "max": round(waits[-1] * 1000, 1) if waits else None,
                                   "count": len(waits)},
        "server_cpu_seconds": round(cpu, 2),
        "server_cpu_ms_per_pairing": round(cpu * 1000 / max(1, stats.pairings), 2),
        "server_cpu_share": round(cpu / seconds, 2),
        "tournament_frames_per_second": round(stats.pushes / seconds, 1),
        "tournament_kbytes_per_second": round(stats.push_bytes / seconds / 1024, 1),
        "errors": dict(collections.Counter(e.split(":")[0] for e in stats.errors)),
        "reconnected": dict(stats.reconnected),
    }


def _code(exc: BaseException) -> str:
    """An exception counted by its kind: a closed connection by its close code."""
    from websockets.exceptions import ConnectionClosed

    if isinstance(exc, ConnectionClosed):
        return f"closed_{exc.rcvd.code if exc.rcvd is not None else 'abnormally'}"
    return type(exc).__name__


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.arena", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--think", type=float, default=0.05,
                        help="each move waits 0..THINK seconds")
    parser.add_argument("--push-seconds", type=float, default=0.5,
                        help="the server's standings_push_seconds (0: push on every event)")
    parser.add_argument("--connect-timeout", type=float, default=300.0)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    raise_fd_limit(args.players * 2 + 256)
    if args.serve:
        asyncio.run(_serve(args.port, args.push_seconds))
        return 0
    child = subprocess.Popen([sys.executable, "-m", "bench.arena", "--serve",
                              "--players", str(args.players),
                              "--push-seconds", str(args.push_seconds)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("READY "):
            print("the server did not start", file=sys.stderr)
            return 1
        url = f"ws://127.0.0.1:{int(line.split()[1])}/ws"
        report = asyncio.run(_drive(url, args.players, args.minutes, args.think,
                                    args.connect_timeout, child.pid))
        report["push_seconds"] = args.push_seconds
        print(json.dumps(report, indent=2))
        return 0
    finally:
        child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()


if __name__ == "__main__":
    raise SystemExit(main())
