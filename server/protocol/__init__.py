"""The websocket protocol: every message either side may send, as pydantic models (for now
all in ``server.protocol.play``, on its way to one module per area). This package is their
single entry point: ``from server import protocol as p`` gives every one of them."""

from server.protocol.play import *  # noqa: F403
from server.protocol.play import _CLIENT_TYPES as _CLIENT_TYPES
from server.protocol.play import _ClientMessage as _ClientMessage
from server.protocol.play import _Message as _Message
