"""The textbook searches agree with the textbook and with each other."""

from __future__ import annotations

import random

import pytest

from ai.reference import CANONICAL_TREE, TreeState, alphabeta, minimax, negamax
from games.connect4 import GAME
from games.errors import IllegalMove


def test_the_canonical_textbook_tree_has_value_three() -> None:
    root = TreeState.root(CANONICAL_TREE)
    assert minimax(root, 2, TreeState.evaluate) == 3
    assert negamax(root, 2, TreeState.evaluate) == 3
    assert alphabeta(root, 2, TreeState.evaluate) == 3


def test_the_tree_game_moves_down_branches_to_its_leaves() -> None:
    root = TreeState.root(CANONICAL_TREE)
    assert root.legal_moves() == [0, 1, 2]
    leaf = root.play(2).play(0)
    assert leaf.is_over() and leaf.result() == 14
    with pytest.raises(IllegalMove):
        leaf.play(0)


def test_a_deeper_tree_seen_from_min_is_the_negation() -> None:
    tree = [[[1, 9], [4]], [[-3, 7], [8, 2]]]
    root = TreeState.root(tree)
    value = minimax(root, 3, TreeState.evaluate)
    # MAX picks branch 1: MIN there chooses between max(-3,7)=7 and max(8,2)=8.
    assert value == 7
    assert negamax(root, 3, TreeState.evaluate) == 7
    assert alphabeta(root, 3, TreeState.evaluate) == 7


def test_minimax_negamax_and_alphabeta_agree_on_random_connect4_positions() -> None:
    from ai.connect4.engine import leaf_value

    rng = random.Random(3)
    checked = 0
    while checked < 60:
        state = GAME.initial()
        for _ in range(rng.randrange(0, 30)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        if state.is_over():
            continue
        depth = rng.randrange(1, 4)
        value = minimax(state, depth, leaf_value)
        assert negamax(state, depth, leaf_value) == value
        assert alphabeta(state, depth, leaf_value) == value
        checked += 1
