"""``python -m bench.profiled FILE MODULE [ARGS...]``: run ``python -m MODULE ARGS`` under
cProfile timed by the main thread's CPU clock, not the wall clock, and write the profile to
``FILE`` at exit.

Why: ``python -m cProfile`` charges each function the wall time it spanned, so on a machine
where the server shares its cores with the load's clients and the AI processes, a syscall that
wakes another process (a pipe or socket write) looks as long as the time the server was
preempted after it. ``time.thread_time`` counts only what the event loop's thread itself
spent, which is what "server CPU per client move" adds up (its other threads, such as
SQLite's, are left out).
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__.splitlines()[0])
    out, module, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.argv = [module, *rest]
    profile = cProfile.Profile(time.thread_time)
    try:
        profile.runcall(runpy.run_module, module, run_name="__main__", alter_sys=True)
    finally:
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
