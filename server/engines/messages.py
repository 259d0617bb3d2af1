"""Every message between the server and the processes that find its AI moves, and the one
encoding they all travel in.

Named ``messages`` (not ``jobs``): a job is one of them; the others are what comes back (a
step of progress, the answer, a failure) and the few words a pool and its engine processes
exchange about their own state (ready, stop, a low-priority task and its result).

Each message is a frozen dataclass with a ``kind``; ``encode`` turns any of them into bytes
(JSON, with the ``kind`` in it) and ``decode`` turns bytes back into the message, checked
against the kinds the reader expects. The local pool's pipe (``server.engines.local`` and
``server.engines.engine_process``) and the Redis stream (``server.engines.queued`` and
``server.engines.remote_worker``) carry these same bytes, so a job, a step of progress and an
answer look alike on both, and a test compares them directly.

What travels where:

- to an engine process, on its pipe: ``Think``, ``RunTask``, ``GiveBack``, ``Stop``;
- from an engine process: ``Ready``, and for a job ``Thinking``, ``Answered`` or ``Failed``;
  for a task ``TaskDone``, ``TaskRaised`` or ``TaskGivenBack``;
- on the Redis job stream: ``Posted``; on a node's reply stream: ``Started`` (a worker began),
  then ``Thinking``, ``Answered`` or ``Failed``, exactly as from a local engine process;
- under a live worker's key: ``WorkerAlive``.

A low-priority task's arguments and result are whatever its function takes and returns (a
review, say), so they travel pickled inside the JSON. Tasks only ever cross the pipe between
a server and the engine processes it started itself; ``decode`` refuses them from anywhere a
caller did not name, so nothing read from Redis is ever unpickled.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import ai
from ai.levels import Level

# --- what a job, its progress and its answer say ------------------------------------------


@dataclass(frozen=True)
class AiJob:
    """Find a move for the position reached by ``moves`` from the start of ``game``."""

    game: str
    moves: tuple[int, ...]
    level: Level
    seed: int


@dataclass(frozen=True)
class CacheCounts:
    """What one job's position cache lookup counted (``COUNTED`` names the fields)."""

    lookups: int = 0
    hot_hits: int = 0
    durable_hits: int = 0
    misses: int = 0

    def as_dict(self) -> dict[str, int]:
        # Not ``dataclasses.asdict``: its deep copy costs tens of microseconds per answer.
        return {"lookups": self.lookups, "hot_hits": self.hot_hits,
                "durable_hits": self.durable_hits, "misses": self.misses}


COUNTED = tuple(f.name for f in dataclasses.fields(CacheCounts))
"""The position cache counters every answer carries and pools sum in their stats."""


@dataclass(frozen=True)
class AiAnswer:
    """The move to play. ``fallback`` is true when ``quick_move`` made it (no search)."""

    move: int
    depth: int | None
    score: int | None
    nodes: int | None
    seconds: float
    fallback: bool = False
    cached: bool = False
    """The move came from the position cache; no search ran."""
    exact: bool = False
    """``score`` is proven (the search's last iteration was exact)."""
    book: bool = False
    """The move is the opening book's: no search ran (its depth is the book's)."""
    cache: CacheCounts = field(default_factory=CacheCounts)
    """What the job's position cache lookup counted (nothing when there is no cache)."""
    cpu: float = 0.0
    """CPU seconds the engine process spent on the job (what the move cost a worker core;
    ``seconds`` is its wall time); 0 for a fallback made outside an engine process."""


@dataclass(frozen=True)
class Progress:
    """One finished iteration of a search under way, as the room shows it."""

    depth: int
    score: int
    nodes: int
    seconds: float
    exact: bool


def win_in(game: str, ply: int, score: int, exact: bool) -> int | None:
    """A search's proven result as the ``ai_thinking`` message's ``win_in``: the game's
    engine reads it (``ai.win_in``); None when nothing is proven or the game knows no
    length."""
    return ai.win_in(game, ply, score, exact)


# --- the messages ------------------------------------------------------------------------


@dataclass(frozen=True)
class Think:
    """To an engine process: search ``job``; reply ``Thinking``, then ``Answered`` or
    ``Failed``, each with ``job_id``."""

    kind: ClassVar[str] = "think"
    job_id: str
    job: AiJob


@dataclass(frozen=True)
class Posted:
    """On the Redis job stream: ``job`` from ``node``, whose replies go to that node's
    stream. ``start_by`` (wall clock): a worker that reads it later drops it, since the node
    has played its quick move by then (``QueuedPool.max_queue_wait``)."""

    kind: ClassVar[str] = "posted"
    job_id: str
    node: str
    job: AiJob
    start_by: float


@dataclass(frozen=True)
class Started:
    """From a ``discus worker``: it began searching (``at``, its wall clock); the node's
    deadline for the answer runs from here."""

    kind: ClassVar[str] = "started"
    job_id: str
    at: float


@dataclass(frozen=True)
class Thinking:
    """A step of a search under way (coalesced: at most one each ``PROGRESS_EVERY``)."""

    kind: ClassVar[str] = "thinking"
    job_id: str
    progress: Progress


@dataclass(frozen=True)
class Answered:
    """The job's move."""

    kind: ClassVar[str] = "answered"
    job_id: str
    answer: AiAnswer


@dataclass(frozen=True)
class Failed:
    """The job raised where it ran; the asking pool plays its quick move instead."""

    kind: ClassVar[str] = "failed"
    job_id: str
    error: str


