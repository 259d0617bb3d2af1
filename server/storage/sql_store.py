"""``Store`` on SQL: PostgreSQL through asyncpg, or the embedded SQLite file through aiosqlite.

Every write has committed when its call returns, so ``append_move`` returning means the move
survives a killed process (PostgreSQL's synchronous commit, SQLite's WAL with
``synchronous=FULL``). Writes that arrive while a commit is in flight share the next one.

On a SQLite file those batched writes run in a thread of their own, on a sync connection,
each batch in one hand-off (``server.storage.sqlite_thread``): through aiosqlite every
statement, and the commit, is a hop between its thread and the event loop, and under load
each hop waits for a turn of the busy loop (a 5,000-client run spent most of its move
acknowledgement time there). The quick reads that every new room and many hellos make (a
player's row, ratings, a level calibration, a name's holder, a session) run the same way, in
a reader thread with a sync connection of its own, one hand-off each: through aiosqlite's
one connection they queued behind each other hop by hop (1,500 clients creating their rooms
200 at a time waited 0.9 s each for them).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage import repository as repo
from server.storage.config import create_engine, database_url, reads_engine
from server.storage.migrate import upgrade_engine
from server.storage.sqlite_thread import SqliteThread
from server.storage.store import (
    AccountRecord,
    ChatChannel,
    ChatLineRecord,
    DuplicateMove,
    EntrantRecord,
    Fenced,
    GameRecord,
    LevelScore,
    MoveRecord,
    NameTaken,
    NotAGuest,
    PairingRecord,
    PlayerRecord,
    RateGame,
    RatingChangeRecord,
    RatingRecord,
    ReviewRecord,
    ScheduleRecord,
    SessionRecord,
    TournamentRecord,
    TournamentStatus,
    score_levels,
)


class SqlStore:
    """The durable ``Store``. ``open()`` upgrades the schema to the newest migration (under a
    PostgreSQL advisory lock, so servers starting together do not race)."""

    def __init__(self, url: str | None = None, *, migrate: bool = True) -> None:
        self.url = database_url(url)
        self._migrate = migrate
        self._engine: AsyncEngine | None = None
        self._batcher: _WriteBatcher | None = None
        self._writer: SqliteThread | None = None
        self._reader: SqliteThread | None = None
        self._reads: AsyncEngine | None = None

    @property
    def engine(self) -> AsyncEngine:
        """The open engine, for the position cache and the admin/bot repositories."""
        if self._engine is None:
            raise RuntimeError("SqlStore.open() has not been called")
        return self._engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def open(self) -> None:
        if self._engine is not None:
            return
        engine = create_engine(self.url)
        try:
            if self._migrate:
                await upgrade_engine(engine)
            else:
                # Connect now: a worker's first cache lookup must not pay for the connection
                # (and the dialect's first-connect queries) inside its 0.3 s lookup budget.
                async with engine.connect():
                    pass
        except BaseException:
            await engine.dispose()
            raise
        self._engine = engine
        self._reads = reads_engine(engine)
        self._writer = SqliteThread.start(self.url, "discus-sqlite")
        self._reader = SqliteThread.start(self.url, "discus-sqlite-read")
        self._batcher = _WriteBatcher(self._commit)

    async def close(self) -> None:
        if self._batcher is not None:
            await self._batcher.drain()
            self._batcher = None
        for thread in (self._writer, self._reader):
            if thread is not None:
                await thread.close()
        self._writer = self._reader = None
        if self._engine is not None:
            engine, self._engine = self._engine, None
            await engine.dispose()

    async def save_player(self, player: PlayerRecord) -> None:
        await self._writes().run(lambda conn: repo.write_player(conn, player))

    async def load_player(self, player_id: str) -> PlayerRecord | None:
        return await self._read(repo.read_player, player_id)

    async def save_game(self, game: GameRecord, players: Sequence[PlayerRecord] = ()) -> None:
        def write(conn: Connection) -> None:
            for player in players:
                repo.write_player(conn, player)
            repo.write_game(conn, game)

        await self._writes().run(write)

    async def append_move(self, move: MoveRecord) -> None:
        await self._writes().run(move)

    async def fence(self, game_id: str, epoch: int) -> None:
        await self._writes().run(lambda conn: repo.hold_epoch(conn, game_id, epoch, newer=True))

    async def take_back(self, game_id: str, plies: int, epoch: int = 0) -> None:
        def write(conn: Connection) -> None:
            repo.hold_epoch(conn, game_id, epoch)
            repo.delete_moves_from(conn, game_id, plies)

        await self._writes().run(write)

    async def save_review(self, review: ReviewRecord) -> ReviewRecord:
        try:
            await self._writes().run(lambda conn: repo.insert_review_if_absent(conn, review))
        except IntegrityError:  # the game's foreign key: no such game
            raise KeyError(f"no stored game {review.game_id!r}") from None
        stored = await self.load_review(review.game_id)
        assert stored is not None, "a review just inserted (or kept) is there"
        return stored

    async def load_review(self, game_id: str) -> ReviewRecord | None:
        async with self.engine.connect() as conn:
            return await repo.find_review(conn, game_id)

    async def add_chat_line(self, line: ChatLineRecord, lobby_kept: int) -> ChatLineRecord:
        ids: list[int] = []

        def write(conn: Connection) -> None:
            ids[:] = [repo.insert_chat_line(conn, line, lobby_kept)]

        await self._writes().run(write)
        return dataclasses.replace(line, id=ids[0])

    async def chat_lines(self, game_id: str | None, channels: Sequence[ChatChannel],
                         limit: int) -> list[ChatLineRecord]:
        async with self.engine.connect() as conn:
            return await repo.find_chat_lines(conn, game_id, channels, limit)

    async def delete_chat_line(self, line_id: int, now: float) -> ChatLineRecord | None:
        found: list[ChatLineRecord | None] = [None]

        def write(conn: Connection) -> None:
            found[0] = repo.mark_chat_line_deleted(conn, line_id, now)

        await self._writes().run(write)
        return found[0]

    async def silence_chat(self, player_id: str, until: float | None,
                           sources: Sequence[str] = ()) -> None:
        await self._writes().run(
            lambda conn: repo.write_chat_silence(conn, player_id, until, sources))

    async def chat_silenced_until(self, player_id: str,
                                  source: str | None = None) -> float | None:
        async with self.engine.connect() as conn:
            return await repo.find_chat_silence(conn, player_id, source)

    async def prune_chat(self, lobby_before: float, games_before: float) -> int:
        gone = [0]

        def write(conn: Connection) -> None:
            gone[0] = repo.delete_chat_lines_before(conn, lobby_before, games_before)

        await self._writes().run(write)
        return gone[0]

    async def spend_guest_token(self, player_id: str, now: float) -> bool:
        async with self.engine.begin() as conn:
            return await repo.spend_guest_token(conn, player_id, now)

    # Accounts and sessions are rare writes that check before they write (a taken name), so
    # each runs in a transaction of its own rather than in a batch of other people's moves.

    async def create_account(self, account: AccountRecord) -> PlayerRecord:
        taken = NameTaken(f"the name {account.name!r} is taken")
        try:
            async with self.engine.begin() as conn:
                if (await repo.name_is_reserved(conn, account.name)
                        or await repo.find_account(conn, account.name) is not None):
                    raise taken
                known = await repo.find_player(conn, account.player_id)
                if known is not None and known.kind != "guest":
                    raise NotAGuest(f"player {account.player_id} is a {known.kind} already")
                player = PlayerRecord(account.player_id, account.name, "account",
                                      known.created_at if known is not None
                                      else account.created_at)
                await repo.save_player(conn, player)
                await repo.insert_account(conn, account)
        except IntegrityError:  # another server made an account of that name meanwhile
            raise taken from None
        return player

    async def find_account(self, name: str) -> AccountRecord | None:
        async with self.engine.connect() as conn:
            return await repo.find_account(conn, name)

    async def name_is_held(self, *names: str) -> bool:
        # Every bot and admin has a token of its name: the accounts' index and the small
        # tokens table answer it in one query, never a scan of every guest's row.
        return await self._read(repo.names_held, names)

    async def add_session(self, session: SessionRecord) -> None:
        async with self.engine.begin() as conn:
            await repo.insert_session(conn, session)

    async def find_session(self, token_hash: str) -> SessionRecord | None:
        return await self._read(repo.read_session, token_hash)

    async def find_session_player(self, token_hash: str
                                  ) -> tuple[SessionRecord, PlayerRecord | None] | None:
        return await self._read(repo.read_session_player, token_hash)

    async def touch_session(self, session_id: str, now: float) -> None:
        async with self.engine.begin() as conn:
            await repo.touch_session(conn, session_id, now)

    async def revoke_sessions(self, player_id: str, now: float,
                              session_id: str | None = None) -> int:
        async with self.engine.begin() as conn:
            return await repo.revoke_sessions(conn, player_id, now, session_id)

    async def change_password(self, player_id: str, password_hash: str, now: float,
                              keep_session: str) -> int:
        async with self.engine.begin() as conn:
            await repo.set_password(conn, player_id, password_hash)
            return await repo.revoke_sessions(conn, player_id, now, keep=keep_session)

    # Ratings are written through the batched writes: on SQLite that is the one writer
    # connection, so reading the ratings and writing the new ones cannot interleave with
    # another writer; on PostgreSQL ``repo.rate_game`` locks the rows it reads.

    async def rate_game(self, game_id: str, player_ids: Sequence[str],
                        rate: RateGame) -> list[RatingChangeRecord]:
        changes: list[RatingChangeRecord] = []
        failed: list[Exception] = []

        def write(conn: Connection) -> None:
            # A batch that fails is run again write by write: keep only the last answer.
            failed.clear()
            try:
                changes[:] = repo.rate_game(conn, game_id, player_ids, rate)
            except DBAPIError:
                raise
            except Exception as exc:  # noqa: BLE001 - ``rate`` failed: not the batch's fault
                # Nothing of this rating was written but the placeholder rows a lock needs
                # (``games`` 0, which no listing shows); the other writes go on.
                failed.append(exc)

        await self._writes().run(write)
        if failed:
            raise failed[0]
        return changes

    async def ratings_of(self, player_id: str) -> list[RatingRecord]:
        return await self._read(repo.read_ratings, player_id)

    async def rating_history(self, player_id: str, game: str | None = None,
                             limit: int = 200) -> list[RatingChangeRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_rating_history(conn, player_id, game, limit)

    async def leaderboard(self, game: str, limit: int, max_rd: float | None = None
                          ) -> list[tuple[PlayerRecord, RatingRecord]]:
        async with self.engine.connect() as conn:
            return await repo.list_leaders(conn, game, limit, max_rd)

    async def scores_against_levels(self, player_id: str) -> list[LevelScore]:
        async with self.engine.connect() as conn:
            return score_levels(player_id, await repo.list_finished_ai_games(conn, player_id))

    async def calibrated_levels(self, game: str) -> dict[str, tuple[float, float]]:
        return await self._read(repo.read_calibrated_levels, game)

    async def save_tournament(self, tournament: TournamentRecord, epoch: int = 0) -> None:
        async with self.engine.begin() as conn:
            await repo.save_tournament(conn, tournament, epoch)

    async def fence_tournament(self, tournament_id: str, epoch: int) -> None:
        async with self.engine.begin() as conn:
            await repo.hold_tournament_epoch(conn, tournament_id, epoch, newer=True)

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None:
        async with self.engine.connect() as conn:
            return await repo.find_tournament(conn, tournament_id)

    async def list_tournaments(self, statuses: Sequence[TournamentStatus], limit: int = 100
                               ) -> list[TournamentRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_tournaments(conn, statuses, limit)

    async def count_tournaments_made(self, player_id: str,
                                     statuses: Sequence[TournamentStatus]) -> int:
        async with self.engine.connect() as conn:
            return await repo.count_tournaments_made(conn, player_id, statuses)

    async def save_entrant(self, entrant: EntrantRecord, epoch: int = 0) -> None:
        async with self.engine.begin() as conn:
            await repo.hold_tournament_epoch(conn, entrant.tournament_id, epoch)
            await repo.save_entrant(conn, entrant)

    async def tournament_entrants(self, tournament_id: str) -> list[EntrantRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_entrants(conn, tournament_id)

    async def save_pairing(self, pairing: PairingRecord, epoch: int = 0) -> None:
        async with self.engine.begin() as conn:
            await repo.hold_tournament_epoch(conn, pairing.tournament_id, epoch)
            await repo.save_pairing(conn, pairing)

    async def save_schedule(self, schedule: ScheduleRecord) -> None:
        async with self.engine.begin() as conn:
            await repo.save_schedule(conn, schedule)

    async def list_schedules(self) -> list[ScheduleRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_schedules(conn)

    async def delete_schedule(self, schedule_id: str) -> bool:
        async with self.engine.begin() as conn:
            return await repo.delete_schedule(conn, schedule_id)

    async def tournament_pairings(self, tournament_id: str) -> list[PairingRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_pairings(conn, tournament_id)

    async def _read(self, read: Callable[..., T], *args: Any) -> T:
        """``read(conn, *args)`` on a sync connection: a SQLite file's reader thread (one
        hand-off), else the async engine's connection through ``run_sync`` (on PostgreSQL
        outside a transaction: one round trip, without a BEGIN and a ROLLBACK)."""
        if self._reader is not None:
            return await self._reader.read(read, *args)
        async with (self._reads or self.engine).connect() as conn:
            return await conn.run_sync(read, *args)

    def _writes(self) -> _WriteBatcher:
        if self._batcher is None:
            raise RuntimeError("SqlStore.open() has not been called")
        return self._batcher

    async def _commit(self, writes: Sequence[Write]) -> None:
        """Run ``writes`` in order in one transaction and commit it; on a constraint error
        (``IntegrityError``) nothing of them is stored. A lone move whose ply is taken raises
        ``DuplicateMove``; a move the fence refused, ``Fenced``."""
        try:
            if self._writer is not None:
                await self._writer.write(_write_in_order, writes)
            else:
                async with self.engine.begin() as conn:
                    await conn.run_sync(_write_in_order, writes)
        except DBAPIError as exc:
            if FENCED_MESSAGE in str(exc.orig):
                raise Fenced(str(exc.orig)) from None  # the moves_fence trigger refused it
            if not isinstance(exc, IntegrityError):
                raise
            if len(writes) == 1 and isinstance(move := writes[0], MoveRecord):
                # Tell a repeated ply from any other constraint (an unknown game) by looking.
                async with self.engine.connect() as conn:
                    if await repo.has_move(conn, move.game_id, move.ply):
                        raise DuplicateMove(
                            f"game {move.game_id} already has a move at ply {move.ply}"
                        ) from None
            raise

    async def load_game(self, game_id: str) -> tuple[GameRecord, list[MoveRecord]] | None:
        async with self.engine.connect() as conn:
            game = await repo.find_game(conn, game_id)
            if game is None:
                return None
            return game, (await repo.list_moves(conn, [game_id]))[game_id]

    async def load_games(self, game_ids: Sequence[str]
                         ) -> dict[str, tuple[GameRecord, list[MoveRecord]]]:
        async with self.engine.connect() as conn:
            found = await repo.find_games(conn, game_ids)
            by_game = await repo.list_moves(conn, [g.id for g in found])
        return {g.id: (g, by_game[g.id]) for g in found}

    async def unfinished_games(self) -> list[tuple[GameRecord, list[MoveRecord]]]:
        async with self.engine.connect() as conn:
            found = await repo.list_unfinished_games(conn)
            by_game = await repo.list_moves(conn, [g.id for g in found])
        return [(g, by_game[g.id]) for g in found]

    async def games_of_player(self, player_id: str, limit: int = 50) -> list[GameRecord]:
        async with self.engine.connect() as conn:
            return await repo.list_games_of_player(conn, player_id, limit)

    async def count_moves(self, game_ids: Sequence[str]) -> dict[str, int]:
        async with self.engine.connect() as conn:
            return await repo.count_moves(conn, game_ids)

    async def recent_games(self, game: str, limit: int
                           ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        async with self.engine.connect() as conn:
            found = await repo.list_recent_games(conn, game, limit)
            by_game = await repo.list_moves(conn, [g.id for g in found])
        return [(g, by_game[g.id]) for g in found]

    async def games_ended_after(self, game: str, after: tuple[float, str] | None, limit: int
                                ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        return await self._read(repo.read_games_ended_after, game, after, limit)

    async def ended_mark(self, game: str, newest: int) -> tuple[float, str] | None:
        return await self._read(repo.read_ended_mark, game, newest)


T = TypeVar("T")

FENCED_MESSAGE = "discus_fenced"
"""What the ``moves_fence`` trigger (migration 0005) says when it refuses a move."""

Write = MoveRecord | Callable[[Connection], None]
"""A move to insert, or any other write of the store (statements run on a sync connection:
``repository.write_player`` and the like)."""


class _WriteBatcher:
    """Group commit: writes queued while a commit is in flight go out together in the next
    one (one transaction, one COMMIT, one fsync; consecutive moves as one multi-row INSERT),
    in the order they came, and every caller's ``run`` returns only after the commit that
    holds its write. A single game sees no extra latency; many games at once share the cost
    of each commit instead of queueing for it. On SQLite (one writer at a time) this also
    keeps a guest saved at hello or a game saved at creation from taking a commit of its own
    ahead of the moves: at 5,000 connections those single commits pushed the moves' p99 past
    150 ms.

    While games are writing at the same time (the last commit carried more than one write),
    a batch waits ``gather_seconds`` for more before it commits: each commit costs an fsync
    whatever it holds, and with commits as quick as a local disk's (1.2 ms on SQLite) the
    batches of a 1,500-client load run held 3 writes. A lone write never waits: after a
    commit of one, the next goes at once.

    If a batch fails on a constraint (a repeated ply) or a fence (a move from a node that no
    longer owns its room), its writes are retried one by one, each in its own transaction, so
    only the offending callers get the error (``DuplicateMove``, ``Fenced``).
    """

    MAX_BATCH = 256
    GATHER_SECONDS = 0.002

    def __init__(self, commit: Callable[[Sequence[Write]], Awaitable[None]],
                 gather_seconds: float = GATHER_SECONDS) -> None:
        self._commit_writes = commit
        self._gather_seconds = gather_seconds
        self._queue: list[tuple[Write, asyncio.Future[None]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def run(self, write: Write) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((write, future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run())
        await future

    async def drain(self) -> None:
        """Wait until every queued write has been committed (or failed)."""
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)

    async def _run(self) -> None:
        shared = False
        while self._queue:
            if shared and self._gather_seconds > 0 and len(self._queue) < self.MAX_BATCH:
                await asyncio.sleep(self._gather_seconds)
            batch = self._queue[: self.MAX_BATCH]
            del self._queue[: self.MAX_BATCH]
            shared = len(batch) > 1
            try:
                await self._commit(batch)
            except BaseException as exc:  # noqa: BLE001 - handed to the callers, who raise it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise

    async def _commit(self, batch: list[tuple[Write, asyncio.Future[None]]]) -> None:
        if len(batch) > 1:
            try:
                await self._commit_writes([write for write, _ in batch])
            except (IntegrityError, Fenced):
                pass  # somebody's write breaks a constraint: find out whose, one at a time
            else:
                for _, future in batch:
                    if not future.done():
                        future.set_result(None)
                return
        for write, future in batch:
            try:
                await self._commit_writes([write])
            except Exception as exc:  # noqa: BLE001 - handed to that caller
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(None)


def _write_in_order(conn: Connection, writes: Sequence[Write]) -> None:
    """Run ``writes`` in order on ``conn``, each run of consecutive moves as one INSERT (a
    game's row is written before its moves when both are in the batch)."""
    moves: list[MoveRecord] = []
    for write in writes:
        if isinstance(write, MoveRecord):
            moves.append(write)
            continue
        if moves:
            repo.write_moves(conn, moves)
            moves = []
        write(conn)
    if moves:
        repo.write_moves(conn, moves)
