"""The websockets floor ``bench.load`` measures the server against: the same frames, no game.

``python -m bench.floor --frames FILE [--port 0]`` serves ``/ws`` with the websockets
settings the real server uses (``SETTINGS``) and answers the load generator of
``bench.load`` with the frames the real server sent it in the same run (``FILE``, written by
``bench.load`` from what its clients received): ``welcome`` to ``hello``, ``room_state`` to
``create_room`` and ``offer_rematch``, and for each ``move`` the acknowledging ``move_made``,
the AI's ``move_made`` and the other frames the real server sent per client move
(``game_over``, ``ai_thinking``, …) at the same rate; the AI's ``move_made`` after a wait
drawn from the real server's (its clients' time from acknowledgement to the AI's move), so
the clients play at the same pace. A game ends after as many client
moves as the real server's did on average. Each frame is the real one with its ply, side to
move and status changed, JSON-encoded per send as the server does; each message received is
JSON-decoded. No rooms, no storage, no AI, no rate limits: what is left is the cost of
websockets, JSON and the event loop, the floor under the server's CPU per client move.

``--duties FILE`` adds what no server keeping the project's promises can leave out: every
move committed durably (SQLite, WAL, ``synchronous=FULL``, group commits) before its frame
is sent, and the AI's move asked of another process over a pipe (``bench.floor_duties``).
Still no rooms, rules, validation, clocks or outbox: the floor under any such server.

Prints ``READY <port>`` once listening; stops on SIGTERM or SIGINT. SIGUSR1 and SIGUSR2
(``bench.load``'s start and end of the measured play) are ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import random
import signal
import sys
from collections.abc import Sequence
from typing import Any

from bench.floor_duties import Duties

SETTINGS: dict[str, Any] = {
    "max_queue": 4,
    "compression": None,
    "ping_interval": None,  # as bench.load starts the real server
    "backlog": 4096,
}
"""``websockets.asyncio.server.serve`` options, as the real server is given them by
``bench.load``'s server child (``server.app.running`` plus its ``**server_options``);
``max_size`` is four times the ``max_message_bytes`` its welcome announced, as there."""

_encode = json.JSONEncoder(separators=(",", ":")).encode  # the server's compact frames


class Script:
    """The frames of one run of the real server: samples by kind and rates per client move."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.samples: dict[str, dict[str, Any]] = recorded["samples"]
        self.rates: dict[str, float] = recorded["extra_per_client_move"]
        self.game_moves = max(1, round(recorded["client_moves_per_game"]))
        self.reply_seconds: list[float] = recorded.get("reply_seconds") or [0.0]

    def sample(self, kind: str) -> dict[str, Any]:
        return dict(self.samples[kind])


def _position(template: dict[str, Any], ply: int, to_move: int | None) -> dict[str, Any]:
    position = dict(template)
    position["ply"] = ply
    position["to_move"] = to_move
    return position


async def _answer(ws: Any, script: Script, rng: random.Random,
                  duties: Duties | None = None) -> None:
    """One connection: the person is seat 0, the AI seat 1, every game starts at ply 0.
    The first game's length and the other frames' phase are random, so that connections
    made together do not all end their games in the same second of a short run. With
    ``duties``, each move is stored before its frame is sent and the AI's is asked of the
    engine process (``bench.floor_duties``)."""
    owed = {kind: rng.random() for kind in script.rates}
    head_start = rng.randrange(script.game_moves)
    moves_in_game = 0
    moves: list[int] = []
    async for text in ws:
        message = json.loads(text)
        kind = message.get("type")
        if kind == "hello":
            await ws.send(_encode(script.sample("welcome")))
        elif kind in ("create_room", "offer_rematch"):
            state = script.sample("room_state")
            room = dict(state["room"])
            room["status"] = "active"
            room["position"] = _position(room["position"], 0, 0)
            state["room"], state["you"] = room, 0
            moves_in_game, head_start = head_start, 0
            moves = []
            await ws.send(_encode(state))
        elif kind == "move":
            ply = message["ply"]
            moves_in_game += 1
            finished = moves_in_game >= script.game_moves
            ack = script.sample("ack")
            ack.update(room=message["room"], ply=ply, move=message["move"], seat=0,
                       status="active", position=_position(ack["position"], ply + 1, 1))
            if duties is not None:
                await duties.stored((message["room"], ply, str(message["move"])))
            await ws.send(_encode(ack))
            reply = script.sample("reply")
            await asyncio.sleep(rng.choice(script.reply_seconds))
            if duties is not None:
                moves.append(int(message["move"]) if str(message["move"]).isdigit() else 0)
                answer = await duties.asked({"kind": "job", "game": "connect4",
                                             "moves": moves, "level": LEVEL,
                                             "seed": rng.randrange(1 << 31)})
                await duties.stored((message["room"], ply + 1, answer["move"]))
                moves.append(int(answer["move"]))
            reply.update(room=message["room"], ply=ply + 1, seat=1,
                         status="finished" if finished else "active",
                         position=_position(reply["position"], ply + 2,
                                            None if finished else 0))
            await ws.send(_encode(reply))
            for other, rate in script.rates.items():
                owed[other] += rate
                while owed[other] >= 1.0:
                    owed[other] -= 1.0
                    await ws.send(_encode(script.sample(other)))


LEVEL = {"name": "beginner", "depth": 1, "soft_seconds": 0.1, "hard_seconds": 0.5,
         "randomness": 0.5, "think_seconds": 0.45, "book": False, "version": 1}
"""What a job carries of its level (the real job's fields, about its size)."""


async def _serve(port: int, script: Script, duties_path: str | None = None) -> None:
    from websockets.asyncio.server import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    for signum in (signal.SIGUSR1, signal.SIGUSR2):
        loop.add_signal_handler(signum, lambda: None)

    # No cyclic collector: the floor makes next to no cyclic garbage, and with 10,000
    # connections CPython's automatic passes took hundreds of milliseconds each (the server
    # schedules its own, server.gc_policy). The floor is the least websockets costs.
    gc.disable()
    gc.freeze()
    seeds = itertools.count()
    duties = Duties(duties_path) if duties_path else None

    async def handler(ws: Any) -> None:
        try:
            await _answer(ws, script, random.Random(next(seeds)), duties)
        except Exception:  # a client gone mid-frame: the floor has nothing to clean up
            pass

    limit = script.samples["welcome"]["limits"]["max_message_bytes"] * 4
    async with serve(handler, "127.0.0.1", port, max_size=limit, **SETTINGS) as server:
        sock = next(iter(server.sockets))
        print(f"READY {sock.getsockname()[1]}", flush=True)
        await stop.wait()
    if duties is not None:
        duties.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", required=True,
                        help="the JSON file of recorded frames bench.load writes")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--duties", default=None, metavar="SQLITE_FILE",
                        help="store every move in this SQLite file before sending its frame "
                        "and ask an engine process for the AI's (bench.floor_duties)")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"),
                        default=os.environ.get("DISCUS_EVENT_LOOP") or "uvloop",
                        help="the event loop (default: uvloop where installed, as the server)")
    args = parser.parse_args(argv)
    with open(args.frames, encoding="utf-8") as file:
        script = Script(json.load(file))
    main_coroutine = _serve(args.port, script, args.duties)
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            uvloop.run(main_coroutine)
            return 0
    asyncio.run(main_coroutine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
