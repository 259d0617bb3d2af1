"""Tic-tac-toe as a ``games.base.Game``: the third game, defined only here, that proves a
game is a plug-in (its rules here, its engine in ``engine``, its registry entries in
``tests.thirdgame``).

Cells are numbered row by row from the top (0..8), the moves are those cells, and their
text is ``a1``..``c3`` (column letter, row number from the top). The first player (X) moves
first; three in a row wins, a full board is a draw. ``result``: +1 when X won, -1 when O
won, 0 for a draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from games.base import PlayedGame
from games.errors import IllegalMove, InvalidNotation

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_FULL = (1 << 9) - 1


def _line_of(stones: int) -> tuple[int, ...] | None:
    for line in LINES:
        if all(stones >> cell & 1 for cell in line):
            return line
    return None


@dataclass(frozen=True)
class TicTacToeState:
    """``x`` and ``o``: the cells each side holds, bit ``i`` for cell ``i``."""

    x: int = 0
    o: int = 0

    game_name = "tictactoe"

    @property
    def ply(self) -> int:
        return (self.x | self.o).bit_count()

    @property
    def to_move(self) -> int:
        return self.ply & 1

    def winner(self) -> int | None:
        if _line_of(self.x):
            return 0
        if _line_of(self.o):
            return 1
        return None

    def is_over(self) -> bool:
        return self.winner() is not None or (self.x | self.o) == _FULL

    def legal_moves(self) -> list[int]:
        if self.is_over():
            return []
        return [cell for cell in range(9) if not (self.x | self.o) >> cell & 1]

    def play(self, move: int) -> TicTacToeState:
        if move not in self.legal_moves():
            raise IllegalMove(f"cell {move!r} cannot be played here")
        if self.to_move == 0:
            return TicTacToeState(self.x | 1 << move, self.o)
        return TicTacToeState(self.x, self.o | 1 << move)

    def result(self) -> int:
        if not self.is_over():
            raise ValueError("the game is not over: it has no result yet")
        winner = self.winner()
        return 0 if winner is None else (1 if winner == 0 else -1)

    def key(self) -> tuple[int, ...]:
        return (self.x, self.o)


def _image(cell: int, symmetry: int) -> int:
    """Where a cell goes under ``symmetry``: transpose if bit 0, then flip the rows if bit 1,
    then the columns if bit 2 (Othello's convention, on three by three)."""
    row, col = divmod(cell, 3)
    if symmetry & 1:
        row, col = col, row
    if symmetry & 2:
        row = 2 - row
    if symmetry & 4:
        col = 2 - col
    return row * 3 + col


_IMAGES = tuple(tuple(_image(cell, s) for cell in range(9)) for s in range(8))
_SOURCES = tuple(tuple(images.index(cell) for cell in range(9)) for images in _IMAGES)


def _name(cell: int) -> str:
    return "abc"[cell % 3] + str(cell // 3 + 1)


def _cell(text: str) -> int:
    stripped = text.strip().lower()
    if len(stripped) != 2 or stripped[0] not in "abc" or stripped[1] not in "123":
        raise InvalidNotation(f"not a tic-tac-toe cell: {text!r}")
    return (int(stripped[1]) - 1) * 3 + "abc".index(stripped[0])


class TicTacToe:
    name = "tictactoe"
    title = "Tic-tac-toe"
    players = ("crosses", "noughts")
    rows = 3
    cols = 3
    num_moves = 9
    colours = ("Crosses", "Noughts")
    downloads = MappingProxyType({"txt": "moves"})
    symmetries = 8

    def initial(self) -> TicTacToeState:
        return TicTacToeState()

    def parse_move(self, state: object, text: str) -> int:
        assert isinstance(state, TicTacToeState)
        move = _cell(text)
        if move not in state.legal_moves():
            state.play(move)  # raises IllegalMove
        return move

    def format_move(self, move: int) -> str:
        return _name(move)

    def parse_moves(self, text: str, start: object | None = None) -> TicTacToeState:
        state = start if isinstance(start, TicTacToeState) else TicTacToeState()
        compact = "".join(text.split())
        for i in range(0, len(compact), 2):
            state = state.play(_cell(compact[i:i + 2]))
        return state

    def format_moves(self, moves: Sequence[int]) -> str:
        return "".join(_name(m) for m in moves)

    def parse_position(self, text: str) -> TicTacToeState:
        cells = text.strip()
        if len(cells) != 9 or set(cells) - set("XO-"):
            raise InvalidNotation(f"not a tic-tac-toe board: {text!r}")
        return TicTacToeState(sum(1 << i for i, c in enumerate(cells) if c == "X"),
                              sum(1 << i for i, c in enumerate(cells) if c == "O"))

    def format_position(self, state: object) -> str:
        return "".join("X" if c == 0 else "O" if c == 1 else "-" for c in self.cells(state))

    def cells(self, state: object) -> list[int | None]:
        assert isinstance(state, TicTacToeState)
        return [0 if state.x >> i & 1 else 1 if state.o >> i & 1 else None for i in range(9)]

    def winning_line(self, state: object) -> list[int]:
        assert isinstance(state, TicTacToeState)
        return list(_line_of(state.x) or _line_of(state.o) or ())

    def perft(self, state: object, depth: int) -> int:
        assert isinstance(state, TicTacToeState)
        if depth == 0 or state.is_over():
            return 1
        return sum(self.perft(state.play(m), depth - 1) for m in state.legal_moves())

    def exports(self, played: PlayedGame) -> dict[str, str]:
        return {"moves": "".join(_name(_cell(m)) for m in played.moves)}

    def transform(self, cells: int, symmetry: int) -> int:
        return sum(1 << _IMAGES[symmetry][i] for i in range(9) if cells >> i & 1)

    def transform_move(self, move: str, symmetry: int, inverse: bool = False) -> str:
        table = _SOURCES if inverse else _IMAGES
        return _name(table[symmetry][_cell(move)])


GAME = TicTacToe()
