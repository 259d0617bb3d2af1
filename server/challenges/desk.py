"""Challenges: one player asks another (by name or id) to a game, who accepts or declines.

The rules of challenges (expiry, how many one may send) are ``server.challenges.rules``'s; this
desk is the glue between them, the rooms and the sockets. A player (re)connecting is sent the
challenges waiting for them after their room states (``greet``). On a cluster the standing
challenges live in Redis (``server.challenges.shared``), so any node may answer one.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from typing import Any, Protocol

import games
from server import errors
from server import protocol as p
from server.bots.accounts import Accounts
from server.challenges.rules import ChallengeBook, Pending
from server.challenges.shared import SharedChallengeBook
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.play.lobby import Lobby
from server.play.outcome import Outcome
from server.play.rooms import Room
from server.settings import Settings
from server.storage.store import Store


class Seating(Protocol):
    """What starting an accepted challenge's game asks of the room runner."""

    async def start(self, room: Room, out: Outcome) -> None: ...


class BotRules(Protocol):
    """The bot desk's side of challenges: bot names and the limits of bots' games."""

    accounts: Accounts | None

    async def check_games(self, player: Player) -> None: ...

    def unfinished(self, player_id: str) -> list[Room]: ...


class Players(Protocol):
    """The player registry, read (``server.people.identity``)."""

    def get(self, player_id: str) -> Player | None: ...

    def named(self, name: str) -> list[Player]: ...


