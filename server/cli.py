"""The ``discus`` command: one entry point, one subcommand per job.

Subcommands import their layer only when run, so ``discus perft`` never pays for the server's
imports and ``discus serve`` never parses analysis options.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import games
from server.web.sources import DEFAULT_SOURCE_LIMITS


def _perft(args: argparse.Namespace) -> int:
    import games

    game = games.load(args.game)
    print(game.perft(game.initial(), args.depth))
    return 0


def _analyse(args: argparse.Namespace) -> int:
    from ai.analyse import analyse_lines, answer_file, limits_from

    limits = limits_from(depth=args.depth, time=args.time, exact=args.exact)
    if args.positions:
        with open(args.positions, encoding="utf-8") as lines:
            return answer_file(args.game, lines, limits)
    else:
        for row in analyse_lines(args.game, [args.position or ""], limits, raw=True):
            print(row, flush=True)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from server.serve import run
    from server.storage import redis_url
    from server.web.sources import SourceLimits

    if args.workers == 0 and redis_url(args.redis_url) is None:
        print("discus serve --workers 0 needs Redis (--redis-url or $REDIS_URL): its AI moves "
              "are found by `discus worker` processes that read their jobs there",
              file=sys.stderr)
        return 2
    run(host=args.host, port=args.port, database_url=args.database_url, redis_url=args.redis_url,
        workers=args.workers, bot_registration=args.bot_registration, lease=args.lease,
        chat_guests=args.chat_guests, idle_proving=not args.no_idle_proving,
        trusted_proxies=tuple(args.trusted_proxy), allowed_origins=tuple(args.allowed_origin),
        sources=SourceLimits(connections=args.connections_per_address,
                             hellos_per_minute=args.hellos_per_minute,
                             rooms_per_minute=args.rooms_per_minute))
    return 0


def _book(args: argparse.Namespace) -> int:
    if args.action == "proven":
        import asyncio

        from server.storage.proven import proven_report

        report = asyncio.run(proven_report(args.database_url, args.game))
        print("\n".join(report.lines()))
        return 0
    if args.game == "othello":
        from ai.othello import book_build as othello_book

        return othello_book.main({"build": [], "verify": ["--verify", str(args.sample)],
                                  "stats": ["--stats"]}[args.action])
    from ai.connect4 import book_build

    options = {"build": [] if args.processes is None else ["--processes", str(args.processes)],
               "verify": ["--verify", str(args.sample)], "stats": ["--stats"]}
    return book_build.main(options[args.action])


def _train(args: argparse.Namespace) -> int:
    from ai.othello import train

    return train.main(args.rest)


def _worker(args: argparse.Namespace) -> int:
    import os

    from server.engines.remote_worker import run
    from server.storage import redis_url
    from server.storage.config import database_url

    url = redis_url(args.redis_url)
    durable = args.database_url or os.environ.get("DATABASE_URL")
    if url is None:
        print("discus worker needs Redis (--redis-url or $REDIS_URL): the servers queue their "
              "AI moves there", file=sys.stderr)
        return 2
    run(url, processes=args.processes, database_url=database_url(durable) if durable else None,
        heartbeat=args.heartbeat_file, idle_proving=not args.no_idle_proving)
    return 0


def _workers(text: str, least: int = 0) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if count < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more")
    return count


def _warm_up(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    import ai
    from ai.jit import cache_counts

    for game in ai.names():
        ai.warm_up(game)
    loaded, compiled = cache_counts()
    print(f"engines in {Path(ai.__file__).parent}: {loaded} kernels loaded from numba's "
          f"cache, {compiled} compiled, in {time.perf_counter() - started:.1f} s")
    if args.check and compiled:
        print("discus warm-up: a start compiles kernels instead of loading them; run "
              "`discus warm-up` as the user and with the NUMBA_CACHE_DIR that serve will have",
              file=sys.stderr)
        return 1
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from server.storage import migrate

    migrate(args.database_url)
    return 0


def _bots(args: argparse.Namespace) -> int:
    from server.bots.accounts import main_bots

    return main_bots(args.action, getattr(args, "name", None), args.database_url)


def _admins(args: argparse.Namespace) -> int:
    from server.admin.tokens import main_admins

    return main_admins(args.action, getattr(args, "name", None), args.database_url)


def _bot(args: argparse.Namespace) -> int:
    from clients.main import main_bot

    return main_bot(args)


def _ladder(args: argparse.Namespace) -> int:
    from clients.ladder_export import main_export

    return main_export(args.url, args.game, args.format)


def _ladder_levels(args: argparse.Namespace) -> int:
    from clients.ladder_levels import main_ladder_levels

    return main_ladder_levels(args.url, args.token, args.game, args.levels)


def _calibrate(args: argparse.Namespace) -> int:
    from server.admin.calibration import main_calibrate

    return main_calibrate(
        args.game, args.games_per_pair, args.levels, args.seed, args.database_url,
        args.pairs, args.processes, args.time_scale,
    )  # fmt: skip


def _bench(args: argparse.Namespace) -> int:
    from bench.run import main as bench_main

    return bench_main(args.rest)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="discus", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("perft", help="count leaves of the move tree from the start position")
    p.add_argument("game", choices=games.names())
    p.add_argument("depth", type=int)
    p.set_defaults(func=_perft)

    p = sub.add_parser("analyse", help="search positions and print one JSON object per position")
    p.add_argument("game", choices=games.names())
    p.add_argument(
        "position", nargs="?", default=None,
        help="Connect Four: moves like 4453; Othello: moves like f5d6 or a 64-square board "
        "string and side to move ('---...X-- X'); default: the start position",
    )
    p.add_argument("--depth", type=int, default=None, help="deepest iteration, in plies")
    p.add_argument("--time", type=float, default=None, help="seconds allowed per position")
    p.add_argument("--exact", action="store_true", help="solve to the end of the game")
    p.add_argument("--positions", default=None, help="file with one position a line")
    p.set_defaults(func=_analyse)

    p = sub.add_parser("serve", help="run the game server (web page at /, websocket at /ws)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--database-url", default=None, help="default: $DATABASE_URL, else SQLite")
    p.add_argument("--redis-url", default=None, help="default: $REDIS_URL, else in-process")
    p.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help="AI worker processes, each with its own search tables (default: one "
                   "per core); 0: none, `discus worker` processes find the AI moves through "
                   "Redis")
    p.add_argument("--bot-registration", action="store_true",
                   help="let any connection make a bot account with register_bot (rate "
                   "limited; default: only admins make bot accounts)")
    p.add_argument("--chat-guests", action="store_true",
                   help="let guests write in the lobby chat too (default: accounts and bots "
                   "only; guests always chat in their games)")
    p.add_argument("--no-idle-proving", action="store_true",
                   help="do not let idle AI workers prove the positions of stored Connect "
                   "Four games, most played first (default: they do, giving way at once to "
                   "any move, review or analysis)")
    p.add_argument("--lease", type=float, default=None, metavar="SECONDS",
                   help="with Redis and a database shared by several nodes: how long a "
                   "silent node keeps its rooms before others take them over (default 3)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="CIDR",
                   help="a load balancer's address or network whose connections start with a "
                   "PROXY protocol v2 header naming the real client (HAProxy's send-proxy-v2; "
                   "repeat for several; docs/SECURITY.md)")
    p.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                   help="a web origin (https://example.org) whose pages may connect besides "
                   "the server's own (repeat for several)")
    for flag, default, what in (
            ("--connections-per-address", DEFAULT_SOURCE_LIMITS.connections,
             "open connections one client address may hold"),
            ("--hellos-per-minute", DEFAULT_SOURCE_LIMITS.hellos_per_minute,
             "hello messages one client address may send a minute"),
            ("--rooms-per-minute", DEFAULT_SOURCE_LIMITS.rooms_per_minute,
             "rooms one client address may create a minute")):
        p.add_argument(flag, type=lambda t: _workers(t, least=1), default=default, metavar="N",
                       help=f"{what} (default {default}; docs/SECURITY.md)")
    p.set_defaults(func=_serve)

    p = sub.add_parser("book", help="the opening books (Connect Four by default, Othello): "
                       "build, verify, stats; proven: what the position cache holds proven")
    p.add_argument("action", choices=("build", "verify", "stats", "proven"))
    p.add_argument("game", nargs="?", default="connect4", choices=("connect4", "othello"))
    p.add_argument("--sample", type=int, default=20, metavar="N",
                   help="entries verify solves (Othello: searches) again (default 20)")
    p.add_argument("--processes", type=int, default=None, metavar="N",
                   help="processes the Connect Four build solves on (default: one a core)")
    p.add_argument("--database-url", default=None,
                   help="proven: the database (default: $DATABASE_URL, else SQLite)")
    p.set_defaults(func=_book)

    p = sub.add_parser("train", help="make the Othello evaluation's training data and fit its "
                       "weights (resumable; see ai/othello/train.py)")
    p.add_argument("game", choices=("othello",))
    p.add_argument("rest", nargs=argparse.REMAINDER,
                   help="--games N, --seed S, --work DIR, --out FILE, --exact-empties E, "
                   "--depth D")
    p.set_defaults(func=_train)

    p = sub.add_parser("worker", help="find AI moves for every server sharing a Redis")
    p.add_argument("--redis-url", default=None, help="default: $REDIS_URL (required)")
    p.add_argument("--processes", type=lambda t: _workers(t, least=1), default=None,
                   metavar="N", help="engine processes (default: one per core)")
    p.add_argument("--database-url", default=None,
                   help="the servers' database, whose position_cache table is the durable "
                   "tier of the position cache (default: $DATABASE_URL, else none)")
    p.add_argument("--heartbeat-file", type=Path, default=None, metavar="PATH",
                   help="touched every second while the worker reaches Redis (for a "
                   "healthcheck)")
    p.add_argument("--no-idle-proving", action="store_true",
                   help="do not let idle engine processes prove the positions of stored "
                   "Connect Four games (with a database and two processes or more, they do)")
    p.set_defaults(func=_worker)

    p = sub.add_parser("warm-up", help="compile the engines, or load them from numba's cache")
    p.add_argument("--check", action="store_true",
                   help="fail if any kernel had to be compiled (run it twice to prove that a "
                   "start loads every kernel from the cache)")
    p.set_defaults(func=_warm_up)

    p = sub.add_parser("migrate", help="upgrade a database to the current schema")
    p.add_argument("--database-url", default=None, help="default: $DATABASE_URL, else SQLite")
    p.set_defaults(func=_migrate)

    p = sub.add_parser("bots", help="create, list and revoke bot accounts and their tokens")
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--database-url", default=None, help="default: $DATABASE_URL, else SQLite")
    bots = p.add_subparsers(dest="action", required=True)
    bots.add_parser("create", parents=[db], help="make a bot and print its token (shown once)"
                    ).add_argument("name")
    bots.add_parser("list", parents=[db], help="every bot: name, created, last used, revoked")
    bots.add_parser("revoke", parents=[db], help="revoke a bot's token").add_argument(
        "name", metavar="NAME_OR_ID")
    p.set_defaults(func=_bots)

    p = sub.add_parser("admins", help="create, list and revoke admin accounts (the /admin page)")
    admins = p.add_subparsers(dest="action", required=True)
    admins.add_parser("create", parents=[db], help="make an admin and print its token (once)"
                      ).add_argument("name")
    admins.add_parser("list", parents=[db], help="every admin: name, created, last used, revoked")
    admins.add_parser("revoke", parents=[db], help="revoke an admin's token").add_argument(
        "name", metavar="NAME_OR_ID")
    p.set_defaults(func=_admins)

    p = sub.add_parser("bot", help="run the reference bot against a server (docs/BOTS.md)")
    p.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    p.add_argument("--token", default=None, help="the bot's token from `discus bots create`")
    p.add_argument("--engine", default="random",
                   help="random, ai:LEVEL (e.g. ai:medium), or with --protocol the command "
                   "line of an engine program (e.g. \"./ntest x\")")
    p.add_argument("--protocol", default=None, choices=("nboard", "gtp", "columns"),
                   help="run --engine as a program speaking this protocol: nboard (NTest, "
                   "Edax; Othello), gtp (Egaroucid; Othello), columns (Connect Four; "
                   "docs/BOTS.md)")
    p.add_argument("--engine-dir", default=None, metavar="DIR",
                   help="the engine program's working directory (default: the bot's)")
    p.add_argument("--engine-name", default=None,
                   help="what a columns engine is called (default: its file name)")
    p.add_argument("--depth", type=int, default=8,
                   help="NBoard engines: the search depth sent with `set depth` (default 8)")
    p.add_argument("--margin-ms", type=int, default=300,
                   help="engines: milliseconds kept off every clock for the network "
                   "(default 300)")
    p.add_argument("--move-time", type=float, default=10.0, metavar="SECONDS",
                   help="engines: the bound on each answer in untimed games (default 10)")
    p.add_argument("--games", type=int, default=1, help="games to play at once")
    p.add_argument("--create", default=None, metavar="GAME/LEVEL",
                   help="create rooms: connect4/beginner vs an AI level, connect4/open for "
                   "anyone; default: join open rooms")
    p.add_argument("--challenge", default=None, metavar="PLAYER/GAME",
                   help="challenge a bot (by name) or player (by id) to games of GAME, e.g. "
                   "RandyBot/connect4; asks again a while after a decline")
    p.add_argument("--ladder", default=None, metavar="GAME",
                   help="enter GAME's engine ladder (a bot's token needed) and play the games "
                   "it schedules, e.g. --ladder othello")
    p.add_argument("--arena", default=None, metavar="TOURNAMENT",
                   help="join the arena (or Swiss, or round-robin) with this id on every "
                   "(re)connect and play the games it pairs the bot into")
    p.add_argument("--clock", default=None, metavar="TIME_CONTROL",
                   help="with --create or --challenge: timed games, e.g. 3+2 (minutes + "
                   "seconds a move; the server's welcome lists them); default: untimed")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="exit after N finished games (default: play until stopped)")
    p.add_argument("--name", default=None, help="display name when no token is given")
    p.set_defaults(func=_bot)

    p = sub.add_parser("ladder", help="the engine ladders of a running server")
    ladder = p.add_subparsers(dest="action", required=True)
    export = ladder.add_parser("export", help="print GAME's rating list (games, score, rating "
                               "and error bars) as CSV or JSON")
    export.add_argument("game", choices=games.names())
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    export.set_defaults(func=_ladder)
    levels = ladder.add_parser(
        "levels", help="show the AI levels on GAME's ladder; with LEVELs, make those its levels "
        "(entering the missing ones, taking the others off; an admin's)")
    levels.add_argument("game", metavar="GAME")
    levels.add_argument("levels", nargs="*", metavar="LEVEL")
    levels.add_argument("--url", default="ws://127.0.0.1:8000/ws")
    levels.add_argument("--token", default=None, help="an admin's token (`discus admins "
                        "create`)")
    levels.set_defaults(func=_ladder_levels)

    p = sub.add_parser("calibrate", help="play levels against each other and rate them (Elo)")
    p.add_argument("game", choices=games.names())
    p.add_argument("--games-per-pair", type=int, default=8, help="default: 8")
    p.add_argument("--levels", default=None, help="comma-separated names; default: all")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--pairs",
        choices=["adjacent", "all"],
        default="adjacent",
        help="each level against the next (default) or every pair",
    )
    p.add_argument("--processes", type=int, default=None, help="default: one per core")
    p.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        help="multiply the levels' time budgets (default 1: as in live games)",
    )
    p.add_argument("--database-url", default=None, help="default: $DATABASE_URL, else SQLite")
    p.set_defaults(func=_calibrate)

    p = sub.add_parser("bench", help="run benchmarks (see bench/run.py)")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=_bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except ValueError as exc:
        print(f"discus {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
