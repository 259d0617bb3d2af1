"""``list_history`` and ``get_game``: a player's past games and one stored game, replayed.

The views themselves (a history line, a replay, downloads) are ``server.reviews.history``'s pure
functions; this desk reads the store and names the players.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from server import errors
from server import protocol as p
from server.chat import rules as chat
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.reviews import history
from server.storage.store import Store

CHAT_LINES = 500
"""The most chat lines a replay shows (the newest)."""


class People(Protocol):
    """The player registry, read (``server.people.identity``)."""

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]: ...


class HistoryDesk:
    """Past games for one server. ``max_rooms`` bounds the unfinished games a player may
    have, so that many more rows than asked for always hold enough finished ones."""

    def __init__(self, store: Store, outbox: Outbox, people: People, max_rooms: int) -> None:
        self.store = store
        self.outbox = outbox
        self.people = people
        self.max_rooms = max_rooms

    async def handle(self, client: Client, player: Player,
                     message: p.ListHistory | p.GetGame) -> None:
        if isinstance(message, p.ListHistory):
            self.outbox.send([client], await self.past(message.player or player.id,
                                                        message.limit))
        else:
            replay = await self.replay(message.game_id)
            seated = [s.player.id for s in replay.seats if s.player is not None]
            played = player.id in seated or client.admin is not None
            lines = await self.store.chat_lines(
                replay.id, ("players", "spectators") if played else ("spectators",),
                CHAT_LINES)
            who = await self.people.people(line.player_id for line in lines)
            replay = replay.model_copy(update={"chat": [
                chat.view(line, who[line.player_id].bot) for line in lines]})
            self.outbox.send([client], p.GameRecordMessage(record=replay))

    async def past(self, player_id: str, limit: int) -> p.History:
        """The player's finished games, newest first (unfinished ones are in the lobby)."""
        records = await self.store.games_of_player(player_id, limit + self.max_rooms)
        past = [r for r in records if r.status in history.PAST_STATUSES][:limit]
        counts = await self.store.count_moves([r.id for r in past])
        lines = []
        for record in past:
            people = await self.people.people(record.players)
            lines.append(history.past_game(record, counts[record.id], people))
        return p.History(player=player_id, games=lines)

    async def tournament_games(self, tournament_id: str) -> str:
        """The finished games of a tournament in one text file, one line each in the order
        they were paired (``history.game_line``); ``unknown_tournament`` if there is none.
        Games under way, aborted and forfeited ones are left out: they have no record."""
        if await self.store.load_tournament(tournament_id) is None:
            raise errors.UnknownTournament(f"there is no tournament {tournament_id!r}")
        pairings = sorted(await self.store.tournament_pairings(tournament_id),
                          key=lambda row: row.seq)
        loaded = await self.store.load_games(
            [row.game_id for row in pairings if row.game_id is not None])
        finished = [loaded[row.game_id] for row in pairings
                    if row.game_id in loaded and loaded[row.game_id][0].status == "finished"]
        people = await self.people.people(
            {pid for record, _ in finished for pid in record.players})
        return "".join(
            history.game_line(history.replay(record, moves, people), record.result) + "\n"
            for record, moves in finished)

    async def replay(self, game_id: str) -> p.GameReplay:
        """A stored game as ``game_record`` sends it; ``unknown_game_id`` if there is none."""
        loaded = await self.store.load_game(game_id)
        if loaded is None:
            raise errors.UnknownGameId(f"there is no stored game {game_id!r}")
        record, moves = loaded
        return history.replay(record, moves, await self.people.people(record.players))
