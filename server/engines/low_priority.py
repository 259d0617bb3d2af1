"""The local pool's low-priority work: tasks (a game review, the analysis board) and
background tasks (the idle workers' proofs), which use engine processes only when no move
wants them (see ``server.engines.local`` for the rules). A mixin of ``AiPool``: the pool's
own state, this part's methods, kept apart so that the pool's moves read on their own.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.engines.fair_queue import FairQueue
from server.engines.messages import Message, RunTask

TASK_SECONDS = 600.0
"""Seconds a low-priority task may run on a process before the process is presumed stuck."""


@dataclass
class Task:
    id: str
    path: str
    args: tuple[Any, ...]
    future: asyncio.Future[Any]
    background: bool = False


class TaskFailed(RuntimeError):
    """A low-priority task raised in its worker, or its worker died or was stopped."""


class BackgroundYielded(TaskFailed):
    """A background task gave its worker back to a move or a task that came: not run
    again (its caller decides what to do next)."""



class _Slot(Protocol):
    """One engine process as this part needs it (``local._Worker``)."""

    ready: bool
    task: Task | None
    watchdog: asyncio.TimerHandle | None

    @property
    def job(self) -> object: ...

    def send(self, message: Message) -> None: ...


class LowPriority:
    """``AiPool``'s tasks and background tasks (a mixin: the pool holds the state)."""

    size: int
    _loop: asyncio.AbstractEventLoop | None
    _closing: bool
    _ids: itertools.count[int]
    _queue: FairQueue
    _tasks: collections.deque[Task]
    _background: collections.deque[Task]
    _workers: Sequence[_Slot]

    def _dispatch(self) -> None:
        raise NotImplementedError

    def _replace(self, worker: Any, why: str) -> None:
        raise NotImplementedError

    def _dispatch_tasks(self) -> None:
        """Give low-priority tasks to idle workers while no move waits and, after each, at
        least one ready worker is still idle: a live move never waits for a task to start."""
        assert self._loop is not None
        while self._tasks and self._tasks[0].future.done():
            self._tasks.popleft()
        while self._tasks and not self._queue and not self._closing:
            idle = [w for w in self._workers if w.ready and w.job is None and w.task is None]
            if len(idle) < 2:
                return
            task = self._tasks.popleft()
            self._start_task(idle[-1], task)
            while self._tasks and self._tasks[0].future.done():
                self._tasks.popleft()
        self._dispatch_background()

    def _dispatch_background(self) -> None:
        """Start a background task only on a pool wholly idle: no move or task waiting or
        running, every worker ready, and at least two of them (one stays free for a move)."""
        assert self._loop is not None
        while self._background and self._background[0].future.done():
            self._background.popleft()
        if not self._background or self._queue or self._tasks or self._closing:
            return
        if any(w.job is not None or w.task is not None for w in self._workers):
            return
        idle = [w for w in self._workers if w.ready]
        if len(idle) < 2 or len(idle) < len(self._workers):
            return
        self._start_task(idle[-1], self._background.popleft())

    def _start_task(self, worker: _Slot, task: Task) -> None:
        """Hand ``task`` to an idle ``worker``, with a watchdog that replaces the process if
        no answer comes within ``TASK_SECONDS``."""
        assert self._loop is not None
        worker.task = task
        worker.send(RunTask(task.id, task.path, task.args))
        worker.watchdog = self._loop.call_later(
            TASK_SECONDS, self._replace, worker, f"no task answer within {TASK_SECONDS:.0f}s"
        )

    @property
    def runs_tasks(self) -> bool:
        """Whether ``run_task`` can ever run a task: only with two workers or more (one is
        always left idle for live moves)."""
        return self.size >= 2

    async def run_task(self, path: str, *args: Any) -> Any:
        """Run ``module:function(*args)`` in a worker process at low priority and return
        its result (``TaskFailed`` if it raised there, or its worker died).

        A task waits while any move waits, and starts only on a worker whose taking leaves
        another ready worker idle: a live game's move finds a free worker at once. When more
        moves come than idle workers, running tasks are told to yield: the function must
        take the keywords ``check`` (a callable to call between steps: it raises once the
        worker is wanted back) and ``stop`` (a stop array to hand the engines' kernels,
        raised then too); the task is run again from the start later (so it must be safe to
        repeat). A task may wait long on a busy pool (forever on
        a pool of one worker: check ``runs_tasks``). Cancelling the await drops a task not
        yet started."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[Any] = self._loop.create_future()
        self._tasks.append(Task(str(next(self._ids)), path, tuple(args), future))
        self._dispatch()
        return await future

    async def run_background(self, path: str, *args: Any) -> Any:
        """Run ``module:function(*args)`` as ``run_task`` does, but lower than any task: it
        waits until no move or task waits or runs (and every worker is ready, two at least),
        and once started is given back at the first move or task that comes, raising
        ``BackgroundYielded`` (it is not run again: the caller asks again later; the function
        must keep what it did as it goes). For work that only uses idle time, such as
        proving the positions people reach (``server.engines.idle_proving``). Cancelling the await
        drops a task not yet started."""
        assert self._loop is not None, "call start() first"
        if self._closing:
            raise RuntimeError("the AI pool is closed")
        future: asyncio.Future[Any] = self._loop.create_future()
        self._background.append(Task(str(next(self._ids)), path, tuple(args), future, True))
        self._dispatch()
        return await future
