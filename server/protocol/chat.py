"""Chat (``server.chat``): opening the lobby's or a game's chat, saying a line, the admins'
deleting a line and silencing a player, and the lines as they are sent and stored."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.protocol.common import PlayerView, _ClientMessage, _Message

__all__ = [
    "ChatGameId", "GetChat", "Chat", "AdminDeleteChat", "AdminSilenceChat", "CHAT_MESSAGES",
    "ChatLimits", "ChatLineView", "ChatHistory", "ChatLine", "ChatDeleted", "ChatSilenced",
]


# --- client -> server -----------------------------------------------------------------------------


ChatGameId = Annotated[str | None, Field(
    default=None, max_length=64,
    description="A game id (`room.id` + `-` + `room.round`, as `history` lists them); null: "
    "the lobby chat.")]


class GetChat(_ClientMessage):
    """Open a chat on this connection: answered by ``chat_history`` (its newest lines), then
    every new line as ``chat_line`` (and ``chat_deleted``) until the connection closes.
    In a game, a seated player reads and writes the players' chat, anyone else the
    spectators' chat (an admin reads both); the lobby chat is everyone's to read."""

    type: Literal["get_chat"] = "get_chat"
    game_id: ChatGameId = None


class Chat(_ClientMessage):
    """Say ``text`` in a chat this connection opened with ``get_chat`` (``not_in_room``
    otherwise); everyone who has it open gets ``chat_line``, the sender too. Refused:
    longer than ``limits.chat.max_chars`` once trimmed, or empty (``bad_message``); more
    than ``limits.chat.lines`` in ``limits.chat.window_seconds`` (``rate_limited``); a
    guest in the lobby unless ``limits.chat.guests_in_lobby`` (``not_signed_in``); a
    silenced player (``silenced``). The text is plain text: pages show it as text, never
    as HTML."""

    type: Literal["chat"] = "chat"
    game_id: ChatGameId = None
    text: str = Field(max_length=2000)


class AdminDeleteChat(_ClientMessage):
    """(Admins.) Delete a chat line: it is gone from the chat's history, and everyone who
    has the chat open gets ``chat_deleted``; answered by ``chat_deleted`` too
    (``unknown_chat_line`` if there is no such line)."""

    type: Literal["admin_delete_chat"] = "admin_delete_chat"
    line: int = Field(ge=1, description="The `chat_line.line.id`.")


class AdminSilenceChat(_ClientMessage):
    """(Admins.) Silence a player's chat everywhere for ``seconds`` (0 lifts a silence);
    answered by ``chat_silenced``. Their lines meanwhile are refused with ``silenced``."""

    type: Literal["admin_silence_chat"] = "admin_silence_chat"
    player: str = Field(min_length=1, max_length=64, description="A player id.")
    seconds: int = Field(ge=0, le=30 * 86400)


CHAT_MESSAGES = (GetChat, Chat, AdminDeleteChat, AdminSilenceChat)


# --- views ----------------------------------------------------------------------------------------


class ChatLimits(_Message):
    """How ``chat`` is bounded (``server.settings.Settings``)."""

    max_chars: int = Field(description="Longest line, in characters once trimmed.")
    lines: int = Field(description="Lines one player may send within `window_seconds`.")
    window_seconds: float
    guests_in_lobby: bool = Field(description="Whether guests may write in the lobby chat.")
    lines_per_source: int = Field(
        description="Lines one address may send within `window_seconds`, whoever says them.")
    after_game_seconds: float = Field(
        description="How long a finished game's players may go on writing in its chat "
        "(nobody else may once it ended).")


class ChatLineView(_Message):
    """One line of chat, as sent and as stored."""

    id: int = Field(description="Unique on this server (its cluster): `admin_delete_chat`.")
    game_id: str | None = Field(description="The game's chat it belongs to; null: the lobby.")
    channel: Literal["lobby", "players", "spectators"] = Field(
        description="Within a game: the players' chat (its seated players) or the "
        "spectators' (everyone else).")
    player: PlayerView
    text: str = Field(description="Plain text: show it as text, never as HTML.")
    at: float = Field(description="Unix time (seconds) it was said.")


# --- server -> client -----------------------------------------------------------------------------


class ChatHistory(_Message):
    """Answer to ``get_chat``: the chat's newest lines this connection may read, oldest
    first (both channels of a game for an admin)."""

    type: Literal["chat_history"] = "chat_history"
    game_id: str | None
    channel: Literal["lobby", "players", "spectators"] = Field(
        description="The channel this connection writes in (an admin writing in a game: "
        "the spectators').")
    lines: list[ChatLineView]


class ChatLine(_Message):
    """A new line in a chat this connection opened with ``get_chat``."""

    type: Literal["chat_line"] = "chat_line"
    line: ChatLineView


class ChatDeleted(_Message):
    """An admin deleted a line: remove it from the page."""

    type: Literal["chat_deleted"] = "chat_deleted"
    line: int
    game_id: str | None


class ChatSilenced(_Message):
    """Answer to ``admin_silence_chat``."""

    type: Literal["chat_silenced"] = "chat_silenced"
    player: str
    until: float | None = Field(description="Unix time the silence ends; null: lifted.")
