"""A read-only view, by game, of one field of each registered engine (``ai.Engine``).

Why: tables that once named the two games (default levels, calibration openings, measured
ratings) are now each engine's; the old names stay as mappings that read the registry at
each use, so a game registered later (a plug-in) is in them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class EngineView(Mapping[str, T], Generic[T]):
    """``view[game]`` is ``getattr(ai.engine(game), field)``; iterates the registered games."""

    def __init__(self, field: str) -> None:
        self._field = field

    def __getitem__(self, game: str) -> T:
        import ai  # at use: ai's own modules build these views while ai is being imported

        try:
            value: T = getattr(ai.engine(game), self._field)
        except ValueError:
            raise KeyError(game) from None
        return value

    def __iter__(self) -> Iterator[str]:
        import ai

        return iter(ai.names())

    def __len__(self) -> int:
        import ai

        return len(ai.names())
