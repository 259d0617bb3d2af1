"""The admins' messages (``server.admin``), refused with ``forbidden`` before ``admin_login``:
the AI levels and their audit log, every room, the server's figures and the levels'
calibration runs. The admins' messages about bots, chat and arena schedules belong to those
areas' modules."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.bots import AdminCreateBot, AdminListBots, AdminRevokeBot
from server.protocol.common import RoomId, _ClientMessage, _Message
from server.protocol.play import RoomStatus, SeatView
from server.protocol.stats import Stats

__all__ = [
    "AdminLogin", "AdminListLevels", "LevelValue", "AdminEditLevel", "AdminListAudit",
    "AdminListRooms", "AdminGetStats", "AdminStartCalibration", "AdminListCalibrations",
    "ADMIN_CLIENT_MESSAGES", "AdminView", "AdminWelcome", "LevelSettings", "GameLevels",
    "AdminLevels", "AdminLevelEdited", "AuditEntryView", "AdminAudit", "AdminRoom",
    "AdminRooms", "AdminStats", "PairResult", "LevelRating", "CalibrationRunView",
    "AdminCalibrationStarted", "AdminCalibrationProgress", "AdminCalibrationFinished",
    "AdminCalibrationFailed", "AdminCalibrations",
]


# --- client -> server -----------------------------------------------------------------------------


class AdminLogin(_ClientMessage):
    """Make this connection an admin's (after ``hello``); answered by ``admin_welcome``.
    Tokens come from ``discus admins create NAME``."""

    type: Literal["admin_login"] = "admin_login"
    token: str = Field(min_length=1, max_length=256)


class AdminListLevels(_ClientMessage):
    """Ask for the difficulty levels with every knob; answered by ``admin_levels``."""

    type: Literal["admin_list_levels"] = "admin_list_levels"
    game: str | None = Field(default=None, max_length=40, description="null: every game.")


LevelValue = int | float | str | bool | None


class AdminEditLevel(_ClientMessage):
    """Change some knobs of one level; answered by ``admin_level_edited`` (or
    ``invalid_level`` listing each bad field). Every server uses it from its next AI move."""

    type: Literal["admin_edit_level"] = "admin_edit_level"
    game: str = Field(max_length=40)
    level: str = Field(max_length=64)
    changes: dict[str, LevelValue] = Field(
        max_length=16, description="Field -> new value (see `LevelSettings`; not `name`)."
    )


class AdminListAudit(_ClientMessage):
    """Ask for the level changes, newest first; answered by ``admin_audit``."""

    type: Literal["admin_list_audit"] = "admin_list_audit"
    game: str | None = Field(default=None, max_length=40)
    limit: int = Field(default=50, ge=1, le=500)


class AdminListRooms(_ClientMessage):
    """Ask for every room of this server (any status); answered by ``admin_rooms``."""

    type: Literal["admin_list_rooms"] = "admin_list_rooms"


class AdminGetStats(_ClientMessage):
    """Ask for the worker pool's and the position cache's figures; answered by
    ``admin_stats``."""

    type: Literal["admin_get_stats"] = "admin_get_stats"


class AdminStartCalibration(_ClientMessage):
    """Play the levels against each other on this server's worker pool; answered by
    ``admin_calibration_started``, then ``admin_calibration_progress`` after each game and
    ``admin_calibration_finished`` (or ``admin_calibration_failed``), sent to every admin
    connection of this server. One calibration at a time (``calibration_running``)."""

    type: Literal["admin_start_calibration"] = "admin_start_calibration"
    game: str = Field(max_length=40)
    levels: list[str] | None = Field(
        default=None, max_length=16, description="Level names; null: all of the game's."
    )
    games_per_pair: int = Field(default=4, ge=1, le=200)
    seed: int = Field(default=1, ge=0, le=2**31 - 1)
    pairs: Literal["adjacent", "all"] = Field(
        default="adjacent", description="Each level against the next, or every pair."
    )
    time_scale: float = Field(
        default=1.0, gt=0, le=10, description="Multiplies the levels' time budgets."
    )
    concurrency: int | None = Field(
        default=None, ge=1, le=64, description="Games at once (default: the pool's size)."
    )


class AdminListCalibrations(_ClientMessage):
    """Ask for past calibration runs, newest first; answered by ``admin_calibrations``."""

    type: Literal["admin_list_calibrations"] = "admin_list_calibrations"
    game: str | None = Field(default=None, max_length=40)
    limit: int = Field(default=20, ge=1, le=100)


ADMIN_CLIENT_MESSAGES = (AdminLogin, AdminListLevels, AdminEditLevel, AdminListAudit,
                         AdminListRooms, AdminGetStats, AdminStartCalibration,
                         AdminListCalibrations, AdminListBots, AdminCreateBot, AdminRevokeBot)


# --- server -> client -----------------------------------------------------------------------------


class AdminView(_Message):
    id: str = Field(description="The admin's player id (what the audit log records).")
    name: str


class AdminWelcome(_Message):
    """Answer to ``admin_login``: this connection may now send admin messages."""

    type: Literal["admin_welcome"] = "admin_welcome"
    admin: AdminView
    games: list[str]
    levels_editable: bool = Field(
        description="False when the server keeps no database (it plays the built-in levels)."
    )


class LevelSettings(_Message):
    """Every knob of one level (``ai.levels.Level``)."""

    name: str
    order: int = Field(description="0 = weakest; unique within the game.")
    description: str
    max_depth: int | None = Field(description="Deepest iteration in plies; null: no limit.")
    soft_time: float = Field(description="Seconds; no new iteration after it.")
    hard_time: float = Field(description="Seconds; the search is abandoned at it (<= 60).")
    nodes: int | None = Field(description="Node budget; null: no limit.")
    candidates: int = Field(description="How many of the best root moves may be picked.")
    margin: int = Field(description="How far below the best score a picked move may be.")
    rails: bool = Field(description="Always take a win in one and stop a loss in one.")
    selective: bool = Field(
        description="Search selectively (Othello's Multi-ProbCut): more depth in the same time, "
                    "at the risk of missing a move a full-width search would find. On for "
                    "levels with no max_depth unless set; Connect Four ignores it.")


class GameLevels(_Message):
    game: str
    levels: list[LevelSettings] = Field(description="Weakest first.")


class AdminLevels(_Message):
    """The levels every server plays now (answer to ``admin_list_levels``; also pushed to
    admins after any server's edit)."""

    type: Literal["admin_levels"] = "admin_levels"
    version: int = Field(description="Bumped by every edit; -1 without a database.")
    games: list[GameLevels]


class AdminLevelEdited(_Message):
    """Answer to ``admin_edit_level``: the level before and after, and the new version."""

    type: Literal["admin_level_edited"] = "admin_level_edited"
    game: str
    before: LevelSettings
    after: LevelSettings
    version: int


class AuditEntryView(_Message):
    id: int
    game: str
    level: str
    actor: str = Field(description="Player id of the admin (or `cli`).")
    actor_name: str | None = None
    action: Literal["create", "update", "delete"]
    before: LevelSettings | None = None
    after: LevelSettings | None = None
    changed: list[str] = Field(description="The fields that differ between before and after.")
    at: float = Field(description="Unix time (seconds).")


class AdminAudit(_Message):
    """Answer to ``admin_list_audit``: level changes, newest first."""

    type: Literal["admin_audit"] = "admin_audit"
    entries: list[AuditEntryView]


class AdminRoom(_Message):
    id: RoomId
    game: str
    opponent: Literal["ai", "friend", "open"]
    status: RoomStatus
    ply: int
    round: int
    seats: list[SeatView]
    spectators: int
    ai_thinking: bool
    created_at: float = Field(description="Unix time (seconds).")
    last_move_at: float | None = None
    node: str | None = Field(default=None,
                             description="The cluster node that runs the room (null: one "
                             "server alone).")


class AdminRooms(_Message):
    """Answer to ``admin_list_rooms``: every room, newest first: of this server, or in a
    cluster of every node."""

    type: Literal["admin_rooms"] = "admin_rooms"
    rooms: list[AdminRoom]
    players_online: int


class AdminStats(_Message):
    """Answer to ``admin_get_stats``: the ``stats`` message's figures (worker pool with
    move-time percentiles, position cache hit rates) and this server's rooms and players."""

    type: Literal["admin_stats"] = "admin_stats"
    stats: Stats
    rooms: int = Field(description="Rooms open on this server, any status.")
    players_online: int = Field(description="Players with at least one connection.")
    levels_version: int = Field(description="-1 without a database.")


class PairResult(_Message):
    """Games between ``a`` (the weaker by order) and ``b``, from ``a``'s side."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


class LevelRating(_Message):
    level: str
    elo: float | None = Field(description="Relative to the weakest level (0); null: unrated.")
    error: float | None = Field(description="One standard error.")
    games: int
    score: float
    cpu_per_move: float | None = Field(
        default=None, description="Mean CPU seconds a searched move of the level cost its "
        "engine process: what a worker core gives each of its moves. Null: not measured.")


class CalibrationRunView(_Message):
    id: str
    game: str
    status: Literal["running", "finished", "failed"]
    actor: str
    games_per_pair: int
    seed: int
    pair_mode: Literal["adjacent", "all"]
    levels: list[LevelSettings] = Field(description="The levels as played, weakest first.")
    pairs: list[PairResult]
    ratings: list[LevelRating] | None = None
    seconds: float | None = None
    created_at: float
    finished_at: float | None = None


class AdminCalibrationStarted(_Message):
    type: Literal["admin_calibration_started"] = "admin_calibration_started"
    game: str
    levels: list[str] = Field(description="Weakest first.")
    total: int = Field(description="Games to play.")
    by: str = Field(description="Player id of the admin who started it.")


class AdminCalibrationProgress(_Message):
    """One more game finished; ``result`` is from ``first``'s side: 1 won, 0 draw, -1 lost."""

    type: Literal["admin_calibration_progress"] = "admin_calibration_progress"
    game: str
    done: int
    total: int
    first: str
    second: str
    result: Literal[-1, 0, 1]
    moves: str


class AdminCalibrationFinished(_Message):
    type: Literal["admin_calibration_finished"] = "admin_calibration_finished"
    run: CalibrationRunView


class AdminCalibrationFailed(_Message):
    type: Literal["admin_calibration_failed"] = "admin_calibration_failed"
    game: str
    message: str


class AdminCalibrations(_Message):
    """Answer to ``admin_list_calibrations``: runs, newest first."""

    type: Literal["admin_calibrations"] = "admin_calibrations"
    runs: list[CalibrationRunView]
