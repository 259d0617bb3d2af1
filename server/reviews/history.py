"""Past games as the protocol shows them: history lines, replays with every board, exports.

Pure functions from stored records (``GameRecord``, ``MoveRecord``) and the players to
protocol views; no I/O. The boards come from replaying the stored moves through the game's
own rules (``games.load``), so the page that steps through a replay draws positions the server
computed and never needs rules of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import games
from server import protocol as p
from server.connections.player import Player
from server.reviews import export
from server.storage.store import GameRecord, MoveRecord

PAST_STATUSES = frozenset({"finished", "aborted"})
"""The statuses a game in a player's history has: unfinished games are in the lobby."""


CONTENT_TYPES: Mapping[str, str] = {
    "txt": "text/plain; charset=utf-8",
    "ggf": "application/x-ggf; charset=utf-8",
}


def result_of(record: GameRecord) -> p.Result | None:
    """The protocol result of a stored game. Played out, ``record.result`` is the rules' score
    from seat 0's side; otherwise (resigned, left, abandoned) only its sign names the winner.
    An aborted game has no result and no winner."""
    if record.reason == "aborted":
        return p.Result(winner=None, reason="aborted")
    if record.result is None or record.reason is None:
        return None
    winner = None if record.result == 0 else (0 if record.result > 0 else 1)
    score = record.result if record.reason == "end" else None
    return p.Result(winner=winner, score=score, reason=record.reason)  # type: ignore[arg-type]


def seats_of(record: GameRecord, people: Mapping[str, Player]) -> list[p.PastSeat]:
    """Both seats of a stored game; ``people`` maps the player ids it holds to players."""
    game = games.load(record.game)
    colours = game.colours
    seats = []
    for seat, player_id in enumerate(record.players):
        level = record.level_of(seat)
        if level is not None:
            seats.append(p.PastSeat(seat=seat, colour=colours[seat], kind="ai",  # type: ignore[arg-type]
                                    level=level))
        elif player_id is None:
            seats.append(p.PastSeat(seat=seat, colour=colours[seat], kind="empty"))  # type: ignore[arg-type]
        else:
            who = (people.get(player_id) or Player(player_id, "Player")).view()
            seats.append(p.PastSeat(seat=seat, colour=colours[seat], kind="human",  # type: ignore[arg-type]
                                    player=who))
    return seats


def past_game(record: GameRecord, move_count: int, people: Mapping[str, Player]
              ) -> p.PastGame:
    """One line of a history list."""
    return p.PastGame(
        id=record.id,
        game=record.game,
        seats=seats_of(record, people),
        status=record.status,
        result=result_of(record),
        started_at=record.created_at,
        finished_at=record.finished_at,
        move_count=move_count,
    )


def seat_names(seats: Sequence[p.PastSeat]) -> tuple[str, str]:
    """What export headers call the two sides (people by name, the AI by its level)."""
    out = []
    for seat in seats:
        if seat.kind == "ai":
            out.append(f"Discus AI ({seat.level})")
        elif seat.player is not None:
            out.append(seat.player.name)
        else:
            out.append("?")
    return out[0], out[1]


def downloads(game_name: str) -> Mapping[str, str]:
    """The files ``/games/<id>.<ext>`` serves for the game: extension -> the export in it
    (``Game.downloads``)."""
    return games.load(game_name).downloads


def exports(record: GameRecord, moves: Sequence[MoveRecord],
            names: tuple[str, str]) -> dict[str, str]:
    """The game as text by format, as the game writes it (``Game.exports``: ``columns``;
    ``moves`` and ``ggf``), from the stored start position."""
    return export.export_formats(record, moves, names)


def replay(record: GameRecord, moves: Sequence[MoveRecord],
           people: Mapping[str, Player]) -> p.GameReplay:
    """The whole game with the board after every ply. Raises ``ValueError`` (the games'
    ``InvalidNotation``/``IllegalMove``) if the stored moves do not replay."""
    game = games.load(record.game)
    state = (game.parse_position(record.start_position) if record.start_position
             else game.initial())
    ordered = sorted(moves, key=lambda m: m.ply)
    boards = [p.board_text(game.cells(state))]
    for stored in ordered:
        state = state.play(game.parse_move(state, stored.move))
        boards.append(p.board_text(game.cells(state)))
    seats = seats_of(record, people)
    return p.GameReplay(
        id=record.id,
        game=record.game,
        rows=game.rows,
        cols=game.cols,
        seats=seats,
        status=record.status,
        result=result_of(record),
        started_at=record.created_at,
        finished_at=record.finished_at,
        moves=[m.move for m in ordered],
        boards=boards,
        winning=game.winning_line(state),
        exports=exports(record, ordered, seat_names(seats)),
        downloads={ext: download_path(record.id, ext) for ext in downloads(record.game)},
        time_control=time_control_of(record),
        clocks=None if record.clock_initial_ms is None
        else [[m.clock0_ms, m.clock1_ms] for m in ordered],
    )


def time_control_of(record: GameRecord) -> p.TimeControlView | None:
    """The stored game's time control (None: untimed), from the numbers kept with it."""
    if record.clock_initial_ms is None:
        return None
    return p.TimeControlView(name=record.time_control or "custom",
                             initial_ms=record.clock_initial_ms,
                             increment_ms=record.clock_increment_ms or 0)


def download_path(game_id: str, ext: str) -> str:
    return f"/games/{game_id}.{ext}"


def result_text(result: float | None) -> str:
    """A stored result (seat 0's score side: >0 its win) as game records write it."""
    if result is None:
        return "*"
    return "1-0" if result > 0 else "0-1" if result < 0 else "1/2-1/2"


def game_line(replayed: p.GameReplay, result: float | None) -> str:
    """One finished game on one line of a tournament's games file: Othello's GGF record (a
    line already, the same as its ``.ggf`` download); otherwise the two players, the result
    and the game's move text (Connect Four's column string), tab-separated."""
    if "ggf" in replayed.exports:
        return replayed.exports["ggf"].replace("\n", " ")
    first, second = seat_names(replayed.seats)
    moves = (download(replayed, "txt") or "").strip()
    return "\t".join((first, second, result_text(result), moves))


def download(replayed: p.GameReplay, ext: str) -> str | None:
    """The text of ``/games/<id>.<ext>``, or None if the game has no such format. ``txt`` is
    the export its game serves under that extension (``Game.downloads``: ``txt`` the move
    text, ``ggf`` an Othello GGF record) and a newline."""
    name = downloads(replayed.game).get(ext)
    if name is None:
        return None
    return replayed.exports[name] + "\n"
