"""Bots: token logins and their limits (on one node and, in a cluster, in Redis),
bot accounts in the database, and self-registration."""
