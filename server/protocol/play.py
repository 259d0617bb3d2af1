"""The websocket protocol: every message either side may send, as pydantic models.

One JSON object per text frame. Each object has a ``type``; client and server messages are
each a discriminated union on it, so a frame parses to exactly one model or to one error
(``server.errors``). The browser page and bots use exactly these messages.

Moves travel as text in the game's notation (Connect Four ``"1"``..``"7"``, Othello ``"f5"``
or ``"pass"``) together with ``ply``: the number of moves already played in the position the
move applies to. A move whose ply is not the room's current ply is refused (``stale_ply``)
rather than played, so a repeated or out-of-date move can never be misplayed.

``python -m server.protocol`` writes ``docs/protocol.schema.json`` from these models;
``python -m server.protocol --check`` exits non-zero when the checked-in file differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from server import errors

PROTOCOL_VERSION = 1
"""Bumped on any change an existing client could trip over; ``hello.version`` must equal it."""

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"

RoomId = Annotated[
    str, Field(min_length=1, max_length=32, description="Room id, also its invite code.")
]
Seat = Literal[0, 1]
"""Seat 0 moves first (Connect Four: the first to drop; Othello: black)."""

ErrorCode = Literal[
    "internal_error",
    "bad_json",
    "unknown_type",
    "bad_message",
    "unsupported_version",
    "hello_required",
    "bad_resume_token",
    "rate_limited",
    "busy",
    "message_too_big",
    "unknown_game",
    "unknown_level",
    "unknown_time_control",
    "unknown_room",
    "room_full",
    "already_seated",
    "too_many_rooms",
    "not_seated",
    "not_in_room",
    "not_your_turn",
    "stale_ply",
    "invalid_notation",
    "illegal_move",
    "game_not_started",
    "game_finished",
    "game_not_finished",
    "no_rematch_offer",
    "cannot_take_back",
    "cannot_offer_draw",
    "no_draw_offer",
    "cannot_claim",
    "unknown_game_id",
    "forbidden",
    "bad_admin_token",
    "invalid_level",
    "calibration_running",
    "bad_token",
    "revoked_token",
    "bad_bot_name",
    "unknown_bot",
    "limit_exceeded",
    "registration_disabled",
    "unknown_player",
    "unknown_challenge",
    "wrong_name_or_password",
    "bad_account_name",
    "bad_password",
    "not_a_guest",
    "not_signed_in",
    "unknown_tournament",
    "not_entered",
    "tournament_closed",
    "cannot_berserk",
    "entry_refused",
    "unknown_schedule",
    "silenced",
    "unknown_chat_line",
]
"""Stable error codes; one per class in ``server.errors`` (a test keeps them equal)."""


class _Message(BaseModel):
    """Unknown fields are refused, so a misspelt field is an error and not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _ClientMessage(_Message):
    id: str | int | None = Field(
        default=None,
        description="Optional request id; an error caused by this message echoes it as `ref`.",
    )


# --- client -> server ----------------------------------------------------------------------


class Hello(_ClientMessage):
    """First message on every connection. Answered by ``welcome`` and then one ``room_state``
    per unfinished room the player sits in (after a reconnect, that is the way back in)."""

    type: Literal["hello"] = "hello"
    version: int = Field(description="Must equal the server's protocol version.")
    resume: str | None = Field(
        default=None, max_length=128,
        description="The resume token from an earlier `welcome`: continue as that player; "
        "or an account's session token from `signed_in`: be that account.",
    )
    name: str | None = Field(
        default=None, max_length=40,
        description="Display name; a guest name is made up if absent. With `resume`, a new "
        "name renames that player (same id, same games). A guest asking for an account's "
        "name (in any letter case) is shown as `<name> (guest)`.",
    )
    token: str | None = Field(
        default=None, max_length=256,
        description="A bot token (`discus bots create`): play as that bot; `resume` is then "
        "ignored. Unknown: `bad_token`, revoked: `revoked_token` (both close the connection).",
    )


class ListRooms(_ClientMessage):
    """Ask for the rooms waiting for an opponent (``open`` rooms); answered by ``rooms``."""

    type: Literal["list_rooms"] = "list_rooms"


class AiOpponent(_Message):
    """Play the computer at one of the levels ``welcome.games[].levels`` lists."""

    kind: Literal["ai"] = "ai"
    level: str = Field(max_length=40)
    evaluation: bool = Field(
        default=False, description="Show the engine's evaluation while it plays (the score "
        "and a proven result in `ai_thinking` and `move_made.thought`). Only for a casual "
        "(unrated) game: `forbidden` for a player whose games are rated (an account or a "
        "bot); a rated game never shows it.")


class FriendOpponent(_Message):
    """A person who joins with the room id (shared as a link); the room is not listed."""

    kind: Literal["friend"] = "friend"


class OpenOpponent(_Message):
    """Anybody: the room is listed by ``list_rooms`` until someone joins."""

    kind: Literal["open"] = "open"


Opponent = Annotated[AiOpponent | FriendOpponent | OpenOpponent, Field(discriminator="kind")]


class CreateRoom(_ClientMessage):
    """Open a room and sit in it; answered by ``room_state``. Against the AI the game starts at
    once (and the AI moves first if it holds seat 0)."""

    type: Literal["create_room"] = "create_room"
    game: str = Field(max_length=40, description="A game name from `welcome.games`.")
    opponent: Opponent
    seat: Seat | None = Field(
        default=0, description="The creator's seat: 0 moves first, 1 second, null = random."
    )
    time_control: str | None = Field(
        default=None, max_length=16,
        description="A name from `welcome.time_controls` (`\"3+2\"`: 3 minutes each, 2 s "
        "added per move); null (the default): untimed. Against the AI only the person's "
        "side has a clock.")


class JoinRoom(_ClientMessage):
    """Take the free seat of a room (by id/invite code); everyone gets ``room_event`` joined
    and the joiner gets ``room_state``."""

    type: Literal["join_room"] = "join_room"
    room: RoomId


class Spectate(_ClientMessage):
    """Watch a room without a seat; answered by ``room_state``, then its events."""

    type: Literal["spectate"] = "spectate"
    room: RoomId


class Move(_ClientMessage):
    """Play ``move`` at ``ply`` (the room's current ``ply``). Answered, once the move is
    stored, by ``move_made`` to everyone in the room (the mover included)."""

    type: Literal["move"] = "move"
    room: RoomId
    ply: int = Field(ge=0, description="Moves already played; must equal the room's ply.")
    move: str = Field(max_length=8, description="Connect Four '1'..'7'; Othello 'f5' or 'pass'.")


class Resign(_ClientMessage):
    """Give up the game in progress; everyone gets ``game_over``."""

    type: Literal["resign"] = "resign"
    room: RoomId


class OfferRematch(_ClientMessage):
    """After the game: propose another with colours swapped. Against the AI the rematch starts
    at once; otherwise the other seat gets ``room_event`` rematch_offered."""

    type: Literal["offer_rematch"] = "offer_rematch"
    room: RoomId


class AcceptRematch(_ClientMessage):
    """Accept the other seat's standing offer; everyone gets a fresh ``room_state``."""

    type: Literal["accept_rematch"] = "accept_rematch"
    room: RoomId


class Claim(_ClientMessage):
    """Claim the win when the opponent has been disconnected longer than the grace period."""

    type: Literal["claim"] = "claim"
    room: RoomId


