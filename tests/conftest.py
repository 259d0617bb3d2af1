"""Fixtures shared by the whole suite."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REFERENCE_DATA = Path(__file__).resolve().parent / "data"


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The quick tier, ``pytest -m quick``: every test not marked ``slow`` (over about 1.5 s
    of its own on this two-core machine: a server in a process of its own, games played to
    their end, a search given seconds) or ``browser`` (a real Chromium). It touches every
    package, and it is what to run while working; CI runs everything."""
    for item in items:
        if item.get_closest_marker("slow") is None and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.quick)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection imported (the server, numba, pydantic's schemas, ...), out of
    the cyclic collector's sight, as the server process does (``server.gc_policy``).

    The servers of most tests run on this process's event loop, and a full pass of the
    collector over everything stalls that loop: 0.2 s just after the imports on a slow
    machine, more once the suite's modules are in. An in-process server's overload gauge
    then read a loop 0.5 to 0.6 s late and shed a test's next connection (1013), twice in one
    whole-suite run."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)  # after the test's own fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """At the end of each test module, collect what its tests left and freeze the rest, so
    no pass of the collector during a later test walks the objects of every test before it."""
    if nextitem is None or nextitem.path != item.path:
        gc.collect()
        gc.freeze()


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


@pytest.fixture
def c4_engine_calls(monkeypatch: pytest.MonkeyPatch
                    ) -> Callable[[str, Callable[[tuple[Any, ...]], Any]], list[Any]]:
    """``record(name, pick)``: from then on, each call of ``ai.connect4.engine.<name>`` is
    recorded as ``pick(its arguments)`` in the list returned, and still runs. How tests of
    the expert count its weak solves and null windows, in one process or a worker's."""
    from ai.connect4 import engine

    def record(name: str, pick: Callable[[tuple[Any, ...]], Any]) -> list[Any]:
        calls: list[Any] = []
        real = getattr(engine, name)

        def recorded(*args: Any) -> Any:
            calls.append(pick(args))
            return real(*args)

        monkeypatch.setattr(engine, name, recorded)
        return calls

    return record


@pytest.fixture
def no_c4_outcomes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Connect Four book's outcomes file read as empty, in this process: the early
    positions it holds (plies 5 to 8) are then off every book file, as later
    positions are, and the expert must prove them itself. Tests of that weak solve, its cache and
    its time limits use such a position: one proven in about a second (``64171``), or none in
    seconds (``11771``)."""
    from ai.connect4 import book

    empty = tmp_path / "no_outcomes.txt"
    empty.touch()
    monkeypatch.setattr(book, "OUTCOMES_FILE", empty)
