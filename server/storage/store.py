"""What the server needs from storage, as one small async interface, and the records it passes.

The room logic never sees this; the server glue calls it. ``append_move`` returning means the
move is durable, so the server announces a move only after it returns. The SQL version
(PostgreSQL or SQLite, ``server.storage.sql_store``) and the in-memory one
(``server.storage.memory``) implement the same ``Store``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from server.ratings.glicko import DEFAULT_DEVIATION, DEFAULT_RATING, DEFAULT_VOLATILITY

PlayerKind = Literal["guest", "account", "bot", "admin"]
GameStatus = Literal["waiting", "active", "finished", "aborted"]
TournamentKind = Literal["arena", "swiss", "roundrobin", "ladder"]
TournamentStatus = Literal["upcoming", "running", "finished"]
EntrantStatus = Literal["active", "paused", "withdrawn"]


@dataclass(frozen=True)
class PlayerRecord:
    id: str
    name: str
    kind: PlayerKind
    created_at: float


@dataclass(frozen=True)
class GameRecord:
    """One game. ``players[i]`` is the player id in seat i (seat 0 moves first), or None for an
    AI seat or a seat nobody has taken yet; ``ai_seat`` says which seat the AI holds (the
    first, when both do) and ``ai_level`` at which level; ``level_of`` reads both seats."""

    id: str
    game: str
    players: tuple[str | None, str | None]
    ai_level: str | None
    ai_seat: int | None
    status: GameStatus
    start_position: str
    created_at: float
    result: int | None = None
    reason: str | None = None
    finished_at: float | None = None
    epoch: int = 0
    """The fencing token of the node that wrote it (``server.cluster.leases``); 0 outside a
    cluster."""
    time_control: str | None = None
    """The time control's name (``server.play.clocks``); None for an untimed game. The numbers
    are kept beside it, so a restored game keeps its clocks even if the name is retired."""
    clock_initial_ms: int | None = None
    clock_increment_ms: int | None = None
    berserk: tuple[int, ...] = ()
    """The seats that halved their own clock (an arena's ``berserk``): a restored game keeps
    the halved clock, and the arena the bonus point."""
    evaluation: bool = False
    """The creator of a game against the AI asked to see the engine's evaluation (shown only
    while the game is not rated): a restored game keeps showing it."""
    rated: bool = True
    """False: a casual game (``Room.rated``: an unrated tournament's game or a rematch of
    one), which moves nobody's rating, also when it finishes after a restart."""
    other_ai_level: str | None = None
    """When both seats are the AI's (two levels playing each other, as on the engine
    ladder): seat 1's level (``ai_seat`` is then 0 and ``ai_level`` seat 0's). None when at
    most one seat is the AI's."""

    def level_of(self, seat: int) -> str | None:
        """The AI level holding ``seat``, or None when a person holds it (or nobody)."""
        if self.other_ai_level is not None and seat == 1:
            return self.other_ai_level
        return self.ai_level if self.ai_seat == seat else None


@dataclass(frozen=True)
class MoveRecord:
    """One accepted move in notation (``"4"``, ``"f5"``, ``"pass"``), with the AI's figures
    when the AI played it."""

    game_id: str
    ply: int
    move: str
    seat: int
    seconds: float
    created_at: float
    ai_depth: int | None = None
    ai_score: int | None = None
    ai_nodes: int | None = None
    epoch: int = 0
    """The fencing token of the node that stored it (``server.cluster.leases``); 0 outside a
    cluster."""
    clock0_ms: int | None = None
    """In a timed game, seat 0's time left after this move (increment included), in
    milliseconds; None untimed or for a seat without a clock (the AI)."""
    clock1_ms: int | None = None
    """The same for seat 1."""


@dataclass(frozen=True)
class ReviewRecord:
    """The engine's review of a finished game, as the protocol's ``GameReview`` (a JSON
    object), computed once and kept with the game."""

    game_id: str
    review: dict[str, Any]
    created_at: float


