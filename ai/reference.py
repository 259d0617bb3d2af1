"""The textbook searches the compiled engines descend from, small and clear, over any game.

They take a game ``State`` and a leaf ``evaluate(state) -> int`` scoring the side to move (it
is called on finished games too, so it must score those). They are the reference the tests
hold the engines to: same depth and evaluation, same value. Slow by design.

``TreeState`` turns a nested list of leaf values into a game, so the textbook's own trees can
be searched: ``minimax(TreeState.root(CANONICAL_TREE), 2, TreeState.evaluate) == 3``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from games.base import State
from games.errors import IllegalMove

Evaluate = Callable[[State], int]
"""Leaf value from the side to move's point of view."""


def minimax(state: State, depth: int, evaluate: Evaluate) -> int:
    """Two-function minimax: the value for the side to move at ``state``, ``depth`` plies deep.

    MAX is the side to move at the root; MIN moves at every other ply (a pass is a ply).
    """
    root_side = state.to_move

    def leaf(s: State) -> int:
        value = evaluate(s)
        return value if s.to_move == root_side else -value

    def max_value(s: State, d: int) -> int:
        if d == 0 or s.is_over():
            return leaf(s)
        return max(min_value(s.play(m), d - 1) for m in s.legal_moves())

    def min_value(s: State, d: int) -> int:
        if d == 0 or s.is_over():
            return leaf(s)
        return min(max_value(s.play(m), d - 1) for m in s.legal_moves())

    return max_value(state, depth)


def negamax(state: State, depth: int, evaluate: Evaluate) -> int:
    """Plain negamax: one function, scores always from the side to move."""
    if depth == 0 or state.is_over():
        return evaluate(state)
    return max(-negamax(state.play(m), depth - 1, evaluate) for m in state.legal_moves())


def alphabeta(
    state: State,
    depth: int,
    evaluate: Evaluate,
    alpha: float = -math.inf,
    beta: float = math.inf,
) -> float:
    """Fail-soft negamax alpha-beta: exact inside ``(alpha, beta)``, a bound outside it."""
    if depth == 0 or state.is_over():
        return evaluate(state)
    best = -math.inf
    for move in state.legal_moves():
        score = -alphabeta(state.play(move), depth - 1, evaluate, -beta, -max(alpha, best))
        if score > best:
            best = score
            if best >= beta:
                break  # the opponent will not allow this line: no need to look further
    return best


Tree: TypeAlias = "int | Sequence[Tree]"

CANONICAL_TREE: Tree = [[3, 12, 8], [2, 4, 6], [14, 5, 2]]
"""The textbook's example: MAX at the root over three MIN nodes; its value is 3."""


@dataclass(frozen=True)
class TreeState:
    """A node of an explicit game tree; leaves hold values for the first player (MAX)."""

    tree: Tree
    path: tuple[int, ...] = ()
    game_name = "tree"

    @classmethod
    def root(cls, tree: Tree) -> TreeState:
        return cls(tree)

    def _node(self) -> Tree:
        node = self.tree
        for i in self.path:
            assert not isinstance(node, int)
            node = node[i]
        return node

    @property
    def to_move(self) -> int:
        return len(self.path) % 2

    @property
    def ply(self) -> int:
        return len(self.path)

    def legal_moves(self) -> list[int]:
        node = self._node()
        return [] if isinstance(node, int) else list(range(len(node)))

    def play(self, move: int) -> TreeState:
        if move not in self.legal_moves():
            raise IllegalMove(f"no branch {move} at {self.path}")
        return TreeState(self.tree, (*self.path, move))

    def is_over(self) -> bool:
        return isinstance(self._node(), int)

    def result(self) -> int:
        node = self._node()
        if not isinstance(node, int):
            raise ValueError("not a leaf")
        return node

    def key(self) -> tuple[int, ...]:
        return self.path

    @staticmethod
    def evaluate(state: State) -> int:
        """A leaf's value for the side to move (leaves store MAX's value)."""
        value = state.result()
        return value if state.to_move == 0 else -value
