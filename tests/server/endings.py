"""Games played to each way a game can end by its rules, as the moves people send: what
tests of finishing share."""

from __future__ import annotations

import random

import games

FOUR_IN_COLUMN_ONE = ["1", "2", "1", "2", "1", "2", "1"]
"""Connect Four: seat 0 wins at its fourth move (score 22 - 4 = 18, Pons' convention)."""

CONNECT4_DRAW = list("441365675334466335442232661515577771217122")
"""Connect Four: 42 plies fill the board without four in a row anywhere."""

OTHELLO_WIPEOUT = ["d3", "c3", "f5", "f4", "f3", "d2", "d1", "e3", "b3"]
"""Othello: at ply 9 Black holds every disc, so neither side can move with 51 squares
empty (Black wins 64-0: the empty squares go to the winner)."""


def random_game(name: str, seed: int) -> list[str]:
    """A game of ``name`` played to its end with random legal moves (the same every run)."""
    rules = games.load(name)
    rng = random.Random(seed)
    state, moves = rules.initial(), []
    while not state.is_over():
        move = rng.choice(state.legal_moves())
        moves.append(rules.format_move(move))
        state = state.play(move)
    return moves


def final_cells(name: str, moves: list[str]) -> list[int | None]:
    """The board's cells (the seat owning each, None: empty) after ``moves``."""
    rules = games.load(name)
    state = rules.initial()
    for text in moves:
        state = state.play(rules.parse_move(state, text))
    return list(rules.cells(state))
