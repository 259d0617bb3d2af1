"""The one small protocol every game implements, so the AI, server and tests need no game switch.

Static facts about a game live on a ``Game`` object; the changing part is an immutable,
hashable ``State``. Moves are small ints inside the program and text only at the edges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class State(Protocol):
    """An immutable position. Equal positions are equal values with equal ``key()``."""

    game_name: str

    @property
    def to_move(self) -> int:
        """0 for the first player (Connect Four: first to drop; Othello: black), 1 for the other."""
        ...

    @property
    def ply(self) -> int:
        """Moves played since the start position (an Othello pass counts as one)."""
        ...

    def legal_moves(self) -> list[int]:
        """Moves for the side to move; Othello's forced pass is ``[PASS]``; empty iff finished."""
        ...

    def play(self, move: int) -> State:
        """The position after ``move``; raises ``IllegalMove`` and leaves ``self`` unchanged."""
        ...

    def is_over(self) -> bool:
        """True when neither side can move any more (win, draw, full board, double pass)."""
        ...

    def result(self) -> int:
        """Final score from the first player's side; its sign names the winner, 0 a draw.

        Connect Four: 22 minus the winner's stones (Pons' convention); Othello: the disc
        difference with empty squares given to the winner. Raises ``ValueError`` if not over.
        """
        ...

    def key(self) -> tuple[int, ...]:
        """A compact hashable identity of the position (side to move included)."""
        ...


@dataclass(frozen=True)
class PlayedGame:
    """A game as played, in plain values, for ``Game.exports`` to write out."""

    names: tuple[str, str]
    """What the two seats were called (people by name, the AI by its level)."""
    started_at: float
    """Seconds since the epoch (UTC)."""
    start: State
    """The position the game started from."""
    moves: tuple[str, ...]
    """The moves in notation, first to last."""
    seconds: tuple[float, ...]
    """The seconds each move took."""
    result: int | None = None
    """``State.result`` of a game played out; otherwise only its sign names the winner."""
    reason: str | None = None
    """How it ended (``end``, ``resign``, ``time``, ...), None while it goes on."""


class Game(Protocol):
    """Static facts and text conversions for one game; obtained through ``games.load``.

    Everything the server shows or stores about a game comes from here (and the engine's
    entry in ``ai``), so the server never names a game."""

    name: str
    title: str
    players: tuple[str, str]
    rows: int
    cols: int
    num_moves: int
    colours: tuple[str, str]
    """What people call each seat, seat 0 first (Connect Four: Red, Yellow)."""
    downloads: Mapping[str, str]
    """The files a played game is served as: extension -> the name of the export (of
    ``exports``) in it (Othello: ``txt`` the move list ``moves``, ``ggf`` the GGF record)."""
    symmetries: int
    """How many symmetries of the board ``transform`` knows (1: the identity only)."""

    def initial(self) -> State: ...

    def parse_move(self, state: State, text: str) -> int:
        """One move in this game's notation; ``InvalidNotation`` or ``IllegalMove`` if bad."""
        ...

    def format_move(self, move: int) -> str: ...

    def parse_moves(self, text: str, start: State | None = None) -> State:
        """Play a whole move string (``4453`` / ``f5d6c3``) from ``start`` or the initial one."""
        ...

    def format_moves(self, moves: Sequence[int]) -> str: ...

    def parse_position(self, text: str) -> State:
        """A position in the game's text form, as used by the shared reference data."""
        ...

    def format_position(self, state: State) -> str: ...

    def cells(self, state: State) -> list[int | None]:
        """Owner (0, 1) or None of every cell, row by row from the top as a person sees it."""
        ...

    def winning_line(self, state: State) -> list[int]:
        """The cells (``cells`` indices, ascending) of the line that won, so a board can show
        it: the winner's fours in Connect Four; empty for a draw, a game still going, or a
        game won by count (Othello)."""
        ...

    def perft(self, state: State, depth: int) -> int:
        """Leaves at ``depth`` (forced pass = one ply, a finished game = one leaf), compiled."""
        ...

    def exports(self, played: PlayedGame) -> dict[str, str]:
        """A played game in the game's text formats, by name: its compact move text people
        copy (Connect Four ``columns`` ``4453``; Othello ``moves`` ``f5d6``, passes left out)
        and any file format (Othello ``ggf``). ``InvalidNotation`` for a bad move."""
        ...

    def transform(self, cells: int, symmetry: int) -> int:
        """The image under ``symmetry`` (0 is the identity) of a set of cells, bit ``i`` for
        ``cells()`` index ``i``."""
        ...

    def transform_move(self, move: str, symmetry: int, inverse: bool = False) -> str:
        """A move's text in the image orientation (``inverse``: back from it);
        ``InvalidNotation`` if it is not a move of this game."""
        ...