ChatChannel = Literal["lobby", "players", "spectators"]


@dataclass(frozen=True)
class ChatLineRecord:
    """One line of chat (``server.chat.desk``): in a game's players' or spectators' chat,
    kept with the game, or in the lobby's (``game_id`` None). ``id`` is 0 until stored."""

    id: int
    game_id: str | None
    channel: ChatChannel
    player_id: str
    name: str
    text: str
    created_at: float


@dataclass(frozen=True)
class AccountRecord:
    """A person's account (``server.people.accounts``): the player ``player_id`` signs in as
    ``name`` with a password whose Argon2id hash is ``password_hash`` (never the password)."""

    player_id: str
    name: str
    password_hash: str
    created_at: float

    @property
    def name_key(self) -> str:
        """What makes two names the same name: names are unique whatever their case."""
        return name_key(self.name)


@dataclass(frozen=True)
class SessionRecord:
    """A signed-in browser: the SHA-256 of its session token (never the token)."""

    id: str
    player_id: str
    token_hash: str
    created_at: float
    revoked_at: float | None = None
    used_at: float | None = None
    """When a ``hello`` last came with it (None: not since it was made); a session unused
    for ``Settings.session_days`` has ended."""


@dataclass(frozen=True)
class RatingRecord:
    """A player's Glicko-2 rating in one game (``server.ratings.glicko``): ``games`` rated games
    played, ``updated_at`` the last one's time (0 for a player never rated)."""

    player_id: str
    game: str
    rating: float
    rd: float
    volatility: float
    games: int = 0
    updated_at: float = 0.0


@dataclass(frozen=True)
class RatingChangeRecord:
    """What one rated game did to one player's rating: a row of the player's rating
    history. The opponent is a player (``opponent_id``) or an AI level (``opponent_level``),
    with the rating it was played at; ``score`` is the player's (1, 0.5 or 0)."""

    game_id: str
    player_id: str
    game: str
    opponent_id: str | None
    opponent_level: str | None
    opponent_rating: float
    score: float
    rating_before: float
    rd_before: float
    volatility_before: float
    rating_after: float
    rd_after: float
    volatility_after: float
    games: int
    """The player's rated games in this game, this one included."""
    created_at: float


@dataclass(frozen=True)
class LevelScore:
    """A player's finished games against one AI level of one game, from the player's side."""

    game: str
    level: str
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class TournamentRecord:
    """A tournament's settings and state (``server.tournaments``). ``kind`` is ``arena``,
    ``swiss`` or ``roundrobin``; an arena runs from ``starts_at`` to ``ends_at``, a Swiss
    has ``rounds``; ``time_control`` names one of ``server.play.clocks.TIME_CONTROLS``;
    ``created_by`` is the player who made it (None: an admin); ``status`` is ``upcoming``,
    ``running`` or ``finished``."""

    id: str
    kind: TournamentKind
    game: str
    name: str
    time_control: str | None
    rated: bool
    created_by: str | None
    created_at: float
    starts_at: float
    ends_at: float | None = None
    rounds: int | None = None
    berserk: bool = False
    private: bool = False
    status: TournamentStatus = "upcoming"
    min_rating: int | None = None
    """Entry conditions (None: none): the rating in ``game`` at least ``min_rating``, at
    most ``max_rating``, and at least ``min_games`` rated games of ``game`` played."""
    max_rating: int | None = None
    min_games: int | None = None
    schedule_id: str | None = None
    """The schedule (``ScheduleRecord``) it was made from, if any."""


