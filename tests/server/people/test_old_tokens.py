"""A guest's resume token of the older form (``<id>.<mac>``, signed before tokens carried
their time) brings the guest back once, for a token of the new form, and never again: not
after a restart either (SQLite and PostgreSQL)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import AsyncIterator
from typing import Any

import pytest
from wsclient import Client

from server.app import running
from server.storage import SqlStore
from tests.server.storage.conftest import create_database, drop_database

SECRET = b"a secret the old tokens were signed with"


def old_token(player_id: str) -> str:
    """A token as servers signed them before tokens carried their time: the id and an
    HMAC-SHA256 of it, cut to 18 bytes, base64url."""
    mac = hmac.new(SECRET, player_id.encode(), hashlib.sha256).digest()[:18]
    return f"{player_id}.{base64.urlsafe_b64encode(mac).decode()}"


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'discus.sqlite3'}"
        return
    url, name = await create_database()
    try:
        yield url
    finally:
        await drop_database(name)


async def test_an_old_form_token_resumes_once_for_a_new_form_one_then_never(
    database_url: str,
) -> None:
    token = old_token("0123456789ab")
    async with running(port=0, store=SqlStore(database_url), secret=SECRET) as server:
        back = await Client.open(server.url, "Ann", resume=token)
        assert back.player_id == "0123456789ab"
        fresh = back.welcome["resume"]
        player_id, issued, _ = fresh.split(".")
        assert player_id == "0123456789ab" and issued.isdigit()
        again = await Client.open(server.url, hello=False)
        error = await again.request("hello", version=1, resume=token)
        assert error["code"] == "bad_resume_token" and "used" in error["message"]
        with_fresh = await Client.open(server.url, None, resume=fresh)
        assert with_fresh.player_id == "0123456789ab"
        other = await Client.open(server.url, "Bob", resume=old_token("ba9876543210"))
        assert other.player_id == "ba9876543210"  # each guest's own token is its own
        for client in (back, again, with_fresh, other):
            await client.close()
    async with running(port=0, store=SqlStore(database_url), secret=SECRET) as server:
        late = await Client.open(server.url, hello=False)
        error = await late.request("hello", version=1, resume=token)
        assert error["code"] == "bad_resume_token"
        await late.close()
