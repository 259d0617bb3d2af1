"""Admin actions over the protocol: levels and their audit, live rooms, pool and cache
figures, calibration, bot accounts. The gateway hands every ``admin_*`` message to the
handler ``AdminDesk.handlers`` names for its type.

A connection becomes an admin's with ``admin_login`` (a token from ``discus admins create``,
checked by ``server.admin.tokens``); before that every admin message is refused with
``forbidden`` and changes nothing. A revoked token ends the session: before any change the
token is checked again, and the sweeper ends revoked sessions every few seconds.

Levels are the server's ``LiveLevels`` (``server.engines.live_levels``): an edit is played from the
next AI move on every server; each change pushes ``admin_levels`` to this server's admin
connections. A server without a database (``MemoryStore``) plays
``ai.levels.DEFAULT_LEVELS``, has no admin accounts, and so no admin can log in to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine

import games
from ai.calibrate import GameResult, pairings
from ai.levels import Level, levels_of
from server import errors
from server import protocol as p
from server.admin.calibration import calibrate_and_store, load_levels_for_calibration
from server.admin.tokens import AdminAccount, Admins, UnknownAdminToken
from server.connections.client import Client, source_of
from server.connections.outbox import Outbox
from server.engines import Pool
from server.engines.live_levels import LiveLevels
from server.people.sign_in_limits import LocalCounts, Refused, SignInGuard
from server.play.rooms import Room
from server.storage import repository as repo
from server.storage.levels import AuditEntry
from server.storage.store import Store

log = logging.getLogger("discus.admin")

ADMIN_MESSAGES = p.ADMIN_CLIENT_MESSAGES
"""The client messages ``AdminDesk.handle`` answers."""


_CHANGES = (p.AdminEditLevel, p.AdminStartCalibration, p.AdminCreateBot, p.AdminRevokeBot)
"""Admin messages that change something: the token is checked again before each."""


def _revoked() -> errors.BadAdminToken:
    return errors.BadAdminToken("your admin token was revoked: you are no longer logged in "
                                "as an admin")

class BotAccounts(Protocol):
    """The bot desk's admin side."""

    async def list_accounts(self) -> p.AdminBots: ...

    async def create_account(self, name: str) -> p.AdminBotCreated: ...

    async def revoke_account(self, name_or_id: str) -> p.AdminBotRevoked: ...


class RoomsHere(Protocol):
    """This node's rooms (``Lobby.rooms``)."""

    @property
    def rooms(self) -> Mapping[str, Room]: ...


