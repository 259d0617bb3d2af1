"""The pure rules of chat: who reads and writes which channel, what a line may hold, how a
stored line is shown.

A game has two channels, as on lichess: its seated players talk in ``players`` and everyone
else in ``spectators``, and neither reads the other's (an admin reads both). The lobby has one
channel, ``lobby``. Text is plain text: stored and sent as typed (trimmed, NFC-normalized,
invisible characters gone, combining marks stacked no higher than a language needs), and a
page shows it as text, never as HTML. A finished game's chat is its players' for a short
while, then closed: it is read with the replay.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from server import errors
from server import protocol as p
from server.storage.store import ChatChannel, ChatLineRecord, GameRecord

_INVISIBLE = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
"""What a guest's name drops (``server.people.names.guest``) and so does a line: controls,
format characters (zero-width spaces and joiners; bidirectional overrides and isolates, which
would turn the rest of a page's line around), private-use, surrogate and unassigned code
points, line and paragraph separators."""

MAX_MARKS = 3
"""Combining marks kept on one character (once NFC-composed): written languages need at most
a few (Vietnamese, Hebrew points, Devanagari); hundreds stacked ("Zalgo" text) spill over the
lines above and below."""


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


def check_open(player_id: str, game: GameRecord, now: float, after_game: float) -> None:
    """``chat_closed`` unless ``player_id`` may still write in ``game``'s chat: anyone while
    it is played; once it ended (finished or aborted), only its players, for ``after_game``
    seconds. Why: a finished game's chat is part of its replay, which every later viewer
    reads; a stranger's line there would stay with it."""
    if game.status not in ("finished", "aborted"):
        return
    if player_id not in game.players:
        raise errors.ChatClosed("this game is over: its chat takes lines from its players "
                                "only")
    ended = game.finished_at if game.finished_at is not None else game.created_at
    if now - ended > after_game:
        raise errors.ChatClosed(f"this game ended more than {after_game:g} s ago: its chat "
                                "is closed", after_game_seconds=after_game)


def clean(text: str, max_chars: int) -> str:
    """The text as stored: one line, NFC-normalized as names are, trimmed, without invisible
    characters (``_INVISIBLE``), at most ``MAX_MARKS`` combining marks on a character;
    ``bad_message`` if nothing is left or it is longer than ``max_chars``."""
    text = unicodedata.normalize("NFC", "".join(" " if ch in "\t\r\n" else ch for ch in text))
    kept: list[str] = []
    marks = 0
    for ch in text:
        kind = unicodedata.category(ch)
        if kind in _INVISIBLE:
            continue
        marks = marks + 1 if kind in ("Mn", "Me") else 0
        if marks <= MAX_MARKS:
            kept.append(ch)
    text = "".join(kept).strip()
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
