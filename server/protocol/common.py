"""What every message of the protocol stands on: its version, the base models (unknown fields
refused), the room ids and seats many areas name, the public view of a player, and ``error``,
the answer any request may get instead of its own."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from server import errors

__all__ = [
    "PROTOCOL_VERSION", "RoomId", "Seat", "ErrorCode", "PlayerView", "Error", "error_message",
]


PROTOCOL_VERSION = 1
"""Bumped on any change an existing client could trip over; ``hello.version`` must equal it."""

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
    "engine_help_refused",
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
    "too_many_tournaments",
    "silenced",
    "chat_closed",
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


class PlayerView(_Message):
    id: str = Field(description="Public player id (never the resume token).")
    name: str
    bot: bool = Field(default=False, description="A bot account (it says hello with a token).")


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


def error_message(exc: errors.ProtocolError, ref: str | int | None = None,
                  room: str | None = None) -> Error:
    """The ``error`` message telling the client about ``exc``."""
    return Error(code=exc.code, message=exc.message, ref=ref, room=room,  # type: ignore[arg-type]
                 detail=exc.detail)
