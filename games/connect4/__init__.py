"""Connect Four: 7 columns x 6 rows, gravity, four in a row wins, a full board is a draw."""

from games.connect4.rules import Connect4, Connect4State

GAME = Connect4()

__all__ = ["GAME", "Connect4", "Connect4State"]