class TakeBack(_ClientMessage):
    """Against the computer: take back your last move, and its reply if it has moved.
    Everyone in the room gets ``room_state`` again, then ``room_event`` took_back."""

    type: Literal["take_back"] = "take_back"
    room: RoomId


class OfferDraw(_ClientMessage):
    """Between people: offer a draw. The other seat gets ``room_event`` draw_offered and
    answers with ``answer_draw``; its next move declines it. If the other seat's offer is
    standing, this accepts it."""

    type: Literal["offer_draw"] = "offer_draw"
    room: RoomId


class AnswerDraw(_ClientMessage):
    """Accept (the game ends drawn, reason ``agreed``) or decline (``room_event``
    draw_declined) the other seat's draw offer."""

    type: Literal["answer_draw"] = "answer_draw"
    room: RoomId
    accept: bool


class Leave(_ClientMessage):
    """Leave a room. A seated player leaving an unfinished game loses it (reason ``left``)."""

    type: Literal["leave"] = "leave"
    room: RoomId


RoomCommand = (JoinRoom | Spectate | Move | Resign | OfferRematch | AcceptRematch | Claim
               | Leave | TakeBack | OfferDraw | AnswerDraw)
"""The commands that act on one room (``room`` names it): run by the server that runs it."""
ROOM_COMMANDS = (JoinRoom, Spectate, Move, Resign, OfferRematch, AcceptRematch, Claim, Leave,
                 TakeBack, OfferDraw, AnswerDraw)


class ListHistory(_ClientMessage):
    """Ask for a player's past (finished) games, newest first; answered by ``history``."""

    type: Literal["list_history"] = "list_history"
    player: str | None = Field(
        default=None, max_length=64, description="A player id; null for your own games."
    )
    limit: int = Field(default=20, ge=1, le=50, description="At most this many games.")


class GetGame(_ClientMessage):
    """Ask for one stored game with every position, for replay and export; answered by
    ``game_record`` (or ``unknown_game_id``)."""

    type: Literal["get_game"] = "get_game"
    game_id: str = Field(min_length=1, max_length=64, description="A `history` game id.")


class RequestReview(_ClientMessage):
    """Ask for the engine's review of a finished game (any `history` game id); answered by
    ``review`` once computed (at once when it is stored already), or ``unknown_game_id`` /
    ``game_not_finished``."""

    type: Literal["request_review"] = "request_review"
    game_id: str = Field(min_length=1, max_length=64, description="A `history` game id.")


class Analyse(_ClientMessage):
    """Ask for the engine's value of every legal move in a position (the analysis board);
    answered by ``analysis``. Any position of a game: it need not be a stored one."""

    type: Literal["analyse"] = "analyse"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    moves: list[str] = Field(
        default_factory=list, max_length=128,
        description="The moves from the start, in notation (`\"pass\"` for an Othello pass).",
    )


class GetStats(_ClientMessage):
    """Ask how the AI workers and the position cache are doing; answered by ``stats``.
    Anyone may ask (it says nothing about players); ``admin_get_stats`` adds rooms."""

    type: Literal["stats"] = "stats"


class Ping(_ClientMessage):
    """Answered by ``pong`` with the same ``id``; also counts against the rate limit."""

    type: Literal["ping"] = "ping"


# --- client -> server: challenges ------------------------------------------------------------

ChallengeId = Annotated[str, Field(min_length=1, max_length=32)]


class Challenge(_ClientMessage):
    """Ask a named bot or player for a game; answered by ``challenge_sent``. The other side
    gets ``challenge`` (live, and again after the room states on each of its reconnects)."""

    type: Literal["challenge"] = "challenge"
    player: str = Field(min_length=1, max_length=64,
                        description="A player id, a bot's name, or the name of one player online.")
    game: str = Field(max_length=40, description="A game name from `welcome.games`.")
    seat: Seat | None = Field(
        default=None, description="Your seat: 0 moves first, 1 second, null = random."
    )
    time_control: str | None = Field(
        default=None, max_length=16,
        description="A name from `welcome.time_controls`, as for `create_room`: the game, "
        "if accepted, is played with these clocks; null (the default): untimed.")


class AcceptChallenge(_ClientMessage):
    """Accept a challenge addressed to you: both players get the new game's ``room_state``."""

    type: Literal["accept_challenge"] = "accept_challenge"
    challenge: ChallengeId


class DeclineChallenge(_ClientMessage):
    """Refuse a challenge addressed to you; the challenger gets ``challenge_declined``."""

    type: Literal["decline_challenge"] = "decline_challenge"
    challenge: ChallengeId
    reason: str = Field(default="", max_length=200, description="Told to the challenger.")


CHALLENGE_CLIENT_MESSAGES = (Challenge, AcceptChallenge, DeclineChallenge)


class RegisterBot(_ClientMessage):
    """Make a bot account, on a server that lets bots register themselves
    (``welcome.limits.bot_registration`` is not null); answered by ``bot_registered``, which
    holds its token, shown this once. This connection stays what its ``hello`` made it: play
    as the bot on a new connection with ``hello.token``. ``registration_disabled`` where
    registration is off; ``bad_bot_name`` as for ``admin_create_bot``; ``limit_exceeded``
    past ``limits.bot_registration`` (nothing is made in each case)."""

    type: Literal["register_bot"] = "register_bot"
    name: str = Field(min_length=1, max_length=64, description="The bot's name, unique "
                      "among live bots (1 to 40 printable characters once trimmed).")


# --- client -> server: people's accounts (``server.people.accounts``) -----------------------------

AccountName = Annotated[str, Field(min_length=1, max_length=64, description=(
    "3 to 20 letters (a-z, A-Z), digits, `_` or `-`, starting with a letter or digit; "
    "unique whatever the letter case."))]
Password = Annotated[str, Field(min_length=1, max_length=256, description=(
    "8 to 128 characters."))]


class SignUp(_ClientMessage):
    """Make this guest an account (answered by ``signed_in``): the player keeps its id, so
    its games, finished and under way, are the account's, and takes the account's name.
    Errors, each changing nothing: ``bad_account_name``, ``bad_password``, ``not_a_guest``,
    ``rate_limited``."""

    type: Literal["sign_up"] = "sign_up"
    name: AccountName
    password: Password


class SignIn(_ClientMessage):
    """Ask for a session of an account (answered by ``signed_in``). This connection stays
    what its ``hello`` made it: say ``hello`` again with ``resume`` set to the session token
    to be the account. A failure is ``wrong_name_or_password`` whatever was wrong; too many
    attempts, ``rate_limited``."""

    type: Literal["sign_in"] = "sign_in"
    name: AccountName
    password: Password


class SignOut(_ClientMessage):
    """End this connection's session (``everywhere``: every session of the account);
    answered by ``signed_out``, after which the server closes every connection that came in
    with a revoked session, this one too. ``not_signed_in`` if this connection did not say
    hello with a session token."""

    type: Literal["sign_out"] = "sign_out"
    everywhere: bool = Field(default=False, description="Revoke all the account's sessions.")


class ChangePassword(_ClientMessage):
    """Change this account's password, given its current one (answered by
    ``password_changed``). Every other session of the account is revoked (the connections
    that came in with them are closed), so a password someone else learnt no longer keeps
    them signed in; this connection's session stays. Errors, each changing nothing:
    ``not_signed_in``, ``wrong_name_or_password`` (the current password is wrong),
    ``bad_password`` (the new one), ``rate_limited``."""

    type: Literal["change_password"] = "change_password"
    password: Password
    new_password: Password


