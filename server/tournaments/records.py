"""Tournament state to and from the store's records: what to save after each command, and
the tournament rebuilt from what was saved (after a restart, or on the node that takes it
over). Pure: the caller does the saving and loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from server.store import EntrantRecord, EntrantStatus, PairingRecord, TournamentRecord
from server.tournaments import Entrant
from server.tournaments.arena import Arena, ArenaGame, Status


def entrant_record(arena: Arena, player_id: str, joined_at: float) -> EntrantRecord:
    """The row of ``player_id`` as it stands in ``arena`` (saved after join, pause,
    withdraw)."""
    player = arena.players[player_id]
    entrant = player.entrant
    return EntrantRecord(arena.id, entrant.id, entrant.name, entrant.rating,
                         cast(EntrantStatus, player.status.value), joined_at)


def arena_pairing_record(arena: Arena, game_id: str, room_game: str | None = None
                         ) -> PairingRecord:
    """The row of the arena game ``game_id`` as it stands (saved when paired, when its room
    starts with ``room_game`` the stored game's id, on berserk, and when it ends)."""
    game = arena.games[game_id]
    result = None
    if game.finished:
        result = 0.5 if game.winner is None else (1.0 if game.winner == 0 else 0.0)
    return PairingRecord(arena.id, game_id, game.seq, 0, game.first, game.second, game.started_at,
                         room_game, tuple(sorted(game.berserk)), result, False,
                         game.finished_at)


def arena_from_records(tournament: TournamentRecord, entrants: Sequence[EntrantRecord],
                       pairings: Sequence[PairingRecord]) -> Arena:
    """The arena as its saved rows left it."""
    if tournament.kind != "arena" or tournament.ends_at is None:
        raise ValueError(f"tournament {tournament.id} is not an arena")
    games = []
    for row in sorted(pairings, key=lambda p: p.seq):
        if row.second is None:
            raise ValueError(f"arena pairing {row.pairing_id} has no second player")
        winner = None if row.result in (None, 0.5) else (0 if row.result == 1.0 else 1)
        games.append(ArenaGame(row.pairing_id, row.first, row.second, row.started_at,
                               set(row.berserk), winner, row.result is not None,
                               row.finished_at))
    return Arena.restored(
        tournament.id, tournament.starts_at, tournament.ends_at, tournament.berserk,
        [(Entrant(e.player_id, e.name, e.rating), Status(e.status)) for e in entrants],
        games)
