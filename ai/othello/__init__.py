"""The Othello engine: ``search(state, limits)`` and ``warm_up()`` (see ``ai.othello.engine``).

Modules: ``weights`` (every tunable), ``patterns`` (the learned static score, its weights in
``patterns.npz``), ``evaluation`` (the hand-made one, kept for comparison, and the scores of
finished games), ``alphabeta`` (the compiled midgame PVS and endgame solver), ``engine``
(iterative deepening, the solve and the opening ``book``), ``train`` (makes the training data
and fits the patterns), ``book_build`` (makes the book), ``probcut`` (the Multi-ProbCut table
of the selective midgame search, in ``probcut.json``) and ``probcut_fit`` (measures and fits
it).
"""

from ai.othello.engine import search, warm_up
from ai.othello.evaluation import evaluate, leaf_value, terminal

__all__ = ["search", "warm_up", "evaluate", "leaf_value", "terminal"]
