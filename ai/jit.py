"""Where this process's compiled kernels came from: numba's on-disk cache, or a compile.

Numba caches a kernel beside its source (or under ``$NUMBA_CACHE_DIR``), keyed by that
source file's path and stamp and by the CPU. A copy of the package other than the one that
runs, or a cache directory the running user cannot write, means every start compiles again
(about a minute) instead of loading (a second): ``discus warm-up --check`` uses this to
prove a start loads everything.
"""

from __future__ import annotations

import sys

from numba.core.dispatcher import Dispatcher

_PACKAGES = ("ai.", "games.")


def cache_counts() -> tuple[int, int]:
    """(kernel signatures loaded from the cache, signatures compiled) so far in this process,
    over every kernel that ``ai`` and ``games`` have imported. Kernels inlined into others
    are compiled as part of them and not counted."""
    kernels: dict[int, Dispatcher] = {}
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(_PACKAGES):
            for value in vars(module).values():
                if isinstance(value, Dispatcher):
                    kernels[id(value)] = value
    loaded = sum(sum(k.stats.cache_hits.values()) for k in kernels.values())
    compiled = sum(sum(k.stats.cache_misses.values()) for k in kernels.values())
    return loaded, compiled
