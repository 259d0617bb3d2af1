"""Tic-tac-toe's engine: a plain negamax, exact to the end of the game (a few thousand
positions), the trivial kind a plug-in game may bring. Scores are ``result``'s units from
the side to move: +1 a win, 0 a draw, -1 a loss."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator

from ai.limits import Iteration, Limits
from tests.thirdgame.rules import TicTacToeState


@functools.cache
def value(state: TicTacToeState) -> int:
    """The exact value of ``state`` for its side to move (negamax)."""
    if state.is_over():
        result = state.result()
        return result if state.to_move == 0 else -result
    return max(-value(state.play(move)) for move in state.legal_moves())


def search(state: TicTacToeState, limits: Limits) -> Iterator[Iteration]:
    """One iteration: every root move's exact value, best first (ties in cell order)."""
    started = time.perf_counter()
    scores = sorted(((m, -value(state.play(m))) for m in state.legal_moves()),
                    key=lambda pair: (-pair[1], pair[0]))
    move, score = scores[0]
    yield Iteration(depth=9 - state.ply, score=score, move=move, pv=(move,),
                    nodes=len(scores), seconds=time.perf_counter() - started, exact=True,
                    root_scores=tuple(scores))


def warm_up() -> float:
    started = time.perf_counter()
    value(TicTacToeState())
    return time.perf_counter() - started