ACCOUNT_MESSAGES = (SignUp, SignIn, SignOut, ChangePassword)


class GetLeaderboard(_ClientMessage):
    """Ask for a game's best rated players; answered by ``leaderboard`` (``unknown_game``
    for a game there is not)."""

    type: Literal["get_leaderboard"] = "get_leaderboard"
    game: str = Field(max_length=32, description="A game name from `welcome.games`.")
    limit: int = Field(default=50, ge=1, le=100, description="At most this many players.")
    provisional: bool = Field(
        default=False,
        description="Also list players whose rating is still provisional (marked so).",
    )


class GetProfile(_ClientMessage):
    """Ask for a player's profile: ratings, rating history, scores against the AI levels,
    recent games; answered by ``profile`` (``unknown_player`` for an id nobody has)."""

    type: Literal["get_profile"] = "get_profile"
    player: str | None = Field(
        default=None, max_length=64, description="A player id; null for yourself."
    )


RATING_MESSAGES = (GetLeaderboard, GetProfile)


# --- tournaments ------------------------------------------------------------------------------


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
    """Ask for the arenas upcoming, running and lately finished; answered by
    ``tournaments``."""

    type: Literal["list_tournaments"] = "list_tournaments"


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


# The engine ladder (``server.ladder.desk``): one standing ladder per game.

LadderEntrant = Annotated[str | None, Field(
    default=None, max_length=64,
    description="A bot's name or player id, or an AI level's name (`level:NAME` or `NAME`); "
                "admins only. Null: the sending bot itself.")]


class EnterLadder(_ClientMessage):
    """Put a bot or an AI level on ``game``'s ladder (a bot enters itself; an admin may enter
    any bot and any level); answered by ``ladder``."""

    type: Literal["enter_ladder"] = "enter_ladder"
    game: str = Field(max_length=32)
    entrant: LadderEntrant = None


class LeaveLadder(_ClientMessage):
    """Take a bot or level off the ladder: no more games are scheduled for it (its games
    stay in the rating list, and it is listed as inactive). Answered by ``ladder``."""

    type: Literal["leave_ladder"] = "leave_ladder"
    game: str = Field(max_length=32)
    entrant: LadderEntrant = None


class GetLadder(_ClientMessage):
    """Ask for ``game``'s ladder: the rating list and the games under way."""

    type: Literal["get_ladder"] = "get_ladder"
    game: str = Field(max_length=32)


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
LADDER_MESSAGES = (EnterLadder, LeaveLadder, GetLadder)
# --- client -> server: chat (``server.chat.desk``) ---------------------------------------------

ChatGameId = Annotated[str | None, Field(
    default=None, max_length=64,
    description="A game id (`room.id` + `-` + `room.round`, as `history` lists them); null: "
    "the lobby chat.")]


class GetChat(_ClientMessage):
    """Open a chat on this connection: answered by ``chat_history`` (its newest lines), then
    every new line as ``chat_line`` (and ``chat_deleted``) until the connection closes.
    In a game, a seated player reads and writes the players' chat, anyone else the
    spectators' chat (an admin reads both); the lobby chat is everyone's to read."""

    type: Literal["get_chat"] = "get_chat"
    game_id: ChatGameId = None


class Chat(_ClientMessage):
    """Say ``text`` in a chat this connection opened with ``get_chat`` (``not_in_room``
    otherwise); everyone who has it open gets ``chat_line``, the sender too. Refused:
    longer than ``limits.chat.max_chars`` once trimmed, or empty (``bad_message``); more
    than ``limits.chat.lines`` in ``limits.chat.window_seconds`` (``rate_limited``); a
    guest in the lobby unless ``limits.chat.guests_in_lobby`` (``not_signed_in``); a
    silenced player (``silenced``). The text is plain text: pages show it as text, never
    as HTML."""

    type: Literal["chat"] = "chat"
    game_id: ChatGameId = None
    text: str = Field(max_length=2000)


class AdminDeleteChat(_ClientMessage):
    """(Admins.) Delete a chat line: it is gone from the chat's history, and everyone who
    has the chat open gets ``chat_deleted``; answered by ``chat_deleted`` too
    (``unknown_chat_line`` if there is no such line)."""

    type: Literal["admin_delete_chat"] = "admin_delete_chat"
    line: int = Field(ge=1, description="The `chat_line.line.id`.")


class AdminSilenceChat(_ClientMessage):
    """(Admins.) Silence a player's chat everywhere for ``seconds`` (0 lifts a silence);
    answered by ``chat_silenced``. Their lines meanwhile are refused with ``silenced``."""

    type: Literal["admin_silence_chat"] = "admin_silence_chat"
    player: str = Field(min_length=1, max_length=64, description="A player id.")
    seconds: int = Field(ge=0, le=30 * 86400)


CHAT_MESSAGES = (GetChat, Chat, AdminDeleteChat, AdminSilenceChat)


# --- client -> server: admin (refused with `forbidden` before `admin_login`) -----------------


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


class AdminListBots(_ClientMessage):
    """Ask for every bot token ever issued, revoked ones included; answered by
    ``admin_bots``."""

    type: Literal["admin_list_bots"] = "admin_list_bots"


class AdminCreateBot(_ClientMessage):
    """Make a bot account; answered by ``admin_bot_created``, which holds its token, shown
    this once (``bad_bot_name`` if the name is empty, too long or a live bot's)."""

    type: Literal["admin_create_bot"] = "admin_create_bot"
    name: str = Field(min_length=1, max_length=64)


class AdminRevokeBot(_ClientMessage):
    """Revoke a bot's live tokens; answered by ``admin_bot_revoked`` (``unknown_bot`` if
    none is live). Its connections to this server are closed at once (1008), those to other
    servers within their sweep (about 5 s)."""

    type: Literal["admin_revoke_bot"] = "admin_revoke_bot"
    bot: str = Field(min_length=1, max_length=64, description="Name, token id or player id.")


ADMIN_CLIENT_MESSAGES = (AdminLogin, AdminListLevels, AdminEditLevel, AdminListAudit,
                         AdminListRooms, AdminGetStats, AdminStartCalibration,
                         AdminListCalibrations, AdminListBots, AdminCreateBot, AdminRevokeBot)


ClientMessage = Annotated[
    Hello
    | ListRooms
    | CreateRoom
    | JoinRoom
    | Spectate
    | Move
    | Resign
    | OfferRematch
    | AcceptRematch
    | Claim
    | Leave
    | TakeBack
    | OfferDraw
    | AnswerDraw
    | ListHistory
    | GetGame
    | RequestReview
    | Analyse
    | GetStats
    | Ping
    | Challenge
    | AcceptChallenge
    | DeclineChallenge
    | RegisterBot
    | AdminLogin
    | AdminListLevels
    | AdminEditLevel
    | AdminListAudit
    | AdminListRooms
    | AdminGetStats
    | AdminStartCalibration
    | AdminListCalibrations
    | AdminListBots
    | AdminCreateBot
    | AdminRevokeBot
    | SignUp
    | SignIn
    | SignOut
    | ChangePassword
    | GetLeaderboard
    | GetProfile
    | CreateTournament
    | JoinTournament
    | PauseTournament
    | WithdrawTournament
    | GetTournament
    | UnwatchTournament
    | ListTournaments
    | CreateRoundTournament
    | StartTournament
    | Berserk
    | AdminCreateSchedule
    | AdminListSchedules
    | AdminDeleteSchedule
    | EnterLadder
    | LeaveLadder
    | GetLadder
    | GetChat
    | Chat
    | AdminDeleteChat
    | AdminSilenceChat,
    Field(discriminator="type"),
]


