"""Whether a start will load the kernels from numba's cache or compile them, guessed from the
cache's files before any worker runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ai.jitcache import cache_ready

KERNELS = "from numba import njit\n\n@njit(cache=True)\ndef double(x):\n    return 2 * x\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "plain.py").write_text("X = 1\n")  # asks numba for nothing: never looked for
    return tmp_path


def index(root: Path, name: str = "kernels.double-3.py311.nbi") -> Path:
    cached = root / "__pycache__" / name
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(b"")
    return cached


def test_a_kernel_file_with_nothing_cached_means_compiling(root: Path) -> None:
    assert not cache_ready((root,))


def test_every_kernel_file_cached_after_its_last_edit_means_loading(root: Path) -> None:
    index(root)
    assert cache_ready((root,))


def test_a_kernel_file_edited_after_its_cache_was_written_means_compiling(root: Path) -> None:
    cached = index(root)
    source = root / "kernels.py"
    os.utime(cached, (source.stat().st_mtime - 10,) * 2)
    assert not cache_ready((root,))


def test_the_cache_is_looked_for_under_numba_cache_dir_when_set(
        root: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    index(root)
    elsewhere = tmp_path_factory.mktemp("numba")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(elsewhere))
    assert not cache_ready((root,))
    index(elsewhere / "some" / "path")
    assert cache_ready((root,))
