"""One conformance test over every game: the protocol's promises hold on random playouts."""

from __future__ import annotations

import random

import pytest

import games
from games.base import Game, State

PLAYOUTS = 40


def playout(game: Game, rng: random.Random) -> list[State]:
    """States from the start to the end of one random game."""
    states = [game.initial()]
    while not states[-1].is_over():
        states.append(states[-1].play(rng.choice(states[-1].legal_moves())))
    return states


@pytest.fixture(params=games.names())
def game(request: pytest.FixtureRequest) -> Game:
    return games.load(request.param)


def test_every_game_is_loaded_by_name_and_unknown_names_are_refused() -> None:
    for name in games.names():
        assert games.load(name).name == name
    with pytest.raises(ValueError, match="unknown game"):
        games.load("chess")


def test_random_playouts_keep_every_promise_of_the_protocol(game: Game) -> None:
    rng = random.Random(20261121)
    for _ in range(PLAYOUTS):
        moves: list[int] = []
        state = game.initial()
        while not state.is_over():
            legal = state.legal_moves()
            assert legal, "a game that is not over has a move (a pass counts)"
            assert len(set(legal)) == len(legal)
            key_before = state.key()
            move = rng.choice(legal)
            child = state.play(move)
            assert state.key() == key_before, "play must not mutate the state"
            assert child.ply == state.ply + 1
            assert child.to_move == 1 - state.to_move
            assert child != state
            illegal = [m for m in range(game.num_moves) if m not in legal]
            if illegal:
                with pytest.raises(games.IllegalMove):
                    state.play(rng.choice(illegal))
            assert game.parse_move(state, game.format_move(move)) == move
            moves.append(move)
            state = child
        assert state.legal_moves() == []
        score = state.result()
        assert isinstance(score, int)
        replayed = game.parse_moves(game.format_moves(moves))
        assert replayed == state and replayed.key() == state.key()


def test_result_is_refused_before_the_end(game: Game) -> None:
    with pytest.raises(ValueError):
        game.initial().result()


def test_positions_round_trip_through_their_text_form(game: Game) -> None:
    rng = random.Random(7)
    for state in playout(game, rng)[::3]:
        text = game.format_position(state)
        again = game.parse_position(text)
        assert again.key() == state.key()
        assert again.to_move == state.to_move


def test_cells_show_every_square_and_agree_with_the_key(game: Game) -> None:
    rng = random.Random(11)
    seen: dict[tuple[int, ...], list[int | None]] = {}
    for state in playout(game, rng):
        cells = game.cells(state)
        assert len(cells) == game.rows * game.cols
        assert set(cells) <= {0, 1, None}
        previous = seen.setdefault(state.key(), cells)
        assert previous == cells


def test_a_winning_line_appears_only_at_the_end_and_holds_only_the_winners_discs(
    game: Game,
) -> None:
    rng = random.Random(13)
    for _ in range(PLAYOUTS):
        *before, last = playout(game, rng)
        assert all(game.winning_line(state) == [] for state in before)
        line = game.winning_line(last)
        assert line == sorted(set(line))
        if line:
            cells = game.cells(last)
            assert last.result() != 0
            assert {cells[i] for i in line} == {0 if last.result() > 0 else 1}


def test_the_same_board_reached_by_different_orders_is_the_same_value(game: Game) -> None:
    by_board: dict[tuple[object, ...], list[State]] = {}
    frontier = [game.initial()]
    for _ in range(4):
        frontier = [s.play(m) for s in frontier for m in s.legal_moves()]
    for state in frontier:
        board = (state.to_move, *game.cells(state))
        by_board.setdefault(board, []).append(state)
    transposed = [group for group in by_board.values() if len(group) > 1]
    assert transposed, "four plies of either game have transpositions"
    for first, *others in transposed:
        for other in others:
            assert other == first and other.key() == first.key() and hash(other) == hash(first)
    assert len({s.key() for s in frontier}) == len(by_board)


def test_bad_notation_is_an_invalid_notation_error_naming_the_text(game: Game) -> None:
    with pytest.raises(games.InvalidNotation, match="zz"):
        game.parse_moves("zz")
