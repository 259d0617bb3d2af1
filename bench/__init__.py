"""Benchmarks of the engines, the storage and the whole server (``discus bench``)."""

from __future__ import annotations

from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]
_FULL = _CHECKOUT.parent / "shared" / "data"
"""The full reference sets (1000 Pons positions a set), when they sit beside the checkout."""
_TRIMMED = _CHECKOUT / "tests" / "data"
"""The project's own copy: the first 100 positions of each Pons set, FFO and perft whole."""


def reference_data(name: str) -> Path:
    """The reference file ``name`` (``connect4/Test_L2_R1``, ``othello/perft.txt``): the full
    set beside the checkout when there is one, else the trimmed copy in ``tests/data``.

    A benchmark reads as many lines as it asks for and there are, so it always runs; the
    number of positions it prints says which copy it got.
    """
    full = _FULL / name
    return full if full.is_file() else _TRIMMED / name


def numbers(text: str) -> list[int]:
    """Reference positions by number on a bench's command line: ``40-49`` or ``45``."""
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))
