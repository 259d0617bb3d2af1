"""The player a connection said hello as: the one identity type every part shares (rooms,
desks, the outbox's addressing), so it stands below them all."""

from __future__ import annotations

from dataclasses import dataclass

from server import protocol as p


@dataclass(frozen=True)
class Player:
    """A person or bot as rooms see it: a public id, a display name, and whether it is a bot
    account (so people can tell whom they play)."""

    id: str
    name: str
    bot: bool = False

    def view(self) -> p.PlayerView:
        return p.PlayerView(id=self.id, name=self.name, bot=self.bot)
