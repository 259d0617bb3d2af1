"""A small protocol client for the server tests (and a model of what a bot does)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

PATIENCE = 5.0
"""Seconds ``recv`` and ``expect`` wait by default."""


class Client:
    """One websocket connection; ``expect`` reads until a message of the wanted type,
    keeping what it skipped in ``seen`` so tests can check order."""

    def __init__(self, ws: ClientConnection, patience: float = PATIENCE) -> None:
        self.ws = ws
        self.patience = patience
        """How long ``recv`` and ``expect`` wait unless told."""
        self.seen: list[dict[str, Any]] = []
        self.welcome: dict[str, Any] = {}

    @classmethod
    async def open(cls, url: str, name: str | None = "tester", resume: str | None = None,
                   hello: bool = True, source: str | None = None, patience: float = PATIENCE,
                   **options: Any) -> Client:
        """``source``: the local address to connect from (``127.0.0.2``, ``127.0.0.3``, ...
        on loopback), so a test can play distinct clients' addresses; other ``options`` go
        to websockets' ``connect``."""
        if source is not None:
            options["local_addr"] = (source, 0)
        client = cls(await connect(url, max_size=None, **options), patience)
        if hello:
            await client.send(type="hello", version=1, name=name, resume=resume)
            client.welcome = await client.expect("welcome")
        return client

    @property
    def player_id(self) -> str:
        return str(self.welcome["player"]["id"])

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def recv(self, timeout: float | None = None) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.ws.recv(), timeout or self.patience)
        message: dict[str, Any] = json.loads(frame)
        self.seen.append(message)
        return message

    async def expect(self, kind: str, timeout: float | None = None,
                     **fields: Any) -> dict[str, Any]:
        """The next message of type ``kind`` whose ``fields`` match; others are skipped."""
        timeout = timeout or self.patience
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        skipped = len(self.seen)
        while True:
            try:
                message = await self.recv(max(0.01, deadline - loop.time()))
            except TimeoutError as exc:
                raise TimeoutError(f"{self.welcome.get('player', {}).get('name', 'a client')} "
                                   f"got no {kind} {fields or ''} in {timeout:g} s; skipped "
                                   f"{_brief(self.seen[skipped:])}") from exc
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message

    async def request(self, kind: str, **message: Any) -> dict[str, Any]:
        """Send and return the very next message, which must answer it."""
        await self.send(type=kind, **message)
        return await self.recv()

    async def close(self) -> None:
        await self.ws.close()


def _brief(messages: list[dict[str, Any]]) -> str:
    """What a test waited through, short enough for a failure's message."""
    if not messages:
        return "nothing"
    return ", ".join(m["type"] + "".join(f" {k}={m[k]}" for k in ("code", "ply", "event")
                                         if k in m)
                     for m in messages[-12:])


async def friends_game(url: str, game: str = "connect4") -> tuple[Client, Client, str]:
    """Ann (seat 0) and Bob (seat 1) seated in a new room of ``game``; returns both and the room."""
    ann = await Client.open(url, "Ann")
    bob = await Client.open(url, "Bob")
    await ann.send(type="create_room", game=game, opponent={"kind": "friend"}, seat=0)
    room = (await ann.expect("room_state"))["room"]["id"]
    await bob.send(type="join_room", room=room)
    await bob.expect("room_state")
    await ann.expect("room_event", event="joined")
    return ann, bob, room
