"""Othello as values: the ``State`` and ``Game`` of ``games.base`` over the compiled kernels.

Moves are squares 0..63 (``row * 8 + col``, a1 = 0, h1 = 7, a8 = 56) and ``PASS`` = 64, which
is legal only as a forced pass. Text: ``"f5"`` (case-insensitive in, lower case out) and
``"pass"``; a move list ``"f5d6c3"`` infers passes; a position is the 64-character board a1..h8
(``X`` black, ``O`` white, ``-`` empty), a space and the side to move, as in the FFO ``.obf``
files (anything after a ``;`` is ignored).

``cells`` lists the board as it is conventionally drawn: row 1 at the top, a1 top-left, row
by row left to right, so it is exactly the order of the board string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from games.base import PlayedGame
from games.errors import IllegalMove, InvalidNotation
from games.othello import ggf, kernels
from games.othello.symmetry import othello_transform, square_image

_SQUARE_BITS = tuple(1 << square for square in range(64))
"""Each square's bit, a1 first (``cells``' order)."""

PASS = kernels.PASS
_U = np.uint64
_MOVE_RE = re.compile(r"([a-h])([1-8])|(pass)", re.IGNORECASE)
_SQUARE_RE = re.compile(r"[a-h][1-8]")


def square_name(move: int) -> str:
    """``"f5"`` for a square, ``"pass"`` for ``PASS``."""
    if move == PASS:
        return "pass"
    if not 0 <= move < 64:
        raise ValueError(f"no move {move!r}: moves are squares 0..63 and PASS (64)")
    return "abcdefgh"[move % 8] + str(move // 8 + 1)


@dataclass(frozen=True)
class OthelloState:
    """An Othello position: ``black`` and ``white`` bitboards and the side to move.

    ``ply`` (moves played, passes included) is history, not part of the value: equal boards
    with the same side to move are equal states. Build one with ``GAME.initial()``, ``play``
    or the parsers.
    """

    black: int
    white: int
    side: int
    """0 when black is to move, 1 for white."""
    plies: int = field(default=0, compare=False)
    """Moves played since the start (for a parsed board: discs placed, passes unknown)."""

    game_name = "othello"

    @property
    def to_move(self) -> int:
        return self.side

    @property
    def ply(self) -> int:
        return self.plies

    def mover_boards(self) -> tuple[int, int]:
        """``(player, opponent)`` bitboards from the side to move's view, as the kernels use."""
        if self.side == 0:
            return self.black, self.white
        return self.white, self.black

    def moves_mask(self) -> int:
        player, opponent = self.mover_boards()
        return int(kernels.legal_moves(_U(player), _U(opponent)))

    def legal_moves(self) -> list[int]:
        mask = self.moves_mask()
        if mask:
            return [sq for sq in range(64) if mask >> sq & 1]
        player, opponent = self.mover_boards()
        if kernels.legal_moves(_U(opponent), _U(player)):
            return [PASS]
        return []

    def play(self, move: int) -> OthelloState:
        if not isinstance(move, int) or not 0 <= move <= PASS:
            raise IllegalMove(f"no move {move!r}: moves are squares 0..63 and PASS (64)")
        player, opponent = self.mover_boards()
        if move == PASS:
            if self.moves_mask():
                raise IllegalMove("cannot pass: there is a legal move")
            if self.is_over():
                raise IllegalMove("cannot pass: the game is over")
            return OthelloState(self.black, self.white, 1 - self.side, self.plies + 1)
        name = square_name(move)
        if (player | opponent) >> move & 1:
            raise IllegalMove(f"{name} is not empty")
        flipped = int(kernels.flips(_U(player), _U(opponent), move))
        if not flipped:
            raise IllegalMove(f"{name} flips nothing")
        player |= flipped | (1 << move)
        opponent &= ~flipped
        if self.side == 0:
            return OthelloState(player, opponent, 1, self.plies + 1)
        return OthelloState(opponent, player, 0, self.plies + 1)

    def is_over(self) -> bool:
        b, w = _U(self.black), _U(self.white)
        return not kernels.legal_moves(b, w) and not kernels.legal_moves(w, b)

    def result(self) -> int:
        """Black's disc difference with the empty squares given to the winner."""
        if not self.is_over():
            raise ValueError("the game is not over: it has no result yet")
        return int(kernels.final_score(_U(self.black), _U(self.white)))

    def key(self) -> tuple[int, ...]:
        return (self.black, self.white, self.side)


_INITIAL = OthelloState(int(kernels.BLACK_START), int(kernels.WHITE_START), 0)


