"""A connection's own exchange with the server, before and beside any room or desk: ``hello``
and the ``welcome`` that answers it (the player, the limits, the games with their AI levels and
the time controls the server announces), the games pushed again when an admin changes them,
and ``ping``/``pong``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.bots import BotLimitsView, BotRegistrationView
from server.protocol.chat import ChatLimits
from server.protocol.common import PlayerView, _ClientMessage, _Message
from server.protocol.play import TimeControlView

__all__ = [
    "Hello", "Ping", "LevelInfo", "GameInfo", "ServerLimits", "Welcome", "GamesChanged", "Pong",
]


# --- client -> server -----------------------------------------------------------------------------


class Hello(_ClientMessage):
    """First message on every connection. Answered by ``welcome`` and then one ``room_state``
    per unfinished room the player sits in (after a reconnect, that is the way back in)."""

    type: Literal["hello"] = "hello"
    version: int = Field(description="Must equal the server's protocol version.")
    resume: str | None = Field(
        default=None, max_length=128,
        description="The resume token from an earlier `welcome`: continue as that player; "
        "or an account's session token from `signed_in`: be that account.",
    )
    name: str | None = Field(
        default=None, max_length=40,
        description="Display name; a guest name is made up if absent. With `resume`, a new "
        "name renames that player (same id, same games). A guest asking for an account's "
        "name (in any letter case) is shown as `<name> (guest)`.",
    )
    token: str | None = Field(
        default=None, max_length=256,
        description="A bot token (`discus bots create`): play as that bot; `resume` is then "
        "ignored. Unknown: `bad_token`, revoked: `revoked_token` (both close the connection).",
    )


class Ping(_ClientMessage):
    """Answered by ``pong`` with the same ``id``; also counts against the rate limit."""

    type: Literal["ping"] = "ping"


# --- views ----------------------------------------------------------------------------------------


class LevelInfo(_Message):
    name: str
    order: int = Field(description="0 = weakest.")
    description: str


class GameInfo(_Message):
    name: str
    title: str
    players: list[str] = Field(description="Colour names of seat 0 and seat 1.")
    rows: int
    cols: int
    levels: list[LevelInfo]


class ServerLimits(_Message):
    max_message_bytes: int
    messages_per_second: float = Field(description="Sustained rate of the token bucket.")
    burst: int = Field(description="Messages allowed at once before the rate applies.")
    grace_seconds: float = Field(description="How long a dropped player's seat is kept.")
    max_rooms: int = Field(description="Unfinished rooms one player may sit in at once.")
    max_challenges: int = Field(
        default=10, description="Challenges one player may have waiting for an answer.")
    bot: BotLimitsView | None = Field(
        default=None, description="A bot's own limits; null unless `hello` had a bot token.")
    chat: ChatLimits | None = Field(default=None, description="The bounds of `chat`.")
    bot_registration: BotRegistrationView | None = Field(
        default=None, description="How `register_bot` is bounded; null: this server does "
        "not let bots register themselves (ask its admin for a bot account).")


# --- server -> client -----------------------------------------------------------------------------


class Welcome(_Message):
    """Answer to ``hello``. Keep ``resume`` (it is a secret) to come back as the same player."""

    type: Literal["welcome"] = "welcome"
    version: int
    player: PlayerView
    resume: str
    limits: ServerLimits
    games: list[GameInfo]
    time_controls: list[TimeControlView] = Field(
        default_factory=list, description="What `create_room.time_control` may name.")


class GamesChanged(_Message):
    """The games and their AI levels as ``welcome.games`` shows them changed (an admin edited
    a level's description or order): the new ``welcome.games``, sent to every connection, so
    an open lobby shows them at once."""

    type: Literal["games"] = "games"
    games: list[GameInfo]


class Pong(_Message):
    type: Literal["pong"] = "pong"
    id: str | int | None = None
