"""Ratings at game over, the leaderboard and profiles: the server's glue around
``server.ratings.glicko`` (the arithmetic) and the store (where ratings live).

Which games are rated: finished games (not aborted ones) between two rated players, and
between a rated player and an AI level. Rated players are accounts and bots: both have a
stable identity across browsers and restarts, which a guest does not. An AI level's rating
comes from its calibration (``ratings.level_rating``) and is never changed by games.

A game is rated right after its finished row is stored (``RoomRunner.carry``), in one
transaction of its own that also writes the history rows; the rows' key (game, player) makes
it happen once however often the finish is carried (``Store.rate_game``). A crash between
the two leaves the game unrated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import games
from ai.levels import levels_of
from server import errors
from server import protocol as p
from server.connections.client import Client
from server.connections.outbox import Outbox
from server.connections.player import Player
from server.engines.live_levels import LiveLevels
from server.play.lobby import Lobby
from server.play.seats import level_key
from server.ratings.glicko import (
    PROVISIONAL_RD,
    Rating,
    after_game,
    guessed_level_rating,
    is_provisional,
    level_rating,
)
from server.ratings.level_calibration import shipped_measure
from server.reviews import history
from server.storage.store import (
    GameRecord,
    LevelScore,
    PlayerKind,
    PlayerRecord,
    RatingChangeRecord,
    RatingRecord,
    Store,
)

log = logging.getLogger("discus.ratings")

RATED_KINDS: frozenset[PlayerKind] = frozenset({"account", "bot"})
"""Players whose games are rated: a guest has no identity to keep a rating under."""
HISTORY_POINTS = 200
"""Rating history rows a profile carries (the chart's points)."""
RECENT_GAMES = 10


def score_of(record: GameRecord, seat: int) -> float | None:
    """The score of ``seat`` in a finished game (1, 0.5, 0), None if it is not scored."""
    if record.status != "finished" or record.result is None:
        return None
    mine = record.result if seat == 0 else -record.result
    return 1.0 if mine > 0 else 0.5 if mine == 0 else 0.0


def rating_of(record: RatingRecord) -> Rating:
    return Rating(record.rating, record.rd, record.volatility)


def view(rating: Rating) -> p.RatingView:
    return p.RatingView(rating=round(rating.rating, 1), rd=round(rating.rd, 1),
                        provisional=is_provisional(rating))


def game_rating(record: RatingRecord) -> p.GameRating:
    rating = rating_of(record)
    return p.GameRating(game=record.game, games=record.games, rating=round(rating.rating, 1),
                        rd=round(rating.rd, 1), provisional=is_provisional(rating))


def plan_changes(record: GameRecord, players: Mapping[str, tuple[PlayerKind, RatingRecord]],
                 level: Rating | None, now: float) -> list[RatingChangeRecord]:
    """The rating changes a finished game makes (none if it is not rated): pure, so the
    store can call it inside its transaction with the ratings it has just locked.

    Between two rated players both ratings move, each computed from the other's rating
    before the game; against a level only the player's does, against the level's rating."""
    seats = []
    for seat, player_id in enumerate(record.players):
        score = score_of(record, seat)
        if record.ai_seat == seat or score is None:
            continue
        if player_id is None or player_id not in players:
            return []
        kind, current = players[player_id]
        if kind not in RATED_KINDS:
            return []
        seats.append((seat, player_id, current, score))
    if record.ai_seat is not None:
        if level is None or len(seats) != 1:
            return []
        opponents: list[tuple[str | None, str | None, Rating]] = [
            (None, record.ai_level, level)]
    elif len(seats) == 2:
        opponents = [(seats[1][1], None, rating_of(seats[1][2])),
                     (seats[0][1], None, rating_of(seats[0][2]))]
    else:
        return []
    changes = []
    for (_, player_id, current, score), (opponent_id, opponent_level, opponent) in zip(
            seats, opponents, strict=True):
        before = rating_of(current)
        after = after_game(before, opponent, score)
        changes.append(RatingChangeRecord(
            game_id=record.id, player_id=player_id, game=record.game,
            opponent_id=opponent_id, opponent_level=opponent_level,
            opponent_rating=opponent.rating, score=score,
            rating_before=before.rating, rd_before=before.rd,
            volatility_before=before.volatility, rating_after=after.rating,
            rd_after=after.rd, volatility_after=after.volatility,
            games=current.games + 1, created_at=now))
    return changes


def seat_rating(rating: Rating, provisional: bool) -> p.SeatRating:
    return p.SeatRating(rating=round(rating.rating), provisional=provisional)


def change_message(room_id: str, change: RatingChangeRecord) -> p.RatingChange:
    before = Rating(change.rating_before, change.rd_before, change.volatility_before)
    after = Rating(change.rating_after, change.rd_after, change.volatility_after)
    return p.RatingChange(room=room_id, game_id=change.game_id, game=change.game,
                          player=change.player_id, before=view(before), after=view(after),
                          delta=round(after.rating - before.rating, 1))


class People(Protocol):
    """The player registry, read (``server.people.identity``)."""

    async def people(self, player_ids: Iterable[str | None]) -> dict[str, Player]: ...

    def get(self, player_id: str) -> Player | None: ...

    def is_unsaved_guest(self, player_id: str) -> bool: ...


SHOWN_LEVELS_SECONDS = 10.0
"""How long the levels' calibrated ratings read for the seats of new rooms are shown before
they are read again: a room against the AI is made on every newcomer's first click, and a
calibration's new figures may wait that long to appear beside a level's seat (a game is
always rated against a fresh read)."""


class RatingDesk:
    """Rates finished games and answers ``get_leaderboard`` and ``get_profile``."""

    def __init__(self, store: Store, outbox: Outbox, people: People, levels: LiveLevels,
                 lobby: Lobby, max_rooms: int, now: Callable[[], float]) -> None:
        self.store = store
        self.outbox = outbox
        self.people = people
        self.levels = levels
        self.lobby = lobby
        self.max_rooms = max_rooms
        self.now = now
        self._calibrated: dict[str, tuple[float, dict[str, tuple[float, float]]]] = {}
        """Per game, the last read of its calibrated levels and when (``time.monotonic``)."""

    # --- levels ----------------------------------------------------------------------------

    async def level_ratings(self, game: str, recent: bool = False
                            ) -> dict[str, tuple[Rating, bool]]:
        """Each level of ``game``: its rating, and whether a calibration measured it: the
        database's latest finished run of the game if there is one, else the measure
        shipped with the default levels (``server.ratings.level_calibration``), else a guess.
        ``recent``: a read under ``SHOWN_LEVELS_SECONDS`` old will do."""
        kept = self._calibrated.get(game)
        if recent and kept is not None and time.monotonic() - kept[0] < SHOWN_LEVELS_SECONDS:
            stored = kept[1]
        else:
            stored = await self.store.calibrated_levels(game)
            self._calibrated[game] = (time.monotonic(), stored)
        out: dict[str, tuple[Rating, bool]] = {}
        for level in levels_of(game, self.levels.current):
            measured = stored.get(level.name) if stored else shipped_measure(game, level)
            if measured is not None:
                out[level.name] = (level_rating(*measured), True)
            else:
                out[level.name] = (guessed_level_rating(level.order), False)
        return out

    # --- seats -----------------------------------------------------------------------------

    async def seat_ratings(self, game: str, player_ids: Iterable[str],
                           level: str | None = None) -> dict[str, p.SeatRating | None]:
        """What rooms of ``game`` show beside these players (None for a guest or an admin;
        an account or bot not rated yet shows the starting rating, provisional) and beside
        the AI ``level``, keyed as ``Room.note_ratings`` takes them. Reads the store: call
        it when a player sits down, never on a move."""
        out: dict[str, p.SeatRating | None] = {}
        for player_id in player_ids:
            if self.people.is_unsaved_guest(player_id):
                out[player_id] = None  # no row to read: a guest before its first game
                continue
            who = await self.store.load_player(player_id)
            if who is None or who.kind not in RATED_KINDS:
                out[player_id] = None
                continue
            mine = next((rating_of(r) for r in await self.store.ratings_of(player_id)
                         if r.game == game), Rating())
            out[player_id] = seat_rating(mine, is_provisional(mine))
        if level is not None:
            known = await self.level_ratings(game, recent=True)
            if level in known:
                rating, calibrated = known[level]
                out[level_key(level)] = seat_rating(rating, not calibrated)
        return out

    def signed_up(self, player_id: str) -> None:
        """A guest seated in rooms became an account (same id): show the starting rating
        beside it there from the next message that carries seats (no read: it is new)."""
        start = Rating()
        for room in self.lobby.rooms_of(player_id):
            room.note_ratings({player_id: seat_rating(start, is_provisional(start))})

    # --- game over -------------------------------------------------------------------------

    async def rate(self, room_id: str, record: GameRecord) -> list[RatingChangeRecord]:
        """Rate the finished game ``record`` (stored already) and tell each rated player its
        change (``rating_change``). Idempotent: a game rated before is not rated again, and
        its players are told nothing new."""
        if record.status != "finished" or record.result is None:
            return []
        people = [pid for pid in record.players if pid is not None]
        if not people:
            return []
        room = self.lobby.rooms.get(room_id)
        if room is not None and not room.rated:
            return []  # a casual room: an unrated tournament's game
        if room is not None and not all(pid in room.ratings for pid in people):
            # A guest or an admin played (the room was handed a rating for each rated
            # player as it sat down): nothing is rated, so nothing need be read or written.
            return []
        level: Rating | None = None
        if record.ai_seat is not None:
            if record.ai_level is None:
                return []
            known = await self.level_ratings(record.game)
            if record.ai_level not in known:
                return []  # a level removed since: its strength is unknown
            level = known[record.ai_level][0]
        now = record.finished_at if record.finished_at is not None else self.now()
        fresh: list[RatingChangeRecord] = []

        def plan(players: Mapping[str, tuple[PlayerKind, RatingRecord]]
                 ) -> list[RatingChangeRecord]:
            fresh[:] = plan_changes(record, players, level, now)
            return fresh

        changes = await self.store.rate_game(record.id, people, plan)
        if room is not None:  # a rematch shows the ratings this game left, read from none
            for change in changes:
                after = Rating(change.rating_after, change.rd_after, change.volatility_after)
                room.note_ratings({change.player_id: seat_rating(after, is_provisional(after))})
        if fresh:  # computed now, not found from an earlier rating of the same game
            for change in changes:
                self.outbox.to_players([change.player_id], change_message(room_id, change))
        return changes

    # --- requests --------------------------------------------------------------------------

    async def handle(self, client: Client, player: Player,
                     message: p.GetLeaderboard | p.GetProfile) -> None:
        if isinstance(message, p.GetLeaderboard):
            answer: p.Leaderboard | p.Profile = await self.leaderboard(
                message.game, message.limit, message.provisional)
        else:
            answer = await self.profile(message.player or player.id)
        self.outbox.send([client], answer)

    async def leaderboard(self, game: str, limit: int, provisional: bool) -> p.Leaderboard:
        if game not in games.names():
            raise errors.UnknownGame(
                f"unknown game {game!r}; known games: {', '.join(games.names())}")
        rows = await self.store.leaderboard(
            game, limit, None if provisional else PROVISIONAL_RD)
        levels = [p.LevelRatingView(name=name, rating=round(rating.rating, 1),
                                    rd=round(rating.rd, 1), calibrated=calibrated)
                  for name, (rating, calibrated) in (await self.level_ratings(game)).items()]
        return p.Leaderboard(game=game, levels=levels, players=[
            p.LeaderboardEntry(rank=rank, rating=game_rating(record),
                               player=p.PlayerView(id=who.id, name=who.name,
                                                   bot=who.kind == "bot"))
            for rank, (who, record) in enumerate(rows, start=1)])

    async def profile(self, player_id: str) -> p.Profile:
        store = self.store
        who = await store.load_player(player_id)
        known = self.people.get(player_id) if who is None else None
        if known is not None and not known.bot:  # a guest that has not played: no row yet
            who = PlayerRecord(known.id, known.name, "guest", 0.0)
        if who is None:
            raise errors.UnknownPlayer(f"there is no player {player_id!r}")
        changes = await store.rating_history(player_id, limit=HISTORY_POINTS)
        people = await self.people.people([c.opponent_id for c in changes])
        points = [p.RatingPoint(
            game_id=c.game_id, game=c.game, at=c.created_at, rating=round(c.rating_after, 1),
            rd=round(c.rd_after, 1), delta=round(c.rating_after - c.rating_before, 1),
            score=c.score, level=c.opponent_level,
            opponent=people[c.opponent_id].view() if c.opponent_id in people else None)
            for c in changes]
        return p.Profile(
            player=p.PlayerView(id=who.id, name=who.name, bot=who.kind == "bot"),
            kind=who.kind,
            ratings=[game_rating(r) for r in await store.ratings_of(player_id)],
            history=points,
            levels=self._level_order(await store.scores_against_levels(player_id)),
            recent=await self._recent(player_id))

    def _level_order(self, scores: Sequence[LevelScore]) -> list[p.LevelRecord]:
        """Scores by game, then ladder order (levels no longer offered last)."""
        def order(game: str, level: str) -> tuple[str, int, str]:
            ladder = [lv.name for lv in levels_of(game, self.levels.current)]
            return game, ladder.index(level) if level in ladder else len(ladder), level

        records = [p.LevelRecord.model_validate(vars(s)) for s in scores]
        return sorted(records, key=lambda r: order(r.game, r.level))

    async def _recent(self, player_id: str) -> list[p.PastGame]:
        records = await self.store.games_of_player(
            player_id, RECENT_GAMES + self.max_rooms)
        finished = [r for r in records if r.status in history.PAST_STATUSES][:RECENT_GAMES]
        counts = await self.store.count_moves([r.id for r in finished])
        return [history.past_game(r, counts[r.id], await self.people.people(r.players))
                for r in finished]
