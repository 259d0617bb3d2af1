"""``discus bot``: the reference bot from the command line (``server.cli`` parses the
arguments), with an engine of its own (``random``, ``ai:LEVEL``) or a bridge to a program
speaking NBoard, GTP or ``columns`` (``--engine CMD --protocol P``, ``clients.bridges``)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import signal
import sys
from pathlib import Path

from websockets.exceptions import InvalidURI

from clients.bot import BotCore, BotRunner, CreateSpec, Engine, Finished, engine_from
from clients.bridges import EngineBridge, bridge_from
from clients.turns import EngineFault


def engine_of(args: argparse.Namespace) -> Engine:
    """The engine the arguments name: a bridge with ``--protocol``, else ``engine_from``."""
    protocol = getattr(args, "protocol", None)
    if protocol is None:
        return engine_from(args.engine)
    workdir = getattr(args, "engine_dir", None)
    return bridge_from(args.engine, protocol, cwd=Path(workdir) if workdir else None,
                       depth=getattr(args, "depth", 8), margin_ms=getattr(args, "margin_ms", 300),
                       move_seconds=getattr(args, "move_time", 10.0),
                       name=getattr(args, "engine_name", None))


def main_bot(args: argparse.Namespace) -> int:
    """Run the bot from the CLI's arguments until stopped (SIGINT/SIGTERM) or ``--stop-after``
    games are over; prints one line per finished game."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if sum(1 for given in (args.create, args.challenge, getattr(args, "ladder", None),
                           getattr(args, "arena", None)) if given) > 1:
        raise ValueError("give one of --create, --challenge, --ladder and --arena")
    create = (CreateSpec.parse(args.create) if args.create
              else CreateSpec.challenge(args.challenge) if args.challenge else None)
    if getattr(args, "clock", None):
        if create is None:
            raise ValueError("--clock times the games the bot starts: give it with --create "
                             "or --challenge")
        create = dataclasses.replace(create, time_control=args.clock)
    engine = engine_of(args)
    if isinstance(engine, EngineBridge):
        asked = (create.game if create is not None else None) or getattr(args, "ladder", None)
        if asked is not None and asked not in engine.games:
            raise ValueError(f"a {args.protocol} engine plays "
                             f"{' and '.join(sorted(engine.games))}, not {asked}")
        try:
            identity = engine.start()  # before connecting: its name goes with enter_ladder
        except EngineFault as fault:
            raise ValueError(f"the engine did not start: {fault.reason}") from None
        logging.getLogger("discus.bot").info(
            "engine %s; the bridge keeps %d ms of every clock for the network",
            identity.text() if identity else engine.name, engine.margin_ms)
    core = BotCore(token=args.token, name=args.name or "RefBot", games=args.games,
                   create=create, stop_after=args.stop_after,
                   ladder=getattr(args, "ladder", None), arena=getattr(args, "arena", None),
                   engine=engine.identity if isinstance(engine, EngineBridge) else None,
                   plays=engine.games if isinstance(engine, EngineBridge) else None)

    def report(game: Finished) -> None:
        reason = game.result.reason if game.result else "ended while away"
        print(f"{game.game} room {game.room}: {game.outcome} ({reason})", flush=True)

    async def go() -> None:
        runner = BotRunner(args.url, core, engine, on_finished=report)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, runner.stop)
        await runner.run()

    try:
        asyncio.run(go())
    except InvalidURI as exc:
        raise ValueError(str(exc)) from None
    finally:
        if isinstance(engine, EngineBridge):
            engine.close()
    if core.fatal is not None:
        print(f"discus bot: the server refused this bot: {core.fatal.code}: "
              f"{core.fatal.message}", file=sys.stderr)
        return 1
    return 0