@dataclass(frozen=True)
class Ready:
    """From an engine process: warmed up in ``seconds``; no engine for ``missing`` games."""

    kind: ClassVar[str] = "ready"
    seconds: float
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Stop:
    """To an engine process: write what the cache buffered and exit."""

    kind: ClassVar[str] = "stop"


@dataclass(frozen=True)
class RunTask:
    """To an engine process: run ``path`` (``module:function``) on ``args`` at low
    priority; reply ``TaskDone``, ``TaskRaised`` or ``TaskGivenBack``."""

    kind: ClassVar[str] = "run_task"
    task_id: str
    path: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class GiveBack:
    """To an engine process running task ``task_id``: stop it, a move needs the process."""

    kind: ClassVar[str] = "give_back"
    task_id: str


@dataclass(frozen=True)
class TaskDone:
    kind: ClassVar[str] = "task_done"
    task_id: str
    result: Any


@dataclass(frozen=True)
class TaskRaised:
    kind: ClassVar[str] = "task_raised"
    task_id: str
    error: str


@dataclass(frozen=True)
class TaskGivenBack:
    """The task stopped unfinished (``GiveBack``); the pool queues it again."""

    kind: ClassVar[str] = "task_given_back"
    task_id: str


@dataclass(frozen=True)
class WorkerAlive:
    """What a live ``discus worker`` says of itself (under its key, renewed every second)."""

    kind: ClassVar[str] = "worker_alive"
    name: str
    processes: int
    busy: int
    jobs: int
    restarts: int
    cache: CacheCounts


Message = (Think | Posted | Started | Thinking | Answered | Failed | Ready | Stop | RunTask
           | GiveBack | TaskDone | TaskRaised | TaskGivenBack | WorkerAlive)

TO_ENGINE: tuple[type[Message], ...] = (Think, RunTask, GiveBack, Stop)
"""What an engine process reads from its pipe."""
FROM_ENGINE: tuple[type[Message], ...] = (Ready, Thinking, Answered, Failed, TaskDone,
                                          TaskRaised, TaskGivenBack)
"""What a local pool reads from an engine process's pipe."""
REPLIES: tuple[type[Message], ...] = (Started, Thinking, Answered, Failed)
"""What a node reads from its reply stream: no task, so nothing pickled."""


# --- the one encoding ----------------------------------------------------------------------
# Each dataclass gets its two converters built once, from its type hints, at import: a
# message is encoded and decoded per job and per step of progress, in the server's event
# loop, so these must cost a few microseconds, not a walk over ``dataclasses.fields``.


def encode(message: Message) -> bytes:
    """``message`` as bytes for a pipe or a stream entry."""
    plain = {"kind": message.kind, **_CODECS[type(message)][0](message)}
    return _JSON.encode(plain).encode()


def decode(data: bytes, *expected: type[Message]) -> Message:
    """The message in ``data``, which must be of one of the ``expected`` types; anything
    else (another kind, a missing, unknown or malformed field) raises ``ValueError``."""
    try:
        raw = json.loads(data)
        kind = raw.pop("kind")
        cls = _BY_KIND[kind]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an AI message: {data[:80]!r}") from exc
    if cls not in expected:
        raise ValueError(f"an AI message of kind {kind!r} was not expected here")
    try:
        message: Message = _CODECS[cls][1](raw)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"a malformed AI message of kind {kind!r}: {exc}") from exc
    return message


Convert = Callable[[Any], Any]

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Made once: ``json.dumps`` with any option builds a new encoder at every call."""


def _pickle(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, pickle.HIGHEST_PROTOCOL)).decode()


def _unpickle(raw: str) -> Any:
    return pickle.loads(base64.b64decode(raw))


def _opaque(hint: Any) -> bool:
    """A task's own values, typed ``Any``: the encoding cannot know them, so it pickles."""
    return hint is Any or (typing.get_origin(hint) is tuple
                           and typing.get_args(hint) == (Any, ...))


def _codec(hint: Any) -> tuple[Convert | None, Convert | None]:
    """How a value of type ``hint`` becomes JSON and comes back (None: as it is; JSON writes
    a tuple as a list by itself)."""
    if _opaque(hint):
        return _pickle, _unpickle
    if hint is Level:
        return Level.to_dict, Level.from_dict
    if dataclasses.is_dataclass(hint):
        return _dataclass_codec(hint)  # type: ignore[arg-type]
    if typing.get_origin(hint) is tuple:
        return None, tuple
    if hint is float:
        return None, float  # JSON writes 2.0 as 2.0, but a hand-made entry may say 2
    if hint in (int, str, bool) or isinstance(hint, types.UnionType):
        return None, None
    raise TypeError(f"no encoding for {hint!r}")


def _dataclass_codec(cls: type) -> tuple[Convert, Convert]:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    codecs = {name: _codec(hints[name]) for name in names}
    as_is = [name for name in names if codecs[name][0] is None]
    to_plain = [(name, to) for name, (to, _) in codecs.items() if to is not None]
    from_plain = [(name, back) for name, (_, back) in codecs.items() if back is not None]

    def plain(value: Any) -> dict[str, Any]:
        out = {name: getattr(value, name) for name in as_is}
        for name, to in to_plain:
            out[name] = to(getattr(value, name))
        return out

    def build(raw: dict[str, Any]) -> Any:
        for name, back in from_plain:
            if name in raw:
                raw[name] = back(raw[name])
        return cls(**raw)

    return plain, build


_BY_KIND: dict[str, type[Message]] = {cls.kind: cls for cls in typing.get_args(Message)}
_CODECS: dict[type, tuple[Convert, Convert]] = {cls: _dataclass_codec(cls)
                                                for cls in _BY_KIND.values()}
