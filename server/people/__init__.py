"""People: who a connection is (guests, sessions, resume tokens), accounts and their
sign-in limits, the names profile, and the Argon2 queue that keeps password hashing fair."""
