"""What the page tests share: a free port for a server of their own, and a page opened once
the server has greeted it (script errors collected, so a test can assert there were none)."""

from __future__ import annotations

import socket

from playwright.async_api import BrowserContext, Page

ONLINE = "document.querySelector('#conn').dataset.state === 'online'"
"""True once the page's connection has said hello and been welcomed."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def open_page(context: BrowserContext, url: str, problems: list[str]) -> Page:
    """A page on ``url`` once the server has greeted it; script errors land in ``problems``."""
    page = await context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    await page.goto(url)
    await page.wait_for_function(ONLINE)
    return page
