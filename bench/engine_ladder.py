"""A ladder of engines from elsewhere and the computer's levels, on a server of its own.

``python -m bench.engine_ladder GAME --engine PROTOCOL[@DEPTH]:COMMAND [--engine ...]
[--levels beginner,easy] [--games 40] [--minutes M] [--clock 1+1] [--format csv|json]
[--workers 1]``

Each ``--engine`` is an engine program built outside this repository (never committed
here), e.g. ``gtp:~/Egaroucid/bin/Egaroucid_for_Console.out -gtp -level 5``,
``nboard@8:~/ntest/build/ntest x`` (``@DEPTH``: the NBoard ``set depth``, default 8; one
program at two depths is two entrants) or ``columns:~/connect4/c4solver -a``; it runs in its
program's own directory (where engines keep their books and evaluation files). The bench
starts a server on a free port with a temporary database, an AI worker pool and a ladder
under ``--clock`` (``M+S``: minutes, which may be a fraction, and seconds a move), makes a
bot account per engine and plays it through the bridge (``clients.bridges``) exactly as
``discus bot --engine CMD --protocol P --ladder GAME`` would, enters the levels, waits until
``--games`` ladder games are over (or ``--minutes`` have passed: the games then still
going do not count), and prints the rating list (``discus ladder export``'s CSV or JSON),
each engine named as it names itself; on stderr, each engine's faults and the machine's
load average at the start and the end (the levels search for a time, so a busy machine
weakens them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from clients.bot import BotCore, BotRunner
from clients.bridges import PROTOCOLS, EngineBridge, bridge_from, program_name
from clients.ladder_export import export, fetch
from clients.turns import EngineFault
from server import protocol as p
from server.admin.tokens import Admins
from server.app import Settings, running
from server.bots.accounts import Accounts
from server.engines import AiPool
from server.play.clocks import TIME_CONTROLS, TimeControl
from server.storage import SqlStore

SHED_NEVER = 1e9
"""``Settings.shed_lag_seconds`` for the bench's server: a lag no loop reaches."""


def clock(text: str) -> TimeControl:
    """``M+S`` as the ladder's time control (``0.5+0.5``: 30 s and half a second a move)."""
    minutes, _, seconds = text.partition("+")
    try:
        return TimeControl(f"bench {text}", round(float(minutes) * 60_000),
                           round(float(seconds or 0) * 1000))
    except ValueError:
        raise SystemExit(f"--clock wants M+S (e.g. 1+1), not {text!r}") from None


def engine(spec: str) -> EngineBridge:
    """``PROTOCOL[@DEPTH]:COMMAND`` as a bridge running in its program's directory;
    ``DEPTH`` (NBoard only) is the ``set depth`` it is told."""
    head, _, command = spec.partition(":")
    protocol, at, depth_text = head.partition("@")
    if protocol not in PROTOCOLS or not command.strip():
        raise SystemExit(f"--engine wants PROTOCOL[@DEPTH]:COMMAND with PROTOCOL one of "
                         f"{', '.join(PROTOCOLS)}, not {spec!r}")
    depth = 8
    if at:
        if protocol != "nboard" or not depth_text.isdigit() or int(depth_text) < 1:
            raise SystemExit(f"@DEPTH is a positive search depth for an nboard engine "
                             f"(GTP and columns engines take theirs on their command "
                             f"line), not {head!r}")
        depth = int(depth_text)
    words = shlex.split(command)
    program = Path(os.path.expanduser(words[0]))
    if program.parent == Path("."):
        return bridge_from(shlex.join(words), protocol, depth=depth)  # found on the PATH
    # Absolute, but links kept: a virtualenv's python is a link that must stay one.
    words[0] = str(program.absolute())
    workdir = program.absolute().parent
    return bridge_from(shlex.join(words), protocol, cwd=workdir, depth=depth)


def load() -> str:
    """The machine's load averages over 1, 5 and 15 minutes, as ``uptime`` shows them."""
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def enter_levels(url: str, token: str, game: str, levels: Sequence[str]) -> None:
    """Enter the levels as an admin would (``enter_ladder`` with an ``entrant``)."""
    async with connect(url) as ws:
        await ws.send(p.encode(p.Hello(version=p.PROTOCOL_VERSION, name="bench")))
        await ws.send(json.dumps({"type": "admin_login", "token": token}))
        for level in levels:
            await ws.send(json.dumps({"type": "enter_ladder", "game": game, "entrant": level}))
        answered = 0
        while answered < len(levels):
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message["type"] == "error":
                raise SystemExit(f"the server refused: {message['code']}: {message['message']}")
            answered += message["type"] == "ladder"


