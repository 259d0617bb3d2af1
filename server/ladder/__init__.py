"""The engine ladder: its desk (entries, rounds, results) and its pure rules
(schedule and rating fit)."""
