"""The schema, as SQLAlchemy 2 declarative models; Alembic migrations mirror it exactly.

Timestamps are epoch seconds in double precision, the same floats the records carry, so a
record read back equals the record written on every backend. Players in games carry no
foreign key: the ``Store`` contract lets the server save a game before (or without) its
players, as ``MemoryStore`` does. Moves do reference their game.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID = String(64)


class Base(DeclarativeBase):
    pass


class Player(Base):
    """A person or program that plays: guests (display name only), accounts, bots and admins."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(16))  # guest | account | bot | admin
    created_at: Mapped[float] = mapped_column(Double)


class Game(Base):
    """One game; seat 0 moves first. A seat's player is NULL for the AI or an open seat."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    player0_id: Mapped[str | None] = mapped_column(ID)
    player1_id: Mapped[str | None] = mapped_column(ID)
    ai_level: Mapped[str | None] = mapped_column(String(64))
    ai_seat: Mapped[int | None] = mapped_column(SmallInteger)
    status: Mapped[str] = mapped_column(String(16))  # waiting | active | finished | aborted
    start_position: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Double)
    result: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(String(64))
    finished_at: Mapped[float | None] = mapped_column(Double)
    epoch: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """The fencing token of the node that last wrote the game (``server.cluster.leases``): a write
    carrying an older one is refused, so a node that lost the room can never write."""
    time_control: Mapped[str | None] = mapped_column(String(16))
    """The time control's name; NULL for an untimed game (migration 0008)."""
    clock_initial_ms: Mapped[int | None] = mapped_column(Integer)
    clock_increment_ms: Mapped[int | None] = mapped_column(Integer)
    other_ai_level: Mapped[str | None] = mapped_column(String(64))
    """Seat 1's level when both seats are the AI's, ``ai_seat`` then 0 (migration 0013)."""
    berserk: Mapped[int] = mapped_column(SmallInteger, default=0, server_default=text("0"))
    """The seats that went berserk (an arena's halved clock), one bit each: 1 seat 0, 2
    seat 1 (migration 0015)."""
    evaluation: Mapped[bool] = mapped_column(Boolean, default=False,
                                             server_default=text("false"))
    """The creator asked to see the engine's evaluation (migration 0016)."""
    rated: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    """False: a casual game, which moves nobody's rating (migration 0018)."""

    __table_args__ = (
        # "My games, newest first": one index per seat, each already in the order shown.
        Index("ix_games_player0_created", "player0_id", "created_at"),
        Index("ix_games_player1_created", "player1_id", "created_at"),
        # Idle proving reads each game once, as it ends (``games_ended_after``).
        Index("ix_games_game_finished", "game", "finished_at"),
        # Restart recovery reads only unfinished games: a partial index keeps it tiny.
        Index(
            "ix_games_unfinished",
            "status",
            postgresql_where=text("status IN ('waiting', 'active')"),
            sqlite_where=text("status IN ('waiting', 'active')"),
        ),
    )


class Move(Base):
    """One accepted move. The primary key (game, ply) is what makes a replayed ply fail."""

    __tablename__ = "moves"

    game_id: Mapped[str] = mapped_column(
        ID, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    move: Mapped[str] = mapped_column(String(16))
    seat: Mapped[int] = mapped_column(SmallInteger)
    seconds: Mapped[float] = mapped_column(Double)
    created_at: Mapped[float] = mapped_column(Double)
    ai_depth: Mapped[int | None] = mapped_column(Integer)
    ai_score: Mapped[int | None] = mapped_column(Integer)
    ai_nodes: Mapped[int | None] = mapped_column(BigInteger)
    epoch: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """The fencing token its writer held (``Game.epoch``)."""
    clock0_ms: Mapped[int | None] = mapped_column(Integer)
    """Seat 0's time left after the move in a timed game (migration 0008), else NULL."""
    clock1_ms: Mapped[int | None] = mapped_column(Integer)


class Level(Base):
    """A difficulty level of one game: its place in the ladder and its search settings.

    ``settings`` holds the knobs (depth, time budgets, node cap, weakening) as JSON so the
    admin issue can add knobs without a migration; it validates them before saving.
    """

    __tablename__ = "levels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer)  # order in the ladder, weakest first
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[float] = mapped_column(Double)

    __table_args__ = (
        UniqueConstraint("game", "name", name="uq_levels_game_name"),
        Index("ix_levels_game_position", "game", "position"),
    )


class LevelAudit(Base):
    """One change to a level: who made it, when, and the level before and after (as
    ``ai.levels.Level.to_dict``; ``before`` is NULL for a new level, ``after`` for a deleted
    one). Rows are only ever added."""

    __tablename__ = "level_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game: Mapped[str] = mapped_column(String(32))
    level: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(16))  # create | update | delete
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[float] = mapped_column(Double)

    __table_args__ = (Index("ix_level_audit_game_created", "game", "created_at"),)


