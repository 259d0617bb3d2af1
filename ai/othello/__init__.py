"""The Othello engine: ``search(state, limits)`` and ``warm_up()`` (see ``ai.othello.engine``).

Modules: ``weights`` (every tunable), ``evaluation`` (the static score), ``alphabeta`` (the
compiled midgame PVS and endgame solver), ``engine`` (iterative deepening and the solve).
"""

from ai.othello.engine import search, warm_up
from ai.othello.evaluation import evaluate, leaf_value, terminal

__all__ = ["search", "warm_up", "evaluate", "leaf_value", "terminal"]
