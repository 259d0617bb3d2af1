"""Passes over every room or connection of a node, a chunk per turn of the event loop.

Why: a node with 10,000 players holds as many rooms and connections, and a housekeeping pass
over all of them in one callback held its loop for tens of milliseconds every few seconds;
every frame that arrived meanwhile waited it out (``bench.load``'s slowest
acknowledgements). A pass that lets the loop go between chunks costs the same CPU and holds
nobody up for more than a chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TypeVar

T = TypeVar("T")

CHUNK = 500
"""Items looked at in one turn of the loop (500 rooms: about 1.5 ms of a room sweep)."""


async def in_turns(items: Sequence[T]) -> AsyncIterator[Sequence[T]]:
    """``items`` ``CHUNK`` at a time, the loop let go between two chunks (so an item may have
    gone, a room closed or a connection dropped, by the time its chunk comes)."""
    for start in range(0, len(items), CHUNK):
        if start:
            await asyncio.sleep(0)
        yield items[start:start + CHUNK]