class LevelsVersion(Base):
    """One row (id 1) counting level changes: every edit bumps it in the edit's transaction,
    so a process that saw version N knows its copy of the levels is current while it is N."""

    __tablename__ = "levels_version"

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[float] = mapped_column(Double)


class CalibrationRun(Base):
    """One calibration of a game's levels: the levels as played (snapshot), how, and the
    fitted ratings (JSON list of level, elo, error, games, score) once finished."""

    __tablename__ = "calibration_runs"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))  # running | finished | failed
    actor: Mapped[str] = mapped_column(String(100))
    games_per_pair: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    pair_mode: Mapped[str] = mapped_column(String(16))  # adjacent | all
    levels: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    ratings: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    seconds: Mapped[float | None] = mapped_column(Double)
    created_at: Mapped[float] = mapped_column(Double)
    finished_at: Mapped[float | None] = mapped_column(Double)

    __table_args__ = (Index("ix_calibration_runs_game_created", "game", "created_at"),)


class CalibrationResult(Base):
    """Wins, draws and losses of ``level_a`` (the weaker by order) against ``level_b``."""

    __tablename__ = "calibration_results"

    run_id: Mapped[str] = mapped_column(
        ID, ForeignKey("calibration_runs.id", ondelete="CASCADE"), primary_key=True
    )
    level_a: Mapped[str] = mapped_column(String(64), primary_key=True)
    level_b: Mapped[str] = mapped_column(String(64), primary_key=True)
    wins: Mapped[int] = mapped_column(Integer)
    draws: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)


