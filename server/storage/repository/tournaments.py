"""Tournaments with their entrants and pairings, and the arena schedules that make them;
a tournament's writes are fenced by its epoch, as a game's are."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.repository.tables import (
    tournament_entrants,
    tournament_pairings,
    tournament_schedules,
    tournaments,
    upsert,
)
from server.storage.store import (
    EntrantRecord,
    Fenced,
    PairingRecord,
    ScheduleRecord,
    TournamentRecord,
)


async def save_tournament(conn: AsyncConnection, tournament: TournamentRecord,
                          epoch: int = 0) -> None:
    """Insert or update a tournament; ``Fenced`` if ``epoch`` is older than the stored one
    (a new tournament is stored at ``epoch``)."""
    await hold_tournament_epoch(conn, tournament.id, epoch)
    await upsert(conn, tournaments, dataclasses.asdict(tournament), ["id"])
    if epoch:
        await conn.execute(update(tournaments).where(tournaments.c.id == tournament.id,
                                                     tournaments.c.epoch < epoch)
                           .values(epoch=epoch))


async def hold_tournament_epoch(conn: AsyncConnection, tournament_id: str, epoch: int,
                                newer: bool = False) -> None:
    """``hold_epoch`` for a tournament: raise its epoch to ``epoch`` (nothing for 0 or for a
    tournament not stored yet), or ``Fenced`` if it holds a newer one (``newer``: a
    takeover's fence, one as new too). The row is read ``FOR UPDATE`` on PostgreSQL, so a
    takeover's fence and a former holder's write are ordered."""
    if not epoch:
        return
    held = (await conn.execute(select(tournaments.c.epoch)
                               .where(tournaments.c.id == tournament_id)
                               .with_for_update())).scalar()
    if held is None:
        return
    if held > epoch or (newer and held == epoch):
        raise Fenced(f"tournament {tournament_id} is held at epoch {held}, not {epoch}", held)
    if held < epoch:
        await conn.execute(update(tournaments).where(tournaments.c.id == tournament_id)
                           .values(epoch=epoch))


def _tournament(row: Row[Any]) -> TournamentRecord:
    # The fencing epoch is the store's own (``hold_tournament_epoch``), not the record's.
    return TournamentRecord(**{k: v for k, v in row._mapping.items() if k != "epoch"})


async def find_tournament(conn: AsyncConnection, tournament_id: str) -> TournamentRecord | None:
    row = (await conn.execute(select(tournaments).where(tournaments.c.id == tournament_id))
           ).first()
    return None if row is None else _tournament(row)


async def list_tournaments(conn: AsyncConnection, statuses: Sequence[str], limit: int
                           ) -> list[TournamentRecord]:
    stmt = (select(tournaments).where(tournaments.c.status.in_(list(statuses)))
            .order_by(tournaments.c.starts_at, tournaments.c.id).limit(limit))
    return [_tournament(row) for row in await conn.execute(stmt)]


async def count_tournaments_made(conn: AsyncConnection, player_id: str,
                                 statuses: Sequence[str]) -> int:
    stmt = (select(func.count()).select_from(tournaments)
            .where(tournaments.c.created_by == player_id,
                   tournaments.c.status.in_(list(statuses))))
    return int((await conn.execute(stmt)).scalar_one())


async def save_entrant(conn: AsyncConnection, entrant: EntrantRecord) -> None:
    await upsert(conn, tournament_entrants, dataclasses.asdict(entrant),
                  ["tournament_id", "player_id"])


async def list_entrants(conn: AsyncConnection, tournament_id: str) -> list[EntrantRecord]:
    stmt = (select(tournament_entrants)
            .where(tournament_entrants.c.tournament_id == tournament_id)
            .order_by(tournament_entrants.c.joined_at, tournament_entrants.c.player_id))
    return [EntrantRecord(**row._mapping) for row in await conn.execute(stmt)]


async def save_pairing(conn: AsyncConnection, pairing: PairingRecord) -> None:
    values = dataclasses.asdict(pairing)
    values["berserk"] = list(pairing.berserk)
    await upsert(conn, tournament_pairings, values, ["tournament_id", "pairing_id"])


async def list_pairings(conn: AsyncConnection, tournament_id: str) -> list[PairingRecord]:
    stmt = (select(tournament_pairings)
            .where(tournament_pairings.c.tournament_id == tournament_id)
            .order_by(tournament_pairings.c.seq))
    return [PairingRecord(**{**row._mapping, "berserk": tuple(row.berserk)})
            for row in await conn.execute(stmt)]


async def save_schedule(conn: AsyncConnection, schedule: ScheduleRecord) -> None:
    await upsert(conn, tournament_schedules, dataclasses.asdict(schedule), ["id"])


async def list_schedules(conn: AsyncConnection) -> list[ScheduleRecord]:
    stmt = select(tournament_schedules).order_by(tournament_schedules.c.created_at,
                                                 tournament_schedules.c.id)
    return [ScheduleRecord(**row._mapping) for row in await conn.execute(stmt)]


async def delete_schedule(conn: AsyncConnection, schedule_id: str) -> bool:
    gone = await conn.execute(delete(tournament_schedules)
                              .where(tournament_schedules.c.id == schedule_id))
    return bool(gone.rowcount)
