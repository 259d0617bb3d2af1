"""Othello: 8x8, black moves first, flips in eight directions, forced passes, disc difference."""

from games.othello.rules import PASS, Othello, OthelloState, square_name

GAME = Othello()

__all__ = ["GAME", "PASS", "Othello", "OthelloState", "square_name"]
