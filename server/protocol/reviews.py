"""Finished games looked back at (``server.reviews``): a player's history, one stored game
with every position for replay and export, the engine's review of a game, and the analysis
board's values of a position's moves."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.chat import ChatLineView
from server.protocol.common import PlayerView, Seat, _ClientMessage, _Message
from server.protocol.play import Result, TimeControlView

__all__ = [
    "ListHistory", "GetGame", "RequestReview", "Analyse", "PastSeat", "PastGame", "GameReplay",
    "History", "GameRecordMessage", "Verdict", "MoveReviewView", "GameReview", "ReviewMessage",
    "MoveValueView", "Analysis",
]


# --- client -> server -----------------------------------------------------------------------------


class ListHistory(_ClientMessage):
    """Ask for a player's past (finished) games, newest first; answered by ``history``."""

    type: Literal["list_history"] = "list_history"
    player: str | None = Field(
        default=None, max_length=64, description="A player id; null for your own games."
    )
    limit: int = Field(default=20, ge=1, le=50, description="At most this many games.")


class GetGame(_ClientMessage):
    """Ask for one stored game with every position, for replay and export; answered by
    ``game_record`` (or ``unknown_game_id``)."""

    type: Literal["get_game"] = "get_game"
    game_id: str = Field(min_length=1, max_length=64, description="A `history` game id.")


class RequestReview(_ClientMessage):
    """Ask for the engine's review of a finished game (any `history` game id); answered by
    ``review`` once computed (at once when it is stored already), or ``unknown_game_id`` /
    ``game_not_finished``."""

    type: Literal["request_review"] = "request_review"
    game_id: str = Field(min_length=1, max_length=64, description="A `history` game id.")


class Analyse(_ClientMessage):
    """Ask for the engine's value of every legal move in a position (the analysis board);
    answered by ``analysis``. Any position of a game: it need not be a stored one."""

    type: Literal["analyse"] = "analyse"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    moves: list[str] = Field(
        default_factory=list, max_length=128,
        description="The moves from the start, in notation (`\"pass\"` for an Othello pass).",
    )


# --- views ----------------------------------------------------------------------------------------


class PastSeat(_Message):
    """Who played one seat of a stored game."""

    seat: Seat
    colour: str
    kind: Literal["human", "ai", "empty"]
    player: PlayerView | None = None
    level: str | None = Field(default=None, description="The AI level, for an AI seat.")


class PastGame(_Message):
    """One line of a player's history."""

    id: str = Field(description="The game id, for `get_game` and `/games/<id>.txt`.")
    game: str
    seats: list[PastSeat] = Field(description="Always two, seat 0 first.")
    status: Literal["waiting", "active", "finished", "aborted"]
    result: Result | None = None
    started_at: float = Field(description="Unix time (seconds) the game began.")
    finished_at: float | None = Field(default=None, description="Unix time it ended.")
    move_count: int = Field(description="Plies played (an Othello pass counts as one).")


class GameReplay(_Message):
    """A stored game with every position, so a page can step through it without rules."""

    id: str
    game: str
    rows: int
    cols: int
    seats: list[PastSeat]
    status: Literal["waiting", "active", "finished", "aborted"]
    result: Result | None = None
    started_at: float
    finished_at: float | None = None
    moves: list[str] = Field(description="Every move in notation, ply 0 first.")
    boards: list[str] = Field(
        description="The board before any move and after each ply (`len(moves) + 1`), "
        "as in `room.boards`."
    )
    winning: list[int] = Field(
        default_factory=list,
        description="The cells of the four in a row that won, on the last board (Connect "
        "Four); empty otherwise.",
    )
    exports: dict[str, str] = Field(
        description="The game as text people know: `columns` (Connect Four, e.g. '4453'); "
        "`moves` ('f5d6c3...') and `ggf` (Othello)."
    )
    downloads: dict[str, str] = Field(
        description="The same texts as files over HTTP on this server, by format: "
        "`txt` (`/games/<id>.txt`), `ggf` (`/games/<id>.ggf`, Othello)."
    )
    time_control: TimeControlView | None = Field(
        default=None, description="The game's time control; null when untimed.")
    clocks: list[list[int | None]] | None = Field(
        default=None, description="A timed game's clocks after each ply (`len(moves)` "
        "pairs, seat 0 first, in milliseconds, the increment included; null for a seat "
        "without a clock); null when untimed.")
    chat: list[ChatLineView] = Field(
        default_factory=list, description="The game's chat, oldest first: its spectators' "
        "lines, and its players' lines for those who played it (and admins).")


# --- server -> client -----------------------------------------------------------------------------


class History(_Message):
    """Answer to ``list_history``: the player's finished games, newest first."""

    type: Literal["history"] = "history"
    player: str = Field(description="Whose games these are (a player id).")
    games: list[PastGame]


class GameRecordMessage(_Message):
    """Answer to ``get_game``."""

    type: Literal["game_record"] = "game_record"
    record: GameReplay


Verdict = Literal["best", "good", "inaccuracy", "mistake", "blunder"]


class MoveReviewView(_Message):
    """One reviewed move. Values are the mover's, in the game's units: Connect Four Pons'
    score (22 minus the winner's stones, signed; exact), Othello discs (exact with 20 or fewer
    empty squares, else a search score)."""

    ply: int
    move: str
    seat: Seat
    best: str | None = Field(description="A move of the engine's that keeps `before`.")
    before: int | None = Field(description="The best value the mover could get; null: "
                               "not worked out in time.")
    after: int | None = Field(description="The value the move played keeps.")
    loss: int | None = Field(description="`before - after`, never negative.")
    exact: bool = Field(description="Both values are proven.")
    verdict: Verdict | None = Field(description="By `loss`; null when a value is unknown.")
    label_before: str = Field(description="`before` as people read it: `win in 7`, "
                              "`draw`, `loss in 12` (Connect Four), `+6`, `+6 exact` (Othello).")
    label_after: str


class GameReview(_Message):
    """The engine's review of one stored game."""

    game_id: str
    game: str
    moves: list[MoveReviewView]
    values: list[int | None] = Field(
        description="The value before each ply and, last, the final result, from seat 0's "
        "side (`len(moves) + 1`), for a chart; null where not worked out in time.")
    values_exact: list[bool]
    created_at: float = Field(description="Unix time the review was computed.")


class ReviewMessage(_Message):
    """Answer to ``request_review``."""

    type: Literal["review"] = "review"
    review: GameReview


class MoveValueView(_Message):
    """One legal move on the analysis board: the value it keeps for the side to move."""

    move: str
    value: int | None = Field(description="Null when not worked out in time.")
    exact: bool
    label: str


class Analysis(_Message):
    """Answer to ``analyse``: every legal move, best first; in a finished position none, and
    the game's result instead."""

    type: Literal["analysis"] = "analysis"
    game: str
    moves: list[str] = Field(description="The position, as asked.")
    board: str = Field(description="The position's board, one character a cell as in "
                       "`room.boards`, so a page draws it without rules of its own.")
    to_move: Seat | None = Field(description="Null when the game is over in the position.")
    values: list[MoveValueView] = Field(description="Empty when the game is over.")
    result: int | None = Field(
        default=None, description="When the game is over in the position: its result from "
        "seat 0's side, in the units of `review.values` (Connect Four: Pons' score, 0 a "
        "draw; Othello: the disc difference). Null while the game goes on.")
