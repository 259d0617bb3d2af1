"""What tests of accounts share: one password, and an Argon2 hasher cheap enough for the
dozens of hashes and checks they make (still Argon2id, so the real code path runs)."""

from __future__ import annotations

from argon2 import PasswordHasher
from wsclient import Client

PASSWORD = "correct horse battery"
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


async def sign_up(client: Client, name: str) -> None:
    """Make the guest behind ``client`` the account ``name`` (with ``PASSWORD``)."""
    await client.send(type="sign_up", name=name, password=PASSWORD)
    await client.expect("signed_in")
