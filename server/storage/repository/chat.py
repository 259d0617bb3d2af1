"""Chat lines, a game's kept with it and the lobby's newest few, and players' silences
(``server.chat``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import chat_lines, chat_silences, chat_source_silences
from server.storage.store import ChatChannel, ChatLineRecord


def insert_chat_line(conn: Connection, line: ChatLineRecord, lobby_kept: int) -> int:
    """Insert a chat line; its id. A lobby line also deletes all but the newest
    ``lobby_kept`` lobby lines."""
    result = conn.execute(chat_lines.insert().values(
        game_id=line.game_id, channel=line.channel, player_id=line.player_id,
        name=line.name, text=line.text, created_at=line.created_at))
    key = result.inserted_primary_key
    assert key is not None, "an INSERT has its primary key"
    line_id = int(key[0])
    if line.game_id is None:
        oldest_kept = (select(chat_lines.c.id).where(chat_lines.c.game_id.is_(None))
                       .order_by(chat_lines.c.id.desc()).offset(max(0, lobby_kept - 1))
                       .limit(1).scalar_subquery())
        conn.execute(delete(chat_lines).where(chat_lines.c.game_id.is_(None),
                                              chat_lines.c.id < oldest_kept))
    return line_id


def _chat_line(row: Row[Any]) -> ChatLineRecord:
    return ChatLineRecord(row.id, row.game_id, row.channel, row.player_id, row.name, row.text,
                          row.created_at)


async def find_chat_lines(conn: AsyncConnection, game_id: str | None,
                          channels: Sequence[ChatChannel], limit: int) -> list[ChatLineRecord]:
    """The newest ``limit`` lines not deleted of a game's chat (None: the lobby's) in these
    channels, oldest first."""
    where = (chat_lines.c.game_id.is_(None) if game_id is None
             else chat_lines.c.game_id == game_id)
    rows = (await conn.execute(
        select(chat_lines).where(where, chat_lines.c.channel.in_(list(channels)),
                                 chat_lines.c.deleted_at.is_(None))
        .order_by(chat_lines.c.id.desc()).limit(limit))).all()
    return [_chat_line(row) for row in reversed(rows)]


LINE_IDS = range(1, 2**31)
"""The ids a chat line can have: ``chat_lines.id`` is an ``INTEGER`` (32 bits on
PostgreSQL), and a larger number would fail the query rather than find nothing."""


def mark_chat_line_deleted(conn: Connection, line_id: int, now: float) -> ChatLineRecord | None:
    """Mark a line deleted; the line, or None if there is none not deleted already."""
    if line_id not in LINE_IDS:
        return None
    row = conn.execute(select(chat_lines).where(chat_lines.c.id == line_id,
                                                chat_lines.c.deleted_at.is_(None))).first()
    if row is None:
        return None
    conn.execute(update(chat_lines).where(chat_lines.c.id == line_id).values(deleted_at=now))
    return _chat_line(row)


def write_chat_silence(conn: Connection, player_id: str, until: float | None,
                       sources: Sequence[str] = ()) -> None:
    """Silence the player, with the addresses silenced with it before and ``sources``, until
    ``until``; or lift its silence and its addresses' (None)."""
    conn.execute(delete(chat_silences).where(chat_silences.c.player_id == player_id))
    mine = chat_source_silences.c.player_id == player_id
    if until is None:
        conn.execute(delete(chat_source_silences).where(mine))
        return
    conn.execute(chat_silences.insert().values(player_id=player_id, until=until))
    conn.execute(update(chat_source_silences).where(mine).values(until=until))
    new = list(dict.fromkeys(sources))
    if new:
        conn.execute(delete(chat_source_silences).where(
            mine, chat_source_silences.c.source.in_(new)))
        conn.execute(chat_source_silences.insert(), [
            {"source": source, "player_id": player_id, "until": until} for source in new])


async def find_chat_silence(conn: AsyncConnection, player_id: str,
                            source: str | None = None) -> float | None:
    """When the latest silence of the player, or of ``source``, ends (None: there is none)."""
    row = (await conn.execute(select(chat_silences.c.until)
                              .where(chat_silences.c.player_id == player_id))).first()
    ends = [] if row is None else [float(row.until)]
    if source is not None:
        latest = (await conn.execute(select(func.max(chat_source_silences.c.until))
                                     .where(chat_source_silences.c.source == source))).scalar()
        if latest is not None:
            ends.append(float(latest))
    return max(ends, default=None)


def delete_chat_lines_before(conn: Connection, lobby_before: float,
                             games_before: float) -> int:
    """Delete the lobby's lines said before ``lobby_before`` and the games' said before
    ``games_before``, and silences and address silences ended before the earlier of the
    two; how many lines went."""
    gone = conn.execute(delete(chat_lines).where(
        chat_lines.c.game_id.is_(None), chat_lines.c.created_at < lobby_before)).rowcount
    gone += conn.execute(delete(chat_lines).where(
        chat_lines.c.game_id.is_not(None), chat_lines.c.created_at < games_before)).rowcount
    ended = min(lobby_before, games_before)
    conn.execute(delete(chat_silences).where(chat_silences.c.until < ended))
    conn.execute(delete(chat_source_silences).where(chat_source_silences.c.until < ended))
    return int(gone)
