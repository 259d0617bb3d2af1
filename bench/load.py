"""Load run on loopback: N websocket clients each playing Connect Four against a fast AI level.

``python -m bench.load --clients 1000 [--seconds 30] [--think 3] [--workers 2]
[--store memory|sqlite|postgres]`` starts the
server in a child process (so its memory can be read alone), connects N clients, lets them
play for ``--seconds`` (each waits a random 0..2*think seconds before each of its moves, like
a person), and prints:

- the time to connect every client (each says ``hello``, then creates its room; 200 at a
  time), p50/p99 of each step (``hello`` sent to ``welcome``, ``create_room`` sent to its
  ``room_state``) and the server's CPU time per client connected (its threads, not the AI's),
- connections held to the end, moves per second (the clients' and the AI's),
- p50/p99 latency from a client's move sent to that move's ``move_made`` arriving back
  (the acknowledgement: stored and announced; the AI's thinking is not in it; with
  ``--store sqlite`` or ``postgres`` it includes the durable commit of the move),
- the server process's memory per connection (RSS growth from idle to all connected),
- the server process's CPU seconds per client move over the measured play (its event loop
  and threads, not the AI worker processes: its own move's handling plus the AI reply it
  relays), its event-loop lag p99 (a timer every 50 ms, how late it fires) and its GC
  pauses, both over the measured play only.

Then, in the same run, the same clients play against the websockets floor
(``bench.floor``: a bare websockets server in a process of its own, with the server's
websockets settings, answering each move with the frames this run's server sent per client
move, no rooms, storage or AI), and it prints both side by side and "server CPU per client
move = N × the websockets floor" (``--no-floor`` skips it). With ``--store sqlite`` or
``postgres`` a third run adds the floor with the duties no such server can leave out (every
move durable in SQLite before it is announced, the AI's move asked of another process:
``bench.floor --duties``), the least this project's promises cost over bare websockets.

The server is ``bench.load``'s own child (``--serve``: ``_serve`` builds it from the server's
modules, the one place the bench imports them, and tells the measured play's start and end
to its loop-lag and GC figures); ``--via-cli`` starts ``discus serve`` instead
(``python -m server.cli serve``, with its own settings), for a bench that needs no internals.

``--nodes N`` (PostgreSQL, and Redis at ``$REDIS_URL`` or one of the run's own) runs the same
load twice through HAProxy (``deploy/haproxy.cfg``): on one cluster node, then on N nodes
(``server.cluster.cluster``; ``--workers`` split between them), and prints both with the ratios and
the CPU per client move per node (``bench.load_nodes``).

Bounded: at most ``--clients`` connections, ``--seconds`` of play plus the time to connect
(``--connect-timeout``). Target from the issue: 5,000 connections, p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

LEVEL = "beginner"

REPLY_SAMPLES = 5000
"""Waits for the AI's move handed to the floor, drawn from the measured play's."""


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    human_moves: int = 0
    ai_moves: int = 0
    games: int = 0
    errors: list[str] = field(default_factory=list)
    connected: int = 0
    measuring: bool = False
    frames: collections.Counter[str] = field(default_factory=collections.Counter)
    """Frames the clients received over the measured play, by type."""
    frame_bytes: int = 0
    hellos: list[float] = field(default_factory=list)
    """Seconds from each client's ``hello`` sent to its ``welcome`` arriving."""
    creates: list[float] = field(default_factory=list)
    """Seconds from each client's ``create_room`` sent to its ``room_state`` arriving."""
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)
    """One frame of each type the clients received (``ack``: a client's own ``move_made``,
    ``reply``: the AI's), for the floor to answer with (``bench.floor``)."""
    reply_waits: list[float] = field(default_factory=list)
    """Seconds from a client's move acknowledged to the AI's arriving, over the measured
    play: the floor waits as long before its reply, so it is measured at the server's pace
    (fewer moves a second cost more each: fewer frames share a wake-up)."""

    def received(self, text: str | bytes, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind != "move_made":
            self.samples.setdefault(kind, message)
        if self.measuring:
            self.frames[kind] += 1
            self.frame_bytes += len(text)

    def script(self) -> dict[str, Any]:
        """What ``bench.floor`` needs to answer as this run's server did (``--frames``)."""
        moves = max(1, self.human_moves)
        protocol = {"move_made", "room_state", "welcome"}
        return {
            "samples": self.samples,
            "extra_per_client_move": {k: n / moves for k, n in self.frames.items()
                                      if k not in protocol},
            "client_moves_per_game": moves / max(1, self.games),
            "reply_seconds": random.Random(0).sample(
                self.reply_waits, min(REPLY_SAMPLES, len(self.reply_waits))),
        }


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted``; returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, wanted), hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_jiffies() -> tuple[int, int]:
    """The whole machine's busy and total CPU time so far, in clock ticks summed over its
    cores (``/proc/stat``): busy is all but idle and I/O wait."""
    with open("/proc/stat", encoding="ascii") as stat:
        ticks = [int(n) for n in stat.readline().split()[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# --- the server child ---------------------------------------------------------------------------


async def _serve(port: int, workers: int, database_url: str | None, census: bool,
                 redis_url: str | None = None) -> None:
    from server.app import Settings, running
    from server.cluster.cluster import Cluster
    from server.engines import AiPool
    from server.gc_policy import Collector
    from server.storage import SqlStore
    from server.web.sources import SourceLimits

    pauses: list[float] = []
    cpu: list[float] = []
    longest_by_generation = [0.0, 0.0, 0.0]
    started = [0.0, 0.0]

    measuring = [False]

    def timed(phase: str, info: dict[str, int]) -> None:
        if not measuring[0]:
            return
        if phase == "start":
            started[:] = [time.perf_counter(), time.process_time()]
        else:
            pauses.append(time.perf_counter() - started[0])
            cpu.append(time.process_time() - started[1])
            generation = info["generation"]
            longest_by_generation[generation] = max(longest_by_generation[generation],
                                                    pauses[-1])

    gc.callbacks.append(timed)
    lags: list[float] = []

    counted: list[dict[str, float]] = []

    def measure(on: bool) -> None:
        """SIGUSR1: the measured play starts (forget the connecting phase); SIGUSR2: it ends."""
        measuring[0] = on
        # server.cluster.cluster's own, where it has them
        counts = getattr(cluster, "redis_counts", None)
        if callable(counts):
            if on:
                counted.clear()
            counted.append({k: v for k, v in dict(counts()).items()
                            if isinstance(v, int | float)})
        if on:
            pauses.clear()
            cpu.clear()
            lags.clear()
            longest_by_generation[:] = [0.0, 0.0, 0.0]

    async def sample_lag() -> None:
        while True:
            due = time.perf_counter() + 0.05
            await asyncio.sleep(0.05)
            if measuring[0]:
                lags.append(time.perf_counter() - due)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, measure, True)
    loop.add_signal_handler(signal.SIGUSR2, measure, False)
    sampler = asyncio.create_task(sample_lag())
    pool = AiPool(processes=workers, games=("connect4",))
    await pool.start(wait_ready=True, timeout=600)
    # Every client of the bench comes from one address: the limits per source are off.
    settings = Settings(messages_per_second=50.0, burst=100,
                        sources=SourceLimits(**UNLIMITED_SOURCES))
    store = SqlStore(database_url) if database_url else None
    cluster = None if redis_url is None else Cluster(redis_url)
    async with running("127.0.0.1", port, store=store, pool=pool, settings=settings,
                       cluster=cluster, backlog=4096, ping_interval=None) as server:
        collector = Collector()
        collector.start()
        if census:
            gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector would free stays in gc.garbage
        print(f"READY {server.port}", flush=True)
        await stop.wait()
        collector.stop()
        if census:
            gc.collect()
            young = collections.Counter(type(o).__qualname__ for o in gc.garbage)
            seen = len(gc.garbage)
            gc.unfreeze()  # what was frozen alive and only a full pass would free
            gc.collect()
            left = collections.Counter(type(o).__qualname__ for o in gc.garbage[seen:])
            for name, kinds in (("CENSUS", young), ("LEFTOVER", left)):
                print(f"{name} total={sum(kinds.values())} "
                      + ", ".join(f"{k}={n}" for k, n in kinds.most_common(12)), flush=True)
        sampler.cancel()
        lags.sort()
        p99 = lags[min(len(lags) - 1, int(0.99 * len(lags)))] * 1000 if lags else float("nan")
        print(f"LAG p99_ms={p99:.1f} max_ms={max(lags, default=0) * 1000:.1f}", flush=True)
        stats = pool.snapshot()
        print(f"POOL jobs={stats.jobs} fallbacks={stats.fallbacks} restarts={stats.restarts}",
              flush=True)
        if cluster is not None:
            print(f"CLUSTER rooms={len(cluster.owned)} takeovers={cluster.takeovers}",
                  flush=True)
        if len(counted) == 2:
            print("REDIS_COUNTS " + " ".join(f"{k}={v - counted[0].get(k, 0):g}"
                                             for k, v in counted[1].items()), flush=True)
        print(f"GC collections={len(pauses)} longest_ms={max(pauses, default=0) * 1000:.1f} "
              f"total_ms={sum(pauses) * 1000:.0f} longest_cpu_ms={max(cpu, default=0) * 1000:.1f} "
              "longest_ms_by_generation="
              + "/".join(f"{t * 1000:.0f}" for t in longest_by_generation), flush=True)


# --- the clients --------------------------------------------------------------------------------


async def _player(index: int, url: str, stats: Stats, stop_at: list[float], think: float,
                  gate: asyncio.Semaphore, ready: asyncio.Event) -> Any:
    from websockets.asyncio.client import connect

    rng = random.Random(index)
    async with gate:
        ws = await connect(url, max_size=None, compression=None, open_timeout=120,
                           ping_interval=None)
        sent = time.perf_counter()
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": f"load{index}"}))
        await _expect(ws, stats, "welcome")
        stats.hellos.append(time.perf_counter() - sent)
        sent = time.perf_counter()
        await ws.send(json.dumps({"type": "create_room", "game": "connect4",
                                  "opponent": {"kind": "ai", "level": LEVEL}, "seat": 0}))
        state = await _expect(ws, stats, "room_state")
        stats.creates.append(time.perf_counter() - sent)
    stats.connected += 1
    await ready.wait()
    room = state["room"]["id"]
    me = state["you"]
    position = state["room"]["position"]
    status = state["room"]["status"]
    acked = None
    while time.monotonic() < stop_at[0]:
        if status == "finished":
            stats.games += 1
            await ws.send(json.dumps({"type": "offer_rematch", "room": room}))
            state = await _expect(ws, stats, "room_state")
            me, position, status = state["you"], state["room"]["position"], "active"
            continue
        if position["to_move"] == me:
            pause = rng.uniform(0, 2 * think)
            if time.monotonic() + pause >= stop_at[0]:
                break
            await asyncio.sleep(pause)
            ply = position["ply"]
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "move", "room": room, "ply": ply,
                                      "move": rng.choice(position["legal_moves"])}))
            made = await _expect(ws, stats, "move_made", ply=ply)
            stats.samples.setdefault("ack", made)
            acked = time.perf_counter()
            if stats.measuring:
                stats.latencies.append(time.perf_counter() - sent)
                stats.human_moves += 1
        else:
            made = await _expect(ws, stats, "move_made")
            stats.samples.setdefault("reply", made)
            if stats.measuring:
                stats.ai_moves += 1
                if acked is not None:
                    stats.reply_waits.append(time.perf_counter() - acked)
            acked = None
        position, status = made["position"], made["status"]
    return ws


