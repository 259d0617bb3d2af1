"""The gateway's table: which part answers each client message type (but ``hello``).

Why a module: the table is the server's map from the protocol to its parts, read in one
place; a test holds it exhaustive (every client message type, exactly one handler).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from server import protocol as p
from server.admin.desk import AdminDesk
from server.admin.stats import StatsDesk
from server.bots.desk import BotDesk
from server.challenges.desk import ChallengeDesk
from server.chat.desk import ChatDesk
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.ladder.desk import LadderDesk
from server.people.accounts import AccountDesk
from server.play.lobby import Lobby
from server.play.placement import Placement
from server.play.runner import RoomMoved, RoomRunner
from server.ratings.desk import RatingDesk
from server.reviews.desk import ReviewDesk
from server.reviews.history_desk import HistoryDesk
from server.tournaments.desk import TournamentDesk
from server.web.gateway import Handler


def handlers(outbox: Outbox, runner: RoomRunner, placement: Placement, lobby: Lobby,
              desks: Desks) -> dict[type[BaseModel], Handler]:
    """The gateway's table: the one handler of each client message type but ``hello``."""

    def answer(make: Callable[[Client, Player, Any], Awaitable[BaseModel]]) -> Handler:
        async def handler(client: Client, player: Player, message: Any) -> None:
            outbox.send([client], await make(client, player, message))
        return handler

    async def room_command(client: Client, player: Player, message: Any) -> None:
        try:
            if not await placement.forwarded(client, player, message):
                await runner.command(player, message)
        except RoomMoved:  # nothing changed: on, once, to whoever runs the room now
            if not await placement.forwarded(client, player, message):
                await runner.command(player, message)

    async def pong(client: Client, player: Player, message: p.Ping) -> p.Pong:
        return p.Pong(id=message.id)

    table: dict[type[BaseModel], Handler] = {
        p.Ping: answer(pong),
        p.ListRooms: answer(lambda c, pl, m: placement.open_rooms(lobby)),
        p.CreateRoom: lambda c, pl, m: runner.create(pl, m, source_of(c)),
        p.ListHistory: desks.history.handle,
        p.GetGame: desks.history.handle,
        p.GetStats: desks.stats.handle,
        p.RequestReview: lambda c, pl, m: desks.reviews.handle(c, m),
        p.Analyse: lambda c, pl, m: desks.reviews.handle(c, m),
        p.RegisterBot: answer(lambda c, pl, m: desks.bots.register(c, m.name)),
    }
    groups: list[tuple[tuple[type[BaseModel], ...], Handler]] = [
        (p.ROOM_COMMANDS, room_command),
        (p.CHALLENGE_CLIENT_MESSAGES, desks.challenges.handle),
        (p.ACCOUNT_MESSAGES, desks.accounts.handle),
        (p.RATING_MESSAGES, desks.ratings.handle),
        (p.TOURNAMENT_MESSAGES, desks.tournaments.handle),
        (p.LADDER_MESSAGES, desks.ladder.handle)]
    groups += [((kind,), (lambda act: lambda c, pl, m: act(c, m))(admin))
               for kind, admin in desks.admin.handlers().items()]
    groups += [((kind,), handler) for kind, handler in desks.chat.handlers().items()]
    for kinds, handler in groups:
        for kind in kinds:
            if kind in table:
                raise ValueError(f"two handlers for {kind.__name__}")
            table[kind] = handler
    return table


@dataclass(frozen=True)
class Desks:
    """The desks whose handlers the table names."""

    bots: BotDesk
    challenges: ChallengeDesk
    accounts: AccountDesk
    ratings: RatingDesk
    reviews: ReviewDesk
    admin: AdminDesk
    history: HistoryDesk
    stats: StatsDesk
    tournaments: TournamentDesk
    chat: ChatDesk
    ladder: LadderDesk
