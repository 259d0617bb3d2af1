"""The engine ladder (``server.ladder.desk``): one standing ladder per game, on which bots and
AI levels play each other; entering and leaving it, and its rating list, games and results."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.protocol.common import PlayerView, _ClientMessage, _Message

__all__ = [
    "LadderEntrant", "EngineView", "EnterLadder", "LeaveLadder", "GetLadder", "LADDER_MESSAGES",
    "LadderRow",
    "LadderGameView", "LadderPoint", "LadderPair", "LadderResult", "LadderMessage",
]


# --- client -> server -----------------------------------------------------------------------------


LadderEntrant = Annotated[str | None, Field(
    default=None, max_length=64,
    description="A bot's name or player id, or an AI level's name (`level:NAME` or `NAME`); "
                "admins only. Null: the sending bot itself.")]


class EngineView(_Message):
    """The program behind a bot, as it names itself (NBoard ``set myname``, GTP ``name`` and
    ``version``): what the ladder lists beside the bot's name."""

    name: str = Field(min_length=1, max_length=64)
    version: str | None = Field(default=None, max_length=64)


class EnterLadder(_ClientMessage):
    """Put a bot or an AI level on ``game``'s ladder (a bot enters itself; an admin may enter
    any bot and any level); answered by ``ladder``. ``engine``: a bot entering itself may
    say which program plays for it, and the ladder lists it (kept in the server's memory:
    a bot says it on each entry, as the reference bot does on every connect)."""

    type: Literal["enter_ladder"] = "enter_ladder"
    game: str = Field(max_length=32)
    entrant: LadderEntrant = None
    engine: EngineView | None = None


class LeaveLadder(_ClientMessage):
    """Take a bot or level off the ladder: no more games are scheduled for it (its games
    stay in the rating list, and it is listed as inactive). Answered by ``ladder``."""

    type: Literal["leave_ladder"] = "leave_ladder"
    game: str = Field(max_length=32)
    entrant: LadderEntrant = None


class GetLadder(_ClientMessage):
    """Ask for ``game``'s ladder: the rating list and the games under way."""

    type: Literal["get_ladder"] = "get_ladder"
    game: str = Field(max_length=32)


LADDER_MESSAGES = (EnterLadder, LeaveLadder, GetLadder)


# --- server -> client -----------------------------------------------------------------------------


class LadderRow(_Message):
    """An entrant of the ladder: a bot (``player``) or an AI level (``level``). ``rating``
    on the people's scale with ``error`` (one standard error), null until a game links it
    to an AI level of known rating; ``anchored``: an AI level whose calibrated rating pins
    the scale."""

    id: str = Field(description="The bot's player id, or `level:NAME`.")
    name: str
    player: PlayerView | None = None
    level: str | None = None
    rating: int | None
    error: int | None
    games: int
    score: float
    anchored: bool
    active: bool = Field(description="False once it left the ladder.")
    playing: bool
    engine: EngineView | None = Field(
        default=None, description="The program a bot said plays for it when it last "
        "entered (`enter_ladder.engine`); null for levels and bots that said none.")
    waits_for: Literal["level", "game"] | None = Field(
        default=None, description="Why an entrant is still unrated, so a page can say what "
        "it waits for: `level`, no AI level of calibrated strength is on the ladder (nobody "
        "can be rated until an admin enters one); `game`, its first finished game against "
        "such a level or a rated entrant (usually within its first round or two). Null "
        "once rated, and for the levels themselves.")


class LadderGameView(_Message):
    """A ladder game under way: its room (to spectate), the entrants by id (``first`` moves
    first) and the opening it started from."""

    room: str
    first: str
    second: str
    opening: str


class LadderPoint(_Message):
    """The rating list after the ladder's first ``played`` finished games (in the order
    they finished), the last at ``at``: each rated entrant's rating, by entrant id."""

    played: int
    at: float = Field(description="Epoch seconds.")
    ratings: dict[str, int]


class LadderPair(_Message):
    """Two entrants' finished games against each other, counted from ``a``'s side."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


class LadderResult(_Message):
    """A finished ladder game: ``result`` is ``first``'s score (1, 0.5, 0); ``game_id`` the
    stored game (``get_game`` replays it)."""

    game_id: str | None
    first: str
    second: str
    result: float
    finished_at: float | None


class LadderMessage(_Message):
    """A game's ladder: the answer to ``enter_ladder``, ``leave_ladder`` and ``get_ladder``.
    ``entrants`` is the rating list, best first (the unrated last); ``history`` how it moved
    (the page's chart), ``pairs`` the head-to-head scores, ``results`` the latest games."""

    type: Literal["ladder"] = "ladder"
    game: str
    time_control: str
    pace_seconds: float = Field(description="How often games are scheduled among the free "
                                            "entrants.")
    openings: list[str]
    entrants: list[LadderRow]
    games: list[LadderGameView]
    played: int = Field(description="Games finished on this ladder.")
    history: list[LadderPoint] = Field(
        default_factory=list, description="The rating list refitted over the first k "
        "finished games for up to 30 k spread evenly up to `played`, oldest first.")
    pairs: list[LadderPair] = Field(default_factory=list,
                                    description="Every pair that has met.")
    results: list[LadderResult] = Field(default_factory=list,
                                        description="The last 100 finished games, newest "
                                                    "first.")
