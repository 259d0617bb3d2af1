"""One exception class per kind of failure a client can cause, each with its protocol code.

Every class here maps one-to-one to an ``error`` message ``code`` (``server.protocol.ErrorCode``
lists the same codes; a test keeps the two in step). The room logic and the message parser
raise these *before* changing anything, so a client that gets an error knows nothing happened.
``ProtocolError.detail`` carries machine-readable specifics (which field, which ply was
expected, when to retry) and ``message`` a sentence for a person.
"""

from __future__ import annotations

import math
from typing import ClassVar

Detail = dict[str, str | int | float | bool | None]


def try_again_in(seconds: float) -> str:
    """When to try again, in words a person reads at a glance: seconds under a minute and a
    half, then minutes (rounded up), then hours and minutes -- never a vague "a little" for
    an hour's wait. ``detail.retry_after`` carries the exact seconds beside it."""
    left = max(1, math.ceil(seconds))
    if left < 90:
        return f"try again in {left} s"
    minutes = math.ceil(left / 60)
    if minutes < 90:
        return f"try again in {minutes} minutes"
    return f"try again in {minutes // 60} h {minutes % 60:02d} min"


class ProtocolError(Exception):
    """Base of every error a client is told about; ``code`` is stable, ``message`` is prose."""

    code: ClassVar[str] = "internal_error"
    close_code: int | None = None
    """Set when the server closes the connection (with this code) after sending the error."""

    def __init__(self, message: str, **detail: str | int | float | bool | None) -> None:
        super().__init__(message)
        self.message = message
        self.detail: Detail = detail
        self.ref: str | int | None = None
        """The ``id`` of the request, when known even though the request did not parse."""


class InternalError(ProtocolError):
    """The server failed; the request changed nothing. Not the client's fault."""

    code = "internal_error"


# --- the message itself -------------------------------------------------------------------


class BadJson(ProtocolError):
    """The frame is not valid JSON text (or is a binary frame)."""

    code = "bad_json"


class UnknownType(ProtocolError):
    """A JSON object whose ``type`` is missing or names no client message."""

    code = "unknown_type"


class BadMessage(ProtocolError):
    """A known message type with missing, extra or ill-typed fields; ``detail.field`` says which."""

    code = "bad_message"


class UnsupportedVersion(ProtocolError):
    """``hello.version`` is a protocol version this server does not speak."""

    code = "unsupported_version"
    close_code = 1008


class HelloRequired(ProtocolError):
    """Anything but ``hello`` before the first ``hello``, or a second ``hello``."""

    code = "hello_required"


class BadResumeToken(ProtocolError):
    """``hello.resume`` names no player this server knows; send hello without it."""

    code = "bad_resume_token"


class RateLimited(ProtocolError):
    """Too many messages too fast; ``detail.retry_after`` is the seconds to wait."""

    code = "rate_limited"


class Busy(ProtocolError):
    """The server's share of some costly work (password hashing, analyses) is taken for now:
    nothing was done; ``detail.retry_after`` is the seconds to wait, ``detail.limit`` which
    share."""

    code = "busy"


class MessageTooBig(ProtocolError):
    """A frame larger than the published ``max_message_bytes``; the connection is closed."""

    code = "message_too_big"


# --- rooms ---------------------------------------------------------------------------------


class UnknownGame(ProtocolError):
    """``create_room.game`` names no game."""

    code = "unknown_game"


class UnknownLevel(ProtocolError):
    """``create_room.opponent.level`` names no AI level of that game."""

    code = "unknown_level"


class UnknownTimeControl(ProtocolError):
    """``create_room.time_control`` or ``challenge.time_control`` names no time control this
    server offers."""

    code = "unknown_time_control"


class UnknownRoom(ProtocolError):
    """No room with that id (it never existed, or it was closed)."""

    code = "unknown_room"


class RoomFull(ProtocolError):
    """Both seats are taken; spectate instead."""

    code = "room_full"


class AlreadySeated(ProtocolError):
    """The player already holds a seat in this room."""

    code = "already_seated"


class TooManyRooms(ProtocolError):
    """The player already sits in the published maximum number of unfinished rooms."""

    code = "too_many_rooms"


class NotSeated(ProtocolError):
    """Only a player seated in the room may do this (spectators may only watch)."""

    code = "not_seated"


class NotInRoom(ProtocolError):
    """The player neither sits in nor watches this room."""

    code = "not_in_room"


# --- moves and game flow -------------------------------------------------------------------


class NotYourTurn(ProtocolError):
    """A move from the seat that is not to move (the opponent or the AI is to move)."""

    code = "not_your_turn"