@dataclass(frozen=True)
class ScheduleRecord:
    """A recurring arena an admin made: one arena of ``minutes`` every ``every_minutes``
    from ``first_start``, each with these settings. ``made`` counts the occurrences already
    made (or passed over, having ended while no server ran): occurrence ``k`` starts at
    ``first_start + k * every_minutes * 60`` and is the arena ``arena_id(k)``."""

    id: str
    game: str
    name: str
    time_control: str
    minutes: int
    every_minutes: int
    first_start: float
    created_by: str
    created_at: float
    berserk: bool = True
    private: bool = False
    min_rating: int | None = None
    max_rating: int | None = None
    min_games: int | None = None
    made: int = 0
    rated: bool = True
    """Whether its arenas' games move ratings (``TournamentRecord.rated``)."""

    def start_of(self, k: int) -> float:
        return self.first_start + k * self.every_minutes * 60

    def arena_id(self, k: int) -> str:
        """The id of occurrence ``k``'s arena: fixed, so making it twice (a crash between
        saving the arena and the schedule) finds it made."""
        return f"{self.id}-{k}"


@dataclass(frozen=True)
class EntrantRecord:
    """A player entered in a tournament: its name and the rating it was seeded by when it
    joined, and whether it plays on (``active``), ``paused`` or ``withdrawn``."""

    tournament_id: str
    player_id: str
    name: str
    rating: float
    status: EntrantStatus
    joined_at: float


@dataclass(frozen=True)
class PairingRecord:
    """One pairing of a tournament: ``first`` moves first against ``second`` (None: a bye)
    in ``round`` (0 in an arena), ``seq`` its place in the order pairings were made.
    ``game_id`` is the stored game once its room started; ``result`` is ``first``'s score
    (1, 0.5, 0) once known; ``berserk`` the players who halved their clock; ``forfeit`` a
    game not played because a player had withdrawn."""

    tournament_id: str
    pairing_id: str
    seq: int
    round: int
    first: str
    second: str | None
    started_at: float
    game_id: str | None = None
    berserk: tuple[str, ...] = ()
    result: float | None = None
    forfeit: bool = False
    finished_at: float | None = None


RateGame = Callable[[Mapping[str, tuple[PlayerKind, RatingRecord]]], Sequence[RatingChangeRecord]]
"""What ``Store.rate_game`` asks of its caller: given the game's stored players (kind, and
current rating: a new one for a player never rated), the changes to store (none: unrated)."""


def name_key(name: str) -> str:
    """The lower-cased name, under which account names are unique."""
    return name.lower()


class NameTaken(ValueError):
    """An account name that another account has (in any letter case), or a bot or admin."""


class NotAGuest(ValueError):
    """Only a guest can become an account: this player is one already, or a bot or admin."""


class DuplicateMove(ValueError):
    """A move for a ply that is already stored: the caller raced or replayed a move."""


class Fenced(Exception):
    """A write with an epoch older than the game's (or the tournament's): another node has
    taken the room (or the tournament) over (``server.cluster.leases``), so the writer no longer
    owns it and must let it go. ``held`` is the stored epoch, when the store says."""

    def __init__(self, message: str, held: int | None = None) -> None:
        super().__init__(message)
        self.held = held