class ChallengeDesk:
    """``challenge``, ``accept_challenge``, ``decline_challenge`` and the greeting."""

    def __init__(self, store: Store, outbox: Outbox, players: Players, lobby: Lobby,
                 bots: BotRules, seating: Seating, online: Callable[[str], Any],
                 settings: Settings, now: Callable[[], float],
                 shared: SharedChallengeBook | None = None) -> None:
        self.store = store
        self.outbox = outbox
        self.players = players
        self.lobby = lobby
        self.bots = bots
        self.seating = seating
        self.online = online
        """Whether a player has a connection anywhere (awaitable)."""
        self.settings = settings
        self.now = now
        self.challenges = ChallengeBook(ids=lambda: "c" + secrets.token_hex(4),
                                        per_challenger=settings.max_challenges)
        self.shared_challenges = shared
        """On a node of a cluster: the challenges of every node."""

    async def handle(self, client: Client, player: Player,
                     message: p.Challenge | p.AcceptChallenge | p.DeclineChallenge) -> None:
        now = self.now()
        if isinstance(message, p.Challenge):
            target = await self._find(message.player)
            if target.id == player.id:
                raise errors.BadMessage("you cannot challenge yourself", field="player")
            if message.game not in games.names():
                raise errors.UnknownGame(f"unknown game {message.game!r}; known games: "
                                         f"{', '.join(games.names())}")
            control = self.lobby.time_control(message.time_control)
            seat = self.lobby.rng.randrange(2) if message.seat is None else message.seat
            source = source_of(client)
            if self.shared_challenges is not None:
                made = await self.shared_challenges.make(player, target, message.game, seat,
                                                         now, control, source)
            else:
                made = self.challenges.make(player, target, message.game, seat, now, control,
                                            source)
            self.outbox.send([client], p.ChallengeSent(
                challenge=made.id, to=target.view(), game=made.game, seat=seat,  # type: ignore[arg-type]
                time_control=made.time_control.view() if made.time_control else None))
            self.outbox.to_players([target.id], self._offer(made))
        elif isinstance(message, p.AcceptChallenge):
            made = await self._for_target(message.challenge, player.id, now)
            await self._start(made, player)
        else:
            made = await self._for_target(message.challenge, player.id, now)
            await self._take(made)
            self.outbox.to_players([made.challenger.id], p.ChallengeDeclined(
                challenge=made.id, by=player.view(), reason=message.reason))

    async def _for_target(self, challenge_id: str, player_id: str, now: float) -> Pending:
        if self.shared_challenges is not None:
            return await self.shared_challenges.for_target(challenge_id, player_id, now)
        return self.challenges.for_target(challenge_id, player_id, now)

    async def _take(self, made: Pending) -> None:
        """Remove the challenge being answered (in a cluster, only one answer may)."""
        if self.shared_challenges is not None:
            await self.shared_challenges.take(made)
        else:
            self.challenges.remove(made.id)

    async def greet(self, client: Client, player_id: str) -> None:
        """After a (re)connection's room states: every challenge still waiting for the
        player from a challenger still connected (anywhere); those of challengers who have
        gone are dropped, not replayed."""
        now = self.now()
        waiting = (self.challenges.waiting_for(player_id, now) if self.shared_challenges is None
                   else await self.shared_challenges.waiting_for(player_id, now))
        for made in waiting:
            if await self.online(made.challenger.id):
                self.outbox.send([client], self._offer(made))
                continue
            with contextlib.suppress(errors.UnknownChallenge):  # answered meanwhile
                await self._take(made)

    @staticmethod
    def _offer(made: Pending) -> p.ChallengeOffer:
        control = made.time_control
        return p.ChallengeOffer(challenge=made.id, challenger=made.challenger.view(),
                                game=made.game, seat=1 - made.seat,  # type: ignore[arg-type]
                                time_control=control.view() if control else None)

    async def _find(self, name_or_id: str) -> Player:
        """A player id, a live bot's name, or the name of exactly one player online."""
        known = self.players.get(name_or_id)
        if known is not None:
            return known
        accounts = self.bots.accounts
        if accounts is not None:
            for bot in await accounts.list_bots():
                if not bot.revoked and name_or_id in (bot.name, bot.player_id):
                    return (self.players.get(bot.player_id)
                            or Player(bot.player_id, bot.name, bot=True))
        online = self.players.named(name_or_id)
        if len(online) > 1:
            raise errors.UnknownPlayer(
                f"{len(online)} players online are called {name_or_id!r}; use the player id")
        if online:
            return online[0]
        record = await self.store.load_player(name_or_id)
        if record is not None:
            return Player(record.id, record.name, bot=record.kind == "bot")
        raise errors.UnknownPlayer(
            f"nobody here is called {name_or_id!r} (give a player id, a bot's name, or the "
            "name of a player online)")

    async def _start(self, made: Pending, accepter: Player) -> None:
        """The accepted challenge's game: both players seated, both sent its ``room_state``.
        Limits of both sides are checked first; a refusal leaves the challenge standing."""
        challenger = self.players.get(made.challenger.id) or made.challenger
        await self.bots.check_games(accepter)
        try:
            await self.bots.check_games(challenger)
        except errors.LimitExceeded as exc:
            raise errors.LimitExceeded(
                f"{challenger.name} plays as many games as a bot may now; accept later",
                **exc.detail) from None
        max_rooms = self.settings.max_rooms
        if len(self.bots.unfinished(challenger.id)) >= max_rooms:
            raise errors.TooManyRooms(
                f"{challenger.name} already plays in {max_rooms} unfinished "
                "rooms; accept later", limit=max_rooms)
        now = self.now()
        await self._take(made)
        try:
            room, _ = self.lobby.create(
                challenger, made.game, p.FriendOpponent(), made.seat, now,
                None if made.time_control is None else made.time_control.name)
            try:
                self.lobby.join(accepter, room.id, now)
            except errors.ProtocolError:
                self.lobby.close(room.id)
                raise
        except errors.ProtocolError:
            if self.shared_challenges is not None:
                await self.shared_challenges.put_back(made)
            else:
                self.challenges.put_back(made)
            raise
        out = Outcome(sends=[room.state_for(challenger.id), room.state_for(accepter.id)],
                      save_game=True)
        if not await self.online(challenger.id):
            out.extend(room.disconnect(challenger.id, now))  # away: the grace period runs
        await self.seating.start(room, out)