async def _expect(ws: Any, stats: Stats, kind: str, **fields: Any) -> dict[str, Any]:
    while True:
        text = await ws.recv()
        message: dict[str, Any] = json.loads(text)
        stats.received(text, message)
        if message["type"] == "error":
            raise RuntimeError(f"{message['code']}: {message['message']}")
        if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
            return message


async def _drive(url: str, clients: int, seconds: float, think: float,
                 connect_timeout: float, server_pids: Sequence[int],
                 redis_url: str | None = None, signals: bool = True,
                 ) -> tuple[dict[str, Any], Stats]:
    """Connect the clients, let them play, measure; the report and the clients' stats.
    With ``signals``, the servers are told the measured play's start (SIGUSR1) and end
    (SIGUSR2)."""
    # The clients are the measuring instrument: keep their own GC pauses out of the figures.
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    stats = Stats()
    stop_at = [time.monotonic() + connect_timeout + seconds]
    gate = asyncio.Semaphore(200)
    ready = asyncio.Event()
    idle_rss = sum(rss_bytes(pid) for pid in server_pids)
    connect_cpu = sum(cpu_seconds(pid) for pid in server_pids)
    started = time.monotonic()
    tasks = [asyncio.create_task(_player(i, url, stats, stop_at, think, gate, ready))
             for i in range(clients)]
    while stats.connected < clients and time.monotonic() - started < connect_timeout:
        if all(t.done() for t in tasks):
            break
        await asyncio.sleep(0.05)
    connect_seconds = time.monotonic() - started
    connect_cpu = sum(cpu_seconds(pid) for pid in server_pids) - connect_cpu
    connected_rss = sum(rss_bytes(pid) for pid in server_pids)
    connected = stats.connected
    for pid in server_pids if signals else ():
        os.kill(pid, signal.SIGUSR1)
    redis_start = await redis_totals(redis_url) if redis_url else None
    cpu_start = [cpu_seconds(pid) for pid in server_pids]
    clients_start, machine_start = time.process_time(), machine_jiffies()
    stats.measuring = True
    measure_start = time.monotonic()
    stop_at[0] = measure_start + seconds
    ready.set()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    measured = time.monotonic() - measure_start
    node_cpu = [cpu_seconds(pid) - start for pid, start in zip(server_pids, cpu_start,
                                                                strict=True)]
    server_cpu = sum(node_cpu)
    clients_cpu = time.process_time() - clients_start
    machine_end = machine_jiffies()
    machine_busy = ((machine_end[0] - machine_start[0])
                    / max(1, machine_end[1] - machine_start[1]) * (os.cpu_count() or 1))
    for pid in server_pids if signals else ():
        os.kill(pid, signal.SIGUSR2)
    redis_delta = None
    if redis_url and redis_start is not None:
        redis_end = await redis_totals(redis_url)
        redis_delta = {k: redis_end[k] - redis_start.get(k, 0) for k in redis_end}
    held = 0
    for result in done:
        if isinstance(result, BaseException):
            stats.errors.append(f"{type(result).__name__}: {result}")
        elif result.state.name == "OPEN":
            held += 1
    await asyncio.gather(*(r.close() for r in done if not isinstance(r, BaseException)),
                         return_exceptions=True)
    lat = sorted(stats.latencies)

    def pct(q: float, seconds: list[float] = lat) -> float:
        return (seconds[min(len(seconds) - 1, int(q * len(seconds)))] * 1000 if seconds
                else float("nan"))

    hellos, creates = sorted(stats.hellos), sorted(stats.creates)

    moves = max(1, stats.human_moves)
    report: dict[str, Any] = {
        "clients": clients,
        "connected": connected,
        "connect_seconds": round(connect_seconds, 2),
        "hello_p50_ms": round(pct(0.50, hellos), 2),
        "hello_p99_ms": round(pct(0.99, hellos), 2),
        "create_p50_ms": round(pct(0.50, creates), 2),
        "create_p99_ms": round(pct(0.99, creates), 2),
        "server_cpu_ms_per_connect": round(connect_cpu * 1000 / max(1, connected), 3),
        "held_to_end": held,
        "seconds": round(measured, 2),
        "client_moves_per_s": round(stats.human_moves / measured, 1),
        "ai_moves_per_s": round(stats.ai_moves / measured, 1),
        "games_finished": stats.games,
        "ack_p50_ms": round(pct(0.50), 2),
        "ack_p99_ms": round(pct(0.99), 2),
        "ack_mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None,
        "server_rss_idle_mb": round(idle_rss / 2**20, 1),
        "server_rss_connected_mb": round(connected_rss / 2**20, 1),
        "server_cpu_seconds": round(server_cpu, 2),
        # Where the machine's cores went over the measured play: a figure near the core count
        # means everything (server, clients, AI workers) queued for CPU.
        "cores_busy_machine_server_clients": [round(machine_busy, 2),
                                              round(server_cpu / measured, 2),
                                              round(clients_cpu / measured, 2)],
        "server_cpu_ms_per_client_move": round(server_cpu * 1000 / max(1, stats.human_moves), 3),
        "node_cpu_ms_per_client_move": [round(c * 1000 / max(1, stats.human_moves), 3)
                                        for c in node_cpu],
        "server_kb_per_connection": round((connected_rss - idle_rss) / max(1, connected) / 1024,
                                          1),
        "frames_per_client_move": round(sum(stats.frames.values()) / moves, 2),
        "frames_by_type": dict(stats.frames.most_common()),
        "received_bytes_per_client_move": round(stats.frame_bytes / moves),
        "errors": len(stats.errors),
        "first_errors": stats.errors[:3],
    }
    if redis_delta is not None:
        per_node = moves * len(server_pids)
        report["redis_commands_per_client_move_per_node"] = round(
            redis_delta["commands"] / per_node, 2)
        report["redis_bytes_in_per_client_move_per_node"] = round(
            redis_delta["bytes_in"] / per_node)
        report["redis_bytes_out_per_client_move_per_node"] = round(
            redis_delta["bytes_out"] / per_node)
        busiest = sorted(((n, k) for k, n in redis_delta.items() if k.startswith("cmd:")),
                         reverse=True)[:8]
        report["redis_commands_per_client_move_per_node_by_name"] = ", ".join(
            f"{k[4:]}={n / per_node:.2f}" for n, k in busiest)
    return report, stats


