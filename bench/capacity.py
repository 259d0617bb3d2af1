"""How many games one node serves against each AI level: the operator's sizing guide.

``python -m bench.capacity [--games connect4,othello] [--levels beginner,...,expert]
[--workers N] [--seconds 60] [--think 5] [--max-games 512] [--no-idle-proving]`` starts
``discus serve`` (one node, its default settings, ``--workers`` engine processes: by default
one per core; ``--no-idle-proving`` passed on) and,
for each game and level in turn, plays rounds of games against that level, four times the
games each round (from one per worker; after the first failure, one round at twice the last
pass) until a round fails: its AI moves' p99,
as a person sees it (from their own move's ``move_made`` to the AI's), passes the level's
hard time (or, for a level quicker than that, the least time ``discus serve`` lets an AI
move take to be shown, ``MIN_AI_MOVE_SECONDS``; plus ``WIRE_SLACK``), or a move came from
the quick fallback (``stats.pool.fallbacks`` grew), or the acknowledgement p99 of the
people's moves passes ``ACK_P99_MS`` (a p99 of fewer than 100 moves allows one slower move:
``within_p99``). Each client plays at a
person's pace: before each move it thinks for a time drawn around ``--think`` seconds
(normal, a fifth of it either way, never under a tenth), and at a game's end starts another.

It prints one row per game and level: the most games that passed, per worker core; and in
that round, the AI's CPU per move (the engine processes' CPU over the round, divided by the
AI moves), the AI move p50/p99, the ack p99 and the position cache's hit rate (its lookups
over the round, from ``stats``). A level that passed ``--max-games`` shows ``>=``.

Bounded: each round lasts ``--seconds`` of play after its clients connected; at most
``log4(max-games / workers) + 2`` rounds per level.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ai.levels import DEFAULT_LEVELS, find
from bench.load import Server, cli_server, cpu_seconds, raise_fd_limit
from server.settings import MIN_AI_MOVE_SECONDS

ACK_P99_MS = 50.0
"""The acknowledgement p99 (a person's move to its ``move_made``) a round must stay under."""

WIRE_SLACK = 0.1
"""Seconds added to a level's bound for what lies between the server and the clients (the
move's frames, this process's own loop): the bound is the server's, measured here."""


@dataclass
class Round:
    """What one round of play measured."""

    games: int
    ai_seconds: list[float] = field(default_factory=list)
    acks: list[float] = field(default_factory=list)
    errors: int = 0
    measuring: bool = False
    lags: list[float] = field(default_factory=list)
    """How late this process's own 50 ms timer fired while measuring: an ack that waited
    for this loop is the bench's delay, not the server's."""

    def p(self, values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _recv(ws: Any, kind: str, **fields: Any) -> dict[str, Any]:
    while True:
        message: dict[str, Any] = json.loads(await ws.recv())
        if message["type"] == "error":
            raise RuntimeError(f"{message['code']}: {message['message']}")
        if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
            return message


async def _player(url: str, index: int, game: str, level: str, think: float,
                  stop_at: float, played: Round) -> None:
    """One person: games against ``level`` until ``stop_at``, each move after a think."""
    from websockets.asyncio.client import connect

    rng = random.Random(index)
    async with connect(url, max_size=None, open_timeout=120, ping_interval=None) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": f"cap{index}"}))
        await _recv(ws, "welcome")
        while time.monotonic() < stop_at:
            await ws.send(json.dumps({"type": "create_room", "game": game, "seat": 0,
                                      "opponent": {"kind": "ai", "level": level}}))
            state = await _recv(ws, "room_state")
            room, me = state["room"]["id"], state["you"]
            position, status = state["room"]["position"], state["room"]["status"]
            while status == "active" and time.monotonic() < stop_at:
                if position["to_move"] != me:  # a forced pass gave the AI the move again
                    made = await _recv(ws, "move_made")
                    position, status = made["position"], made["status"]
                    continue
                await asyncio.sleep(max(think / 10, rng.gauss(think, think / 5)))
                ply = position["ply"]
                sent = time.perf_counter()
                await ws.send(json.dumps({"type": "move", "room": room, "ply": ply,
                                          "move": rng.choice(position["legal_moves"])}))
                made = await _recv(ws, "move_made", ply=ply)
                acked = time.perf_counter()
                measuring = played.measuring
                if measuring:
                    played.acks.append(acked - sent)
                position, status = made["position"], made["status"]
                if status != "active" or position["to_move"] == me:
                    continue
                made = await _recv(ws, "move_made", ply=ply + 1)
                if measuring and played.measuring:
                    played.ai_seconds.append(time.perf_counter() - acked)
                position, status = made["position"], made["status"]
            await ws.send(json.dumps({"type": "leave", "room": room}))


async def _stats(url: str) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": "capstats"}))
        await _recv(ws, "welcome")
        await ws.send(json.dumps({"type": "stats"}))
        return await _recv(ws, "stats")


def _engine_pids(server_pid: int) -> list[int]:
    """The server's child processes (its engine processes), from /proc."""
    pids = []
    for task in os.listdir(f"/proc/{server_pid}/task"):
        try:
            with open(f"/proc/{server_pid}/task/{task}/children") as children:
                pids += [int(p) for p in children.read().split()]
        except FileNotFoundError:
            continue
    return pids


def _cpu(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except FileNotFoundError:
            pass
    return total


async def _round(url: str, server_pid: int, game: str, level: str, games: int,
                 args: argparse.Namespace) -> dict[str, Any]:
    """Play ``games`` games against ``level`` for ``args.seconds`` after a warm-up of one
    think time; return the round's figures."""
    played = Round(games)
    stop_at = time.monotonic() + args.think * 2 + args.seconds
    players = [asyncio.create_task(_player(url, i, game, level, args.think, stop_at, played))
               for i in range(games)]
    await asyncio.sleep(args.think * 2)  # every client connected and into its first game
    before, engines = await _stats(url), _engine_pids(server_pid)
    cpu = _cpu(engines)
    played.measuring = True
    while (left := stop_at - time.monotonic()) > 0:
        due = time.perf_counter() + min(0.05, left)
        await asyncio.sleep(min(0.05, left))
        played.lags.append(time.perf_counter() - due)
    played.measuring = False
    cpu = _cpu(engines) - cpu
    after = await _stats(url)
    results = await asyncio.gather(*players, return_exceptions=True)
    played.errors = sum(isinstance(r, Exception) for r in results)
    pool_before, pool_after = before["pool"] or {}, after["pool"] or {}
    lookups = hits = 0
    if before.get("cache") and after.get("cache"):
        lookups = after["cache"]["lookups"] - before["cache"]["lookups"]
        hits = after["cache"]["hits"] - before["cache"]["hits"]
    hard = max(find(game, level, DEFAULT_LEVELS).hard_time, MIN_AI_MOVE_SECONDS) + WIRE_SLACK
    moves = len(played.ai_seconds)
    figures = {
        "games": games, "ai_moves": moves,
        "ai_p50": played.p(played.ai_seconds, 0.5), "ai_p99": played.p(played.ai_seconds, 0.99),
        "ack_p99_ms": played.p(played.acks, 0.99) * 1000,
        "ack_max_ms": max(played.acks, default=0.0) * 1000,
        "lag_p99_ms": played.p(played.lags, 0.99) * 1000,
        "lag_max_ms": max(played.lags, default=0.0) * 1000,
        "fallbacks": pool_after.get("fallbacks", 0) - pool_before.get("fallbacks", 0),
        "cpu_ms_per_move": cpu * 1000 / moves if moves else 0.0,
        "hit_rate": hits / lookups if lookups else 0.0, "errors": played.errors,
    }
    figures["passed"] = (moves > 0 and figures["fallbacks"] == 0 and played.errors == 0
                         and within_p99(played.ai_seconds, hard)
                         and within_p99(played.acks, ACK_P99_MS / 1000))
    return figures


def within_p99(values: list[float], bound: float) -> bool:
    """Whether at most 1% of ``values`` pass ``bound``, one of them allowed however few there
    are: a round of a few games has a few dozen moves, whose "p99" would be their slowest
    one (a SQLite checkpoint, a collection) rather than the round's tail."""
    return sum(value > bound for value in values) <= max(1, len(values) // 100)


async def _level(url: str, server_pid: int, game: str, level: str, workers: int,
                 args: argparse.Namespace) -> tuple[dict[str, Any] | None, bool]:
    """The most games of ``level`` that passed (None if even the first round failed), and
    whether the ramp stopped at ``--max-games`` rather than at a failure. The games grow
    fourfold each round from one per worker; after a failure one round at twice the last
    pass narrows the answer to a factor of two, in half the rounds a doubling ramp takes."""

    async def passed(games: int) -> dict[str, Any] | None:
        figures = await _round(url, server_pid, game, level, games, args)
        print(f"  {game} {level}: {games} games -> "
              f"{'pass' if figures['passed'] else 'FAIL'} (AI p99 {figures['ai_p99']:.2f} s, "
              f"ack p99 {figures['ack_p99_ms']:.1f} ms, max {figures['ack_max_ms']:.0f} ms, "
              f"this loop's lag p99 {figures['lag_p99_ms']:.1f} ms, "
              f"max {figures['lag_max_ms']:.0f} ms, fallbacks {figures['fallbacks']}, "
              f"AI moves {figures['ai_moves']}, errors {figures['errors']})", flush=True)
        return figures if figures["passed"] else None

    best: dict[str, Any] | None = None
    games = workers
    while (figures := await passed(games)) is not None:
        best = figures
        if games >= args.max_games:
            return best, True
        games = min(games * 4, args.max_games)
    if best is not None and 2 * best["games"] < games:
        best = await passed(2 * best["games"]) or best
    return best, False


async def _main(args: argparse.Namespace) -> None:
    workers = max(1, args.workers or os.cpu_count() or 1)
    args.workers, args.loop = workers, None
    raise_fd_limit(args.max_games * 2 + 256)
    with tempfile.TemporaryDirectory(prefix="discus-capacity-") as folder:
        server: Server = cli_server(args, None, folder)
        if args.no_idle_proving:
            server.argv.append("--no-idle-proving")
        assert server.port is not None and server.log is not None
        with open(server.log, "w") as log:
            child = subprocess.Popen(server.argv, cwd=server.cwd, env=server.env,
                                     stdout=subprocess.DEVNULL, stderr=log)
        try:
            url = f"ws://127.0.0.1:{server.port}/ws"
            await _ready(url, child)
            rows = []
            for game in args.games.split(","):
                for level in args.levels.split(","):
                    best, capped = await _level(url, child.pid, game, level, workers, args)
                    rows.append((game, level, best, capped))
        finally:
            child.terminate()
            child.wait(60)
    print(f"\nOne node, {workers} engine processes, a think time around {args.think:g} s, "
          f"{args.seconds:g} s rounds; a round passes while the AI's moves' p99 stays within "
          f"the level's hard time (at least {MIN_AI_MOVE_SECONDS:g} s, the least an AI move "
          f"is shown after), none falls back and the ack p99 stays under {ACK_P99_MS:g} ms.")
    print(f"{'game':9} {'level':9} {'games/core':>10} {'AI CPU/move':>12} {'AI p50':>7} "
          f"{'AI p99':>7} {'ack p99':>8} {'cache hits':>10}")
    for game, level, best, capped in rows:
        if best is None:
            print(f"{game:9} {level:9} {'< 1':>10}   (even one game per worker failed)")
            continue
        per_core = f"{'>=' if capped else ''}{best['games'] / workers:g}"
        print(f"{game:9} {level:9} {per_core:>10} {best['cpu_ms_per_move']:9.0f} ms "
              f"{best['ai_p50']:6.2f}s {best['ai_p99']:6.2f}s {best['ack_p99_ms']:6.1f}ms "
              f"{best['hit_rate']:10.1%}")


async def _ready(url: str, child: subprocess.Popen[bytes], timeout: float = 600) -> None:
    """Until the server answers ``stats`` with every engine process ready."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError("the server exited before it was ready")
        try:
            pool = (await _stats(url))["pool"]
            if pool and pool["ready"] == pool["workers"]:
                return
        except OSError:
            pass
        await asyncio.sleep(0.5)
    raise TimeoutError("the server's engines were not ready in time")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="connect4,othello")
    parser.add_argument("--levels", default="beginner,easy,medium,hard,expert")
    parser.add_argument("--workers", type=int, default=None,
                        help="engine processes (default: one per core)")
    parser.add_argument("--seconds", type=float, default=60.0, help="play measured per round")
    parser.add_argument("--think", type=float, default=5.0, help="a person's think time")
    parser.add_argument("--max-games", type=int, default=512)
    parser.add_argument("--no-idle-proving", action="store_true",
                        help="the server's idle engines prove no positions meanwhile")
    args = parser.parse_args(argv)
    asyncio.run(_main(args))


if __name__ == "__main__":
    main()
