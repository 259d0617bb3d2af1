"""What a ``hello`` and a connection's end mean across the server's parts.

Why apart from the gateway: the gateway knows frames, not players. A hello makes the
connection somebody (``server.people.identity``), then the player is welcomed, its rooms see it
back,
other nodes hear it is online, and challenges waiting for it follow its room states; a close
undoes the connection's part in each, and a player whose last connection anywhere closed
starts its grace periods. The order is the protocol's: ``welcome`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from server import protocol as p
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.engines.live_levels import LiveLevels
from server.people.identity import Identity
from server.play.placement import Placement
from server.play.runner import RoomRunner
from server.settings import Settings


class Greeter(Protocol):
    async def greet(self, client: Client, player_id: str) -> None: ...


class BotConnections(Protocol):
    def limits(self, client: Any, base: p.ServerLimits) -> p.ServerLimits: ...

    async def gone(self, client: Any) -> None: ...


class Arrivals:
    """``hello`` and ``gone`` for the gateway."""

    def __init__(self, identity: Identity, outbox: Outbox, runner: RoomRunner,
                 placement: Placement, levels: LiveLevels, bots: BotConnections,
                 challenges: Greeter, settings: Settings, stopping: asyncio.Event,
                 forget: Sequence[Callable[[Client], Any]]) -> None:
        self.identity = identity
        self.outbox = outbox
        self.runner = runner
        self.placement = placement
        self.levels = levels
        self.bots = bots
        self.challenges = challenges
        self.settings = settings
        self.stopping = stopping
        self.forget = forget
        """Parts that keep something per connection (admin sessions, sign-in attempts)."""
        self._games = levels.game_infos()
        levels.on_change(self._levels_changed)

    def _levels_changed(self) -> None:
        before, self._games = self._games, self.levels.game_infos()
        if self._games == before:  # a knob players do not see changes nothing for them
            return
        # Everyone here hears it (an open lobby shows an edited level's new description);
        # soon, not now: an editor hears ``admin_level_edited`` first.
        changed = p.GamesChanged(games=self._games)
        with contextlib.suppress(RuntimeError):  # no loop: nobody to tell
            asyncio.get_running_loop().call_soon(
                lambda: self.outbox.send(list(self.outbox.everyone()), changed))

    async def hello(self, client: Client, hello: p.Hello) -> None:
        player, token = await self.identity.hello(client, hello)
        first_here = len(self.outbox.connections(player.id)) == 1
        self.outbox.send([client], p.Welcome(
            version=p.PROTOCOL_VERSION, player=player.view(), resume=token,
            limits=self.bots.limits(client, self.settings.limits()), games=self._games,
            time_controls=[c.view() for c in self.settings.time_controls.values()],
        ))
        self.runner.reconnected(player.id)
        if first_here:
            await self.placement.present(player.id, online=True)
        await self.challenges.greet(client, player.id)

    async def gone(self, client: Client) -> None:
        await self.bots.gone(client)
        for forget in self.forget:
            forget(client)
        player = client.player
        if player is None or not self.outbox.detach(player.id, client):
            return
        if self.stopping.is_set():
            return  # the node is going: its rooms go to other nodes, or come back restored
        if await self.placement.present(player.id, online=False):
            return  # still connected through another node: not away
        self.runner.away(player.id)