# --- shared views ----------------------------------------------------------------------------


class PlayerView(_Message):
    id: str = Field(description="Public player id (never the resume token).")
    name: str
    bot: bool = Field(default=False, description="A bot account (it says hello with a token).")


class SeatRating(_Message):
    """A seated player's rating in the room's game, as shown beside the name: rounded to a
    whole number; ``provisional`` when too little is known (pages show it as ``1662?``)."""

    rating: int
    provisional: bool = Field(
        description="A player: rd is above 110. An AI level: never calibrated (guessed).")


class SeatView(_Message):
    """Who sits in one seat. ``kind`` is ``human``, ``ai``, or ``empty`` (waiting for a join)."""

    seat: Seat
    colour: str = Field(description="The game's name for this side: 'Red', 'Black', ...")
    kind: Literal["human", "ai", "empty"]
    player: PlayerView | None = None
    level: str | None = Field(default=None, description="The AI level, for an AI seat.")
    connected: bool = Field(description="False while a human is away (AI seats: always true).")
    rating: SeatRating | None = Field(
        default=None,
        description="The seated account's or bot's rating in this game, or the AI level's; "
        "null for guests, admins and empty seats. As of when the player sat down or the "
        "game started (a rematch shows the ratings the last game left).")


class Result(_Message):
    """How a game ended. ``winner`` is a seat or null for a draw. ``score`` is the rules'
    final score from seat 0's side (Connect Four: Pons' convention; Othello: disc difference)
    when the game was played to the end, else null."""

    winner: Seat | None
    score: int | None = None
    reason: Literal["end", "resigned", "left", "abandoned", "aborted", "agreed",
                    "timeout"] = Field(
        description="end: played out; resigned; left: a player left; abandoned: claimed "
        "after the opponent's grace period ran out (or everyone was away that long); "
        "aborted: ended by leaving, abandoning or running out of time before both sides "
        "had moved, with no winner and not scored; agreed: a draw both players agreed to; "
        "timeout: the loser's clock ran out."
    )


class TimeControlView(_Message):
    """A time control a room may be made with."""

    name: str = Field(description="What `create_room.time_control` names it by: '3+2'.")
    initial_ms: int = Field(description="Each clock at the start, in milliseconds.")
    increment_ms: int = Field(description="Added to a clock after each of its side's moves.")


class ClockView(_Message):
    """Both clocks of a timed game as the server measured them when it sent the message.

    A client shows ``remaining_ms`` and counts the ``running`` seat's clock down from the
    moment it *received* the message (its own clock, so a skewed client clock does not
    matter); the server alone decides when a flag falls.
    """

    control: TimeControlView
    remaining_ms: list[int | None] = Field(
        description="Each seat's time left in milliseconds, seat 0 first; null for a seat "
        "without a clock (the AI).")
    running: Seat | None = Field(
        description="The seat whose clock runs now; null when none does (the game is over "
        "or waits for a second player, or the AI is to move).")


RoomStatus = Literal["waiting", "active", "finished"]


class Position(_Message):
    """The position after the last move: everything needed to draw the board and move."""

    ply: int = Field(description="Moves played so far; the next move must carry this ply.")
    position: str = Field(description="The game's position text (as the shared data writes it).")
    cells: list[Literal[0, 1] | None] = Field(
        description="Owner seat or null of every cell, row by row from the top as seen."
    )
    to_move: Seat | None = Field(description="Seat to move; null when the game is over.")
    legal_moves: list[str] = Field(description="Moves for the side to move, in notation.")
    last_move: str | None = None
    placed: int | None = Field(
        default=None, description="The cell the last move put a disc on (null: start, pass)."
    )
    flipped: list[int] = Field(
        default_factory=list, description="The cells the last move turned over (Othello)."
    )
    winning: list[int] = Field(
        default_factory=list,
        description="The cells of the four in a row that won (Connect Four); empty otherwise.",
    )


class RoomView(_Message):
    """The full state of a room; ``room_state`` carries it."""

    id: RoomId
    game: str
    rows: int
    cols: int
    opponent: Literal["ai", "friend", "open"]
    seats: list[SeatView] = Field(description="Always two, seat 0 first.")
    spectators: int
    status: RoomStatus
    moves: list[str] = Field(description="Every move so far, in notation, from the start.")
    boards: list[str] = Field(
        description="The board before any move and after each ply (`len(moves) + 1` of "
        "them), as `board_text` writes cells: '-' empty, 'X' seat 0, 'O' seat 1."
    )
    position: Position
    result: Result | None = None
    ai_thinking: bool = Field(description="True while the AI is searching its move.")
    rematch_offered_by: Seat | None = None
    draw_offered_by: Seat | None = Field(
        default=None, description="The seat whose draw offer stands (games between people).")
    round: int = Field(description="1 for the first game in this room, +1 per rematch.")
    clock: ClockView | None = Field(
        default=None, description="The clocks of a timed game; null when untimed.")
    berserk_allowed: bool = Field(
        default=False, description="An arena's game whose arena allows `berserk`.")
    berserk: list[Seat] = Field(
        default_factory=list, description="The seats that went berserk in this game.")


class RoomSummary(_Message):
    id: RoomId
    game: str
    seats: list[SeatView]
    status: RoomStatus
    ply: int
    spectators: int
    time_control: str | None = Field(default=None, description="Null: untimed.")


class LevelInfo(_Message):
    name: str
    order: int = Field(description="0 = weakest.")
    description: str


class GameInfo(_Message):
    name: str
    title: str
    players: list[str] = Field(description="Colour names of seat 0 and seat 1.")
    rows: int
    cols: int
    levels: list[LevelInfo]


class ServerLimits(_Message):
    max_message_bytes: int
    messages_per_second: float = Field(description="Sustained rate of the token bucket.")
    burst: int = Field(description="Messages allowed at once before the rate applies.")
    grace_seconds: float = Field(description="How long a dropped player's seat is kept.")
    max_rooms: int = Field(description="Unfinished rooms one player may sit in at once.")
    max_challenges: int = Field(
        default=10, description="Challenges one player may have waiting for an answer.")
    bot: BotLimitsView | None = Field(
        default=None, description="A bot's own limits; null unless `hello` had a bot token.")
    chat: ChatLimits | None = Field(default=None, description="The bounds of `chat`.")
    bot_registration: BotRegistrationView | None = Field(
        default=None, description="How `register_bot` is bounded; null: this server does "
        "not let bots register themselves (ask its admin for a bot account).")


class ChatLimits(_Message):
    """How ``chat`` is bounded (``server.settings.Settings``)."""

    max_chars: int = Field(description="Longest line, in characters once trimmed.")
    lines: int = Field(description="Lines one player may send within `window_seconds`.")
    window_seconds: float
    guests_in_lobby: bool = Field(description="Whether guests may write in the lobby chat.")


