"""Tournament state to and from the store's records: what to save after each command, and
the tournament rebuilt from what was saved (after a restart, or on the node that takes it
over). Pure: the caller does the saving and loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from server.storage.store import EntrantRecord, EntrantStatus, PairingRecord, TournamentRecord
from server.tournaments import Entrant, roundrobin
from server.tournaments.arena import Arena, ArenaGame, Status
from server.tournaments.rounds import Board, Kind, RoundEvent


def entrant_record(arena: Arena, player_id: str, joined_at: float) -> EntrantRecord:
    """The row of ``player_id`` as it stands in ``arena`` (saved after join, pause,
    withdraw)."""
    player = arena.players[player_id]
    entrant = player.entrant
    return EntrantRecord(arena.id, entrant.id, entrant.name, entrant.rating,
                         cast(EntrantStatus, player.status.value), joined_at)


def arena_pairing_record(arena: Arena, game_id: str) -> PairingRecord:
    """The row of the arena game ``game_id`` as it stands (saved when paired, when its room
    has started, on berserk, and when it ends)."""
    game = arena.games[game_id]
    result = None
    if game.finished and not game.cancelled:
        result = 0.5 if game.winner is None else (1.0 if game.winner == 0 else 0.0)
    return PairingRecord(arena.id, game_id, game.seq, 0, game.first, game.second, game.started_at,
                         game.stored_as, tuple(sorted(game.berserk)), result, game.cancelled,
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
        cancelled = row.forfeit  # in an arena: aborted, scoring nothing
        games.append(ArenaGame(row.pairing_id, row.first, row.second, row.started_at,
                               set(row.berserk), winner, row.result is not None or cancelled,
                               row.finished_at, cancelled, stored_as=row.game_id))
    return Arena.restored(
        tournament.id, tournament.starts_at, tournament.ends_at, tournament.berserk,
        [(Entrant(e.player_id, e.name, e.rating), Status(e.status)) for e in entrants],
        games)


def round_entrant_record(event: RoundEvent, entrant: Entrant, joined_at: float
                         ) -> EntrantRecord:
    """The row of ``entrant`` in a round-robin or Swiss, saved on entry and on withdrawal
    (a withdrawal before the start too: it is ``withdrawn`` and stays out of the event
    rebuilt)."""
    gone = entrant.id not in event.entrants or entrant.id in event.withdrawn
    status: EntrantStatus = "withdrawn" if gone else "active"
    return EntrantRecord(event.id, entrant.id, entrant.name, entrant.rating, status,
                         joined_at)


def round_pairing_records(event: RoundEvent, round_number: int, started_at: float,
                          finished_at: float | None = None) -> list[PairingRecord]:
    """The rows of round ``round_number`` as they stand (saved when the round is paired and
    again as its results come in). ``seq`` counts boards from the first round's first."""
    before = sum(len(boards) for boards in event.boards[: round_number - 1])
    return [PairingRecord(event.id, f"r{round_number}-{board.first}", before + k,
                          round_number, board.first, board.second, started_at, None, (),
                          board.result, board.forfeit,
                          None if board.result is None else finished_at)
            for k, board in enumerate(event.boards[round_number - 1])]


def rounds_from_records(tournament: TournamentRecord, entrants: Sequence[EntrantRecord],
                        pairings: Sequence[PairingRecord]) -> RoundEvent:
    """The round-robin or Swiss as its saved rows left it. Before the first round the
    entrants are those not withdrawn; after it, those the first round paired."""
    if tournament.kind not in ("swiss", "roundrobin"):
        raise ValueError(f"tournament {tournament.id} is not played in rounds")
    kind = cast(Kind, tournament.kind)
    event = RoundEvent(tournament.id, kind, tournament.rounds)
    rows = sorted(pairings, key=lambda p: p.seq)
    first_round = {pid for row in rows if row.round == 1
                   for pid in (row.first, row.second) if pid is not None}
    for e in entrants:
        if (e.player_id in first_round) if rows else e.status != "withdrawn":
            event.enter(Entrant(e.player_id, e.name, e.rating))
            if rows and e.status == "withdrawn":
                event.withdrawn.add(e.player_id)
    if rows:
        event.seeds = sorted(event.entrants, key=lambda pid: (-event.entrants[pid].rating, pid))
        if kind == "roundrobin":
            event.rounds = roundrobin.rounds_needed(len(event.seeds))
        for row in rows:
            while len(event.boards) < row.round:
                event.boards.append([])
            event.boards[row.round - 1].append(
                Board(row.round, row.first, row.second, row.result, row.forfeit))
    return event