class Store(Protocol):
    async def open(self) -> None:
        """Connect and make the schema current; call once before anything else."""
        ...

    async def close(self) -> None: ...

    async def save_player(self, player: PlayerRecord) -> None:
        """Insert or update (by id)."""
        ...

    async def load_player(self, player_id: str) -> PlayerRecord | None: ...

    async def save_game(self, game: GameRecord, players: Sequence[PlayerRecord] = ()) -> None:
        """Insert or update the game's own row (players, status, result); moves are separate.
        ``Fenced`` if ``game.epoch`` (when not 0) is older than the stored game's. The rows of
        ``players`` (guests sitting in it for the first time) are written first, in the same
        commit: all of it is stored, or none."""
        ...

    async def append_move(self, move: MoveRecord) -> None:
        """Durable when it returns; ``DuplicateMove`` if that ply is already stored,
        ``Fenced`` if ``move.epoch`` (when not 0) is older than its game's."""
        ...

    async def fence(self, game_id: str, epoch: int) -> None:
        """Raise the game's epoch to ``epoch``: from then on, writes carrying an older one
        are refused. ``Fenced`` if the game already holds this epoch or a newer one (two
        owners under one epoch could both write: after Redis lost its epoch counters, a new
        lease can repeat an old epoch). Call before reading a game one takes over, so every
        write of the former owner is either read or refused."""
        ...

    async def load_game(self, game_id: str) -> tuple[GameRecord, list[MoveRecord]] | None: ...

    async def load_games(self, game_ids: Sequence[str]
                         ) -> dict[str, tuple[GameRecord, list[MoveRecord]]]:
        """``load_game`` of many in one go (a tournament's games: two queries, not one a
        game); ids with no stored game are left out."""
        ...

    async def unfinished_games(self) -> list[tuple[GameRecord, list[MoveRecord]]]:
        """Games in status waiting or active, with their moves in ply order (for restarts)."""
        ...

    async def games_of_player(self, player_id: str, limit: int = 50) -> list[GameRecord]:
        """The player's games, newest first."""
        ...

    async def count_moves(self, game_ids: Sequence[str]) -> dict[str, int]:
        """How many moves each game has (0 for an unknown id), in one query."""
        ...

    async def recent_games(self, game: str, limit: int
                           ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        """The newest ``limit`` stored games of ``game`` (any status), newest first, with
        their moves in ply order: the positions people reach (``server.engines.idle_proving``)."""
        ...

    async def games_ended_after(self, game: str, after: tuple[float, str] | None, limit: int
                                ) -> list[tuple[GameRecord, list[MoveRecord]]]:
        """Up to ``limit`` stored games of ``game`` that ended (``finished_at`` set) after
        ``after`` (a game's (finished_at, id); None: from the first), in the order they
        ended, with their moves in ply order: idle proving reads each game once, as it ends
        (``server.engines.idle_proving``)."""
        ...

    async def ended_mark(self, game: str, newest: int) -> tuple[float, str] | None:
        """The ``after`` from which ``games_ended_after`` reads the ``newest`` games of
        ``game`` to end last; None if no more than ``newest`` have ended."""
        ...

    async def take_back(self, game_id: str, plies: int, epoch: int = 0) -> None:
        """Delete the game's moves from ply ``plies`` on (a take-back): durable when it
        returns. ``Fenced`` if ``epoch`` (when not 0) is older than the game's."""
        ...

    async def save_review(self, review: ReviewRecord) -> ReviewRecord:
        """Store the game's review unless it has one already (two nodes may compute the same
        review: the first stored wins); returns the review stored. Durable when it returns.
        The game must be stored (``KeyError`` otherwise)."""
        ...

    async def load_review(self, game_id: str) -> ReviewRecord | None:
        """The game's stored review, or None."""
        ...

    async def create_account(self, account: AccountRecord) -> PlayerRecord:
        """Make the player ``account.player_id`` an account called ``account.name``: a guest
        already stored keeps its id, so its games are the account's; an unknown id is a new
        player. Returns the player as stored (kind ``account``). ``NameTaken`` if an account
        has the name in any letter case or a bot or admin has it (any case); ``NotAGuest`` if
        the player is an account, bot or admin already. Nothing is written then."""
        ...

    async def find_account(self, name: str) -> AccountRecord | None:
        """The account called ``name`` in any letter case, or None."""
        ...

    async def name_is_held(self, *names: str) -> bool:
        """Whether an account, a bot or an admin is called any of ``names`` in any letter
        case (one look-up for a guest's name and its look-alike: it runs at every hello)."""
        ...

    async def add_session(self, session: SessionRecord) -> None:
        """Store a new session of an account (durable when it returns)."""
        ...

    async def find_session(self, token_hash: str) -> SessionRecord | None:
        """The session with this token hash, revoked or not, or None."""
        ...

    async def find_session_player(self, token_hash: str
                                  ) -> tuple[SessionRecord, PlayerRecord | None] | None:
        """``find_session`` and its player's row (None if the store has none), read together:
        a signed-in ``hello``'s one lookup."""
        ...

    async def touch_session(self, session_id: str, now: float) -> None:
        """Record that the session was used at ``now`` (its sliding expiry starts again)."""

    async def revoke_sessions(self, player_id: str, now: float,
                              session_id: str | None = None) -> int:
        """Revoke the player's live sessions (only ``session_id`` when given); how many
        were live. A revoked session never comes back."""
        ...


    async def change_password(self, player_id: str, password_hash: str, now: float,
                              keep_session: str) -> int:
        """Set the account's password hash and revoke every live session of it but
        ``keep_session``, in one transaction; how many were revoked."""
        ...

    async def rate_game(self, game_id: str, player_ids: Sequence[str],
                        rate: RateGame) -> list[RatingChangeRecord]:
        """Rate a finished game once: in one transaction, unless the game has rating
        changes stored already (then those are returned and ``rate`` is not called), call
        ``rate`` with the ratings of ``player_ids`` as they stand (each locked until the
        transaction ends, so two games of one player finishing at once on two servers are
        applied one after the other), and store what it returns: each player's new rating
        (games counted) and the history row. Ids of unknown players are left out of what
        ``rate`` gets. Returns the changes stored, an empty list if ``rate`` gave none."""
        ...

    async def ratings_of(self, player_id: str) -> list[RatingRecord]:
        """The player's ratings, one per game it has played rated games of."""
        ...

    async def rating_history(self, player_id: str, game: str | None = None,
                             limit: int = 200) -> list[RatingChangeRecord]:
        """The player's latest ``limit`` rating changes (of ``game`` only, if given),
        oldest first."""
        ...

    async def leaderboard(self, game: str, limit: int, max_rd: float | None = None
                          ) -> list[tuple[PlayerRecord, RatingRecord]]:
        """The ``limit`` best rated players of ``game``, best first (ties: more games
        first, then the name); only deviations up to ``max_rd`` when given."""
        ...

    async def scores_against_levels(self, player_id: str) -> list[LevelScore]:
        """The player's finished games against each AI level it has played, by game and
        level (aborted games are not counted)."""
        ...

    async def calibrated_levels(self, game: str) -> dict[str, tuple[float, float]]:
        """The levels of ``game`` measured by its latest finished calibration run, as
        (Elo relative to the weakest level, standard error); levels it could not place
        are left out. Empty if the game was never calibrated."""
        ...

    async def save_tournament(self, tournament: TournamentRecord, epoch: int = 0) -> None:
        """Insert or replace a tournament (by ``id``). ``epoch``: the fencing token of the
        node that pairs it (0 outside a cluster); ``Fenced`` if it is older than the
        tournament's (``fence_tournament``), as for every tournament write below."""
        ...

    async def fence_tournament(self, tournament_id: str, epoch: int) -> None:
        """Raise the tournament's epoch to ``epoch``, as ``fence`` does a game's: from then on
        its writes (``save_tournament``, ``save_entrant``, ``save_pairing``) carrying an older
        one are refused. ``Fenced`` if it holds this epoch or a newer one. Call before
        reading a tournament one takes over."""
        ...

    async def load_tournament(self, tournament_id: str) -> TournamentRecord | None: ...

    async def list_tournaments(self, statuses: Sequence[TournamentStatus], limit: int = 100
                               ) -> list[TournamentRecord]:
        """Tournaments in any of ``statuses``, private ones included, soonest start first."""
        ...

    async def count_tournaments_made(self, player_id: str,
                                     statuses: Sequence[TournamentStatus]) -> int:
        """How many tournaments ``player_id`` made (``created_by``) are in any of
        ``statuses``: what the limit on one account's tournaments counts."""
        ...

    async def save_entrant(self, entrant: EntrantRecord, epoch: int = 0) -> None:
        """Insert or replace a tournament's entrant (by tournament and player); ``Fenced``
        as ``save_tournament``."""
        ...

    async def tournament_entrants(self, tournament_id: str) -> list[EntrantRecord]:
        """A tournament's entrants in the order they joined."""
        ...

    async def save_pairing(self, pairing: PairingRecord, epoch: int = 0) -> None:
        """Insert or replace a pairing (by tournament and ``pairing_id``): written when it is
        made, again when its game starts and when its result is known; ``Fenced`` as
        ``save_tournament``."""
        ...

    async def tournament_pairings(self, tournament_id: str) -> list[PairingRecord]:
        """A tournament's pairings in the order they were made (``seq``)."""
        ...

    async def save_schedule(self, schedule: ScheduleRecord) -> None:
        """Insert or replace an arena schedule (by ``id``)."""
        ...

    async def list_schedules(self) -> list[ScheduleRecord]:
        """Every arena schedule, oldest first."""
        ...

    async def delete_schedule(self, schedule_id: str) -> bool:
        """Delete a schedule (its arenas stay); False if there was none."""
        ...


    async def add_chat_line(self, line: ChatLineRecord, lobby_kept: int) -> ChatLineRecord:
        """Store a chat line; the stored line, with its id (unique, growing). A lobby line
        also drops all but the newest ``lobby_kept`` lobby lines."""

    async def chat_lines(self, game_id: str | None, channels: Sequence[ChatChannel],
                         limit: int) -> list[ChatLineRecord]:
        """The newest ``limit`` lines (not deleted) of a game's chat (None: the lobby's) in
        these channels, oldest first."""

    async def delete_chat_line(self, line_id: int, now: float) -> ChatLineRecord | None:
        """Mark a line deleted; the line, or None if there is none (or it was deleted)."""

    async def silence_chat(self, player_id: str, until: float | None,
                           sources: Sequence[str] = ()) -> None:
        """Silence the player's chat, and that of anyone at ``sources`` (addresses) or at the
        addresses silenced with it before, until ``until`` (None: lift it, its addresses'
        too)."""

    async def chat_silenced_until(self, player_id: str,
                                  source: str | None = None) -> float | None:
        """When the latest silence of the player, or of ``source``, ends, if one was set
        (it may have ended)."""

    async def prune_chat(self, lobby_before: float, games_before: float) -> int:
        """Delete the lobby's lines said before ``lobby_before`` and the games' said before
        ``games_before`` (and silences ended by then); how many lines went."""

    async def spend_guest_token(self, player_id: str, now: float) -> bool:
        """Record that the guest's resume token of the older form was used: True the first
        time, False ever after (it then resumes nobody)."""


def new_rating(player_id: str, game: str) -> RatingRecord:
    """The rating of a player who has played no rated game (Glicko-2's 1500, 350, 0.06)."""
    return RatingRecord(player_id, game, DEFAULT_RATING, DEFAULT_DEVIATION, DEFAULT_VOLATILITY)


def rating_after(change: RatingChangeRecord) -> RatingRecord:
    """The player's stored rating once ``change`` is applied."""
    return RatingRecord(change.player_id, change.game, change.rating_after, change.rd_after,
                        change.volatility_after, change.games, change.created_at)


def score_levels(player_id: str, records: Sequence[GameRecord]) -> list[LevelScore]:
    """Tally ``records`` (any games) into the player's scores against AI levels: finished
    games with an AI seat, from the side of the seat the player held."""
    tally: dict[tuple[str, str], list[int]] = {}
    for record in records:
        if (record.status != "finished" or record.ai_level is None or record.result is None
                or player_id not in record.players):
            continue
        mine = 1 if record.players.index(player_id) == 0 else -1
        signed = record.result * mine
        counts = tally.setdefault((record.game, record.ai_level), [0, 0, 0])
        counts[0 if signed > 0 else 1 if signed == 0 else 2] += 1
    return [LevelScore(game, level, *counts) for (game, level), counts in sorted(tally.items())]


def replace(record: GameRecord, **changes: object) -> GameRecord:
    """A copy of ``record`` with ``changes``; records are frozen values."""
    return dataclasses.replace(record, **changes)  # type: ignore[arg-type]
