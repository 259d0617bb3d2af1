"""Bot accounts (``server.bots``): a bot registering itself, an admin making, listing and
revoking bots, and the limits a bot plays under. The admin's bot messages are refused with
``forbidden`` before ``admin_login``, as every admin message."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.common import _ClientMessage, _Message

__all__ = [
    "RegisterBot", "AdminListBots", "AdminCreateBot", "AdminRevokeBot", "BotLimitsView",
    "BotRegistrationView", "BotAccountView", "AdminBots", "AdminBotCreated", "BotRegistered",
    "AdminBotRevoked",
]


# --- client -> server -----------------------------------------------------------------------------


class RegisterBot(_ClientMessage):
    """Make a bot account, on a server that lets bots register themselves
    (``welcome.limits.bot_registration`` is not null); answered by ``bot_registered``, which
    holds its token, shown this once. This connection stays what its ``hello`` made it: play
    as the bot on a new connection with ``hello.token``. ``registration_disabled`` where
    registration is off; ``bad_bot_name`` as for ``admin_create_bot``; ``limit_exceeded``
    past ``limits.bot_registration`` (nothing is made in each case)."""

    type: Literal["register_bot"] = "register_bot"
    name: str = Field(min_length=1, max_length=64, description="The bot's name, unique "
                      "among live bots (1 to 40 printable characters once trimmed).")


class AdminListBots(_ClientMessage):
    """Ask for every bot token ever issued, revoked ones included; answered by
    ``admin_bots``."""

    type: Literal["admin_list_bots"] = "admin_list_bots"


class AdminCreateBot(_ClientMessage):
    """Make a bot account; answered by ``admin_bot_created``, which holds its token, shown
    this once (``bad_bot_name`` if the name is empty, too long or a live bot's)."""

    type: Literal["admin_create_bot"] = "admin_create_bot"
    name: str = Field(min_length=1, max_length=64)


class AdminRevokeBot(_ClientMessage):
    """Revoke a bot's live tokens; answered by ``admin_bot_revoked`` (``unknown_bot`` if
    none is live). Its connections to this server are closed at once (1008), those to other
    servers within their sweep (about 5 s)."""

    type: Literal["admin_revoke_bot"] = "admin_revoke_bot"
    bot: str = Field(min_length=1, max_length=64, description="Name, token id or player id.")


# --- views ----------------------------------------------------------------------------------------


class BotLimitsView(_Message):
    """The limits of one bot account (``server.bots.limits.BotLimits``); going over one is
    ``limit_exceeded`` with ``detail.limit`` naming it."""

    concurrent_games: int = Field(description="Unfinished games the bot may sit in at once.")
    moves_per_minute: float = Field(description="Sustained moves a minute, over all its games.")
    move_burst: int = Field(description="Moves allowed at once before the rate applies.")
    connections_per_token: int = Field(description="Websockets open at once with its token.")


class BotRegistrationView(_Message):
    """The bounds of bot self-registration (``server.bots.limits.RegistrationLimits``); going
    over one is ``limit_exceeded`` with ``detail.limit`` naming it."""

    registrations_per_connection: int = Field(
        description="Bot accounts one connection may create.")
    registrations_per_minute: int = Field(
        description="Bot accounts the whole server creates in any 60 seconds.")


class BotAccountView(_Message):
    """One bot token as an admin (or the bot's registrant) sees it: never the token itself.
    Times are epoch seconds."""

    token_id: str
    player_id: str
    name: str
    created_at: float
    last_used_at: float | None = None
    revoked_at: float | None = None
    connections: int = Field(description="Its live connections to this server.")


# --- server -> client -----------------------------------------------------------------------------


class AdminBots(_Message):
    """Answer to ``admin_list_bots``: every bot token, oldest first."""

    type: Literal["admin_bots"] = "admin_bots"
    bots: list[BotAccountView]


class AdminBotCreated(_Message):
    """Answer to ``admin_create_bot``: the account and its token. The server keeps only a
    hash: this is the one time the token is shown."""

    type: Literal["admin_bot_created"] = "admin_bot_created"
    bot: BotAccountView
    token: str


class BotRegistered(_Message):
    """Answer to ``register_bot``: the new account and its token. The server keeps only a
    hash: this is the one time the token is shown."""

    type: Literal["bot_registered"] = "bot_registered"
    bot: BotAccountView
    token: str


class AdminBotRevoked(_Message):
    """Answer to ``admin_revoke_bot``: the tokens revoked and how many connections to this
    server were closed."""

    type: Literal["admin_bot_revoked"] = "admin_bot_revoked"
    bots: list[BotAccountView]
    closed: int
