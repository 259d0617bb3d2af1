"""Ratings: Glicko-2 (pure), the desk that rates finished games and serves
leaderboards and profiles, and the shipped levels' calibrated ratings."""
