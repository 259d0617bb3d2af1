"""What tests of accounts share: one password, and an Argon2 hasher cheap enough for the
dozens of hashes and checks they make (still Argon2id, so the real code path runs)."""

from __future__ import annotations

from typing import Any

from argon2 import PasswordHasher
from wsclient import Client

from server.people.sign_in_limits import SignInLimits

PASSWORD = "correct horse battery"
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
MANY_SIGN_UPS = SignInLimits(sign_ups_per_source=1000)
"""``Settings.sign_in`` for a test whose many accounts all sign up from one address."""


async def sign_up(client: Client, name: str) -> None:
    """Make the guest behind ``client`` the account ``name`` (with ``PASSWORD``)."""
    await client.send(type="sign_up", name=name, password=PASSWORD)
    await client.expect("signed_in")


async def account(url: str, name: str, **options: Any) -> Client:
    """A new connection signed up as the account ``name`` (tournaments take no guests);
    ``options`` go to ``Client.open``."""
    client = await Client.open(url, name, **options)
    await sign_up(client, name)
    return client