class ChatLineView(_Message):
    """One line of chat, as sent and as stored."""

    id: int = Field(description="Unique on this server (its cluster): `admin_delete_chat`.")
    game_id: str | None = Field(description="The game's chat it belongs to; null: the lobby.")
    channel: Literal["lobby", "players", "spectators"] = Field(
        description="Within a game: the players' chat (its seated players) or the "
        "spectators' (everyone else).")
    player: PlayerView
    text: str = Field(description="Plain text: show it as text, never as HTML.")
    at: float = Field(description="Unix time (seconds) it was said.")


class BotLimitsView(_Message):
    """The limits of one bot account (``server.bots.limits.BotLimits``); going over one is
    ``limit_exceeded`` with ``detail.limit`` naming it."""

    concurrent_games: int = Field(description="Unfinished games the bot may sit in at once.")
    moves_per_minute: float = Field(description="Sustained moves a minute, over all its games.")
    move_burst: int = Field(description="Moves allowed at once before the rate applies.")
    connections_per_token: int = Field(description="Websockets open at once with its token.")


class BotRegistrationView(_Message):
    """The bounds of bot self-registration (``server.bots.limits.RegistrationLimits``); going
    over one is ``limit_exceeded`` with ``detail.limit`` naming it."""

    registrations_per_connection: int = Field(
        description="Bot accounts one connection may create.")
    registrations_per_minute: int = Field(
        description="Bot accounts the whole server creates in any 60 seconds.")


class PastSeat(_Message):
    """Who played one seat of a stored game."""

    seat: Seat
    colour: str
    kind: Literal["human", "ai", "empty"]
    player: PlayerView | None = None
    level: str | None = Field(default=None, description="The AI level, for an AI seat.")


class PastGame(_Message):
    """One line of a player's history."""

    id: str = Field(description="The game id, for `get_game` and `/games/<id>.txt`.")
    game: str
    seats: list[PastSeat] = Field(description="Always two, seat 0 first.")
    status: Literal["waiting", "active", "finished", "aborted"]
    result: Result | None = None
    started_at: float = Field(description="Unix time (seconds) the game began.")
    finished_at: float | None = Field(default=None, description="Unix time it ended.")
    move_count: int = Field(description="Plies played (an Othello pass counts as one).")


class GameReplay(_Message):
    """A stored game with every position, so a page can step through it without rules."""

    id: str
    game: str
    rows: int
    cols: int
    seats: list[PastSeat]
    status: Literal["waiting", "active", "finished", "aborted"]
    result: Result | None = None
    started_at: float
    finished_at: float | None = None
    moves: list[str] = Field(description="Every move in notation, ply 0 first.")
    boards: list[str] = Field(
        description="The board before any move and after each ply (`len(moves) + 1`), "
        "as in `room.boards`."
    )
    winning: list[int] = Field(
        default_factory=list,
        description="The cells of the four in a row that won, on the last board (Connect "
        "Four); empty otherwise.",
    )
    exports: dict[str, str] = Field(
        description="The game as text people know: `columns` (Connect Four, e.g. '4453'); "
        "`moves` ('f5d6c3...') and `ggf` (Othello)."
    )
    downloads: dict[str, str] = Field(
        description="The same texts as files over HTTP on this server, by format: "
        "`txt` (`/games/<id>.txt`), `ggf` (`/games/<id>.ggf`, Othello)."
    )
    time_control: TimeControlView | None = Field(
        default=None, description="The game's time control; null when untimed.")
    clocks: list[list[int | None]] | None = Field(
        default=None, description="A timed game's clocks after each ply (`len(moves)` "
        "pairs, seat 0 first, in milliseconds, the increment included; null for a seat "
        "without a clock); null when untimed.")
    chat: list[ChatLineView] = Field(
        default_factory=list, description="The game's chat, oldest first: its spectators' "
        "lines, and its players' lines for those who played it (and admins).")


# --- server -> client ------------------------------------------------------------------------


class Welcome(_Message):
    """Answer to ``hello``. Keep ``resume`` (it is a secret) to come back as the same player."""

    type: Literal["welcome"] = "welcome"
    version: int
    player: PlayerView
    resume: str
    limits: ServerLimits
    games: list[GameInfo]
    time_controls: list[TimeControlView] = Field(
        default_factory=list, description="What `create_room.time_control` may name.")


class GamesChanged(_Message):
    """The games and their AI levels as ``welcome.games`` shows them changed (an admin edited
    a level's description or order): the new ``welcome.games``, sent to every connection, so
    an open lobby shows them at once."""

    type: Literal["games"] = "games"
    games: list[GameInfo]


class RoomState(_Message):
    """The full room. Sent on create, join, spectate, (re)connect and rematch; everything
    after it for that room is an incremental event, in order."""

    type: Literal["room_state"] = "room_state"
    room: RoomView
    you: Seat | None = Field(description="Your seat, or null when you are watching.")


class MoveMade(_Message):
    """A move was accepted and stored. ``ply`` is the ply the move was played at."""

    type: Literal["move_made"] = "move_made"
    room: RoomId
    ply: int
    move: str
    seat: Seat
    position: Position = Field(description="The position after the move.")
    status: RoomStatus
    thought: AiThought | None = Field(
        default=None, description="For a move the AI searched: its search's last iteration "
        "(what the page shows as what the AI saw). Null for people's moves and for quick "
        "moves played without a search.")
    clock: ClockView | None = Field(
        default=None, description="A timed game's clocks after the move (its time spent "
        "and the increment added; the other seat's clock now running); null when untimed.")


RoomEventKind = Literal[
    "joined",
    "left",
    "disconnected",
    "reconnected",
    "spectator_joined",
    "spectator_left",
    "rematch_offered",
    "took_back",
    "draw_offered",
    "draw_declined",
    "berserk",
]


class RoomEvent(_Message):
    """Something about the people in a room changed; ``seats`` is the new seating."""

    type: Literal["room_event"] = "room_event"
    room: RoomId
    event: RoomEventKind
    seat: Seat | None = Field(default=None, description="The seat concerned, if any.")
    seats: list[SeatView]
    spectators: int
    grace_seconds: float | None = Field(
        default=None, description="For `disconnected`: seconds before the seat may be claimed."
    )
    clock: ClockView | None = Field(
        default=None, description="For `joined` in a timed room: the clocks, the first "
        "mover's now running; for `berserk`: the clocks with `seat`'s halved; null "
        "otherwise.")


class AiThought(_Message):
    """What the AI's search saw: one finished iteration; with a move, its last iteration, the
    score of the move played (a level may play below its best) and the whole search's nodes.
    ``score`` is from the AI's side (positive: it thinks it is ahead): in Othello in discs (an
    estimate of the final disc difference; the difference itself when ``exact``); in Connect
    Four in the evaluation's points, or Pons' score when ``exact``."""

    depth: int
    score: int | None = Field(description="Null when the search did not score the move played "
                              "(a move the level's rails forced), and always unless the room "
                              "shows the engine's evaluation (`AiOpponent.evaluation`).")
    nodes: int
    seconds: float
    exact: bool = False
    win_in: int | None = Field(
        default=None,
        description="A result the search proved, in moves: N > 0, the AI wins with its Nth "
        "move from now; N < 0, its opponent wins with its -Nth move. Null when nothing is "
        "proven or the game gives no length (Othello, draws).",
    )


