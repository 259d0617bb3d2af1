"""Tournaments (``server.tournaments``): arenas, Swiss and round-robin events, the admins'
recurring arena schedules, and the standings and boards pushed to their players."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.protocol.common import PlayerView, RoomId, _ClientMessage, _Message

__all__ = [
    "CreateTournament", "JoinTournament", "PauseTournament", "WithdrawTournament", "Berserk",
    "GetTournament", "ListTournaments", "CreateRoundTournament", "StartTournament",
    "TournamentCommand", "UnwatchTournament", "TOURNAMENT_COMMANDS", "AdminCreateSchedule",
    "AdminListSchedules", "AdminDeleteSchedule", "TOURNAMENT_MESSAGES", "TournamentView",
    "StandingRow", "TournamentGameView", "TournamentMessage", "RoundStandingRow",
    "RoundBoardView", "RoundTournamentMessage", "ScheduleView", "Schedules", "Tournaments",
]


# --- client -> server -----------------------------------------------------------------------------


class CreateTournament(_ClientMessage):
    """Make an arena: from ``starts_in`` seconds from now for ``minutes``, games of ``game``
    under ``time_control``; answered by ``tournament``. Only signed-in accounts (and bots)
    may make one (``forbidden`` for a guest)."""

    type: Literal["create_tournament"] = "create_tournament"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    name: str = Field(min_length=1, max_length=60)
    time_control: str = Field(max_length=32,
                              description="A name from `welcome.time_controls`.")
    minutes: int = Field(ge=5, le=720, description="How long pairing goes on.")
    starts_in: int = Field(default=0, ge=0, le=7 * 86400,
                           description="Seconds from now until the first pairing.")
    berserk: bool = Field(default=True, description="Whether players may berserk.")
    rated: bool = Field(default=True, description="Whether its games move ratings; false: "
                        "they are casual.")
    private: bool = Field(default=False, description="Not listed by `list_tournaments`: "
                          "joined by its id, shared as a link.")
    min_rating: int | None = Field(default=None, ge=0, le=4000,
                                   description="Entry condition: at least this rating in "
                                               "`game`.")
    max_rating: int | None = Field(default=None, ge=0, le=4000,
                                   description="Entry condition: at most this rating in "
                                               "`game`.")
    min_games: int | None = Field(default=None, ge=0, le=10_000,
                                  description="Entry condition: at least this many rated "
                                              "games of `game` played.")


class JoinTournament(_ClientMessage):
    """Enter an arena, or come back after ``pause_tournament`` or ``withdraw_tournament``
    (the score stands); answered by ``tournament``. A free player is paired as soon as
    another is: its room's ``room_state`` arrives unasked."""

    type: Literal["join_tournament"] = "join_tournament"
    tournament: str = Field(max_length=64)


class PauseTournament(_ClientMessage):
    """Stop being paired in an arena until ``join_tournament``; a game under way is played
    out. Answered by ``tournament``."""

    type: Literal["pause_tournament"] = "pause_tournament"
    tournament: str = Field(max_length=64)


class WithdrawTournament(_ClientMessage):
    """Leave an arena (the score stands in the standings); answered by ``tournament``."""

    type: Literal["withdraw_tournament"] = "withdraw_tournament"
    tournament: str = Field(max_length=64)


class Berserk(_ClientMessage):
    """In an arena's game, before your first move: halve your own clock (half the initial
    time is taken off) for a bonus point if you win. Everyone in the room hears of it as a
    ``room_event`` ``berserk`` (the answer too); ``cannot_berserk`` otherwise."""

    type: Literal["berserk"] = "berserk"
    room: RoomId


class GetTournament(_ClientMessage):
    """Ask for an arena's state and standings; answered by ``tournament``."""

    type: Literal["get_tournament"] = "get_tournament"
    tournament: str = Field(max_length=64)


class ListTournaments(_ClientMessage):
    """Ask for a page of the tournaments upcoming, running and lately finished; answered by
    ``tournaments``."""

    type: Literal["list_tournaments"] = "list_tournaments"
    offset: int = Field(default=0, ge=0, le=100_000,
                        description="Where the page starts in the list: 0 (the default) for "
                                    "the first, else the `next_offset` of the page before.")


# Swiss and round-robin events: made with ``create_round_tournament``, started by the clock
# or ``start_tournament``; joined, withdrawn from and asked about with the arena's messages.


