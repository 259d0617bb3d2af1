"""Commands between nodes: each node's inbox, and the answers that come back to it.

A command for a room another node owns goes to that node's inbox, a Redis Stream read by that
node only, with the asking node's id; the owner runs it under the room's lock, as its own
clients' commands, and answers on the asking node's inbox (nothing, or the error for the
client). A stream and not pub/sub: an entry written while the owner's reader is between two
reads, or reconnecting, waits for it instead of being lost. Questions to every node (the
admin page's rooms) and presence news take the same road.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Iterable
from typing import Any, Protocol

from redis.exceptions import RedisError

from server.cluster.leases import ClusterSettings, Leases
from server.cluster.presence import Presence
from server.storage import keys

log = logging.getLogger("discus.cluster")

FIELD = "m"
"""The one field of an inbox entry; its value is the JSON message."""

INBOX_MAXLEN = 10_000
INBOX_TTL_SECONDS = 3600
"""A node's inbox outlives the node by an hour at most."""


class OwnerGone(Exception):
    """The node a command was forwarded to lost the room's lease before answering."""


class InboxHandler(Protocol):
    """What the node does with what other nodes send its inbox."""

    async def run_forwarded(self, player: tuple[str, str, bool], message: str,
                            node: str) -> str | None:
        """Run a client's command from node ``node``; the error message for it, or None."""
        ...

    async def presence_changed(self, player_id: str, room_id: str, online: bool) -> None: ...

    async def answer(self, question: str) -> str:
        """This node's answer to another's ``Cluster.ask_all`` (JSON)."""
        ...


class Inbox:
    """This node's inbox, read here; what it posts to the others' and the answers it awaits."""

    def __init__(self, client: Any, prefix: str, node: str, settings: ClusterSettings,
                 leases: Leases, presence: Presence) -> None:
        self._client = client
        self._prefix = prefix
        self._node = node
        self._settings = settings
        self._leases = leases
        self._presence = presence
        self._app: InboxHandler | None = None
        self.handlers: set[asyncio.Future[None]] = set()
        """Commands, questions and answers from other nodes being handled."""
        self._waiting: dict[str, asyncio.Future[str | None]] = {}
        self.closing = False
        """``Cluster.close`` began: the reader stops."""

    def open(self, app: InboxHandler) -> None:
        self._app = app

    async def forward(self, owner: str, room_id: str, player: tuple[str, str, bool],
                      message: str) -> str | None:
        """Run a client's command on the room's owner; its error message (JSON), or None.

        Raises ``OwnerGone`` as soon as the owner no longer holds the room's lease (it died:
        the caller takes the room over and runs the command itself; the dead owner ran it
        or not, and the stored game says which), ``TimeoutError`` if a live owner does not
        answer within ``forward_timeout``."""
        ask = secrets.token_hex(8)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._waiting[ask] = future
        deadline = time.monotonic() + self._settings.forward_timeout
        try:
            await self.post(owner, {"kind": "command", "id": ask, "from": self._node,
                                    "player": list(player), "message": message})
            while True:
                try:
                    return await asyncio.wait_for(asyncio.shield(future),
                                                  self._settings.renew_seconds)
                except TimeoutError:
                    if await self._leases.owner(room_id) != owner:
                        raise OwnerGone(room_id) from None
                    if time.monotonic() > deadline:
                        raise
        finally:
            self._waiting.pop(ask, None)

    async def ask_all(self, nodes: Iterable[str], question: str,
                      timeout: float) -> dict[str, str]:
        """Ask every other node of ``nodes`` ``question`` (``InboxHandler.answer``); their
        answers, by node, from those that answered within ``timeout``."""
        asked: dict[str, asyncio.Future[str | None]] = {}
        for node in nodes:
            if node == self._node:
                continue
            ask = secrets.token_hex(8)
            asked[node] = self._waiting[ask] = asyncio.get_running_loop().create_future()
            await self.post(node, {"kind": "ask", "id": ask, "from": self._node,
                                   "question": question})
        try:
            if asked:
                await asyncio.wait(asked.values(), timeout=timeout)
        finally:
            for ask in [a for a, f in self._waiting.items() if f in asked.values()]:
                self._waiting.pop(ask, None)
        return {node: str(f.result()) for node, f in asked.items()
                if f.done() and not f.cancelled() and f.result() is not None}

    async def post(self, node: str, message: dict[str, Any]) -> None:
        inbox = keys.cluster_inbox(self._prefix, node)
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.xadd(inbox, {FIELD: json.dumps(message, separators=(",", ":"))},
                      maxlen=INBOX_MAXLEN, approximate=True)
            pipe.expire(inbox, INBOX_TTL_SECONDS)
            await pipe.execute()

    async def read(self) -> None:
        inbox = keys.cluster_inbox(self._prefix, self._node)
        last = "$"
        while not self.closing:
            try:
                batches = await self._client.xread({inbox: last}, count=256, block=1000)
            except (RedisError, OSError):
                log.warning("cannot read this node's inbox; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for _, entries in batches or ():
                for entry_id, fields in entries:
                    last = entry_id
                    message = json.loads(fields[FIELD])
                    # Presence news before anything after it runs: events from now on go
                    # to the nodes where their players are.
                    if message["kind"] in ("presence", "moved") and "node" in message:
                        self._presence.heard(message["player"], message["node"],
                                             bool(message["online"]))
                    elif message["kind"] == "here":
                        for player_id in message["players"]:
                            self._presence.heard(player_id, message["node"], True)
                    self._spawn(self._on_entry(message))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.handlers.add(task)
        task.add_done_callback(self.handlers.discard)

    async def _on_entry(self, message: dict[str, Any]) -> None:
        assert self._app is not None
        kind = message["kind"]
        try:
            if kind == "reply":
                future = self._waiting.get(message["id"])
                if future is not None and not future.done():
                    future.set_result(message["error"])
            elif kind == "command":
                if self._leases.draining:
                    return  # not run here: the asking node sends it to the next owner
                player = tuple(message["player"])
                error = await self._app.run_forwarded(
                    (str(player[0]), str(player[1]), bool(player[2])), message["message"],
                    message["from"])
                await self.post(message["from"], {"kind": "reply", "id": message["id"],
                                                  "error": error})
            elif kind == "ask":
                answer = await self._app.answer(message["question"])
                await self.post(message["from"], {"kind": "reply", "id": message["id"],
                                                  "error": answer})
            elif kind == "presence":
                await self._app.presence_changed(message["player"], message["room"],
                                                 bool(message["online"]))
            elif kind == "here":
                # Redis had lost where these players are, so a room run here may count them
                # away or have sent them nothing meanwhile: they are back, with its state.
                for player_id in message["players"]:
                    for room_id in self._presence.rooms_run_with(player_id):
                        await self._app.presence_changed(player_id, room_id, True)
        except Exception:
            log.exception("failed to handle a %s from another node", kind)
