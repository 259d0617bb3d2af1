"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The external reference data (perft counts, Pons sets, FFO) beside the checkout."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"reference data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def othello_perft(shared_data: Path) -> dict[int, int]:
    """Leaves by depth from the Othello start, as listed in the shared ``perft.txt``."""
    counts = {}
    for line in (shared_data / "othello" / "perft.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            depth, leaves = line.split()
            counts[int(depth)] = int(leaves)
    return counts