async def redis_totals(url: str) -> dict[str, int]:
    """Redis's own counters since its start (``INFO commandstats`` and ``INFO stats``):
    ``commands``, ``bytes_in``, ``bytes_out`` and ``cmd:<name>`` per command. They count
    every client of that Redis, the bench's own ``INFO`` calls included (two per run), and
    the commands Lua scripts run count as well as the ``EVALSHA`` that ran them."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    try:
        commands = await client.info("commandstats")
        traffic = await client.info("stats")
    finally:
        await client.aclose()
    totals = {f"cmd:{name.removeprefix('cmdstat_')}": int(v["calls"])
              for name, v in commands.items()}
    totals["commands"] = sum(totals.values())
    totals["bytes_in"] = int(traffic["total_net_input_bytes"])
    totals["bytes_out"] = int(traffic["total_net_output_bytes"])
    return totals


def parser() -> argparse.ArgumentParser:
    """``bench.load``'s options (``bench.before_after`` takes the same load options)."""
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0, help="play time after connecting")
    parser.add_argument("--think", type=float, default=3.0,
                        help="mean seconds a client waits before each of its moves")
    parser.add_argument("--workers", type=int, default=None, help="AI processes (default: cores)")
    parser.add_argument("--connect-timeout", type=float, default=120.0)
    parser.add_argument("--store", choices=("memory", "sqlite", "postgres"), default="memory",
                        help="where the server stores every move before acknowledging it: "
                        "nowhere (default), a scratch SQLite file, or a scratch PostgreSQL "
                        "database (dropped afterwards)")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default=None,
                        help="the server's event loop (default: uvloop where installed, as "
                        "`discus serve`)")
    parser.add_argument("--gc-census", action="store_true",
                        help="print the most common types of what the server's cyclic collector "
                        "freed in its passes (census) and of what only a full pass frees "
                        "(leftover: what freezing survivors would keep until then)")
    parser.add_argument("--via-cli", action="store_true",
                        help="start the server as `discus serve` (python -m server.cli serve) "
                        "instead of bench.load's own child: no server internals imported, but "
                        "its settings (the AI's move shown 0.45 s after the person's, both "
                        "games' engines), SQL storage only, and no loop-lag, GC or pool lines")
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="run the server child under cProfile and write its profile "
                        "(the event loop's thread, connecting and play) to FILE "
                        "(python -m pstats FILE)")
    parser.add_argument("--profile-cpu", action="store_true",
                        help="time --profile by the event loop thread's CPU clock "
                        "(bench.profiled), not the wall clock: what the server itself spent, "
                        "without the time it was preempted by the clients or the AI")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the websockets floor run (bench.floor) after the server's")
    parser.add_argument("--nodes", type=int, default=None, metavar="N",
                        help="compare one cluster node with N behind HAProxy (PostgreSQL, "
                        "Redis)")
    parser.add_argument("--database-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    limit = raise_fd_limit(2 * args.clients + 256)
    if args.serve:
        from server.serve import run_loop

        run_loop(_serve(args.port, args.workers or os.cpu_count() or 1, args.database_url,
                        args.gc_census, args.redis_url), args.loop)
        return 0
    if limit < args.clients + 64:
        print(f"open-file limit {limit} is too low for {args.clients} clients")
        return 2
    if args.nodes:
        from bench.load_nodes import compare

        return compare(args, _run)
    if args.via_cli and args.store == "memory":
        print("discus serve stores every game: --via-cli takes --store sqlite or postgres")
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        url, drop = scratch_database(args.store, scratch)
        server = cli_server(args, url, scratch) if args.via_cli else None
        try:
            code = _run(args, url, server=server)
        finally:
            if drop is not None:
                asyncio.run(drop())
        if code or args.no_floor:
            return code
        measured = args.report
        floors = run_floors(args, scratch)
        if floors is None:
            return 1
        print_against_floor(measured, *floors)
    return 0


def scratch_database(kind: str, folder: str) -> tuple[str | None, Any]:
    """The server's database URL for ``--store`` and how to drop it afterwards."""
    if kind == "sqlite":
        return f"sqlite+aiosqlite:///{folder}/discus.sqlite3", None
    if kind == "postgres":
        from bench.storage import scratch_postgres

        return asyncio.run(scratch_postgres())
    return None, None


@dataclass
class Server:
    """How to start one server under test: its command line, the directory it runs from
    and its environment (``None``: this process's). It prints ``READY <port>`` once it
    listens, takes SIGUSR1/SIGUSR2 as the start/end of the measured play and stops on
    SIGTERM, printing its report lines (``POOL``, ``GC``, ``LAG``, …)."""

    argv: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    name: str = "server"
    port: int | None = None
    """Set for a server that says nothing on stdout (``discus serve``): it is ready when
    ``/readyz`` on this port answers 200, and it is sent no SIGUSR1/SIGUSR2."""
    log: str | None = None
    """Where its stderr goes (else this process's)."""


UNLIMITED_SOURCES: dict[str, Any] = dict(connections=10**7, hellos_per_minute=10**7,
                                         rooms_per_minute=10**7, idle_guest_seconds=0.0)
"""The limits per source of the bench's own server: every one of its clients comes from one
address, so none applies (``server.web.sources``)."""


def cli_server(args: argparse.Namespace, database_url: str | None, folder: str,
               cwd: str | None = None, env: dict[str, str] | None = None) -> Server:
    """``discus serve`` on a free port, with its data directory in ``folder``, storing in
    ``database_url``, run from ``cwd`` with ``env`` (default: this process's) less
    ``REDIS_URL`` (one node, not a cluster)."""
    workers = max(1, args.workers or os.cpu_count() or 1)
    environment = dict(os.environ if env is None else env, DISCUS_DATA_DIR=folder)
    environment.pop("REDIS_URL", None)
    if database_url:
        environment["DATABASE_URL"] = database_url
    if args.loop:
        environment["DISCUS_EVENT_LOOP"] = args.loop
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    limits: list[str] = []
    if cwd is None or os.path.exists(os.path.join(cwd, "server", "sources.py")):  # not older
        limits = [f"--{name.replace('_', '-')}={UNLIMITED_SOURCES[field]}" for name, field in (
            ("connections_per_address", "connections"), ("hellos_per_minute",) * 2,
            ("rooms_per_minute",) * 2)]
    return Server([sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1",
                   "--port", str(port), "--workers", str(workers), *limits],
                  cwd=cwd, env=environment, name="server (discus serve)", port=port,
                  log=os.path.join(folder, "serve.log"))


def _wait_ready(child: subprocess.Popen[str], port: int, timeout: float = 600) -> bool:
    """Whether ``/readyz`` on ``port`` answered 200 before ``child`` ended or ``timeout``."""
    deadline = time.monotonic() + timeout
    while child.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if b" 200 " in sock.recv(64):
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def server_child(args: argparse.Namespace, workers: int, database_url: str | None,
                 redis_url: str | None, python: str = sys.executable) -> list[str]:
    """The command line of ``bench.load``'s server child (``--serve``, which runs ``_serve``
    in whichever tree it is started from)."""
    profile = getattr(args, "profile", None)
    if profile is None:
        module = ["-m", "bench.load"]
    elif getattr(args, "profile_cpu", False):
        module = ["-m", "bench.profiled", profile, "bench.load"]
    else:
        module = ["-m", "cProfile", "-o", profile, "-m", "bench.load"]
    return ([python, *module, "--serve", "--clients", str(args.clients),
             "--workers", str(workers)]
            + (["--loop", args.loop] if args.loop else [])
            + (["--gc-census"] if args.gc_census else [])
            + (["--database-url", database_url] if database_url else [])
            + (["--redis-url", redis_url] if redis_url else []))


def run_floor(args: argparse.Namespace, folder: str, duties: bool = False) -> int:
    """Run the same load against ``bench.floor``, answering with the frames the last run's
    server sent (``args.script``); with ``duties``, storing every move in a SQLite file in
    ``folder`` and asking an engine process for the AI's (``bench.floor_duties``). Its
    report in ``args.report``; ``args.script`` is left as it was."""
    script = args.script
    frames = os.path.join(folder, "frames.json")
    with open(frames, "w", encoding="utf-8") as file:
        json.dump(script, file)
    loop = args.loop or os.environ.get("DISCUS_EVENT_LOOP") or "uvloop"
    argv = [sys.executable, "-m", "bench.floor", "--frames", frames, "--loop", loop]
    if duties:
        argv += ["--duties", os.path.join(folder, "floor-duties.sqlite3")]
    floor = Server(argv, name="floor with duties" if duties else "websockets floor")
    try:
        return _run(args, None, server=floor)
    finally:
        args.script = script


def run_floors(args: argparse.Namespace, folder: str
               ) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The bare floor's report, and with moves stored (``--store sqlite`` or ``postgres``)
    the floor with the duties' (else None), both answering with ``args.script``'s frames;
    None if one did not run."""
    if run_floor(args, folder):
        return None
    floor = args.report
    if args.store == "memory":
        return floor, None
    print("\n== the floor with the duties (moves durable, AI in a process)", flush=True)
    if run_floor(args, folder, duties=True):
        return None
    return floor, args.report


def print_against_floor(server: dict[str, Any], floor: dict[str, Any],
                        duties: dict[str, Any] | None = None) -> None:
    print("\n== the server against the websockets floor (same clients, same frames)"
          + (", and the floor with the duties: moves durable, AI in a process" if duties else ""))
    columns = [server, floor] + ([duties] if duties else [])
    print(f"{'':<34} {'server':>10} {'floor':>10}" + (f" {'duties':>10}" if duties else ""))
    for key in ("held_to_end", "connect_seconds", "hello_p99_ms", "create_p99_ms",
                "server_cpu_ms_per_connect",
                "client_moves_per_s", "ack_p50_ms", "ack_p99_ms", "frames_per_client_move",
                "received_bytes_per_client_move",
                "server_cpu_ms_per_client_move"):
        print(f"{key:<34}" + "".join(f" {c[key]:>10}" for c in columns))
    base = floor["server_cpu_ms_per_client_move"]
    times = server["server_cpu_ms_per_client_move"] / base if base else float("nan")
    print(f"server CPU per client move = {times:.1f} × the websockets floor")
    if duties:
        least = duties["server_cpu_ms_per_client_move"]
        print(f"the floor with the duties = {least / base:.1f} × the websockets floor; "
              f"the server = {server['server_cpu_ms_per_client_move'] / least:.1f} × it")


def _run(args: argparse.Namespace, database_url: str | None, nodes: int = 0,
         redis_url: str | None = None, front: Any = None, server: Server | None = None) -> int:
    """One load run. With ``nodes``, that many cluster nodes on ``redis_url`` behind the
    load balancer ``front`` starts (given the nodes' ports, it returns its own port and a
    way to stop it); else one server, reached directly: ``server``, or by default this
    tree's server child. Prints the report; returns it in ``args.report`` and the frames
    the clients received in ``args.script`` (``bench.floor``'s ``--frames``)."""
    count = max(1, nodes)
    workers = max(1, (args.workers or os.cpu_count() or 1) // count)
    if server is None:
        server = Server(server_child(args, workers, database_url, redis_url if nodes else None))
    if server.port is not None and count > 1:
        raise ValueError("a server on a fixed port runs alone")
    log = open(server.log, "w") if server.log else None  # closed below, once they stop
    children = [subprocess.Popen(server.argv, cwd=server.cwd, env=server.env,
                                 stdout=subprocess.PIPE, stderr=log, text=True)
                for _ in range(count)]
    stop_front = None
    try:
        ports = []
        for child in children:
            assert child.stdout is not None
            if server.port is not None:
                if not _wait_ready(child, server.port):
                    print(f"{server.name} did not start (its log: {server.log})")
                    return 1
                ports.append(server.port)
                continue
            line = child.stdout.readline()
            if not line.startswith("READY"):
                print(f"{server.name} did not start: {line!r}")
                return 1
            ports.append(int(line.split()[1]))
        port = ports[0]
        if front is not None:
            port, stop_front = front(ports)
        print(f"{server.name} pids {[c.pid for c in children]} on ports {ports}"
              + (f" behind port {port}" if front is not None else "")
              + f"; {args.clients} clients, {args.seconds:g}s of play, think {args.think:g}s, "
              f"store {args.store}, loop {args.loop or 'default'}", flush=True)
        report, stats = asyncio.run(_drive(
            f"ws://127.0.0.1:{port}/ws", args.clients, args.seconds, args.think,
            args.connect_timeout, [c.pid for c in children], redis_url if nodes else None,
            signals=server.port is None))
    finally:
        outs = []
        for child in children:
            child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                out, _ = child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                out, _ = child.communicate()
            outs.append(out)
        if log is not None:
            log.close()
        if stop_front is not None:
            stop_front()
    moves = max(1, round(report["client_moves_per_s"] * report["seconds"]))
    for index, out in enumerate(outs):
        for line in out.splitlines():
            if line.startswith(("POOL", "GC", "LAG", "CENSUS", "LEFTOVER", "CLUSTER")):
                name = line.split()[0].lower() + (f"_{index + 1}" if count > 1 else "")
                report[name] = line.split(" ", 1)[1]
            elif line.startswith("REDIS_COUNTS "):  # the node's own counts (server.cluster.counts)
                name = "node_redis_per_client_move" + (f"_{index + 1}" if count > 1 else "")
                report[name] = ", ".join(
                    f"{k}={float(v) / moves:.2f}"
                    for k, v in (pair.split("=", 1) for pair in line.split()[1:]))
    width = max(len(k) for k in report)
    print(f"-- {server.name}")
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    target = report["held_to_end"] >= args.clients and report["ack_p99_ms"] < 50
    print(f"target (all {args.clients} held, p99 < 50 ms): {'met' if target else 'NOT met'}")
    args.report = report
    args.script = stats.script()
    return 0


if __name__ == "__main__":
    sys.exit(main())
