"""Challenges (``server.challenges``): asking a named player or bot for a game, the offer the
other side gets, and its acceptance or refusal."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.protocol.common import PlayerView, Seat, _ClientMessage, _Message
from server.protocol.play import TimeControlView

__all__ = [
    "ChallengeId", "Challenge", "AcceptChallenge", "DeclineChallenge",
    "CHALLENGE_CLIENT_MESSAGES", "ChallengeSent", "ChallengeOffer", "ChallengeDeclined",
]


# --- client -> server -----------------------------------------------------------------------------


ChallengeId = Annotated[str, Field(min_length=1, max_length=32)]


class Challenge(_ClientMessage):
    """Ask a named bot or player for a game; answered by ``challenge_sent``. The other side
    gets ``challenge`` (live, and again after the room states on each of its reconnects)."""

    type: Literal["challenge"] = "challenge"
    player: str = Field(min_length=1, max_length=64,
                        description="A player id, a bot's name, or the name of one player online.")
    game: str = Field(max_length=40, description="A game name from `welcome.games`.")
    seat: Seat | None = Field(
        default=None, description="Your seat: 0 moves first, 1 second, null = random."
    )
    time_control: str | None = Field(
        default=None, max_length=16,
        description="A name from `welcome.time_controls`, as for `create_room`: the game, "
        "if accepted, is played with these clocks; null (the default): untimed.")


class AcceptChallenge(_ClientMessage):
    """Accept a challenge addressed to you: both players get the new game's ``room_state``."""

    type: Literal["accept_challenge"] = "accept_challenge"
    challenge: ChallengeId


class DeclineChallenge(_ClientMessage):
    """Refuse a challenge addressed to you; the challenger gets ``challenge_declined``."""

    type: Literal["decline_challenge"] = "decline_challenge"
    challenge: ChallengeId
    reason: str = Field(default="", max_length=200, description="Told to the challenger.")


CHALLENGE_CLIENT_MESSAGES = (Challenge, AcceptChallenge, DeclineChallenge)


# --- server -> client -----------------------------------------------------------------------------


class ChallengeSent(_Message):
    """Answer to ``challenge``: it waits for ``to``'s answer."""

    type: Literal["challenge_sent"] = "challenge_sent"
    challenge: str = Field(description="The challenge id.")
    to: PlayerView
    game: str
    seat: Seat = Field(description="Your seat in the game, if accepted.")
    time_control: TimeControlView | None = Field(
        default=None, description="The clocks the game will have; null: untimed.")


class ChallengeOffer(_Message):
    """A challenge addressed to you; answer with ``accept_challenge`` or
    ``decline_challenge``."""

    type: Literal["challenge"] = "challenge"
    challenge: str = Field(description="The challenge id.")
    challenger: PlayerView
    game: str
    seat: Seat = Field(description="Your seat in the game, if you accept.")
    time_control: TimeControlView | None = Field(
        default=None, description="The clocks the game will have if you accept; null: "
        "untimed.")


class ChallengeDeclined(_Message):
    """Your challenge was declined by ``by``."""

    type: Literal["challenge_declined"] = "challenge_declined"
    challenge: str
    by: PlayerView
    reason: str
