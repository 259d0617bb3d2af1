"""A guest's resume token of the older form (``<id>.<mac>``, signed before tokens carried
their time) brings the guest back once, for a token of the new form, and never again: not
after a restart either (SQLite and PostgreSQL)."""

from __future__ import annotations

import base64
import hashlib
import hmac

from wsclient import Client

from server.app import running
from server.storage import SqlStore

SECRET = b"a secret the old tokens were signed with"


def old_token(player_id: str) -> str:
    """A token as servers signed them before tokens carried their time: the id and an
    HMAC-SHA256 of it, cut to 18 bytes, base64url."""
    mac = hmac.new(SECRET, player_id.encode(), hashlib.sha256).digest()[:18]
    return f"{player_id}.{base64.urlsafe_b64encode(mac).decode()}"


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
