"""Keep numba's on-disk cache honest about the modules a kernel file depends on (both engines).

numba reuses a cached kernel while its own source file is unchanged, even when a function or
constant it compiled in (the rules kernels, the evaluation weights) has changed since; the
stale kernel then runs the old code or crashes. Each kernel module calls ``drop_stale`` before
defining its kernels, so editing a dependency recompiles its dependents on the next import.
"""

from __future__ import annotations

import os
from pathlib import Path


def drop_stale(module_file: str, *dependencies: str) -> None:
    """Delete ``module_file``'s cached kernels older than any of ``dependencies``."""
    source = Path(module_file)
    cache_dir = source.parent / "__pycache__"
    if not cache_dir.is_dir():
        return
    newest = max(Path(dep).stat().st_mtime for dep in dependencies)
    for cached in cache_dir.glob(f"{source.stem}.*.nb[ic]"):
        try:
            if cached.stat().st_mtime < newest:
                cached.unlink()
        except FileNotFoundError:
            pass  # another process dropped it first


KERNEL_ROOTS = (Path(__file__).parent, Path(__file__).parent.parent / "games")
"""Where the kernel files are: the engines and the rules."""
_CACHED = "cache" + "=True"  # spelt apart so this file is not taken for a kernel file


def cache_ready(roots: tuple[Path, ...] = KERNEL_ROOTS) -> bool:
    """Whether a start will load the kernels from numba's cache (a few seconds) rather than
    compile them (about a minute): every kernel file under ``roots`` (a ``.py`` that asks
    numba to cache) has cached kernels, none older than its source. A guess from the files,
    made before the workers write any: a kernel never compiled yet in a file that has others
    cached is not seen. With ``$NUMBA_CACHE_DIR`` set, the cache is looked for there."""
    elsewhere = os.environ.get("NUMBA_CACHE_DIR")
    for root in roots:
        for source in root.rglob("*.py"):
            if "__pycache__" in source.parts or _CACHED not in source.read_text(encoding="utf-8"):
                continue
            pattern = f"{source.stem}.*.nbi"
            found = (list(Path(elsewhere).rglob(pattern)) if elsewhere
                     else list((source.parent / "__pycache__").glob(pattern)))
            stamp = source.stat().st_mtime
            if not found or any(index.stat().st_mtime < stamp for index in found):
                return False
    return True
