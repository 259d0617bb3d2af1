"""Fixtures for the server tests: a real headless Chromium for the page tests, a real
Connect Four worker pool, and databases at the newest schema (copies of ones migrated once a
session)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, async_playwright

from server.engines import AiPool
from tests.server.storage.conftest import (
    create_migrated_template,
    drop_database,
    migrated_copy,
    migrated_sqlite_file,
)

# The tests of each package import the shared helpers (``wsclient``, ``pages``, ``people``,
# ...) that stand in this folder by their bare names.
sys.path.insert(0, str(Path(__file__).resolve().parent))

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium, installed by .ci/run; Playwright never downloads a browser here."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A fresh headless Chromium for one test."""
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # Playwright runs string predicates (``wait_for_function("...")``) through eval,
        # which the pages' Content-Security-Policy forbids: the tests' own scripts are let
        # through. test_hardening.py drives the page under its policy.
        new_context = chromium.new_context

        async def bypassing(**options: Any) -> BrowserContext:
            options.setdefault("bypass_csp", True)
            return await new_context(**options)

        chromium.new_context = bypassing  # type: ignore[method-assign]
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
async def pool() -> AsyncIterator[AiPool]:
    """One warmed-up Connect Four worker process, closed after the test."""
    workers = AiPool(processes=1, games=("connect4",))
    await workers.start(wait_ready=True, timeout=120)
    try:
        yield workers
    finally:
        await workers.close()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the newest schema, made once a session: ``database_url`` copies it."""
    return migrated_sqlite_file(tmp_path_factory.mktemp("migrated") / "discus.sqlite3")


@pytest.fixture(scope="session")
def migrated_postgres() -> Iterator[str]:
    """The name of a PostgreSQL database at the newest schema, made once a session and never
    connected to (PostgreSQL copies only such a database): ``database_url`` copies it."""
    name = asyncio.run(create_migrated_template())
    try:
        yield name
    finally:
        asyncio.run(drop_database(name))


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path, migrated_sqlite: Path,
                       migrated_postgres: str) -> AsyncIterator[str]:
    """A server's database, once on SQLite and once on PostgreSQL (a database made for the
    test and dropped after it), already at the newest schema: a copy of ``migrated_sqlite``
    or ``migrated_postgres``. ``tests/server/storage`` has its own, with the memory store."""
    async with migrated_copy(request.param, tmp_path, migrated_sqlite,
                             migrated_postgres) as url:
        yield url
