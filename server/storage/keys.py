"""Every Redis key Discus uses, built here and nowhere else.

All keys start with a prefix (default ``discus``) so one Redis can serve several deployments
and each test can own (and delete) its own namespace. Cache keys always carry a TTL, so the
cache never grows without bound even on a Redis without ``maxmemory``; production Redis should
also run with ``maxmemory`` and ``maxmemory-policy volatile-lru`` or ``allkeys-lru`` (see
docker-compose.yml).
"""

from __future__ import annotations

import os

DEFAULT_PREFIX = os.environ.get("DISCUS_REDIS_PREFIX") or "discus"
"""``$DISCUS_REDIS_PREFIX``, else ``discus``: every process of one deployment (nodes, workers)
must share it; tests give each run its own."""
POSITION_TTL_SECONDS = 7 * 24 * 3600  # a week unused and a cached position may go


def position(prefix: str, game: str, canonical_key: str) -> str:
    """One cached search result (value: ``depth|score|bound|move|exact``)."""
    return f"{prefix}:pos:{game}:{canonical_key}"


def position_pattern(prefix: str) -> str:
    """Matches every cached position under ``prefix`` (for SCAN when clearing a namespace)."""
    return f"{prefix}:pos:*"


def cache_stats(prefix: str) -> str:
    """Hash of hit/miss counters summed over every process sharing the cache."""
    return f"{prefix}:cache:stats"


def levels_version(prefix: str) -> str:
    """The levels' version counter (an integer), mirrored from the database's after each
    edit, so a server checks it per AI move without touching the database."""
    return f"{prefix}:levels:version"


def levels_channel(prefix: str) -> str:
    """Pub/sub channel announcing a level edit (message: the new version number)."""
    return f"{prefix}:levels:changed"


AI_GROUP = "workers"
"""The consumer group every ``discus worker`` reads the AI job stream with."""


def ai_jobs(prefix: str) -> str:
    """Stream of AI jobs from every node (``server.engines.queued``), read by ``AI_GROUP``."""
    return f"{prefix}:ai:jobs"


def ai_replies(prefix: str, node: str) -> str:
    """Stream of one node's answers: ``started``, ``progress``, ``done`` or ``failed``."""
    return f"{prefix}:ai:replies:{node}"


def ai_started(prefix: str) -> str:
    """Hash: job stream entry id -> when (epoch seconds) a worker first started it, so a
    worker that claims a dead worker's job knows how much of its hard time is left."""
    return f"{prefix}:ai:started"


def ai_worker(prefix: str, name: str) -> str:
    """One live ``discus worker`` (JSON: processes, busy, jobs), with a short TTL it renews."""
    return f"{prefix}:ai:worker:{name}"


def idle_proving_lock(prefix: str, game: str) -> str:
    """Held by the ``discus worker`` proving a round of ``game``'s positions while idle
    (``server.engines.idle_proving``), so two workers never prove the same batch."""
    return f"{prefix}:ai:idle-proving:{game}"


def ai_worker_pattern(prefix: str) -> str:
    """Matches every live worker's key (for SCAN)."""
    return f"{prefix}:ai:worker:*"


def room_owner(prefix: str, room_id: str) -> str:
    """A room's lease (``server.cluster.leases``): ``"<node> <epoch>"``, with the lease's TTL."""
    return f"{prefix}:room:{room_id}:owner"


def room_epoch(prefix: str, room_id: str) -> str:
    """A room's epoch counter: one more at every owner (the store's fencing token)."""
    return f"{prefix}:room:{room_id}:epoch"


def cluster_rooms(prefix: str) -> str:
    """Hash of every live room: room id -> JSON ``{"game", "watchers"}``."""
    return f"{prefix}:rooms"


def open_rooms(prefix: str) -> str:
    """Hash of the rooms anyone may join, on any node: room id -> JSON summary."""
    return f"{prefix}:rooms:open"


def player_rooms(prefix: str, player_id: str) -> str:
    """Set of the rooms a player sits in or watches (closed ones are dropped when read)."""
    return f"{prefix}:player:{player_id}:rooms"


def player_nodes(prefix: str, player_id: str) -> str:
    """Set of the nodes a player is connected to."""
    return f"{prefix}:player:{player_id}:nodes"


def cluster_node(prefix: str, node: str) -> str:
    """A live node, with the lease's TTL, renewed with its leases."""
    return f"{prefix}:node:{node}"


def cluster_nodes(prefix: str) -> str:
    """Hash of every node that announced itself: node -> when it last did (epoch seconds);
    a node in it without its ``cluster_node`` key died, and its rooms are taken over."""
    return f"{prefix}:nodes"


def node_rooms(prefix: str, node: str) -> str:
    """Set of the rooms a node took a lease on (until it released or lost them)."""
    return f"{prefix}:node:{node}:rooms"


def cluster_inbox(prefix: str, node: str) -> str:
    """Stream of commands and answers for one node from the others."""
    return f"{prefix}:node:{node}:inbox"


def node_events(prefix: str, node: str) -> str:
    """Pub/sub channel of the room events for one node's connections:
    ``"<origin node>\n<player ids>\n<message>"``."""
    return f"{prefix}:node:{node}:events"


def node_redis_counts(prefix: str, node: str) -> str:
    """What one node asked of Redis since it started (JSON, ``server.cluster.counts.RedisCounts``),
    rewritten at each renewal and when it stops, kept an hour after."""
    return f"{prefix}:node:{node}:redis"


def node_redis_counts_pattern(prefix: str) -> str:
    """Matches every node's ``node_redis_counts`` (for SCAN)."""
    return f"{prefix}:node:*:redis"


def bot_connections(prefix: str, token_id: str) -> str:
    """Hash of a bot token's open connections on every node: ``"<node>/<id>"`` -> 1."""
    return f"{prefix}:bot:{token_id}:connections"


def bot_moves(prefix: str, bot_id: str) -> str:
    """A bot's move bucket shared by every node: ``tokens``, ``stamp`` (wall clock)."""
    return f"{prefix}:bot:{bot_id}:moves"


def challenges(prefix: str) -> str:
    """Hash of every standing challenge of a cluster: id -> JSON (``server.challenges.shared``)."""
    return f"{prefix}:challenges"


def sign_in_counts(prefix: str, key: str) -> str:
    """Sorted set of one sign-in limit's events on every node (failed passwords per name, per
    name and source, per source; sign-ups and admin logins per source): a unique member per
    event, scored by its wall-clock time (``server.people.shared_counts.SharedCounts``)."""
    return f"{prefix}:sign-in:{key}"


def live_position(prefix: str, game: str, mine: int, theirs: int) -> str:
    """Set of the rooms on whose live guarded game's board a position stands (or stood a few
    plies ago, or is one move from), any node's: the position as ``game``'s stones of the side
    to move and of the other side, in hex (``server.reviews.live_positions``). Each carries a
    TTL its room's node renews, so a dead node's positions lapse
    (``server.cluster.live_positions``)."""
    return f"{prefix}:live-position:{game}:{mine:x}:{theirs:x}"
