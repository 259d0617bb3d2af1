"""Connect Four as values: the ``State`` and ``Game`` of ``games.base`` over the kernels.

Positions are written as Pascal Pons writes them: the 1-based columns played from the empty
board (``"4453"``; the empty string is the start). A state remembers the moves that reached
it, so ``format_position`` gives them back; that history is not part of the value, so two
move orders reaching the same board are equal states with equal keys (their texts differ, and
either parses back to an equal state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from games.base import PlayedGame
from games.connect4 import kernels
from games.errors import IllegalMove, InvalidNotation

_U = np.uint64
_ALL = (1 << kernels.WIDTH) - 1
_COLUMNS = tuple(str(col + 1) for col in range(kernels.WIDTH))
"""Each column's text, by column: a server formats every move of a game again on each ply."""
_COLUMN_BYTES = bytes(ord(_COLUMNS[b]) if b < kernels.WIDTH else 0 for b in range(256))
"""``bytes.translate``'s table from a column to its text (0: no column)."""
_LEGAL = tuple(tuple(col for col in range(kernels.WIDTH) if legal >> col & 1)
               for legal in range(_ALL + 1))
"""The legal columns of each bitmask of open columns."""


@dataclass(frozen=True)
class Connect4State:
    """A Connect Four position: ``current`` = stones of the side to move, ``mask`` = all stones.

    Build one with ``GAME.initial()``, ``play`` or the parsers, never by hand.
    """

    current: int
    mask: int
    moves: tuple[int, ...] = field(default=(), compare=False, repr=False)
    """Columns (0-based) that reached this position; history only, not part of the value."""
    _legal: int = field(default=_ALL, compare=False, repr=False)

    game_name = "connect4"

    @property
    def to_move(self) -> int:
        return self.ply & 1

    @property
    def ply(self) -> int:
        return self.mask.bit_count()

    def legal_moves(self) -> list[int]:
        return list(_LEGAL[self._legal])

    def play(self, move: int) -> Connect4State:
        if not isinstance(move, int) or not 0 <= move < kernels.WIDTH:
            raise IllegalMove(f"no column {move!r}: columns are 0..{kernels.WIDTH - 1}")
        if not self._legal >> move & 1:
            if self.is_over():
                raise IllegalMove(f"column {move + 1} cannot be played: the game is over")
            raise IllegalMove(f"column {move + 1} is full")
        current, mask = kernels.play_column(_U(self.current), _U(self.mask), move)
        legal = kernels.legal_mask(current, mask)
        return Connect4State(int(current), int(mask), (*self.moves, move), legal)

    def is_over(self) -> bool:
        return self._legal == 0

    def winner(self) -> int | None:
        """0 or 1 for the side with four in a row, None if nobody has (yet)."""
        if kernels.last_mover_won(_U(self.current), _U(self.mask)):
            return 1 - self.to_move
        return None

    def result(self) -> int:
        """Pons' score from the first player's side: +-(22 - the winner's stones), 0 a draw."""
        if not self.is_over():
            raise ValueError("the game is not over: it has no result yet")
        winner = self.winner()
        if winner is None:
            return 0
        score = 22 - (self.ply + 1) // 2
        return score if winner == 0 else -score

    def key(self) -> tuple[int, ...]:
        return (self.current, self.mask)


def _initial() -> Connect4State:
    return Connect4State(0, 0)