class AiThinking(AiThought):
    """Progress of a search for the move at ``ply`` that runs longer than about 0.2 s: its
    latest finished iteration, at most about five a second. A quicker search sends none; the
    move's ``move_made.thought`` carries the last iteration either way."""

    type: Literal["ai_thinking"] = "ai_thinking"
    room: RoomId
    ply: int


class GameOver(_Message):
    type: Literal["game_over"] = "game_over"
    room: RoomId
    result: Result
    clock: ClockView | None = Field(
        default=None, description="A timed game's clocks as it ended (none running); null "
        "when untimed.")


class Rooms(_Message):
    """Answer to ``list_rooms``: open rooms waiting for a second player, newest first."""

    type: Literal["rooms"] = "rooms"
    rooms: list[RoomSummary]


class Error(_Message):
    """A request was refused and changed nothing. ``code`` is stable; ``message`` is for people."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: str
    ref: str | int | None = Field(default=None, description="The `id` of the request, if any.")
    room: str | None = None
    detail: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict,
        description="Specifics: `field` (bad_message), `expected` (stale_ply), "
        "`retry_after` seconds (rate_limited, cannot_claim); `limit`, `allowed`, `retry_after` "
        "(limit_exceeded).",
    )


class History(_Message):
    """Answer to ``list_history``: the player's finished games, newest first."""

    type: Literal["history"] = "history"
    player: str = Field(description="Whose games these are (a player id).")
    games: list[PastGame]


class GameRecordMessage(_Message):
    """Answer to ``get_game``."""

    type: Literal["game_record"] = "game_record"
    record: GameReplay


Verdict = Literal["best", "good", "inaccuracy", "mistake", "blunder"]


class MoveReviewView(_Message):
    """One reviewed move. Values are the mover's, in the game's units: Connect Four Pons'
    score (22 minus the winner's stones, signed; exact), Othello discs (exact with 20 or fewer
    empty squares, else a search score)."""

    ply: int
    move: str
    seat: Seat
    best: str | None = Field(description="A move of the engine's that keeps `before`.")
    before: int | None = Field(description="The best value the mover could get; null: "
                               "not worked out in time.")
    after: int | None = Field(description="The value the move played keeps.")
    loss: int | None = Field(description="`before - after`, never negative.")
    exact: bool = Field(description="Both values are proven.")
    verdict: Verdict | None = Field(description="By `loss`; null when a value is unknown.")
    label_before: str = Field(description="`before` as people read it: `win in 7`, "
                              "`draw`, `loss in 12` (Connect Four), `+6`, `+6 exact` (Othello).")
    label_after: str


class GameReview(_Message):
    """The engine's review of one stored game."""

    game_id: str
    game: str
    moves: list[MoveReviewView]
    values: list[int | None] = Field(
        description="The value before each ply and, last, the final result, from seat 0's "
        "side (`len(moves) + 1`), for a chart; null where not worked out in time.")
    values_exact: list[bool]
    created_at: float = Field(description="Unix time the review was computed.")


class ReviewMessage(_Message):
    """Answer to ``request_review``."""

    type: Literal["review"] = "review"
    review: GameReview


class MoveValueView(_Message):
    """One legal move on the analysis board: the value it keeps for the side to move."""

    move: str
    value: int | None = Field(description="Null when not worked out in time.")
    exact: bool
    label: str


class Analysis(_Message):
    """Answer to ``analyse``: every legal move, best first; in a finished position none, and
    the game's result instead."""

    type: Literal["analysis"] = "analysis"
    game: str
    moves: list[str] = Field(description="The position, as asked.")
    board: str = Field(description="The position's board, one character a cell as in "
                       "`room.boards`, so a page draws it without rules of its own.")
    to_move: Seat | None = Field(description="Null when the game is over in the position.")
    values: list[MoveValueView] = Field(description="Empty when the game is over.")
    result: int | None = Field(
        default=None, description="When the game is over in the position: its result from "
        "seat 0's side, in the units of `review.values` (Connect Four: Pons' score, 0 a "
        "draw; Othello: the disc difference). Null while the game goes on.")


class PoolView(_Message):
    """The AI worker processes of this server."""

    workers: int = Field(description="Worker processes running.")
    ready: int = Field(description="Workers warmed up (the others are still starting).")
    busy: int = Field(description="Workers searching a move now.")
    idle: int = Field(description="Ready workers without a job.")
    queued: int = Field(description="AI moves waiting for a free worker.")
    jobs: int = Field(description="AI moves answered since the server started.")
    fallbacks: int = Field(description="... of them made by the quick fallback, not a search.")
    from_cache: int = Field(description="... of them played from the position cache.")
    restarts: int = Field(description="Workers replaced after hanging or dying.")
    move_seconds_p50: float | None = Field(
        description="Median seconds from asking for an AI move to having it (recent moves).")
    move_seconds_p99: float | None = Field(description="99th percentile of the same.")


class CacheTierView(_Message):
    """One tier of the position cache, as seen by the lookups that reached it."""

    tier: Literal["redis", "lru", "postgresql", "sqlite"] = Field(
        description="redis or lru: the hot tier; postgresql or sqlite: the durable table.")
    hits: int
    misses: int = Field(description="Lookups this tier could not answer (passed on, or lost).")
    hit_rate: float = Field(description="hits / (hits + misses); 0 before any lookup.")


class CacheView(_Message):
    """Position cache lookups (a root and its children per AI move)."""

    lookups: int
    hits: int = Field(description="Found in any tier.")
    misses: int = Field(description="Found in no tier.")
    hit_rate: float
    tiers: list[CacheTierView] = Field(description="Hot tier first, then the durable one.")


class Stats(_Message):
    """Answer to ``stats``. ``cache`` counts this server's workers' lookups; ``shared_cache``
    those of every process on the same Redis (null without Redis); either is null when
    there is no cache."""

    type: Literal["stats"] = "stats"
    pool: PoolView | None = Field(description="Null when AI moves are made without workers.")
    cache: CacheView | None = None
    shared_cache: CacheView | None = None


class Pong(_Message):
    type: Literal["pong"] = "pong"
    id: str | int | None = None


# --- server -> client: challenges ------------------------------------------------------------


class ChallengeSent(_Message):
    """Answer to ``challenge``: it waits for ``to``'s answer."""

    type: Literal["challenge_sent"] = "challenge_sent"
    challenge: str = Field(description="The challenge id.")
    to: PlayerView
    game: str
    seat: Seat = Field(description="Your seat in the game, if accepted.")
    time_control: TimeControlView | None = Field(
        default=None, description="The clocks the game will have; null: untimed.")


class ChallengeOffer(_Message):
    """A challenge addressed to you; answer with ``accept_challenge`` or
    ``decline_challenge``."""

    type: Literal["challenge"] = "challenge"
    challenge: str = Field(description="The challenge id.")
    challenger: PlayerView
    game: str
    seat: Seat = Field(description="Your seat in the game, if you accept.")
    time_control: TimeControlView | None = Field(
        default=None, description="The clocks the game will have if you accept; null: "
        "untimed.")


class ChallengeDeclined(_Message):
    """Your challenge was declined by ``by``."""

    type: Literal["challenge_declined"] = "challenge_declined"
    challenge: str
    by: PlayerView
    reason: str


# --- server -> client: admin -----------------------------------------------------------------


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