class Othello:
    """Static facts and text forms of Othello (moves: squares 0..63 and ``PASS`` = 64)."""

    name = "othello"
    title = "Othello"
    players = ("black", "white")
    rows = 8
    cols = 8
    num_moves = 65
    colours = ("Black", "White")
    downloads = MappingProxyType({"txt": "moves", "ggf": "ggf"})
    symmetries = 8
    """The symmetries of the square (``games.othello.symmetry``)."""
    PASS = PASS

    def initial(self) -> OthelloState:
        return _INITIAL

    def parse_move(self, state: object, text: str) -> int:
        state = _othello(state)
        stripped = text.strip()
        match = _MOVE_RE.fullmatch(stripped)
        if match is None:
            raise InvalidNotation(f"bad move {text!r}: expected a square a1..h8 or 'pass'")
        move = PASS if match.group(3) else _square(match.group(1), match.group(2))
        state.play(move)  # raises IllegalMove saying why
        return move

    def format_move(self, move: int) -> str:
        return square_name(move)

    def parse_moves(self, text: str, start: object | None = None) -> OthelloState:
        """Squares back to back (``"f5d6c3"``); forced passes may be written or left out."""
        state = _INITIAL if start is None else _othello(start)
        stripped = "".join(text.split())
        moves: list[int] = []
        pos = 0
        while pos < len(stripped):
            match = _MOVE_RE.match(stripped, pos)
            if match is None:
                raise InvalidNotation(
                    f"bad move {stripped[pos:pos + 2]!r} at character {pos + 1} of {text!r}"
                )
            moves.append(PASS if match.group(3) else _square(match.group(1), match.group(2)))
            pos = match.end()
        for i, move in enumerate(moves):
            if move != PASS and state.legal_moves() == [PASS]:
                state = state.play(PASS)  # an inferred forced pass
            try:
                state = state.play(move)
            except IllegalMove as error:
                where = f"move {i + 1} ({square_name(move)}) of {text!r}"
                raise IllegalMove(f"{where}: {error}") from None
        return state

    def format_moves(self, moves: Sequence[int]) -> str:
        return "".join(square_name(m) for m in moves)

    def parse_position(self, text: str) -> OthelloState:
        """``<64 chars a1..h8> <X|O>``; anything after ``;`` is ignored (OBF lines)."""
        body = text.split(";", 1)[0].split()
        if len(body) != 2 or len(body[0]) != 64 or body[1].upper() not in ("X", "O"):
            raise InvalidNotation(
                f"bad position {text!r}: expected 64 squares of X, O or - and a side X or O"
            )
        board, side = body[0].upper(), body[1].upper()
        black = white = 0
        for sq, char in enumerate(board):
            if char == "X":
                black |= 1 << sq
            elif char == "O":
                white |= 1 << sq
            elif char not in "-.":
                raise InvalidNotation(f"bad square {char!r} at {square_name(sq)} in {text!r}")
        discs = (black | white).bit_count()
        return OthelloState(black, white, 0 if side == "X" else 1, discs - 4)

    def format_position(self, state: object) -> str:
        state = _othello(state)
        chars = []
        for sq in range(64):
            if state.black >> sq & 1:
                chars.append("X")
            elif state.white >> sq & 1:
                chars.append("O")
            else:
                chars.append("-")
        return "".join(chars) + (" X" if state.side == 0 else " O")

    def cells(self, state: object) -> list[int | None]:
        """Row 1 first (a1 top-left), as Othello boards are drawn; 0 black, 1 white."""
        state = _othello(state)
        black, white = state.black, state.white
        return [0 if black & bit else 1 if white & bit else None for bit in _SQUARE_BITS]

    def winning_line(self, state: object) -> list[int]:
        _othello(state)
        return []  # won by count, not by a line

    def perft(self, state: object, depth: int) -> int:
        if depth < 0:
            raise ValueError(f"depth must be at least 0, got {depth}")
        player, opponent = _othello(state).mover_boards()
        return int(kernels.perft(_U(player), _U(opponent), depth))


    def exports(self, played: PlayedGame) -> dict[str, str]:
        """``moves``: ``"f5d6c3..."``, squares in order, passes left out (they are forced),
        as in every published transcript; ``ggf``: the GGF record (``games.othello.ggf``)."""
        out = []
        for text in played.moves:
            square = text.strip().lower()
            if square == "pass":
                continue
            if not _SQUARE_RE.fullmatch(square):
                raise InvalidNotation(f"not an Othello move: {text!r}")
            out.append(square)
        start = _othello(played.start)
        board = ggf.board_from_cells(self.cells(start))
        return {"moves": "".join(out),
                "ggf": ggf.write_ggf(played, board=board, to_move=start.to_move)}

    def transform(self, cells: int, symmetry: int) -> int:
        return othello_transform(cells, symmetry)

    def transform_move(self, move: str, symmetry: int, inverse: bool = False) -> str:
        text = move.strip().lower()
        if text == "pass":
            return text
        if not _SQUARE_RE.fullmatch(text):
            raise InvalidNotation(f"not an Othello square: {move!r}")
        row, col = square_image(int(text[1]) - 1, ord(text[0]) - ord("a"), symmetry, inverse)
        return f"{'abcdefgh'[col]}{row + 1}"


def _square(col: str, row: str) -> int:
    return (int(row) - 1) * 8 + "abcdefgh".index(col.lower())


def _othello(state: object) -> OthelloState:
    if not isinstance(state, OthelloState):
        raise TypeError(f"not an Othello state: {state!r}")
    return state
