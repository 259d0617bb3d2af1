"""Fixtures for the server tests: a real headless Chromium for the page tests, and a real
Connect Four worker pool."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright

from server.engines import AiPool

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium, installed by .ci/run; Playwright never downloads a browser here."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A fresh headless Chromium for one test."""
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
