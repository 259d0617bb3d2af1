"""The two ways a caller can hand the rules something wrong.

Both are ``ValueError`` so callers that do not care can catch one thing; the server maps each
to its own protocol error code, so the two must stay distinct.
"""


class InvalidNotation(ValueError):
    """Text that does not parse as a move or position of this game (says which text and why)."""


class IllegalMove(ValueError):
    """A well-formed move that the rules forbid in this position (says which move and why)."""
