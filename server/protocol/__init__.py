"""The websocket protocol: every message either side may send, as pydantic models.

One JSON object per text frame. Each object has a ``type``; client and server messages are
each a discriminated union on it, so a frame parses to exactly one model or to one error
(``server.errors``). The browser page and bots use exactly these messages.

The messages live by area, one module each: ``common`` (what every message stands on, and
``error``), ``connection`` (hello, welcome, ping), ``play`` (rooms and their games),
``reviews``, ``chat``, ``bots``, ``stats``, ``accounts``, ``ratings``, ``challenges``,
``tournaments``, ``ladder`` and ``admin``; ``wire`` puts them together into the two unions,
parses and encodes frames and writes the schema. This package is their single entry point:
``from server import protocol as p`` gives every message and name of every area.

``python -m server.protocol`` writes ``docs/protocol.schema.json`` from these models;
``python -m server.protocol --check`` exits non-zero when the checked-in file differs.
"""

from server.protocol.accounts import *  # noqa: F403
from server.protocol.admin import *  # noqa: F403
from server.protocol.bots import *  # noqa: F403
from server.protocol.challenges import *  # noqa: F403
from server.protocol.chat import *  # noqa: F403
from server.protocol.common import *  # noqa: F403
from server.protocol.common import _ClientMessage as _ClientMessage
from server.protocol.common import _Message as _Message
from server.protocol.connection import *  # noqa: F403
from server.protocol.ladder import *  # noqa: F403
from server.protocol.play import *  # noqa: F403
from server.protocol.ratings import *  # noqa: F403
from server.protocol.reviews import *  # noqa: F403
from server.protocol.stats import *  # noqa: F403
from server.protocol.tournaments import *  # noqa: F403
from server.protocol.wire import *  # noqa: F403
from server.protocol.wire import _CLIENT_TYPES as _CLIENT_TYPES