class AdminDesk:
    """The admin side of one server. ``engine`` is the SQL store's (None: no database, the
    built-in levels, no admins). ``elsewhere`` asks the other nodes of a cluster for their
    rooms (nothing on a single node); ``node`` names this one. Call ``close()`` after the
    server's ``stopping`` is set."""

    def __init__(self, engine: AsyncEngine | None, levels: LiveLevels, store: Store,
                 outbox: Outbox, pool: Pool | None, bots: BotAccounts, lobby: RoomsHere,
                 stats: Callable[[], Awaitable[p.Stats]],
                 elsewhere: Callable[[], Awaitable[list[p.AdminRooms]]],
                 node: str | None = None, guard: SignInGuard | None = None) -> None:
        self.engine = engine
        self.levels = levels
        self.book = levels.book
        self.store = store
        self.outbox = outbox
        self.pool = pool
        self.bots = bots
        self.lobby = lobby
        self.stats = stats
        self.elsewhere = elsewhere
        self.node = node
        self.admins = Admins(engine) if engine is not None else None
        self.guard = guard if guard is not None else SignInGuard(LocalCounts())
        """Failed ``admin_login``s per source (``server.people.sign_in_limits``)."""
        self.calibration: asyncio.Task[None] | None = None
        self._sessions: set[Any] = set()
        """Connections logged in as an admin, until they close or the admin's token is
        revoked."""
        levels.on_change(self._levels_changed)

    async def close(self) -> None:
        """A calibration under way is cancelled (it records itself as failed)."""
        if self.calibration is not None:
            self.calibration.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.calibration

    def _levels_changed(self) -> None:
        # Soon, not now: an editor hears ``admin_level_edited`` before the new levels.
        with contextlib.suppress(RuntimeError):  # no loop: nobody to tell
            asyncio.get_running_loop().call_soon(self._to_admins, self._levels_message(None))

    # --- messages ----------------------------------------------------------------------

    def handlers(self) -> dict[type[BaseModel], Callable[[Client, Any], Awaitable[None]]]:
        """The handler of each admin message type (the gateway's table takes them)."""
        answers: dict[type[BaseModel], Callable[[AdminAccount, Any], Awaitable[BaseModel]]] = {
            p.AdminListLevels: self._list_levels,
            p.AdminEditLevel: self._edit,
            p.AdminListAudit: lambda _, m: self._audit(m.game, m.limit),
            p.AdminListRooms: lambda _, m: self._rooms(),
            p.AdminGetStats: lambda _, m: self._stats(),
            p.AdminListCalibrations: self._calibrations,
            p.AdminListBots: lambda _, m: self.bots.list_accounts(),
            p.AdminCreateBot: self._create_bot,
            p.AdminRevokeBot: self._revoke_bot,
        }
        table: dict[type[BaseModel], Callable[[Client, Any], Awaitable[None]]] = {
            kind: self._answering(answer) for kind, answer in answers.items()}
        table[p.AdminLogin] = lambda client, m: self._login(client, m.token)
        table[p.AdminStartCalibration] = self._as_admin(self._start_calibration)
        return table

    def _as_admin(self, act: Callable[[AdminAccount, Any], Awaitable[None]]
                  ) -> Callable[[Client, Any], Awaitable[None]]:
        """``act`` for a logged-in admin only (its token checked again before a change)."""
        async def handler(client: Client, message: Any) -> None:
            account: AdminAccount | None = client.admin
            if account is None:
                raise errors.Forbidden(f"{message.type} is for admins: log in with "
                                       "admin_login and an admin token first")
            if isinstance(message, _CHANGES):
                await self._check_live(client, account)
            await act(account, message)
        return handler

    def _answering(self, answer: Callable[[AdminAccount, Any], Awaitable[BaseModel]]
                   ) -> Callable[[Client, Any], Awaitable[None]]:
        async def act(account: AdminAccount, message: Any, client: Client) -> None:
            self._send(client, await answer(account, message))

        async def handler(client: Client, message: Any) -> None:
            await self._as_admin(lambda account, m: act(account, m, client))(client, message)
        return handler

    async def _list_levels(self, account: AdminAccount, message: p.AdminListLevels
                           ) -> p.AdminLevels:
        await self.levels.refresh()
        return self._levels_message(message.game)

    async def _calibrations(self, account: AdminAccount, message: p.AdminListCalibrations
                            ) -> p.AdminCalibrations:
        return p.AdminCalibrations(runs=await self._runs(message.game, message.limit))

    async def _create_bot(self, account: AdminAccount, message: p.AdminCreateBot
                          ) -> p.AdminBotCreated:
        created = await self.bots.create_account(message.name)
        log.info("admin %s created bot %s", account.name, created.bot.name)
        return created

    async def _revoke_bot(self, account: AdminAccount, message: p.AdminRevokeBot
                          ) -> p.AdminBotRevoked:
        revoked = await self.bots.revoke_account(message.bot)
        log.info("admin %s revoked bot %s (%d connections closed)", account.name,
                 message.bot, revoked.closed)
        return revoked

    async def _login(self, client: Any, token: str) -> None:
        if self.admins is None:
            raise errors.BadAdminToken(
                "this server keeps no database, so it has no admin accounts")
        source = source_of(client)
        try:
            await self.guard.check_admin_login(source, time.time())
        except Refused as exc:
            raise errors.RateLimited(f"{exc}; {errors.try_again_in(exc.retry_after)}",
                                     limit=exc.limit,
                                     retry_after=round(max(0.1, exc.retry_after), 1)) from None
        try:
            account = await self.admins.verify(token)
        except UnknownAdminToken as exc:
            await self.guard.admin_login_failed(source, time.time())
            raise errors.BadAdminToken(str(exc)) from None
        client.admin = account
        self._sessions.add(client)
        self._send(client, p.AdminWelcome(
            admin=p.AdminView(id=account.player_id, name=account.name),
            games=list(games.names()), levels_editable=self.book is not None,
        ))

    def gone(self, client: Any) -> None:
        """A connection ended: forget its admin session."""
        self._sessions.discard(client)

    async def _check_live(self, client: Any, account: AdminAccount) -> None:
        """Before a change: ``bad_admin_token`` (and the session ends) if the admin's token
        was revoked since the login, even if the sweep has not seen it yet."""
        assert self.admins is not None  # a login succeeded, so there is a database
        if await self.admins.dead([account.token_id]):
            self._sessions.discard(client)
            client.admin = None
            raise _revoked()

    async def cut_revoked(self) -> int:
        """End the admin sessions whose token was revoked (``discus admins revoke``, from
        any process): each connection gets ``bad_admin_token`` and is an ordinary player's
        again (it stays open). The server's sweeper calls this every few seconds; returns
        how many sessions ended."""
        if not self._sessions or self.admins is None:
            return 0
        dead = await self.admins.dead({c.admin.token_id for c in self._sessions})
        doomed = [c for c in self._sessions if c.admin.token_id in dead]
        for client in doomed:
            self._sessions.discard(client)
            client.admin = None
            self.outbox.refuse(client, _revoked(), None)
        return len(doomed)

    def _levels_message(self, game: str | None) -> p.AdminLevels:
        names = list(games.names())
        if game is not None:
            _check_game(game)
            names = [game]
        return p.AdminLevels(
            version=self.levels.version,
            games=[p.GameLevels(game=name, levels=[_settings(lv) for lv in
                                                   levels_of(name, self.levels.current)])
                   for name in names],
        )

    async def _edit(self, account: AdminAccount, message: p.AdminEditLevel) -> p.AdminLevelEdited:
        _check_game(message.game)
        if self.book is None:
            raise errors.Forbidden("this server keeps no database: its levels are the "
                                   "built-in ones and cannot be edited")
        try:
            edit = await self.book.edit(message.game, message.level, message.changes,
                                        actor=account.player_id)
        except repo.UnknownLevel as exc:
            raise errors.UnknownLevel(str(exc)) from None
        except repo.InvalidLevel as exc:
            raise errors.InvalidLevel(
                f"{message.game} level {message.level!r} was not changed: "
                + exc.reasons,
                **{field: "; ".join(why) for field, why in exc.problems.items()},
            ) from None
        log.info("admin %s edited %s level %s: %s", account.name, message.game, message.level,
                 message.changes)
        return p.AdminLevelEdited(game=edit.game, before=_settings(edit.before),
                                  after=_settings(edit.after), version=edit.version)

    async def _audit(self, game: str | None, limit: int) -> p.AdminAudit:
        if game is not None:
            _check_game(game)
        if self.book is None:
            return p.AdminAudit(entries=[])
        entries = await self.book.audit(game, limit)
        names = await self._actor_names(e.actor for e in entries)
        return p.AdminAudit(entries=[_audit_view(e, names.get(e.actor)) for e in entries])

    async def _actor_names(self, actors: Iterable[str]) -> dict[str, str]:
        names: dict[str, str] = {}
        for actor in set(actors):
            with contextlib.suppress(Exception):
                record = await self.store.load_player(actor)
                if record is not None:
                    names[actor] = record.name
        return names

    def local_rooms(self, node: str | None = None) -> p.AdminRooms:
        """This server's rooms and players, newest room first (``node``: its name in a
        cluster)."""
        rooms = sorted(self.lobby.rooms.values(), key=lambda r: -r.created_at)
        return p.AdminRooms(
            rooms=[
                p.AdminRoom(
                    id=room.id, game=room.game.name, opponent=room.opponent, status=room.status,
                    ply=len(room.moves), round=room.round, seats=room.seat_views(),
                    spectators=len(room.spectators), ai_thinking=room.ai_thinking,
                    created_at=room.created_at, last_move_at=room.last_move_at, node=node,
                )
                for room in rooms
            ],
            players_online=self.outbox.players_online(),
        )

    async def _rooms(self) -> p.AdminRooms:
        """Every room: of this server, or in a cluster of every node that answers within
        2 s (each room names its node; players connected to two nodes count twice)."""
        views = [self.local_rooms(self.node), *await self.elsewhere()]
        rooms = sorted((r for v in views for r in v.rooms), key=lambda r: -r.created_at)
        return p.AdminRooms(rooms=rooms, players_online=sum(v.players_online for v in views))

    async def _stats(self) -> p.AdminStats:
        return p.AdminStats(
            stats=await self.stats(),
            rooms=len(self.lobby.rooms),
            players_online=self.outbox.players_online(),
            levels_version=self.levels.version,
        )

    # --- calibration -------------------------------------------------------------------

    async def _start_calibration(self, account: AdminAccount,
                                 message: p.AdminStartCalibration) -> None:
        if self.calibration is not None and not self.calibration.done():
            raise errors.CalibrationRunning("a calibration is running on this server; "
                                            "wait for admin_calibration_finished")
        _check_game(message.game)
        if self.engine is None:
            raise errors.Forbidden("calibration stores its results: this server keeps no "
                                   "database")
        await self.levels.refresh()
        known = [lv.name for lv in levels_of(message.game, self.levels.current)]
        wanted = list(dict.fromkeys(message.levels)) if message.levels else known
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise errors.UnknownLevel(
                f"{message.game} has no level {', '.join(map(repr, unknown))}; "
                f"levels: {', '.join(known)}")
        if len(wanted) < 2:
            raise errors.BadMessage("calibration needs at least two levels", field="levels")
        ladder = await load_levels_for_calibration(self.engine, message.game, wanted,
                                                   message.time_scale)
        names = [lv.name for lv in ladder]
        total = len(pairings(names, message.pairs)) * message.games_per_pair
        self._to_admins(p.AdminCalibrationStarted(game=message.game, levels=names, total=total,
                                                  by=account.player_id))
        self.calibration = asyncio.create_task(self._calibrate(account, message, ladder))

    async def _calibrate(self, account: AdminAccount, message: p.AdminStartCalibration,
                         ladder: Sequence[Level]) -> None:
        assert self.engine is not None
        game = message.game

        def progress(done: int, total: int, result: GameResult) -> None:
            self._to_admins(p.AdminCalibrationProgress(
                game=game, done=done, total=total, first=result.match.first,
                second=result.match.second,
                result=(result.result > 0) - (result.result < 0),  # type: ignore[arg-type]
                moves=result.moves,
            ))

        try:
            run_id, _ = await calibrate_and_store(
                self.engine, game, ladder, message.games_per_pair, message.seed,
                message.pairs, message.concurrency or (None if self.pool else 1),
                actor=account.player_id, on_progress=progress, pool=self.pool,
            )  # fmt: skip
            run = next(r for r in await self._runs(game, 20) if r.id == run_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("calibration of %s failed", game)
            self._to_admins(p.AdminCalibrationFailed(game=game, message=f"{exc}"))
            return
        self._to_admins(p.AdminCalibrationFinished(run=run))

    async def _runs(self, game: str | None, limit: int) -> list[p.CalibrationRunView]:
        if game is not None:
            _check_game(game)
        if self.engine is None:
            return []
        async with self.engine.connect() as conn:
            rows = await repo.list_calibration_runs(conn, game, limit)
        return [_run_view(row) for row in rows]

    # --- sending -----------------------------------------------------------------------

    def _send(self, client: Any, message: BaseModel) -> None:
        self.outbox.send([client], message)

    def _to_admins(self, message: BaseModel) -> None:
        """To every admin connection of this server."""
        admins = [c for c in self.outbox.everyone() if c.admin is not None]
        self.outbox.send(admins, message)


# --- views ---------------------------------------------------------------------------------


def _check_game(name: str) -> None:
    if name not in games.names():
        raise errors.UnknownGame(f"unknown game {name!r}; games: {', '.join(games.names())}")


def _settings(level: Level | Mapping[str, Any]) -> p.LevelSettings:
    data = level.to_dict() if isinstance(level, Level) else dict(level)
    return p.LevelSettings(**data)


def _audit_view(entry: AuditEntry, actor_name: str | None) -> p.AuditEntryView:
    before, after = entry.before or {}, entry.after or {}
    changed = [k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k)]
    return p.AuditEntryView(
        id=entry.id, game=entry.game, level=entry.level, actor=entry.actor,
        actor_name=actor_name, action=entry.action,  # type: ignore[arg-type]
        before=_settings(entry.before) if entry.before else None,
        after=_settings(entry.after) if entry.after else None,
        changed=changed if entry.before and entry.after else [], at=entry.at,
    )


def _finite(value: Any) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _run_view(row: Mapping[str, Any]) -> p.CalibrationRunView:
    ratings = row["ratings"]
    return p.CalibrationRunView(
        id=row["id"], game=row["game"], status=row["status"], actor=row["actor"],
        games_per_pair=row["games_per_pair"], seed=row["seed"], pair_mode=row["pair_mode"],
        levels=[_settings(level) for level in row["levels"]],
        pairs=[p.PairResult(**pair) for pair in row["pairs"]],
        ratings=None if ratings is None else [
            p.LevelRating(level=r["level"], elo=_finite(r["elo"]), error=_finite(r["error"]),
                          games=r["games"], score=r["score"],
                          cpu_per_move=_finite(r.get("cpu_per_move")))
            for r in ratings
        ],
        seconds=row["seconds"], created_at=row["created_at"], finished_at=row["finished_at"],
    )
