"""The protocol models, their parser and the checked-in schema agree with one another."""

from __future__ import annotations

import json
import typing

import pytest

from server import errors, protocol
from server.protocol import wire


def test_the_checked_in_schema_is_exactly_what_the_models_generate() -> None:
    checked_in = protocol.SCHEMA_PATH.read_text(encoding="utf-8")
    assert checked_in == protocol.schema_text(), "run: python -m server.protocol"


def test_the_schema_check_command_fails_on_a_stale_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: typing.Any
) -> None:
    stale = tmp_path / "protocol.schema.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(wire, "SCHEMA_PATH", stale)
    assert protocol.main(["--check"]) == 1
    assert protocol.main([]) == 0
    assert protocol.main(["--check"]) == 0


def test_every_error_class_has_its_own_code_and_the_protocol_lists_exactly_those() -> None:
    assert len(set(errors.CODES)) == len(errors.ERRORS)
    assert set(typing.get_args(protocol.ErrorCode)) == set(errors.CODES)
    concrete = {
        cls for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.ProtocolError)
        and cls is not errors.ProtocolError
    }
    assert concrete == set(errors.ERRORS)


def test_the_protocol_document_describes_every_message_and_error_code() -> None:
    doc = (protocol.SCHEMA_PATH.parent / "PROTOCOL.md").read_text(encoding="utf-8")
    schema = protocol.json_schema()
    for union in ("ClientMessage", "ServerMessage"):
        for ref in schema["$defs"][union]["discriminator"]["mapping"]:
            assert f"`{ref}`" in doc, f"PROTOCOL.md does not document {ref}"
    for code in errors.CODES:
        assert f"`{code}`" in doc, f"PROTOCOL.md does not document error {code}"


def test_a_well_formed_move_parses_to_the_move_model() -> None:
    message = protocol.parse_client('{"type": "move", "room": "ab12", "ply": 3, "move": "4"}')
    assert message == protocol.Move(room="ab12", ply=3, move="4")


def test_an_ai_opponent_needs_a_level_and_the_error_names_that_field() -> None:
    with pytest.raises(errors.BadMessage) as caught:
        protocol.parse_client(
            '{"type": "create_room", "game": "connect4", "opponent": {"kind": "ai"}}'
        )
    assert caught.value.detail["field"] == "opponent.level"


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        ("{not json", errors.BadJson),
        (b'{"type": "ping"}', errors.BadJson),
        ("[1, 2]", errors.BadJson),
        ('{"type": "teleport"}', errors.UnknownType),
        ('{"room": "x"}', errors.UnknownType),
        ('{"type": "move", "room": "x", "move": "4"}', errors.BadMessage),
        ('{"type": "move", "room": "x", "ply": -1, "move": "4"}', errors.BadMessage),
        ('{"type": "move", "room": "x", "ply": "one", "move": "4"}', errors.BadMessage),
        ('{"type": "ping", "colour": "red"}', errors.BadMessage),
        ('{"type": "hello"}', errors.BadMessage),
        ('{"type": "join_room", "room": ""}', errors.BadMessage),
    ],
)
def test_each_kind_of_bad_frame_raises_its_own_error(
    frame: str | bytes, error: type[errors.ProtocolError]
) -> None:
    with pytest.raises(error):
        protocol.parse_client(frame)


def test_an_error_message_carries_code_ref_and_detail_as_json() -> None:
    exc = errors.StalePly("the move is for ply 3 but the game is at ply 4", expected=4)
    frame = json.loads(protocol.encode(protocol.error_message(exc, ref=7, room="ab12")))
    assert frame == {
        "type": "error", "code": "stale_ply", "message": exc.message, "ref": 7,
        "room": "ab12", "detail": {"expected": 4},
    }


def test_every_server_message_round_trips_through_json() -> None:
    seats = [
        protocol.SeatView(seat=0, colour="Red", kind="human",
                          player=protocol.PlayerView(id="p1", name="Ann"), connected=True),
        protocol.SeatView(seat=1, colour="Yellow", kind="ai", level="easy", connected=True),
    ]
    message = protocol.RoomEvent(room="r", event="joined", seat=1, seats=seats, spectators=0)
    assert protocol.SERVER.validate_json(protocol.encode(message)) == message


def test_every_message_of_the_client_union_is_a_known_type() -> None:
    from typing import get_args

    union = get_args(get_args(protocol.ClientMessage)[0])
    in_union = {m.model_fields["type"].default for m in union}
    assert in_union == set(protocol._CLIENT_TYPES)