class Connect4:
    """Static facts and text forms of Connect Four (moves: column 0..6, text "1".."7")."""

    name = "connect4"
    title = "Connect Four"
    players = ("first", "second")
    rows = kernels.HEIGHT
    cols = kernels.WIDTH
    num_moves = kernels.WIDTH
    colours = ("Red", "Yellow")
    downloads = MappingProxyType({"txt": "columns"})
    symmetries = 2
    """The identity and the mirror (columns reversed)."""

    def initial(self) -> Connect4State:
        return _initial()

    def parse_move(self, state: object, text: str) -> int:
        state = _connect4(state)
        stripped = text.strip()
        if len(stripped) != 1 or stripped not in "1234567":
            raise InvalidNotation(f"bad column {text!r}: expected one of 1..7")
        move = int(stripped) - 1
        if move not in state.legal_moves():
            state.play(move)  # raises IllegalMove saying why
        return move

    def format_move(self, move: int) -> str:
        if not 0 <= move < kernels.WIDTH:
            raise ValueError(f"no column {move!r}: columns are 0..{kernels.WIDTH - 1}")
        return _COLUMNS[move]

    def parse_moves(self, text: str, start: object | None = None) -> Connect4State:
        state = _initial() if start is None else _connect4(start)
        stripped = text.strip()
        for i, char in enumerate(stripped):
            if char not in "1234567":
                raise InvalidNotation(f"bad character {char!r} at {i + 1} in {text!r}")
        for i, char in enumerate(stripped):
            try:
                state = state.play(int(char) - 1)
            except IllegalMove as error:
                raise IllegalMove(f"move {i + 1} of {stripped!r}: {error}") from None
        return state

    def format_moves(self, moves: Sequence[int]) -> str:
        try:
            text = bytes(moves).translate(_COLUMN_BYTES)
        except (ValueError, TypeError):  # not a byte
            text = b"\0"
        if 0 in text:  # no column: say which
            return "".join(self.format_move(m) for m in moves)
        return text.decode("ascii")

    def parse_position(self, text: str) -> Connect4State:
        """A Pons move string (the first field of a line of his files); "" is the start."""
        fields = text.split()
        return self.parse_moves(fields[0] if fields else "")

    def format_position(self, state: object) -> str:
        """The move string that reached ``state`` (see the module docstring)."""
        return self.format_moves(_connect4(state).moves)

    def cells(self, state: object) -> list[int | None]:
        state = _connect4(state)
        mine, mask, side = state.current, state.mask, state.to_move
        other = 1 - side
        return [None if not mask & bit else side if mine & bit else other for bit in _CELL_BITS]

    def winning_line(self, state: object) -> list[int]:
        state = _connect4(state)
        stones = int(kernels.four_lines(_U(state.current ^ state.mask)))
        return [
            (kernels.HEIGHT - 1 - row) * kernels.WIDTH + col
            for row in reversed(range(kernels.HEIGHT))
            for col in range(kernels.WIDTH)
            if stones >> (7 * col + row) & 1
        ]

    def perft(self, state: object, depth: int) -> int:
        if depth < 0:
            raise ValueError(f"depth must be at least 0, got {depth}")
        state = _connect4(state)
        return int(kernels.perft(_U(state.current), _U(state.mask), depth))


    def exports(self, played: PlayedGame) -> dict[str, str]:
        """``columns``: Pons' column string, ``"4453"`` (columns 1-7, first player first)."""
        for text in played.moves:
            if len(text) != 1 or text not in "1234567":
                raise InvalidNotation(f"not a Connect Four column: {text!r}")
        return {"columns": "".join(played.moves)}

    def transform(self, cells: int, symmetry: int) -> int:
        return mirror_columns(cells) if symmetry & 1 else cells

    def transform_move(self, move: str, symmetry: int, inverse: bool = False) -> str:
        text = move.strip()
        if len(text) != 1 or text not in "1234567":
            raise InvalidNotation(f"not a Connect Four column: {move!r}")
        return str(kernels.WIDTH + 1 - int(text)) if symmetry & 1 else text


_CELL_BITS = tuple(1 << (7 * col + row) for row in reversed(range(kernels.HEIGHT))
                   for col in range(kernels.WIDTH))
"""Each cell's bit in the position's bitboards, top row first (``cells``' order): the board
is drawn after every move a server plays, so it is a table, not a computation."""

_COLUMN = [sum(1 << (r * kernels.WIDTH + c) for r in range(kernels.HEIGHT))
           for c in range(kernels.WIDTH)]


def mirror_columns(x: int) -> int:
    """Cells (bit ``row * 7 + col``, as ``cells`` orders them) with column c moved to 6 - c."""
    out = 0
    for c in range(kernels.WIDTH):
        shift = (kernels.WIDTH - 1 - c) - c
        part = x & _COLUMN[c]
        out |= part << shift if shift >= 0 else part >> -shift
    return out


def _connect4(state: object) -> Connect4State:
    if not isinstance(state, Connect4State):
        raise TypeError(f"not a Connect Four state: {state!r}")
    return state