class StalePly(ProtocolError):
    """``move.ply`` is not the room's current ply: the move was repeated or is out of date.

    ``detail.expected`` is the current ply; the client should resync from ``room_state``.
    """

    code = "stale_ply"


class InvalidNotation(ProtocolError):
    """The move text is not a move of this game (``"4"``, ``"f5"``, ``"pass"``)."""

    code = "invalid_notation"


class IllegalMove(ProtocolError):
    """A well-formed move the rules forbid in this position."""

    code = "illegal_move"


class GameNotStarted(ProtocolError):
    """The room is still waiting for its second player."""

    code = "game_not_started"


class GameFinished(ProtocolError):
    """The game in this room is over; only a rematch or leaving is possible."""

    code = "game_finished"


class GameNotFinished(ProtocolError):
    """A rematch was offered or accepted while the game is still being played."""

    code = "game_not_finished"


class NoRematchOffer(ProtocolError):
    """``accept_rematch`` with no standing offer from the other seat."""

    code = "no_rematch_offer"


class CannotTakeBack(ProtocolError):
    """``take_back`` in a game against a person, or before the player has moved."""

    code = "cannot_take_back"


class CannotOfferDraw(ProtocolError):
    """``offer_draw`` in a game against the computer (it plays every game out), while one's
    own offer stands, or again after a decline before a move was played."""

    code = "cannot_offer_draw"


class NoDrawOffer(ProtocolError):
    """``answer_draw`` with no standing draw offer from the other seat."""

    code = "no_draw_offer"


class CannotClaim(ProtocolError):
    """``claim`` while the opponent is connected or still inside the grace period.

    ``detail.retry_after`` is the seconds left in the grace period, when there is one.
    """

    code = "cannot_claim"


# --- history ----------------------------------------------------------------------------------


class UnknownGameId(ProtocolError):
    """``get_game`` (or a ``/games/<id>`` download) names no stored game."""

    code = "unknown_game_id"


class EngineHelpRefused(ProtocolError):
    """An ``analyse`` or ``request_review`` would value a position that stands, or stood a
    few plies ago, or is one move from standing, on the board of a live rated, tournament or
    ladder game (``server.reviews.live_positions``): the engine helps nobody in such a game.
    ``detail.retry_after`` is a hint: the position is free again once that game moved on
    from it or ended."""

    code = "engine_help_refused"


# --- admin ------------------------------------------------------------------------------------


class Forbidden(ProtocolError):
    """An admin message on a connection that has not logged in as an admin
    (``admin_login``); the engine's evaluation asked for in a game that would be rated."""

    code = "forbidden"


class BadAdminToken(ProtocolError):
    """``admin_login.token`` is unknown or revoked (or the server keeps no database, so it
    has no admin accounts)."""

    code = "bad_admin_token"


class InvalidLevel(ProtocolError):
    """A level edit that would make an impossible level; nothing changed. ``detail`` maps
    each offending field to what is wrong with it."""

    code = "invalid_level"


class CalibrationRunning(ProtocolError):
    """A calibration is already running on this server; wait for its end."""

    code = "calibration_running"


# --- bots and challenges -----------------------------------------------------------------------


class BadToken(ProtocolError):
    """``hello.token`` is no bot token of this server (or the server keeps no bot accounts);
    the connection is closed."""

    code = "bad_token"
    close_code = 1008


class RevokedToken(ProtocolError):
    """``hello.token`` was revoked (``discus bots revoke``); the connection is closed."""

    code = "revoked_token"
    close_code = 1008


class BadBotName(ProtocolError):
    """``admin_create_bot.name`` or ``register_bot.name`` is empty, too long, not printable,
    or a live bot's."""

    code = "bad_bot_name"


class UnknownBot(ProtocolError):
    """``admin_revoke_bot.bot`` names no live bot (by name, token id or player id)."""

    code = "unknown_bot"


class LimitExceeded(ProtocolError):
    """A published bot limit refused the request; ``detail`` says which (``limit``), its
    value (``allowed``) and when to retry (``retry_after`` seconds, null: once a game ends).
    Refused for ``connections_per_token``, the new connection is closed (1008)."""

    code = "limit_exceeded"


class RegistrationDisabled(ProtocolError):
    """``register_bot`` on a server that does not let bots register themselves (the default;
    ``discus serve --bot-registration`` enables it) or keeps no database; nothing was made.
    Ask the server's admin for a bot account instead."""

    code = "registration_disabled"


class UnknownPlayer(ProtocolError):
    """``challenge.player`` names nobody (by id, bot name, or the name of one player online)."""

    code = "unknown_player"


class UnknownChallenge(ProtocolError):
    """No standing challenge with that id addressed to you (accepted, declined or expired)."""

    code = "unknown_challenge"


# --- people's accounts (``server.people.accounts``) ---------------------------------------