class CreateRoundTournament(_ClientMessage):
    """Make a Swiss (``rounds`` rounds, FIDE Dutch pairings) or a round-robin (Berger tables:
    everyone meets everyone once) of ``game`` under ``time_control``; players join with
    ``join_tournament`` until round 1 is paired, ``starts_in`` seconds from now (or when its
    maker sends ``start_tournament``). Answered by ``round_tournament``. Only signed-in
    accounts (and bots) may make one."""

    type: Literal["create_round_tournament"] = "create_round_tournament"
    kind: Literal["swiss", "roundrobin"]
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    name: str = Field(min_length=1, max_length=60)
    time_control: str = Field(max_length=32,
                              description="A name from `welcome.time_controls`.")
    rounds: int | None = Field(default=None, ge=1, le=30,
                               description="A Swiss's rounds (required); a round-robin's "
                                           "follow from its entrants.")
    starts_in: int = Field(default=600, ge=0, le=7 * 86400,
                           description="Seconds from now until round 1 is paired.")
    rated: bool = Field(default=True, description="Whether its games move ratings; false: "
                        "they are casual.")


class StartTournament(_ClientMessage):
    """Pair round 1 of a Swiss or round-robin now (its maker only; at least two entrants).
    Answered by ``round_tournament``."""

    type: Literal["start_tournament"] = "start_tournament"
    tournament: str = Field(max_length=64)


TournamentCommand = (JoinTournament | PauseTournament | WithdrawTournament | GetTournament
                     | StartTournament)


class UnwatchTournament(_ClientMessage):
    """Stop the standings pushes a ``get_tournament`` started (the page was left); not
    answered. Asking for another tournament, or closing the connection, stops them too."""

    type: Literal["unwatch_tournament"] = "unwatch_tournament"


TOURNAMENT_COMMANDS = (JoinTournament, PauseTournament, WithdrawTournament, GetTournament,
                       StartTournament)
"""The messages about one tournament: on a cluster, run by the node that pairs it."""


class AdminCreateSchedule(_ClientMessage):
    """An admin makes a recurring arena: one every ``every_minutes`` from ``first_start``
    (epoch seconds; default: the next whole multiple of ``every_minutes`` since the epoch,
    so "every hour" starts on the hour), each with the settings of ``create_tournament``.
    The server makes each arena ahead of time (listed as upcoming). Answered by
    ``schedules``."""

    type: Literal["admin_create_schedule"] = "admin_create_schedule"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    name: str = Field(min_length=1, max_length=60)
    time_control: str = Field(max_length=32,
                              description="A name from `welcome.time_controls`.")
    minutes: int = Field(ge=5, le=720, description="How long each arena pairs.")
    every_minutes: int = Field(ge=5, le=7 * 24 * 60,
                               description="Minutes from one arena's start to the next's.")
    first_start: float | None = Field(default=None, ge=0,
                                      description="The first arena's start (epoch seconds).")
    berserk: bool = True
    rated: bool = Field(default=True, description="Whether its arenas' games move ratings.")
    private: bool = False
    min_rating: int | None = Field(default=None, ge=0, le=4000)
    max_rating: int | None = Field(default=None, ge=0, le=4000)
    min_games: int | None = Field(default=None, ge=0, le=10_000)


class AdminListSchedules(_ClientMessage):
    """An admin asks for the arena schedules; answered by ``schedules``."""

    type: Literal["admin_list_schedules"] = "admin_list_schedules"


class AdminDeleteSchedule(_ClientMessage):
    """An admin deletes a schedule: no more arenas are made from it (those made already
    stay). Answered by ``schedules``; ``unknown_schedule`` for an id there is not."""

    type: Literal["admin_delete_schedule"] = "admin_delete_schedule"
    schedule: str = Field(max_length=64)


TOURNAMENT_MESSAGES = (CreateTournament, JoinTournament, PauseTournament, WithdrawTournament,
                       GetTournament, ListTournaments, CreateRoundTournament, StartTournament,
                       Berserk, UnwatchTournament, AdminCreateSchedule, AdminListSchedules,
                       AdminDeleteSchedule)


# --- server -> client -----------------------------------------------------------------------------


class TournamentView(_Message):
    """A tournament's settings and state. Times are epoch seconds (a Swiss's or
    round-robin's ``ends_at`` is its ``starts_at``: it ends with its last round)."""

    id: str
    kind: Literal["arena", "swiss", "roundrobin"]
    name: str
    game: str
    time_control: str
    starts_at: float
    ends_at: float
    status: Literal["upcoming", "running", "finished"]
    berserk: bool
    rated: bool = Field(default=True, description="Whether its games move ratings (false: "
                        "casual games).")
    players: int = Field(description="How many have joined (paused and withdrawn included).")
    min_rating: int | None = Field(default=None, description="Entry condition, if any.")
    max_rating: int | None = Field(default=None, description="Entry condition, if any.")
    min_games: int | None = Field(default=None,
                                  description="Entry condition (rated games played), if any.")
    schedule: str | None = Field(default=None,
                                 description="The schedule it was made from, if any.")
    official: bool = Field(default=False,
                           description="Made by an admin or a schedule, not by a player.")
    rounds: int | None = Field(default=None,
                               description="A Swiss's or round-robin's rounds (a round-robin"
                                           "'s once round 1 is paired); null for an arena.")


