"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

REFERENCE_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The external reference data (perft counts, Pons sets, FFO) kept in ``tests/data``
    (its README names the sources), so the suite needs nothing beside the checkout."""
    return REFERENCE_DATA


@pytest.fixture(scope="session")
def othello_perft(shared_data: Path) -> dict[int, int]:
    """Leaves by depth from the Othello start, as listed in the reference ``perft.txt``."""
    counts = {}
    for line in (shared_data / "othello" / "perft.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            depth, leaves = line.split()
            counts[int(depth)] = int(leaves)
    return counts
