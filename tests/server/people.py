"""What tests of accounts share: one password, and an Argon2 hasher cheap enough for the
dozens of hashes and checks they make (still Argon2id, so the real code path runs)."""

from __future__ import annotations

from argon2 import PasswordHasher

PASSWORD = "correct horse battery"
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