class BotAccountView(_Message):
    """One bot token as an admin (or the bot's registrant) sees it: never the token itself.
    Times are epoch seconds."""

    token_id: str
    player_id: str
    name: str
    created_at: float
    last_used_at: float | None = None
    revoked_at: float | None = None
    connections: int = Field(description="Its live connections to this server.")


class AdminBots(_Message):
    """Answer to ``admin_list_bots``: every bot token, oldest first."""

    type: Literal["admin_bots"] = "admin_bots"
    bots: list[BotAccountView]


class AdminBotCreated(_Message):
    """Answer to ``admin_create_bot``: the account and its token. The server keeps only a
    hash: this is the one time the token is shown."""

    type: Literal["admin_bot_created"] = "admin_bot_created"
    bot: BotAccountView
    token: str


class BotRegistered(_Message):
    """Answer to ``register_bot``: the new account and its token. The server keeps only a
    hash: this is the one time the token is shown."""

    type: Literal["bot_registered"] = "bot_registered"
    bot: BotAccountView
    token: str


class AdminBotRevoked(_Message):
    """Answer to ``admin_revoke_bot``: the tokens revoked and how many connections to this
    server were closed."""

    type: Literal["admin_bot_revoked"] = "admin_bot_revoked"
    bots: list[BotAccountView]
    closed: int


class SignedIn(_Message):
    """Answer to ``sign_up`` and ``sign_in``: the account and a new session token, a secret
    shown this once. Keep it: ``hello`` with it as ``resume`` comes back as the account, on
    this browser, until it is revoked (``sign_out``)."""

    type: Literal["signed_in"] = "signed_in"
    player: PlayerView
    session: str = Field(description="The session token (stored on the server only hashed).")


class SignedOut(_Message):
    """Answer to ``sign_out``: how many sessions were revoked. The server then closes the
    connections that used them (code 1000, reason `signed_out`)."""

    type: Literal["signed_out"] = "signed_out"
    revoked: int


class PasswordChanged(_Message):
    """Answer to ``change_password``: the new password is the account's, and this many
    other sessions were revoked (their connections are closed, code 1000, reason
    `signed_out`)."""

    type: Literal["password_changed"] = "password_changed"
    revoked: int


class RatingView(_Message):
    """A Glicko-2 rating (docs/PROTOCOL.md, Ratings): ``rating`` and its deviation ``rd``
    (about 95% sure the strength is within ``rating ± 2 rd``), rounded to 0.1."""

    rating: float
    rd: float
    provisional: bool = Field(description="rd is above 110: too little known to rank it.")


class GameRating(RatingView):
    """A player's rating in one game."""

    game: str
    games: int = Field(description="Rated games played.")


class RatingChange(_Message):
    """Sent to a player after the ``game_over`` of a rated game (never for a guest's): what
    the game did to the player's rating. Sent once per game; a client that reconnects
    finds the change in its ``profile``."""

    type: Literal["rating_change"] = "rating_change"
    room: RoomId
    game_id: str
    game: str
    player: str = Field(description="Whose rating (a player id): yours.")
    before: RatingView
    after: RatingView
    delta: float = Field(description="after.rating - before.rating, rounded to 0.1.")


class LeaderboardEntry(_Message):
    rank: int = Field(description="1 for the best.")
    player: PlayerView
    rating: GameRating


class LevelRatingView(_Message):
    """An AI level's rating: from its calibration (anchored: the weakest level is 1000), or
    guessed from its place in the ladder (``calibrated`` false). Games do not change it."""

    name: str
    rating: float
    rd: float
    calibrated: bool


class Leaderboard(_Message):
    """Answer to ``get_leaderboard``: the best rated accounts and bots of ``game``, best
    first, and the AI levels' ratings for scale."""

    type: Literal["leaderboard"] = "leaderboard"
    game: str
    players: list[LeaderboardEntry]
    levels: list[LevelRatingView]


class RatingPoint(_Message):
    """One rated game in a player's history: the rating after it."""

    game_id: str = Field(description="The game (`get_game` replays it).")
    game: str
    at: float = Field(description="When it ended (epoch seconds).")
    rating: float
    rd: float
    delta: float
    score: float = Field(description="The player's: 1 win, 0.5 draw, 0 loss.")
    opponent: PlayerView | None = Field(default=None, description="A person or bot, or null.")
    level: str | None = Field(default=None, description="The AI level played, or null.")


class LevelRecord(_Message):
    """The player's finished games against one AI level (from the player's side)."""

    game: str
    level: str
    wins: int
    draws: int
    losses: int


class Profile(_Message):
    """Answer to ``get_profile``."""

    type: Literal["profile"] = "profile"
    player: PlayerView
    kind: Literal["guest", "account", "bot", "admin"] = Field(
        description="Only accounts and bots are rated.")
    ratings: list[GameRating] = Field(description="One per game the player has been rated in.")
    history: list[RatingPoint] = Field(description="Rated games, oldest first (the last 200).")
    levels: list[LevelRecord] = Field(description="By game, then the levels' order.")
    recent: list[PastGame] = Field(description="Finished games, newest first (the last 10).")


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
    rounds: int | None = Field(default=None,
                               description="A Swiss's or round-robin's rounds (a round-robin"
                                           "'s once round 1 is paired); null for an arena.")


class StandingRow(_Message):
    """A player's line in the standings: points of each finished game in ``sheet`` (in the
    order they finished; a win on a streak counts double), ``on_fire`` after two wins in a
    row."""

    rank: int
    player: PlayerView
    rating: int
    score: int
    games: int
    sheet: list[int]
    on_fire: bool
    status: Literal["active", "paused", "withdrawn"]
    playing: bool


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


class LadderRow(_Message):
    """An entrant of the ladder: a bot (``player``) or an AI level (``level``). ``rating``
    on the people's scale with ``error`` (one standard error), null until a game links it
    to an AI level of known rating; ``anchored``: an AI level whose calibrated rating pins
    the scale."""

    id: str = Field(description="The bot's player id, or `level:NAME`.")
    name: str
    player: PlayerView | None = None
    level: str | None = None
    rating: int | None
    error: int | None
    games: int
    score: float
    anchored: bool
    active: bool = Field(description="False once it left the ladder.")
    playing: bool


class LadderGameView(_Message):
    """A ladder game under way: its room (to spectate), the entrants by id (``first`` moves
    first) and the opening it started from."""

    room: str
    first: str
    second: str
    opening: str


class LadderPoint(_Message):
    """The rating list after the ladder's first ``played`` finished games (in the order
    they finished), the last at ``at``: each rated entrant's rating, by entrant id."""

    played: int
    at: float = Field(description="Epoch seconds.")
    ratings: dict[str, int]


class LadderPair(_Message):
    """Two entrants' finished games against each other, counted from ``a``'s side."""

    a: str
    b: str
    wins: int
    draws: int
    losses: int


class LadderResult(_Message):
    """A finished ladder game: ``result`` is ``first``'s score (1, 0.5, 0); ``game_id`` the
    stored game (``get_game`` replays it)."""

    game_id: str | None
    first: str
    second: str
    result: float
    finished_at: float | None


