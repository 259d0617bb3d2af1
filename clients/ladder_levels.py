"""``discus ladder levels``: which AI levels a running server's ladder has, set by an admin.

A client of the documented protocol (``docs/PROTOCOL.md``, the ladder's messages), not a
database tool: the ladder runs in the server (on a cluster, on one node), so a change must
go through it to take effect at once; ``enter_ladder`` and ``leave_ladder`` with an admin's
token are how. A level left is kept off: the server enters its default levels only in a
ladder that never had one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

TIMEOUT_SECONDS = 15.0
"""How long to wait for each answer before giving up."""


async def _answer(ws: ClientConnection, kinds: set[str]) -> dict[str, Any]:
    """The next message of one of ``kinds``; an ``error`` raises ``RuntimeError`` with its
    text. Anything else (the lobby's news) is skipped."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT_SECONDS))
        if message.get("type") == "error":
            raise RuntimeError(f"{message.get('code')}: {message.get('message')}")
        if message.get("type") in kinds:
            return message


def _levels(ladder: dict[str, Any]) -> list[str]:
    """The levels active on a ``ladder`` message's list."""
    return [e["level"] for e in ladder["entrants"] if e.get("level") and e["active"]]


async def set_levels(url: str, token: str, game: str, wanted: Sequence[str] | None
                     ) -> list[str]:
    """Sign in as the admin of ``token`` at ``url``; if ``wanted`` is given, enter those
    levels in ``game``'s ladder and take every other level off it. Returns the levels on the
    ladder afterwards."""
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "name": "ladder levels"}))
        await _answer(ws, {"welcome"})
        await ws.send(json.dumps({"type": "admin_login", "token": token}))
        await _answer(ws, {"admin_welcome"})
        await ws.send(json.dumps({"type": "get_ladder", "game": game}))
        ladder = await _answer(ws, {"ladder"})
        if wanted is not None:
            # Enter first: the first entry makes a new ladder, with its default levels,
            # which the leaving then takes off as any other level not wanted.
            for name in [n for n in wanted if n not in _levels(ladder)]:
                await ws.send(json.dumps({"type": "enter_ladder", "game": game,
                                          "entrant": name}))
                ladder = await _answer(ws, {"ladder"})
            for name in [n for n in _levels(ladder) if n not in wanted]:
                await ws.send(json.dumps({"type": "leave_ladder", "game": game,
                                          "entrant": name}))
                ladder = await _answer(ws, {"ladder"})
        return _levels(ladder)


def main_ladder_levels(url: str, token: str | None, game: str, levels: Sequence[str]) -> int:
    """The command: print the levels on ``game``'s ladder after the change (none asked:
    just print them). Exit status 2 without a token, 1 if the server refused."""
    if not token:
        print("an admin's token is needed: --token (from `discus admins create`)")
        return 2
    try:
        now = asyncio.run(set_levels(url, token, game, list(levels) or None))
    except (RuntimeError, OSError, TimeoutError) as exc:
        print(f"the server refused: {exc}")
        return 1
    print(f"{game} ladder levels: {' '.join(now) if now else '(none: nobody can be rated)'}")
    return 0