class WrongNameOrPassword(ProtocolError):
    """``sign_in`` failed. Deliberately the same error whether the name is unknown or the
    password wrong, so nobody learns which names have accounts by guessing."""

    code = "wrong_name_or_password"


class BadAccountName(ProtocolError):
    """A ``sign_up`` name breaks the rules (``detail.rule``), or is taken: by another
    account in any letter case, or by a bot or admin (``detail.rule`` ``taken``)."""

    code = "bad_account_name"


class BadPassword(ProtocolError):
    """A ``sign_up`` password too short or too long (``detail.min``, ``detail.max``)."""

    code = "bad_password"


class NotAGuest(ProtocolError):
    """``sign_up`` from a connection that is an account, a bot or an admin already."""

    code = "not_a_guest"


class NotSignedIn(ProtocolError):
    """``sign_out`` or ``change_password`` from a connection that did not come in with a
    session token."""

    code = "not_signed_in"


# --- tournaments --------------------------------------------------------------------------


class UnknownTournament(ProtocolError):
    """No tournament has this id (never made, or deleted)."""

    code = "unknown_tournament"


class NotEntered(ProtocolError):
    """A tournament command (withdraw, pause, berserk) from a player who is not entered in
    it, or about a game of the tournament the player is not playing."""

    code = "not_entered"


class TournamentClosed(ProtocolError):
    """The tournament no longer takes this command: it is over, or (rounds) its first round
    has been paired, so entries are closed. ``detail.reason`` says which."""

    code = "tournament_closed"


class CannotBerserk(ProtocolError):
    """``berserk`` refused: not an arena's game, an arena that does not allow it, after
    one's first move, a second time, or a game that is over. ``detail.reason`` says which."""

    code = "cannot_berserk"


class EntryRefused(ProtocolError):
    """The arena's entry conditions keep this player out: ``detail.condition`` names the one
    that failed (``min_rating``, ``max_rating``, ``min_games``), ``detail.required`` its
    value and ``detail.yours`` the player's."""

    code = "entry_refused"


class UnknownSchedule(ProtocolError):
    """No arena schedule has this id (never made, or deleted)."""

    code = "unknown_schedule"


class TooManyTournaments(ProtocolError):
    """A new tournament refused: its maker's account, or its address, already has the
    published number upcoming or running (``detail.limit`` ``per_account`` or
    ``per_address``, ``detail.allowed`` the number; docs/SECURITY.md). Nothing was made."""

    code = "too_many_tournaments"


# --- chat ----------------------------------------------------------------------------------


class Silenced(ProtocolError):
    """An admin silenced this player's chat for a time; ``detail.until`` says until when
    (Unix seconds)."""

    code = "silenced"


class ChatClosed(ProtocolError):
    """A finished game's chat takes no more lines from you: only its players may write, and
    only for ``limits.chat.after_game_seconds`` after its end."""

    code = "chat_closed"


class UnknownChatLine(ProtocolError):
    """``admin_delete_chat`` named a chat line there is not (or one already deleted)."""

    code = "unknown_chat_line"


ERRORS: tuple[type[ProtocolError], ...] = (
    InternalError,
    BadJson,
    UnknownType,
    BadMessage,
    UnsupportedVersion,
    HelloRequired,
    BadResumeToken,
    RateLimited,
    Busy,
    MessageTooBig,
    UnknownGame,
    UnknownLevel,
    UnknownTimeControl,
    UnknownRoom,
    RoomFull,
    AlreadySeated,
    TooManyRooms,
    NotSeated,
    NotInRoom,
    NotYourTurn,
    StalePly,
    InvalidNotation,
    IllegalMove,
    GameNotStarted,
    GameFinished,
    GameNotFinished,
    NoRematchOffer,
    CannotTakeBack,
    CannotOfferDraw,
    NoDrawOffer,
    CannotClaim,
    UnknownGameId,
    EngineHelpRefused,
    Forbidden,
    BadAdminToken,
    InvalidLevel,
    CalibrationRunning,
    BadToken,
    RevokedToken,
    BadBotName,
    UnknownBot,
    LimitExceeded,
    RegistrationDisabled,
    UnknownPlayer,
    UnknownChallenge,
    WrongNameOrPassword,
    BadAccountName,
    BadPassword,
    NotAGuest,
    NotSignedIn,
    UnknownTournament,
    NotEntered,
    TournamentClosed,
    CannotBerserk,
    EntryRefused,
    UnknownSchedule,
    TooManyTournaments,
    Silenced,
    ChatClosed,
    UnknownChatLine,
)
"""Every concrete error class, in the order the protocol documentation lists them."""

CODES: tuple[str, ...] = tuple(e.code for e in ERRORS)
