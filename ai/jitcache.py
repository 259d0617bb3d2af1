"""Keep numba's on-disk cache honest about the modules a kernel file depends on (both engines).

numba reuses a cached kernel while its own source file is unchanged, even when a function or
constant it compiled in (the rules kernels, the evaluation weights) has changed since; the
stale kernel then runs the old code or crashes. Each kernel module calls ``drop_stale`` before
defining its kernels, so editing a dependency recompiles its dependents on the next import.
"""

from __future__ import annotations

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