class Token(Base):
    """A bot's or admin's secret, stored only as a hash; revoked tokens keep their row."""

    __tablename__ = "tokens"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    player_id: Mapped[str] = mapped_column(ID, ForeignKey("players.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    scope: Mapped[str] = mapped_column(String(16))  # bot | admin
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[float] = mapped_column(Double)
    last_used_at: Mapped[float | None] = mapped_column(Double)
    revoked_at: Mapped[float | None] = mapped_column(Double)

    __table_args__ = (
        Index("ix_tokens_player", "player_id"),
        # One live token per name and scope: challenges reach a bot by its name.
        Index(
            "ux_tokens_live_name",
            "scope",
            "name",
            unique=True,
            postgresql_where=text("revoked_at IS NULL"),
            sqlite_where=text("revoked_at IS NULL"),
        ),
    )


class Account(Base):
    """A person's account (``server.people.accounts``): the player (kind ``account``) behind a name
    and a password, stored only as its Argon2id hash. ``name_key`` is the name lower-cased:
    its unique index makes names unique whatever their letter case."""

    __tablename__ = "accounts"

    player_id: Mapped[str] = mapped_column(
        ID, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(40))
    name_key: Mapped[str] = mapped_column(String(40))
    password_hash: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[float] = mapped_column(Double)

    __table_args__ = (Index("ux_accounts_name_key", "name_key", unique=True),)


class Session(Base):
    """A signed-in browser: an account's session token, stored only as its SHA-256 (the
    token is 32 random bytes, as bot tokens are); revoked sessions keep their row."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    player_id: Mapped[str] = mapped_column(ID, ForeignKey("players.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[float] = mapped_column(Double)
    revoked_at: Mapped[float | None] = mapped_column(Double)
    used_at: Mapped[float | None] = mapped_column(Double)
    """The last ``hello`` with it (sliding expiry, ``Settings.session_days``)."""

    __table_args__ = (Index("ix_sessions_player", "player_id"),)


class PlayerRating(Base):
    """A player's Glicko-2 rating in one game (``server.ratings.glicko``), one row per account or
    bot and game once it has played a rated game; ``games`` counts its rated games."""

    __tablename__ = "ratings"

    player_id: Mapped[str] = mapped_column(
        ID, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    rating: Mapped[float] = mapped_column(Double)
    rd: Mapped[float] = mapped_column(Double)
    volatility: Mapped[float] = mapped_column(Double)
    games: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[float] = mapped_column(Double)

    # The leaderboard: a game's best ratings first.
    __table_args__ = (Index("ix_ratings_game_rating", "game", "rating"),)


class RatingChange(Base):
    """What one rated game did to one player's rating (before and after), written once: the
    primary key (game, player) is what makes a game rated only once, whichever server
    finishes it and however often."""

    __tablename__ = "rating_history"

    game_id: Mapped[str] = mapped_column(
        ID, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    player_id: Mapped[str] = mapped_column(
        ID, ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    game: Mapped[str] = mapped_column(String(32))
    opponent_id: Mapped[str | None] = mapped_column(ID)
    opponent_level: Mapped[str | None] = mapped_column(String(64))
    opponent_rating: Mapped[float] = mapped_column(Double)
    score: Mapped[float] = mapped_column(Double)
    rating_before: Mapped[float] = mapped_column(Double)
    rd_before: Mapped[float] = mapped_column(Double)
    volatility_before: Mapped[float] = mapped_column(Double)
    rating_after: Mapped[float] = mapped_column(Double)
    rd_after: Mapped[float] = mapped_column(Double)
    volatility_after: Mapped[float] = mapped_column(Double)
    games: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[float] = mapped_column(Double)

    # A player's history, in time order, per game.
    __table_args__ = (Index("ix_rating_history_player", "player_id", "game", "created_at"),)


class CachedPosition(Base):
    """The durable position cache: deep and exact search results under a canonical key.

    ``key`` is canonical under the game's symmetries and relative to the side to move;
    ``best_move`` is in that canonical orientation (see ``server.storage.symmetry``).
    ``bound`` is 1 lower, 2 upper, 3 exact-at-depth (as in ``ai.tt``); ``exact`` means
    proven to the end of the game.
    """

    __tablename__ = "position_cache"

    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    depth: Mapped[int] = mapped_column(SmallInteger)
    score: Mapped[int] = mapped_column(Integer)
    bound: Mapped[int] = mapped_column(SmallInteger)
    best_move: Mapped[str | None] = mapped_column(String(16))
    exact: Mapped[bool] = mapped_column(Boolean)
    updated_at: Mapped[float] = mapped_column(Double)


class GameReview(Base):
    """The engine's review of a finished game (``server.reviews.desk``), written once: the
    protocol's ``GameReview`` as JSON. Nodes computing the same review insert if absent."""

    __tablename__ = "game_reviews"

    game_id: Mapped[str] = mapped_column(
        ID, ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    review: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[float] = mapped_column(Double)


class Tournament(Base):
    """A tournament's settings and state (``server.storage.store.TournamentRecord``)."""

    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    game: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(100))
    time_control: Mapped[str | None] = mapped_column(String(32))
    rated: Mapped[bool] = mapped_column(Boolean)
    created_by: Mapped[str | None] = mapped_column(ID)
    created_at: Mapped[float] = mapped_column(Double)
    starts_at: Mapped[float] = mapped_column(Double)
    ends_at: Mapped[float | None] = mapped_column(Double)
    rounds: Mapped[int | None] = mapped_column(Integer)
    berserk: Mapped[bool] = mapped_column(Boolean)
    private: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(16))
    epoch: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """The fencing token of the node that pairs it (``Store.fence_tournament``)."""
    min_rating: Mapped[int | None] = mapped_column(Integer)
    """Entry conditions (migration 0015); NULL: none."""
    max_rating: Mapped[int | None] = mapped_column(Integer)
    min_games: Mapped[int | None] = mapped_column(Integer)
    schedule_id: Mapped[str | None] = mapped_column(ID)
    """The schedule the arena was made from (no foreign key: a deleted schedule's arenas
    stay)."""

    # The lobby's lists: upcoming, running and finished tournaments by start.
    __table_args__ = (Index("ix_tournaments_status_start", "status", "starts_at"),)


class TournamentSchedule(Base):
    """A recurring arena an admin made (``server.storage.store.ScheduleRecord``)."""

    __tablename__ = "tournament_schedules"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(100))
    time_control: Mapped[str] = mapped_column(String(32))
    minutes: Mapped[int] = mapped_column(Integer)
    every_minutes: Mapped[int] = mapped_column(Integer)
    first_start: Mapped[float] = mapped_column(Double)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Double)
    berserk: Mapped[bool] = mapped_column(Boolean)
    private: Mapped[bool] = mapped_column(Boolean)
    min_rating: Mapped[int | None] = mapped_column(Integer)
    max_rating: Mapped[int | None] = mapped_column(Integer)
    min_games: Mapped[int | None] = mapped_column(Integer)
    made: Mapped[int] = mapped_column(Integer)
    """Occurrences made (or passed over): the next to make is occurrence ``made``."""
    rated: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    """Whether its arenas' games move ratings (migration 0017; earlier schedules: rated)."""


