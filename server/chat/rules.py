"""The pure rules of chat: who reads and writes which channel, what a line may hold, how a
stored line is shown.

A game has two channels, as on lichess: its seated players talk in ``players`` and everyone
else in ``spectators``, and neither reads the other's (an admin reads both). The lobby has one
channel, ``lobby``. Text is plain text: stored and sent as typed (trimmed, control characters
gone), and a page shows it as text, never as HTML.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from server import errors
from server import protocol as p
from server.storage.store import ChatChannel, ChatLineRecord

_INVISIBLE_STEERING = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional overrides and isolates: they would turn the rest of a page's line around."""


def channel_of(player_id: str, seated: Sequence[str | None]) -> ChatChannel:
    """The channel a player writes in within a game whose seats hold ``seated``."""
    return "players" if player_id in seated else "spectators"


def readable(channel: ChatChannel, admin: bool) -> tuple[ChatChannel, ...]:
    """The channels of a chat read by whoever writes in ``channel``."""
    if channel == "lobby":
        return ("lobby",)
    return ("players", "spectators") if admin else (channel,)


def address(game_id: str | None, channel: ChatChannel) -> str:
    """The outbox channel (``server.connections.outbox``) a chat channel's lines are sent to."""
    return "#chat:lobby" if game_id is None else f"#chat:{game_id}:{channel}"


def clean(text: str, max_chars: int) -> str:
    """The text as stored: one line, trimmed, without control characters; ``bad_message``
    if nothing is left or it is longer than ``max_chars``."""
    text = "".join(" " if ch in "\t\r\n" else ch for ch in text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cc"
                   and ch not in _INVISIBLE_STEERING).strip()
    if not text:
        raise errors.BadMessage("chat: text: say something (the line is empty)", field="text")
    if len(text) > max_chars:
        raise errors.BadMessage(f"chat: text: at most {max_chars} characters a line; this "
                                f"one has {len(text)}", field="text", limit=max_chars)
    return text


def view(line: ChatLineRecord, bot: bool) -> p.ChatLineView:
    """A stored line as sent; ``bot``: whether its author is a bot account."""
    return p.ChatLineView(id=line.id, game_id=line.game_id, channel=line.channel,
                          player=p.PlayerView(id=line.player_id, name=line.name, bot=bot),
                          text=line.text, at=line.created_at)
