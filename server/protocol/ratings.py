"""Glicko-2 ratings (``server.ratings``): what a rated game did to a player's rating, a game's
leaderboard with the AI levels' ratings for scale, and a player's profile."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.common import PlayerView, RoomId, _ClientMessage, _Message
from server.protocol.reviews import PastGame

__all__ = [
    "GetLeaderboard", "GetProfile", "RATING_MESSAGES", "RatingView", "GameRating",
    "RatingChange", "LeaderboardEntry", "LevelRatingView", "Leaderboard", "RatingPoint",
    "LevelRecord", "Profile",
]


# --- client -> server -----------------------------------------------------------------------------


class GetLeaderboard(_ClientMessage):
    """Ask for a game's best rated players; answered by ``leaderboard`` (``unknown_game``
    for a game there is not)."""

    type: Literal["get_leaderboard"] = "get_leaderboard"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    limit: int = Field(default=50, ge=1, le=100, description="At most this many players.")
    provisional: bool = Field(
        default=False,
        description="Also list players whose rating is still provisional (marked so).",
    )


class GetProfile(_ClientMessage):
    """Ask for a player's profile: ratings, rating history, scores against the AI levels,
    recent games; answered by ``profile`` (``unknown_player`` for an id nobody has)."""

    type: Literal["get_profile"] = "get_profile"
    player: str | None = Field(
        default=None, max_length=64, description="A player id; null for yourself."
    )


RATING_MESSAGES = (GetLeaderboard, GetProfile)


# --- views ----------------------------------------------------------------------------------------


class RatingView(_Message):
    """A Glicko-2 rating (docs/PROTOCOL.md, Ratings): ``rating`` and its deviation ``rd``
    (about 95% sure the strength is within ``rating ± 2 rd``), rounded to 0.1."""

    rating: float
    rd: float
    provisional: bool = Field(description="rd is above 110: too little known to rank it.")


class GameRating(RatingView):
    """A player's rating in one game."""

    game: str
    games: int = Field(description="Rated games played.")


# --- server -> client -----------------------------------------------------------------------------


class RatingChange(_Message):
    """Sent to a player after the ``game_over`` of a rated game (never for a guest's): what
    the game did to the player's rating. Sent once per game; a client that reconnects
    finds the change in its ``profile``."""

    type: Literal["rating_change"] = "rating_change"
    room: RoomId
    game_id: str
    game: str
    player: str = Field(description="Whose rating (a player id): yours.")
    before: RatingView
    after: RatingView
    delta: float = Field(description="after.rating - before.rating, rounded to 0.1.")


class LeaderboardEntry(_Message):
    rank: int = Field(description="1 for the best.")
    player: PlayerView
    rating: GameRating


class LevelRatingView(_Message):
    """An AI level's rating: from its calibration (anchored: the weakest level is 1000), or
    guessed from its place in the ladder (``calibrated`` false). Games do not change it."""

    name: str
    rating: float
    rd: float
    calibrated: bool


class Leaderboard(_Message):
    """Answer to ``get_leaderboard``: the best rated accounts and bots of ``game``, best
    first, and the AI levels' ratings for scale."""

    type: Literal["leaderboard"] = "leaderboard"
    game: str
    players: list[LeaderboardEntry]
    levels: list[LevelRatingView]


class RatingPoint(_Message):
    """One rated game in a player's history: the rating after it."""

    game_id: str = Field(description="The game (`get_game` replays it).")
    game: str
    at: float = Field(description="When it ended (epoch seconds).")
    rating: float
    rd: float
    delta: float
    score: float = Field(description="The player's: 1 win, 0.5 draw, 0 loss.")
    opponent: PlayerView | None = Field(default=None, description="A person or bot, or null.")
    level: str | None = Field(default=None, description="The AI level played, or null.")


class LevelRecord(_Message):
    """The player's finished games against one AI level (from the player's side)."""

    game: str
    level: str
    wins: int
    draws: int
    losses: int


class Profile(_Message):
    """Answer to ``get_profile``."""

    type: Literal["profile"] = "profile"
    player: PlayerView
    kind: Literal["guest", "account", "bot", "admin"] = Field(
        description="Only accounts and bots are rated.")
    ratings: list[GameRating] = Field(description="One per game the player has been rated in.")
    history: list[RatingPoint] = Field(description="Rated games, oldest first (the last 200).")
    levels: list[LevelRecord] = Field(description="By game, then the levels' order.")
    recent: list[PastGame] = Field(description="Finished games, newest first (the last 10).")