class StandingRow(_Message):
    """A player's line in the standings: points of each finished game in ``sheet`` (in the
    order they finished; a win on a streak counts double), ``on_fire`` after two wins in a
    row."""

    rank: int
    player: PlayerView
    rating: int = Field(description="The player's rating in the game: in an arena as it stands "
                        "after the player's rated games there, not the one it joined with.")
    score: int
    games: int
    sheet: list[int]
    on_fire: bool
    status: Literal["active", "paused", "withdrawn"]
    playing: bool
    status_reason: Literal["no_show"] | None = Field(
        default=None, description="Why the arena, not the player, paused or withdrew it: "
        "`no_show`, it never moved in a game that was then aborted (it comes back with "
        "`join_tournament`); null when the player chose its status.")
    no_shows: int = Field(default=0, description="Its games aborted because it never moved "
                          "(the second withdraws it).")
    waiting: Literal["opponent", "rematch"] | None = Field(
        default=None, description="Why an active arena player not in a game waits: "
        "`opponent`, nobody else is free; `rematch`, the only other free player is the one "
        "it just met, whom it meets again in `rematch_in` seconds unless someone else "
        "comes free first. Null while playing, paused or withdrawn, and outside arenas.")
    rematch_in: float | None = Field(
        default=None, description="With `waiting` `rematch`: seconds (as of the message) "
        "until the two are paired again (30 s after both came free, by default).")


class TournamentGameView(_Message):
    """A game under way in an arena: its room (to spectate) and who moves first."""

    room: str
    first: PlayerView
    second: PlayerView


class TournamentMessage(_Message):
    """An arena's state: the answer to every tournament message but ``list_tournaments``,
    and pushed to its players after a game starts or ends or someone joins, pauses or
    withdraws (coalesced: at most one push per ``standings_push_seconds``). ``standings``
    holds the top rows; ``you`` the receiver's own row (null when it has not joined);
    ``games`` up to 20 games under way, the best-placed players' first."""

    type: Literal["tournament"] = "tournament"
    tournament: TournamentView
    standings: list[StandingRow]
    you: StandingRow | None = None
    games: list[TournamentGameView]


class RoundStandingRow(_Message):
    """A line of a Swiss's or round-robin's standings: a win scores 1, a draw 1/2, a bye 1;
    ties broken by Buchholz then Sonneborn-Berger (round-robin: the other way round)."""

    rank: int
    player: PlayerView
    rating: int
    score: float
    buchholz: float
    sonneborn_berger: float
    withdrawn: bool


class RoundBoardView(_Message):
    """A board of the current round: ``first`` moves first; ``second`` null is a bye.
    ``result`` is ``first``'s score once known (1, 0.5, 0); ``room`` the game's room (null
    for a bye or a forfeit)."""

    first: PlayerView
    second: PlayerView | None
    result: float | None
    room: str | None


class RoundTournamentMessage(_Message):
    """A Swiss's or round-robin's state: the answer to its messages, and pushed to its
    entrants when someone joins or withdraws, a round is paired and a game ends.
    ``round`` is the round under way (0 before the first); ``crosstable`` the whole
    crosstable as CSV (see docs/PROTOCOL.md)."""

    type: Literal["round_tournament"] = "round_tournament"
    tournament: TournamentView
    round: int
    standings: list[RoundStandingRow]
    boards: list[RoundBoardView]
    crosstable: str


class ScheduleView(_Message):
    """A recurring arena: its settings and the start of the next arena not made yet."""

    id: str
    game: str
    name: str
    time_control: str
    minutes: int
    every_minutes: int
    first_start: float
    next_start: float = Field(description="The start of the next arena still to be made.")
    berserk: bool
    private: bool
    min_rating: int | None
    max_rating: int | None
    min_games: int | None
    rated: bool = True


class Schedules(_Message):
    """Answer to the admin's schedule messages: every arena schedule, oldest first."""

    type: Literal["schedules"] = "schedules"
    schedules: list[ScheduleView]


class Tournaments(_Message):
    """Answer to ``list_tournaments``: a page of the tournaments upcoming and running (the
    admins' and scheduled ones first, then those the asker may join, the rest by entrants),
    then the lately finished."""

    type: Literal["tournaments"] = "tournaments"
    tournaments: list[TournamentView]
    next_offset: int | None = Field(default=None,
                                    description="The `offset` of the next page; null: this "
                                                "page is the last.")
