"""The protocol as one whole: the two discriminated unions on ``type`` that a frame parses
against (every client message, every server message), reading a client's frame and writing a
server's, and the JSON Schema written from the unions (``docs/protocol.schema.json``:
``python -m server.protocol`` writes it, ``--check`` exits non-zero when it differs)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from server import errors
from server.protocol.accounts import (
    ACCOUNT_MESSAGES,
    ChangePassword,
    PasswordChanged,
    SignedIn,
    SignedOut,
    SignIn,
    SignOut,
    SignUp,
)
from server.protocol.admin import (
    ADMIN_CLIENT_MESSAGES,
    AdminAudit,
    AdminCalibrationFailed,
    AdminCalibrationFinished,
    AdminCalibrationProgress,
    AdminCalibrations,
    AdminCalibrationStarted,
    AdminEditLevel,
    AdminGetStats,
    AdminLevelEdited,
    AdminLevels,
    AdminListAudit,
    AdminListCalibrations,
    AdminListLevels,
    AdminListRooms,
    AdminLogin,
    AdminRooms,
    AdminStartCalibration,
    AdminStats,
    AdminWelcome,
)
from server.protocol.bots import (
    AdminBotCreated,
    AdminBotRevoked,
    AdminBots,
    AdminCreateBot,
    AdminListBots,
    AdminRevokeBot,
    BotRegistered,
    RegisterBot,
)
from server.protocol.challenges import (
    CHALLENGE_CLIENT_MESSAGES,
    AcceptChallenge,
    Challenge,
    ChallengeDeclined,
    ChallengeOffer,
    ChallengeSent,
    DeclineChallenge,
)
from server.protocol.chat import (
    CHAT_MESSAGES,
    AdminDeleteChat,
    AdminSilenceChat,
    Chat,
    ChatDeleted,
    ChatHistory,
    ChatLine,
    ChatSilenced,
    GetChat,
)
from server.protocol.common import PROTOCOL_VERSION, Error
from server.protocol.connection import GamesChanged, Hello, Ping, Pong, Welcome
from server.protocol.ladder import (
    LADDER_MESSAGES,
    EnterLadder,
    GetLadder,
    LadderMessage,
    LeaveLadder,
)
from server.protocol.play import (
    ROOM_COMMANDS,
    AcceptRematch,
    AiThinking,
    AiWaiting,
    AnswerDraw,
    Claim,
    CreateRoom,
    GameOver,
    JoinRoom,
    Leave,
    ListRooms,
    Move,
    MoveMade,
    OfferDraw,
    OfferRematch,
    Resign,
    RoomEvent,
    Rooms,
    RoomState,
    Spectate,
    TakeBack,
)
from server.protocol.ratings import (
    RATING_MESSAGES,
    GetLeaderboard,
    GetProfile,
    Leaderboard,
    Profile,
    RatingChange,
)
from server.protocol.reviews import (
    Analyse,
    Analysis,
    GameRecordMessage,
    GetGame,
    History,
    ListHistory,
    RequestReview,
    ReviewMessage,
)
from server.protocol.stats import GetStats, Stats
from server.protocol.tournaments import (
    TOURNAMENT_MESSAGES,
    AdminCreateSchedule,
    AdminDeleteSchedule,
    AdminListSchedules,
    Berserk,
    CreateRoundTournament,
    CreateTournament,
    GetTournament,
    JoinTournament,
    ListTournaments,
    PauseTournament,
    RoundTournamentMessage,
    Schedules,
    StartTournament,
    TournamentMessage,
    Tournaments,
    UnwatchTournament,
    WithdrawTournament,
)

__all__ = [
    "SCHEMA_PATH", "ClientMessage", "ServerMessage", "CLIENT", "SERVER", "parse_client",
    "encode", "CLIENT_MESSAGES", "json_schema", "schema_text", "main",
]


SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"

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

ServerMessage = Annotated[
    Welcome
    | GamesChanged
    | RoomState
    | MoveMade
    | RoomEvent
    | AiThinking
    | AiWaiting
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
    try:
        unfit = _unfit(raw, ()) if _MAY_BE_UNFIT.search(data) else None
    except RecursionError:
        raise errors.BadJson("the frame's JSON is nested too deep") from None
    if unfit is not None:
        field, what = unfit
        refused = errors.BadMessage(f"{kind if isinstance(kind, str) else 'message'}: "
                                    f"{field or 'message'}: {what}", field=field)
        if field != "id" and isinstance(ref, str | int) and not isinstance(ref, bool):
            refused.ref = ref
        raise refused
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


INT64 = range(-(2**63), 2**63)
"""The integers a message may hold: what every store's BIGINT holds (Python's and JSON's
integers have no bound of their own)."""

_SURROGATE = re.compile("[\ud800-\udfff]")

_MAY_BE_UNFIT = re.compile("[\ud800-\udfff]|\\\\u[dD][89a-fA-F]|[0-9]{19}")
"""What a frame's text must hold for ``_unfit`` to find anything: a surrogate, a ``\\uD800``
to ``\\uDFFF`` escape, or a run of 19 digits (``2**63`` has 19). One scan of the text in C
spares the walk over the parsed frame for nearly every frame (a move, a ping)."""


def _unfit(value: Any, path: tuple[str, ...]) -> tuple[str | None, str] | None:
    """The first place in a parsed frame that no message may hold, and why: a string with a
    lone surrogate (JSON's ``"\\ud800"`` escape gives one; it is no character, and no answer
    or store could write it as UTF-8), or an integer past 64 bits (a store's BIGINT would
    overflow). Checked before any model sees the frame, so every field, ``id`` too, is
    covered, and nothing downstream ever meets either."""
    here = ".".join(path) or None
    if isinstance(value, str):
        return (here, "a lone surrogate (\\ud800-\\udfff) is not a character") \
            if _SURROGATE.search(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return None if value in INT64 else (here, "a number past 64-bit integers")
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return (here, "a field name with a lone surrogate (\\ud800-\\udfff)")
            found = _unfit(item, (*path, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unfit(item, (*path, str(index)))
            if found is not None:
                return found
    return None


def encode(message: BaseModel) -> str:
    """One server message as the JSON text of a frame (nulls kept: fields are always there)."""
    return message.model_dump_json()


CLIENT_MESSAGES: tuple[type[BaseModel], ...] = (
    Hello, ListRooms, CreateRoom, *ROOM_COMMANDS, ListHistory, GetGame, RequestReview,
    Analyse, GetStats, Ping, *CHALLENGE_CLIENT_MESSAGES, RegisterBot, *ADMIN_CLIENT_MESSAGES,
    *ACCOUNT_MESSAGES, *RATING_MESSAGES, *TOURNAMENT_MESSAGES, *LADDER_MESSAGES, *CHAT_MESSAGES)
"""Every message a client may send, one class each (``ClientMessage`` is their union)."""

_CLIENT_TYPES = frozenset(m.model_fields["type"].default for m in CLIENT_MESSAGES)


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
