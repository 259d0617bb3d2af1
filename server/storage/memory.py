"""The ``Store`` kept in dictionaries: what a server started without a database runs on, and
most tests too.

It is kept apart from the interface so ``store.py`` stays the contract and its records alone;
this implementation is small enough to read at a glance, and ``tests/server/storage`` holds it
and the SQL store to the same contract. Nothing in it is durable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

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
    name_key,
    new_rating,
    rating_after,
    replace,
    score_levels,
)


class MemoryStore:
    """``Store`` kept in dictionaries: for tests and for a server started without a database."""

    def __init__(self) -> None:
        self._players: dict[str, PlayerRecord] = {}
        self._games: dict[str, GameRecord] = {}
        self._moves: dict[str, list[MoveRecord]] = {}
        self._epochs: dict[str, int] = {}
        self._reviews: dict[str, ReviewRecord] = {}
        self._accounts: dict[str, AccountRecord] = {}
        self._held: set[str] = set()
        """Name keys of every account, bot and admin (``name_is_held``)."""
        self._sessions: dict[str, SessionRecord] = {}
        self._ratings: dict[tuple[str, str], RatingRecord] = {}
        self._rating_changes: list[RatingChangeRecord] = []
        self._tournaments: dict[str, TournamentRecord] = {}
        self._tournament_epochs: dict[str, int] = {}
        self._entrants: dict[tuple[str, str], EntrantRecord] = {}
        self._pairings: dict[tuple[str, str], PairingRecord] = {}
        self._schedules: dict[str, ScheduleRecord] = {}
        self._chat: dict[int, ChatLineRecord] = {}
        self._silences: dict[str, float] = {}
        self._source_silences: dict[tuple[str, str], float] = {}
        """Addresses silenced with a player: (source, player id) to when it ends."""
        self._spent_tokens: set[str] = set()

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def save_player(self, player: PlayerRecord) -> None:
        self._players[player.id] = player
        if player.kind != "guest":
            self._held.add(name_key(player.name))

    async def load_player(self, player_id: str) -> PlayerRecord | None:
        return self._players.get(player_id)

    async def save_game(self, game: GameRecord, players: Sequence[PlayerRecord] = ()) -> None:
        await self._hold(game.id, game.epoch)
        for player in players:
            await self.save_player(player)
        self._games[game.id] = replace(game, epoch=self._epochs.get(game.id, 0))
        self._moves.setdefault(game.id, [])

    async def fence(self, game_id: str, epoch: int) -> None:
        if epoch and game_id in self._epochs and self._epochs[game_id] >= epoch:
            raise Fenced(f"game {game_id} is held at epoch {self._epochs[game_id]}, "
                         f"not {epoch}")
        await self._hold(game_id, epoch)

    async def _hold(self, game_id: str, epoch: int) -> None:
        held = self._epochs.get(game_id, 0)
        if epoch and held > epoch:
            raise Fenced(f"game {game_id} is held at epoch {held}, not {epoch}")
        self._epochs[game_id] = max(held, epoch)
        if game_id in self._games:
            self._games[game_id] = replace(self._games[game_id], epoch=self._epochs[game_id])

    async def append_move(self, move: MoveRecord) -> None:
        if move.game_id in self._games:
            await self._hold(move.game_id, move.epoch)
        moves = self._moves.setdefault(move.game_id, [])
        if any(m.ply == move.ply for m in moves):
            raise DuplicateMove(f"game {move.game_id} already has a move at ply {move.ply}")
        moves.append(move)

    async def load_game(self, game_id: str) -> tuple[GameRecord, list[MoveRecord]] | None:
        game = self._games.get(game_id)
        if game is None:
            return None
        return game, sorted(self._moves[game_id], key=lambda m: m.ply)

    async def load_games(self, game_ids: Sequence[str]
                         ) -> dict[str, tuple[GameRecord, list[MoveRecord]]]:
        found = {game_id: await self.load_game(game_id) for game_id in game_ids}
        return {game_id: loaded for game_id, loaded in found.items() if loaded is not None}

    async def unfinished_games(self) -> list[tuple[GameRecord, list[MoveRecord]]]:
        return [
            (g, sorted(self._moves[g.id], key=lambda m: m.ply))
            for g in self._games.values()
            if g.status in ("waiting", "active")
        ]

    async def games_of_player(self, player_id: str, limit: int = 50) -> list[GameRecord]:
        mine = [g for g in self._games.values() if player_id in g.players]
        mine.sort(key=lambda g: g.created_at, reverse=True)
        return mine[:limit]

    async def count_moves(self, game_ids: Sequence[str]) -> dict[str, int]:
        return {game_id: len(self._moves.get(game_id, ())) for game_id in game_ids}

    async def recent_games(self, game: str, limit: int
                           ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        found = sorted((g for g in self._games.values() if g.game == game),
                       key=lambda g: (g.created_at, g.id), reverse=True)[:limit]
        return [(g, sorted(self._moves[g.id], key=lambda m: m.ply)) for g in found]

    def _ended(self, game: str) -> list[GameRecord]:
        """The games of ``game`` that ended, in the order they did."""
        return sorted((g for g in self._games.values()
                       if g.game == game and g.finished_at is not None),
                      key=lambda g: (g.finished_at, g.id))

    async def games_ended_after(self, game: str, after: tuple[float, str] | None, limit: int
                                ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        found = [g for g in self._ended(game)
                 if after is None or (g.finished_at, g.id) > after][:limit]
        return [(g, sorted(self._moves[g.id], key=lambda m: m.ply)) for g in found]

    async def ended_mark(self, game: str, newest: int) -> tuple[float, str] | None:
        ended = self._ended(game)
        if len(ended) <= newest:
            return None
        last = ended[-newest - 1]
        assert last.finished_at is not None
        return (last.finished_at, last.id)

    async def take_back(self, game_id: str, plies: int, epoch: int = 0) -> None:
        await self._hold(game_id, epoch)
        self._moves[game_id] = [m for m in self._moves.get(game_id, []) if m.ply < plies]


    async def save_review(self, review: ReviewRecord) -> ReviewRecord:
        if review.game_id not in self._games:
            raise KeyError(f"no stored game {review.game_id!r}")
        return self._reviews.setdefault(review.game_id, review)

    async def load_review(self, game_id: str) -> ReviewRecord | None:
        return self._reviews.get(game_id)

    async def create_account(self, account: AccountRecord) -> PlayerRecord:
        key = account.name_key
        if any(a.name_key == key for a in self._accounts.values()) or any(
            p.kind in ("bot", "admin") and name_key(p.name) == key
            for p in self._players.values()
        ):
            raise NameTaken(f"the name {account.name!r} is taken")
        known = self._players.get(account.player_id)
        if known is not None and known.kind != "guest":
            raise NotAGuest(f"player {account.player_id} is a {known.kind} already")
        player = PlayerRecord(account.player_id, account.name, "account",
                              known.created_at if known is not None else account.created_at)
        self._players[player.id] = player
        self._accounts[player.id] = account
        self._held.add(key)
        return player

    async def find_account(self, name: str) -> AccountRecord | None:
        key = name_key(name)
        return next((a for a in self._accounts.values() if a.name_key == key), None)

    async def name_is_held(self, *names: str) -> bool:
        return any(name_key(name) in self._held for name in names)

    async def add_session(self, session: SessionRecord) -> None:
        self._sessions[session.token_hash] = session

    async def find_session(self, token_hash: str) -> SessionRecord | None:
        return self._sessions.get(token_hash)

    async def find_session_player(self, token_hash: str
                                  ) -> tuple[SessionRecord, PlayerRecord | None] | None:
        session = self._sessions.get(token_hash)
        return None if session is None else (session, self._players.get(session.player_id))

    async def touch_session(self, session_id: str, now: float) -> None:
        for token_hash, session in list(self._sessions.items()):
            if session.id == session_id:
                self._sessions[token_hash] = dataclasses.replace(session, used_at=now)

    async def change_password(self, player_id: str, password_hash: str, now: float,
                              keep_session: str) -> int:
        account = self._accounts[player_id]
        self._accounts[player_id] = dataclasses.replace(account, password_hash=password_hash)
        count = 0
        for token_hash, session in list(self._sessions.items()):
            if (session.player_id == player_id and session.revoked_at is None
                    and session.id != keep_session):
                self._sessions[token_hash] = dataclasses.replace(session, revoked_at=now)
                count += 1
        return count

    async def revoke_sessions(self, player_id: str, now: float,
                              session_id: str | None = None) -> int:
        count = 0
        for token_hash, session in list(self._sessions.items()):
            if (session.player_id == player_id and session.revoked_at is None
                    and session_id in (None, session.id)):
                self._sessions[token_hash] = dataclasses.replace(session, revoked_at=now)
                count += 1
        return count


    async def rate_game(self, game_id: str, player_ids: Sequence[str],
                        rate: RateGame) -> list[RatingChangeRecord]:
        done = [c for c in self._rating_changes if c.game_id == game_id]
        if done:
            return done
        if game_id not in self._games:
            return []
        game = self._games[game_id].game
        current = {
            pid: (self._players[pid].kind, self._ratings.get((pid, game))
                  or new_rating(pid, game))
            for pid in dict.fromkeys(player_ids) if pid in self._players
        }
        changes = list(rate(current))
        for change in changes:
            self._ratings[(change.player_id, change.game)] = rating_after(change)
        self._rating_changes.extend(changes)
        return changes

    async def ratings_of(self, player_id: str) -> list[RatingRecord]:
        return sorted((r for (pid, _), r in self._ratings.items() if pid == player_id),
                      key=lambda r: r.game)

    async def rating_history(self, player_id: str, game: str | None = None,
                             limit: int = 200) -> list[RatingChangeRecord]:
        mine = [c for c in self._rating_changes
                if c.player_id == player_id and game in (None, c.game)]
        mine.sort(key=lambda c: (c.created_at, c.game_id))
        return mine[-limit:]

    async def leaderboard(self, game: str, limit: int, max_rd: float | None = None
                          ) -> list[tuple[PlayerRecord, RatingRecord]]:
        rows = [(self._players[pid], r) for (pid, g), r in self._ratings.items()
                if g == game and pid in self._players and (max_rd is None or r.rd <= max_rd)]
        rows.sort(key=lambda row: (-row[1].rating, -row[1].games, row[0].name, row[0].id))
        return rows[:limit]

    async def scores_against_levels(self, player_id: str) -> list[LevelScore]:
        return score_levels(player_id, [g for g in self._games.values()
                                        if player_id in g.players])

    async def calibrated_levels(self, game: str) -> dict[str, tuple[float, float]]:
        return {}  # calibrations are stored in SQL only

    async def add_chat_line(self, line: ChatLineRecord, lobby_kept: int) -> ChatLineRecord:
        stored = dataclasses.replace(line, id=max(self._chat, default=0) + 1)
        self._chat[stored.id] = stored
        if stored.game_id is None:
            lobby = [i for i, c in self._chat.items() if c.game_id is None]
            for old in sorted(lobby)[:max(0, len(lobby) - lobby_kept)]:
                del self._chat[old]
        return stored

    async def chat_lines(self, game_id: str | None, channels: Sequence[ChatChannel],
                         limit: int) -> list[ChatLineRecord]:
        found = [c for c in self._chat.values()
                 if c.game_id == game_id and c.channel in channels]
        return sorted(found, key=lambda c: c.id)[-limit:]

    async def delete_chat_line(self, line_id: int, now: float) -> ChatLineRecord | None:
        return self._chat.pop(line_id, None)

    async def silence_chat(self, player_id: str, until: float | None,
                           sources: Sequence[str] = ()) -> None:
        held = [s for (s, p), _ in self._source_silences.items() if p == player_id]
        self._source_silences = {k: v for k, v in self._source_silences.items()
                                 if k[1] != player_id}
        if until is None:
            self._silences.pop(player_id, None)
            return
        self._silences[player_id] = until
        for source in (*held, *sources):
            self._source_silences[source, player_id] = until

    async def chat_silenced_until(self, player_id: str,
                                  source: str | None = None) -> float | None:
        ends = [u for (s, _), u in self._source_silences.items() if s == source]
        if player_id in self._silences:
            ends.append(self._silences[player_id])
        return max(ends, default=None)

    async def prune_chat(self, lobby_before: float, games_before: float) -> int:
        old = [i for i, c in self._chat.items() if c.created_at < (
            lobby_before if c.game_id is None else games_before)]
        for line_id in old:
            del self._chat[line_id]
        ended = min(lobby_before, games_before)
        self._silences = {k: u for k, u in self._silences.items() if u >= ended}
        self._source_silences = {k: u for k, u in self._source_silences.items() if u >= ended}
        return len(old)

    async def spend_guest_token(self, player_id: str, now: float) -> bool:
        if player_id in self._spent_tokens:
            return False
        self._spent_tokens.add(player_id)
        return True


    async def save_tournament(self, tournament: TournamentRecord, epoch: int = 0) -> None:
        self._hold_tournament(tournament.id, epoch)
        self._tournaments[tournament.id] = tournament

    async def fence_tournament(self, tournament_id: str, epoch: int) -> None:
        held = self._tournament_epochs.get(tournament_id, 0)
        if epoch and held >= epoch:
            raise Fenced(f"tournament {tournament_id} is held at epoch {held}, not {epoch}",
                         held)
        self._hold_tournament(tournament_id, epoch)

    def _hold_tournament(self, tournament_id: str, epoch: int) -> None:
        held = self._tournament_epochs.get(tournament_id, 0)
        if epoch and held > epoch:
            raise Fenced(f"tournament {tournament_id} is held at epoch {held}, not {epoch}",
                         held)
        self._tournament_epochs[tournament_id] = max(held, epoch)

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None:
        return self._tournaments.get(tournament_id)

    async def list_tournaments(self, statuses: Sequence[TournamentStatus], limit: int = 100
                               ) -> list[TournamentRecord]:
        found = [t for t in self._tournaments.values() if t.status in statuses]
        return sorted(found, key=lambda t: (t.starts_at, t.id))[:limit]

    async def count_tournaments_made(self, player_id: str,
                                     statuses: Sequence[TournamentStatus]) -> int:
        return sum(1 for t in self._tournaments.values()
                   if t.created_by == player_id and t.status in statuses)

    async def save_entrant(self, entrant: EntrantRecord, epoch: int = 0) -> None:
        self._hold_tournament(entrant.tournament_id, epoch)
        self._entrants[(entrant.tournament_id, entrant.player_id)] = entrant

    async def tournament_entrants(self, tournament_id: str) -> list[EntrantRecord]:
        found = [e for e in self._entrants.values() if e.tournament_id == tournament_id]
        return sorted(found, key=lambda e: (e.joined_at, e.player_id))

    async def save_pairing(self, pairing: PairingRecord, epoch: int = 0) -> None:
        self._hold_tournament(pairing.tournament_id, epoch)
        self._pairings[(pairing.tournament_id, pairing.pairing_id)] = pairing

    async def tournament_pairings(self, tournament_id: str) -> list[PairingRecord]:
        found = [p for p in self._pairings.values() if p.tournament_id == tournament_id]
        return sorted(found, key=lambda p: p.seq)

    async def save_schedule(self, schedule: ScheduleRecord) -> None:
        self._schedules[schedule.id] = schedule

    async def list_schedules(self) -> list[ScheduleRecord]:
        return sorted(self._schedules.values(), key=lambda s: (s.created_at, s.id))

    async def delete_schedule(self, schedule_id: str) -> bool:
        return self._schedules.pop(schedule_id, None) is not None
