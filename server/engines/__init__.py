"""The AI pool: how the server gets its AI moves, from engine processes of its own or from
``discus worker`` processes through Redis. Import from here; the modules behind it:

- ``messages``: every message between the server and those processes (``AiJob``,
  ``AiAnswer``, ``Progress``, ...) and the one encoding the pipe and Redis share;
- ``pool``: the ``Pool`` interface both kinds implement, ``PoolStats``, ``CacheSettings``;
- ``local``: ``AiPool``, engine processes on this machine (the parent side);
- ``fair_queue``: its moves waiting for a free process, taken in turn across rooms, each told
  its place and estimated wait (``QueueWait``);
- ``low_priority``: its tasks and background tasks (reviews, analyses, idle proofs);
- ``engine_process``: what runs inside one of them;
- ``queued``: ``QueuedPool``, a node's jobs queued on Redis for ``discus worker``;
- ``remote_worker``: ``discus worker`` itself, taking those jobs on any machine;
- ``stream``: the Redis streams both of those share;
- ``fallback``: the quick move every pool plays when no engine answers in time.
"""

from __future__ import annotations

from server.engines.fair_queue import QueueWait
from server.engines.fallback import quick_move, quick_move_off_loop
from server.engines.local import AiPool
from server.engines.low_priority import TaskFailed
from server.engines.messages import COUNTED, AiAnswer, AiJob, CacheCounts, Progress, win_in
from server.engines.pool import CacheSettings, Pool, PoolStats
from server.engines.queued import QueuedPool

__all__ = [
    "COUNTED",
    "AiAnswer",
    "AiJob",
    "AiPool",
    "CacheCounts",
    "CacheSettings",
    "Pool",
    "PoolStats",
    "Progress",
    "QueueWait",
    "QueuedPool",
    "TaskFailed",
    "quick_move",
    "quick_move_off_loop",
    "win_in",
]
