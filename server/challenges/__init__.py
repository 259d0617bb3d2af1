"""Challenges between players: their pure rules, the desk, and the cluster's shared
book in Redis."""
