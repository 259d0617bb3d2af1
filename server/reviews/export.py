"""Stored games in the formats people already use: each game writes its own
(``Game.exports``: Connect Four's column string, Othello's move list and GGF record); this
module only turns stored records into the plain ``games.base.PlayedGame`` it writes from.
Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import games
from games.base import PlayedGame
from server.storage.store import GameRecord, MoveRecord


class ExportError(ValueError):
    """The stored game cannot be written out (an unknown game, a move not in its notation)."""


def played_game(record: GameRecord, moves: Sequence[MoveRecord],
                names: tuple[str, str]) -> PlayedGame:
    """The stored game as its game's ``exports`` take it (moves in ply order, from the stored
    start position). ``names``: what the two seats are called."""
    try:
        game = games.load(record.game)
        start = (game.parse_position(record.start_position) if record.start_position
                 else game.initial())
    except ValueError as exc:
        raise ExportError(f"no export of game {record.game!r}: {exc}") from None
    ordered = sorted(moves, key=lambda m: m.ply)
    return PlayedGame(names=names, started_at=record.created_at, start=start,
                      moves=tuple(m.move for m in ordered),
                      seconds=tuple(m.seconds for m in ordered),
                      result=record.result, reason=record.reason)


def export_formats(
    record: GameRecord, moves: Sequence[MoveRecord], names: tuple[str, str]
) -> dict[str, str]:
    """Every export of the stored game by format name (``Game.exports``: ``columns`` for
    Connect Four; ``moves`` and ``ggf`` for Othello); ``ExportError`` if it has none."""
    played = played_game(record, moves, names)
    try:
        return games.load(record.game).exports(played)
    except ValueError as exc:
        raise ExportError(f"game {record.id!r} cannot be written out: {exc}") from None
