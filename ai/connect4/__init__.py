"""The Connect Four engine: ``search(state, limits)`` and ``warm_up()`` (see ``engine``)."""

from ai.connect4.engine import search, warm_up

__all__ = ["search", "warm_up"]