class TournamentEntrant(Base):
    """A player entered in a tournament, with the rating it was seeded by."""

    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[str] = mapped_column(
        ID, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    player_id: Mapped[str] = mapped_column(ID, primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    rating: Mapped[float] = mapped_column(Double)
    status: Mapped[str] = mapped_column(String(16))
    joined_at: Mapped[float] = mapped_column(Double)


class TournamentPairing(Base):
    """One pairing of a tournament and, once known, its game and result. Players carry no
    foreign key, as in games: a guest may enter an arena before it is saved as a player."""

    __tablename__ = "tournament_pairings"

    tournament_id: Mapped[str] = mapped_column(
        ID, ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True
    )
    pairing_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    round: Mapped[int] = mapped_column(Integer)
    first: Mapped[str] = mapped_column(ID)
    second: Mapped[str | None] = mapped_column(ID)
    started_at: Mapped[float] = mapped_column(Double)
    game_id: Mapped[str | None] = mapped_column(ID)
    berserk: Mapped[list[str]] = mapped_column(JSON)
    result: Mapped[float | None] = mapped_column(Double)
    forfeit: Mapped[bool] = mapped_column(Boolean)
    finished_at: Mapped[float | None] = mapped_column(Double)

    # A tournament's pairings in the order they were made; a game's pairing by its id.
    __table_args__ = (
        Index("ix_tournament_pairings_seq", "tournament_id", "seq"),
        Index("ix_tournament_pairings_game", "game_id"),
    )
class ChatLine(Base):
    """A line of chat (``server.chat.desk``): a game's (players' or spectators' channel),
    kept with the game, or the lobby's (``game_id`` NULL; only the newest few hundred are
    kept). An admin's deletion marks it (``deleted_at``): it is shown no more."""

    __tablename__ = "chat_lines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str | None] = mapped_column(ID, ForeignKey("games.id", ondelete="CASCADE"))
    channel: Mapped[str] = mapped_column(String(16))  # lobby | players | spectators
    player_id: Mapped[str] = mapped_column(ID)
    name: Mapped[str] = mapped_column(String(100))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Double)
    deleted_at: Mapped[float | None] = mapped_column(Double)

    # A chat's newest lines: its game's (NULL: the lobby's), by id; the oldest, to prune.
    __table_args__ = (Index("ix_chat_lines_game", "game_id", "id"),
                      Index("ix_chat_lines_created", "created_at"))


class ChatSilence(Base):
    """A player an admin silenced in chat, until when."""

    __tablename__ = "chat_silences"

    player_id: Mapped[str] = mapped_column(ID, primary_key=True)
    until: Mapped[float] = mapped_column(Double)


class ChatSourceSilence(Base):
    """An address silenced with a player (``server.chat.desk``): a guest who says ``hello``
    afresh from it is silent still, until when. Lifting the player's silence lifts it."""

    __tablename__ = "chat_source_silences"

    source: Mapped[str] = mapped_column(ID, primary_key=True)
    player_id: Mapped[str] = mapped_column(ID, primary_key=True)
    until: Mapped[float] = mapped_column(Double)

    __table_args__ = (Index("ix_chat_source_silences_player", "player_id"),)


class SpentGuestToken(Base):
    """A guest whose resume token of the older form (``<id>.<mac>``, no time, so it never
    expired) was used once and replaced (``server.people.identity``): it resumes no more."""

    __tablename__ = "spent_guest_tokens"

    player_id: Mapped[str] = mapped_column(ID, primary_key=True)
    spent_at: Mapped[float] = mapped_column(Double)


metadata = Base.metadata
