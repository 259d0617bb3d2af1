"""The engine's process: started from a command line in its own working directory, written
to and read from line by line with a deadline, killed (its whole process group) when it
fails, and a transcript of what was said, for the log.

Blocking by design: the bot calls its engine in a worker thread. A reader thread per pipe
turns the engine's output into a queue, so a read can give up at its deadline however the
engine behaves (a hang, a half line, a flood on stderr).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO

log = logging.getLogger("discus.bot.engine")

_EOF = object()


class EngineCrashed(Exception):
    """The engine's process ended, or closed its output."""


class EngineTimeout(Exception):
    """No answer before the deadline."""


class EngineProcess:
    """One run of the engine. ``command``: a command line (split as a shell would, no shell
    run) or its words; ``cwd``: its working directory (None: the bot's). Start with
    ``start``; after a failure, ``stop`` and start a new one."""

    def __init__(self, command: str | Sequence[str], cwd: Path | None = None,
                 env: dict[str, str] | None = None, transcript: int = 200) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an empty engine command")
        self.cwd = cwd
        self.env = env
        self.transcript: deque[str] = deque(maxlen=transcript)
        """The last lines said: ``> sent``, ``< read``, ``! stderr``."""
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[object] = queue.Queue()

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the process; ``EngineCrashed`` if it cannot be started."""
        self._lines = queue.Queue()
        try:
            # Its own session: a stop kills whatever the engine started too (a helper
            # process, a shell wrapper's child).
            self._proc = subprocess.Popen(
                self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                errors="replace", start_new_session=True)
        except OSError as exc:
            raise EngineCrashed(f"cannot start {self.argv[0]!r}: {exc}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._note(f"* started pid {self._proc.pid}: {shlex.join(self.argv)}")
        for pipe, to_queue in ((self._proc.stdout, True), (self._proc.stderr, False)):
            threading.Thread(target=self._pump, args=(pipe, self._lines, to_queue),
                             daemon=True, name="bot-engine-pipe").start()

    def send(self, line: str) -> None:
        """Write one line (a newline is added); ``EngineCrashed`` if the engine is gone."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            raise EngineCrashed(self._ended())
        self._note(f"> {line}")
        try:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise EngineCrashed(self._ended()) from None

    def read_line(self, deadline: float) -> str:
        """The next line the engine writes, by ``deadline`` (``time.monotonic()``);
        ``EngineTimeout`` past it, ``EngineCrashed`` if its output ends."""
        wait = deadline - time.monotonic()
        try:
            item = self._lines.get(timeout=max(0.0, wait)) if wait > 0 else \
                self._lines.get_nowait()
        except queue.Empty:
            raise EngineTimeout("nothing more by the deadline") from None
        if item is _EOF:
            self._lines.put(_EOF)  # every later read sees the end too
            raise EngineCrashed(self._ended())
        return str(item)

    def stop(self, grace: float = 0.5) -> None:
        """End the process and its group: close its input, then SIGTERM, then SIGKILL."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
        self._note(f"* stopped pid {proc.pid} (exit {proc.returncode})")

    def _ended(self) -> str:
        proc = self._proc
        code = proc.poll() if proc is not None else None
        return "the engine is not running" if code is None and proc is None else \
            f"the engine ended (exit {code})" if code is not None else \
            "the engine closed its output"

    def _pump(self, pipe: IO[str], lines: queue.Queue[object], to_queue: bool) -> None:
        with contextlib.suppress(ValueError, OSError):
            for raw in pipe:
                line = raw.rstrip("\r\n")
                if to_queue:
                    self._note(f"< {line}")
                    lines.put(line)
                else:
                    self._note(f"! {line}")
        if to_queue:
            lines.put(_EOF)

    def _note(self, entry: str) -> None:
        self.transcript.append(entry)
        log.debug("%s", entry)
