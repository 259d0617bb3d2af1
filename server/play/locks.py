"""One ``asyncio.Lock`` per room: every command on a room runs under it.

Its own module because two parts take it: the room runner around each command, and a
cluster node that holds a room's lock while it takes the room over, so commands arriving
meanwhile wait and then find the room running.
"""

from __future__ import annotations

import asyncio


class RoomLocks:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def __call__(self, room_id: str) -> asyncio.Lock:
        lock = self._locks.get(room_id)
        if lock is None:
            lock = self._locks[room_id] = asyncio.Lock()
        return lock

    def drop(self, room_id: str) -> None:
        """The room closed: its lock goes (a waiter still holds its own reference)."""
        self._locks.pop(room_id, None)

    def all(self) -> list[asyncio.Lock]:
        return list(self._locks.values())
