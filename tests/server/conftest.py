"""Fixtures for the server tests: a real headless Chromium for the page tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright

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
