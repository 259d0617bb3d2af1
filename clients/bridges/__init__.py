"""Engines from elsewhere as Discus bots: ``discus bot --engine CMD --protocol P``.

One module per protocol, pure framing (``nboard``: NTest, Edax; ``gtp``: Egaroucid for
Console; ``columns``: Discus's own line protocol for Connect Four, which Pascal Pons'
solver speaks with ``-a``), the process keeper (``keeper``) and the bridge between them and
the bot (``bridge``). ``bridge_from`` is the way in.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from clients.bridges.bridge import MARGIN_MS, MOVE_SECONDS, EngineBridge
from clients.bridges.columns import Columns
from clients.bridges.framing import Dialect, EngineId
from clients.bridges.gtp import Gtp
from clients.bridges.nboard import NBoard

__all__ = ["PROTOCOLS", "EngineBridge", "EngineId", "bridge_from"]

PROTOCOLS = ("nboard", "gtp", "columns")


def bridge_from(command: str, protocol: str, *, cwd: Path | None = None, depth: int = 8,
                margin_ms: int = MARGIN_MS, move_seconds: float = MOVE_SECONDS,
                name: str | None = None, env: dict[str, str] | None = None) -> EngineBridge:
    """A bridge to the engine ``command`` speaking ``protocol``; ``ValueError`` for an
    unknown protocol. ``depth``: NBoard's ``set depth``; ``name``: what a ``columns``
    engine is called (default: its program's file name)."""
    dialect: Callable[[], Dialect]
    if protocol == "nboard":
        dialect = lambda: NBoard(depth)  # noqa: E731
    elif protocol == "gtp":
        dialect = Gtp
    elif protocol == "columns":
        called = name or program_name(command)
        dialect = lambda: Columns(called)  # noqa: E731
    else:
        raise ValueError(f"unknown engine protocol {protocol!r}: use one of "
                         f"{', '.join(PROTOCOLS)}")
    return EngineBridge(command, dialect, cwd=cwd, env=env, margin_ms=margin_ms,
                        move_seconds=move_seconds)


def program_name(command: str) -> str:
    """The engine's file name in its command line, past an interpreter (``python x.py``)."""
    words = [w for w in shlex.split(command) if not w.startswith("-")]
    if len(words) > 1 and Path(words[0]).name.startswith(("python", "pypy", "node")):
        words = words[1:]
    return Path(words[0]).stem if words else "engine"