async def run(args: argparse.Namespace) -> int:
    bridges = [engine(spec) for spec in args.engine]
    for bridge in bridges:
        if args.game not in bridge.games:
            raise SystemExit(f"{bridge.name} plays {' and '.join(sorted(bridge.games))}, "
                             f"not {args.game}")
    control = clock(args.clock)
    levels = [level for level in args.levels.split(",") if level]
    if not levels:
        raise SystemExit("--levels needs at least one level: the ratings are anchored to them")
    with tempfile.TemporaryDirectory(prefix="discus-engine-ladder-") as data:
        store = SqlStore(f"sqlite+aiosqlite:///{Path(data) / 'ladder.sqlite3'}")
        pool = AiPool(processes=args.workers, games=(args.game,))
        await pool.start(wait_ready=True, timeout=300)
        # The levels asked for are the ladder's own from the start (else its default, the
        # weakest level, would play too); entering them again below changes nothing. No
        # shedding: on a busy machine the server would refuse the bench's own connections.
        settings = Settings(time_controls={**TIME_CONTROLS, control.name: control},
                            ladder_time_control=control.name, ladder_pace_seconds=0.5,
                            ladder_levels={args.game: tuple(levels)},
                            shed_lag_seconds=SHED_NEVER)
        async with running(port=0, store=store, pool=pool, settings=settings) as srv:
            accounts = Accounts(store.engine)
            runners = []
            for k, bridge in enumerate(bridges, 1):
                try:
                    identity = bridge.start()
                except EngineFault as fault:
                    raise SystemExit(f"{bridge.name}: {fault.reason}") from None
                name = f"{identity.name if identity else program_name(str(bridge.command))}"
                account = await accounts.create(f"{name[:30]} #{k}")
                core = BotCore(token=account.token, ladder=args.game, engine=identity,
                               plays=bridge.games)
                runners.append(BotRunner(srv.url, core, bridge))
            tasks = [asyncio.create_task(r.run()) for r in runners]
            _, admin_token = await Admins(store.engine).create("bench")
            await enter_levels(srv.url, admin_token, args.game, levels)
            started = time.monotonic()
            deadline = started + args.minutes * 60 if args.minutes else None
            print(f"started; {load()}", file=sys.stderr, flush=True)
            ladder = await fetch(srv.url, args.game)
            while ladder.played < args.games and (deadline is None
                                                  or time.monotonic() < deadline):
                await asyncio.sleep(2)
                try:
                    ladder = await fetch(srv.url, args.game)
                except (OSError, TimeoutError, ConnectionClosed) as exc:
                    print(f"asking for the ladder failed ({exc}); asking again",
                          file=sys.stderr, flush=True)
                    continue
                print(f"{ladder.played}/{args.games} games, {time.monotonic() - started:.0f} s",
                      file=sys.stderr, flush=True)
            print(f"{ladder.played} games in {time.monotonic() - started:.0f} s; {load()}",
                  file=sys.stderr, flush=True)
            for runner in runners:
                runner.stop()
            await asyncio.gather(*tasks)
            for bridge in bridges:
                bridge.close()
                for reason in bridge.faults:
                    print(f"{bridge.name}: {reason}", file=sys.stderr)
    print(export(ladder, args.format), end="")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_ladder",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=("othello", "connect4"))
    parser.add_argument("--engine", action="append", required=True,
                        metavar="PROTOCOL[@DEPTH]:COMMAND")
    parser.add_argument("--levels", default="beginner,easy",
                        help="comma-separated AI levels to enter (default beginner,easy)")
    parser.add_argument("--games", type=int, default=40, help="ladder games to play")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after this long even if fewer games are over")
    parser.add_argument("--clock", default="1+1", help="the ladder's clock, M+S")
    parser.add_argument("--format", choices=("csv", "json"), default="csv")
    parser.add_argument("--workers", type=int, default=1, help="AI worker processes")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
