"""``discus ladder export GAME --format csv|json``: the engine ladder's rating list as a
file, asked of a running server with ``get_ladder`` like any client (so on a cluster any
node answers: the message goes to the node running the ladder).

``export`` is pure (a ``ladder`` message in, text out); ``fetch`` is the websocket glue.
Each entrant: its rank, id, name, kind (``bot`` or ``level``), the engine a bot said plays
for it (name and version), ``rating`` with ``error`` (one standard error) and the bar
``low``..``high`` of two standard errors each side, ``games``, ``score`` (points) and
``percent``, ``anchored`` (a calibrated level pinning the scale) and ``active``.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from typing import Any

from websockets.asyncio.client import connect

from server import protocol as p

FORMATS = ("csv", "json")
COLUMNS = ("rank", "id", "name", "kind", "engine", "engine_version", "rating", "error", "low",
           "high", "games", "score", "percent", "anchored", "active")


def rows(ladder: p.LadderMessage) -> list[dict[str, Any]]:
    """The rating list as plain rows, best first (the unrated last), as ``get_ladder``
    orders it."""
    out: list[dict[str, Any]] = []
    for rank, e in enumerate(ladder.entrants, 1):
        bar = None if e.rating is None or e.error is None else 2 * e.error
        out.append({
            "rank": rank, "id": e.id, "name": e.name,
            "kind": "level" if e.level is not None else "bot",
            "engine": e.engine.name if e.engine else None,
            "engine_version": e.engine.version if e.engine else None,
            "rating": e.rating, "error": e.error,
            "low": None if bar is None or e.rating is None else e.rating - bar,
            "high": None if bar is None or e.rating is None else e.rating + bar,
            "games": e.games, "score": e.score,
            "percent": round(100 * e.score / e.games, 1) if e.games else None,
            "anchored": e.anchored, "active": e.active,
        })
    return out


def export(ladder: p.LadderMessage, fmt: str) -> str:
    """The rating list as ``csv`` (a header, then one line per entrant; empty cells for
    null) or ``json`` (the game, its clock, the games played and the rows)."""
    listed = rows(ladder)
    if fmt == "json":
        return json.dumps({"game": ladder.game, "time_control": ladder.time_control,
                           "played": ladder.played, "entrants": listed}, indent=2) + "\n"
    if fmt != "csv":
        raise ValueError(f"unknown format {fmt!r}: use csv or json")
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(listed)
    return out.getvalue()


async def fetch(url: str, game: str, timeout: float = 10.0) -> p.LadderMessage:
    """``game``'s ladder from the server at ``url`` (a guest's ``get_ladder``)."""
    async with connect(url, open_timeout=timeout, max_size=1 << 24) as ws:
        await ws.send(p.encode(p.Hello(version=p.PROTOCOL_VERSION, name="ladder-export")))
        await ws.send(p.encode(p.GetLadder(id="export", game=game)))
        while True:
            frame = await asyncio.wait_for(ws.recv(), timeout)
            raw = json.loads(frame)
            if raw.get("type") == "ladder":
                return p.LadderMessage.model_validate(raw)
            if raw.get("type") == "error":
                raise ValueError(f"the server refused: {raw.get('code')}: "
                                 f"{raw.get('message')}")


def main_export(url: str, game: str, fmt: str) -> int:
    """Print the export of ``game``'s ladder."""
    print(export(asyncio.run(fetch(url, game)), fmt), end="")
    return 0