class LadderMessage(_Message):
    """A game's ladder: the answer to ``enter_ladder``, ``leave_ladder`` and ``get_ladder``.
    ``entrants`` is the rating list, best first (the unrated last); ``history`` how it moved
    (the page's chart), ``pairs`` the head-to-head scores, ``results`` the latest games."""

    type: Literal["ladder"] = "ladder"
    game: str
    time_control: str
    pace_seconds: float = Field(description="How often games are scheduled among the free "
                                            "entrants.")
    openings: list[str]
    entrants: list[LadderRow]
    games: list[LadderGameView]
    played: int = Field(description="Games finished on this ladder.")
    history: list[LadderPoint] = Field(
        default_factory=list, description="The rating list refitted over the first k "
        "finished games for up to 30 k spread evenly up to `played`, oldest first.")
    pairs: list[LadderPair] = Field(default_factory=list,
                                    description="Every pair that has met.")
    results: list[LadderResult] = Field(default_factory=list,
                                        description="The last 100 finished games, newest "
                                                    "first.")


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
    """Answer to ``list_tournaments``: upcoming and running arenas, soonest first, then the
    lately finished."""

    type: Literal["tournaments"] = "tournaments"
    tournaments: list[TournamentView]
class ChatHistory(_Message):
    """Answer to ``get_chat``: the chat's newest lines this connection may read, oldest
    first (both channels of a game for an admin)."""

    type: Literal["chat_history"] = "chat_history"
    game_id: str | None
    channel: Literal["lobby", "players", "spectators"] = Field(
        description="The channel this connection writes in (an admin writing in a game: "
        "the spectators').")
    lines: list[ChatLineView]


class ChatLine(_Message):
    """A new line in a chat this connection opened with ``get_chat``."""

    type: Literal["chat_line"] = "chat_line"
    line: ChatLineView


class ChatDeleted(_Message):
    """An admin deleted a line: remove it from the page."""

    type: Literal["chat_deleted"] = "chat_deleted"
    line: int
    game_id: str | None


class ChatSilenced(_Message):
    """Answer to ``admin_silence_chat``."""

    type: Literal["chat_silenced"] = "chat_silenced"
    player: str
    until: float | None = Field(description="Unix time the silence ends; null: lifted.")


ServerMessage = Annotated[
    Welcome
    | GamesChanged
    | RoomState
    | MoveMade
    | RoomEvent
    | AiThinking
    | GameOver
    | Rooms
    | History
    | GameRecordMessage
    | ReviewMessage
    | Analysis
    | Stats
    | Error
    | Pong
    | ChallengeSent
    | ChallengeOffer
    | ChallengeDeclined
    | BotRegistered
    | AdminWelcome
    | AdminLevels
    | AdminLevelEdited
    | AdminAudit
    | AdminRooms
    | AdminStats
    | AdminCalibrationStarted
    | AdminCalibrationProgress
    | AdminCalibrationFinished
    | AdminCalibrationFailed
    | AdminCalibrations
    | AdminBots
    | AdminBotCreated
    | AdminBotRevoked
    | SignedIn
    | SignedOut
    | PasswordChanged
    | RatingChange
    | Leaderboard
    | Profile
    | TournamentMessage
    | Tournaments
    | Schedules
    | RoundTournamentMessage
    | LadderMessage
    | ChatHistory
    | ChatLine
    | ChatDeleted
    | ChatSilenced,
    Field(discriminator="type"),
]

CLIENT = TypeAdapter[Any](ClientMessage)
SERVER = TypeAdapter[Any](ServerMessage)


def parse_client(data: str | bytes) -> BaseModel:
    """The client message in one frame, or the ``ProtocolError`` that says what is wrong.

    Binary frames are refused as ``bad_json``: the protocol is JSON text only. So is JSON
    nested too deep for the parser (a few KB of brackets): ``RecursionError`` is a bad frame,
    not a failure of the server.
    """
    if isinstance(data, bytes):
        raise errors.BadJson("the protocol uses text frames of JSON; got a binary frame")
    try:
        raw = json.loads(data)
    except ValueError as exc:
        raise errors.BadJson(f"the frame is not valid JSON: {exc}") from None
    except RecursionError:
        raise errors.BadJson("the frame's JSON is nested too deep") from None
    if not isinstance(raw, dict):
        raise errors.BadJson("a message must be a JSON object")
    ref = raw.get("id")
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in _CLIENT_TYPES:
        known = ", ".join(sorted(_CLIENT_TYPES))
        error: errors.ProtocolError = errors.UnknownType(
            f"unknown message type {kind!r}; known types: {known}"
        )
    else:
        try:
            message: BaseModel = CLIENT.validate_python(raw)
            return message
        except RecursionError:
            error = errors.BadMessage(f"{kind}: message: nested too deep")
        except ValidationError as exc:
            first = exc.errors()[0]
            # The discriminator adds the type name as the first location element.
            loc = [str(part) for part in first["loc"][1:]]
            if len(loc) > 1 and loc[0] == "opponent":
                del loc[1]  # the opponent's ``kind`` tag, added by the nested discriminator
            field = ".".join(loc) or None
            error = errors.BadMessage(f"{kind}: {field or 'message'}: {first['msg']}",
                                      field=field)
    if isinstance(ref, str | int) and not isinstance(ref, bool):
        error.ref = ref
    raise error


def encode(message: BaseModel) -> str:
    """One server message as the JSON text of a frame (nulls kept: fields are always there)."""
    return message.model_dump_json()


def error_message(exc: errors.ProtocolError, ref: str | int | None = None,
                  room: str | None = None) -> Error:
    """The ``error`` message telling the client about ``exc``."""
    return Error(code=exc.code, message=exc.message, ref=ref, room=room,  # type: ignore[arg-type]
                 detail=exc.detail)


CLIENT_MESSAGES: tuple[type[BaseModel], ...] = (
    Hello, ListRooms, CreateRoom, *ROOM_COMMANDS, ListHistory, GetGame, RequestReview,
    Analyse, GetStats, Ping, *CHALLENGE_CLIENT_MESSAGES, RegisterBot, *ADMIN_CLIENT_MESSAGES,
    *ACCOUNT_MESSAGES, *RATING_MESSAGES, *TOURNAMENT_MESSAGES, *LADDER_MESSAGES, *CHAT_MESSAGES)
"""Every message a client may send, one class each (``ClientMessage`` is their union)."""

_CLIENT_TYPES = frozenset(m.model_fields["type"].default for m in CLIENT_MESSAGES)


def board_text(cells: Sequence[int | None]) -> str:
    """Cells (owner seat or None, row by row from the top) as one character each: '-' empty,
    'X' seat 0, 'O' seat 1 -- how ``boards`` travel (Othello: 64 characters a ply)."""
    return "".join("-" if c is None else "X" if c == 0 else "O" for c in cells)


def json_schema() -> dict[str, Any]:
    """One JSON Schema document describing both directions of the protocol."""
    client = CLIENT.json_schema(ref_template="#/$defs/{model}")
    server = SERVER.json_schema(ref_template="#/$defs/{model}", mode="serialization")
    defs: dict[str, Any] = {}
    for part in (client, server):
        defs.update(part.pop("$defs", {}))
    defs["ClientMessage"] = client
    defs["ServerMessage"] = server
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://discus.invalid/protocol.schema.json",
        "title": f"Discus websocket protocol, version {PROTOCOL_VERSION}",
        "description": "One JSON object per text frame on /ws. See docs/PROTOCOL.md.",
        "protocol_version": PROTOCOL_VERSION,
        "oneOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the schema file, or with ``--check`` report whether it is up to date."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = schema_text()
    if "--check" in args:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH.name} is out of date: run python -m server.protocol")
            return 1
        return 0
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0

