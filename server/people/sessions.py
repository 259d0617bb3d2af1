"""Session tokens of people's accounts: how one looks and how it is stored.

Shared by ``server.people.identity`` (a ``hello`` that resumes a session) and
``server.people.accounts``
(sign-in makes one): a session token is 32 random bytes behind a prefix that tells it from a
guest's resume token, stored only as its SHA-256 (a fast hash is right for a random token).
"""

from __future__ import annotations

import hashlib

SESSION_PREFIX = "discus_session_"
"""Marks a session token (and tells it from a guest's resume token in ``hello.resume``)."""
SESSION_BYTES = 32


def is_session(token: str) -> bool:
    return token.startswith(SESSION_PREFIX)


def hash_session(token: str) -> str:
    """The stored form of a session token: hex SHA-256 of its text."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
