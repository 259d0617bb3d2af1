"""One conformance test over every game: the protocol's promises hold on random playouts."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import games
from games.base import Game, State
from server.storage.symmetry import canonical
from tests import thirdgame

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


@pytest.fixture(params=[*games.names(), thirdgame.NAME])
def any_game(request: pytest.FixtureRequest) -> Iterator[Game]:
    """Every shipped game, and the plug-in game of ``tests/thirdgame`` registered for the test."""
    thirdgame.register()
    try:
        yield games.load(request.param)
    finally:
        thirdgame.unregister()


def test_a_registered_game_is_listed_and_loaded_until_unregistered() -> None:
    thirdgame.register()
    try:
        assert games.names()[-1] == thirdgame.NAME
        assert games.load(thirdgame.NAME).title == "Tic-tac-toe"
        with pytest.raises(ValueError, match="already"):
            games.register(thirdgame.NAME, "games.othello")
    finally:
        thirdgame.unregister()
    assert thirdgame.NAME not in games.names()
    with pytest.raises(ValueError, match="unknown game"):
        games.load(thirdgame.NAME)


def test_every_games_static_facts_are_what_the_server_shows(any_game: Game) -> None:
    assert len(any_game.colours) == 2 and all(any_game.colours)
    assert any_game.colours[0] != any_game.colours[1]
    assert "txt" in any_game.downloads
    assert any_game.symmetries >= 1


def test_every_symmetry_moves_cells_one_to_one_and_moves_there_and_back(
    any_game: Game,
) -> None:
    size = any_game.rows * any_game.cols
    everything = (1 << size) - 1
    for s in range(any_game.symmetries):
        images = [any_game.transform(1 << i, s) for i in range(size)]
        assert all(image.bit_count() == 1 for image in images)
        assert sum(images) == everything == any_game.transform(everything, s)
    assert [any_game.transform(1 << i, 0) for i in range(size)] == [1 << i for i in range(size)]
    rng = random.Random(5)
    for state in playout(any_game, rng)[:-1]:
        for move in state.legal_moves():
            text = any_game.format_move(move)
            for s in range(any_game.symmetries):
                there = any_game.transform_move(text, s)
                assert any_game.transform_move(there, s, inverse=True) == text


def test_a_positions_symmetric_images_share_its_cache_key(any_game: Game) -> None:
    size = any_game.rows * any_game.cols
    rng = random.Random(9)
    for state in playout(any_game, rng)[1:-1:2]:
        cells = any_game.cells(state)
        key = canonical(any_game.name, cells, state.to_move).key
        for s in range(any_game.symmetries):
            image: list[int | None] = [None] * size
            for i, owner in enumerate(cells):
                image[any_game.transform(1 << i, s).bit_length() - 1] = owner
            assert canonical(any_game.name, image, state.to_move).key == key


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


def fours(cells: list[int | None], rows: int, cols: int) -> set[int]:
    """The players (0, 1) owning four cells in a row in any direction on the drawn board."""
    owners: set[int] = set()
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_r, end_c = r + 3 * dr, c + 3 * dc
                if not (0 <= end_r < rows and 0 <= end_c < cols):
                    continue
                line = {cells[(r + i * dr) * cols + c + i * dc] for i in range(4)}
                owner = line.pop()
                if not line and owner is not None:
                    owners.add(owner)
    return owners


def expected_result(game: Game, states: list[State]) -> int:
    """The final score of a finished playout worked out from its drawn board alone (and, for
    Connect Four, who moved last), as the rules of each game define it for the first player."""
    last = states[-1]
    cells = game.cells(last)
    first, second, empty = cells.count(0), cells.count(1), cells.count(None)
    if game.name == "othello":
        # Disc difference; the empty squares go to the winner.
        diff = first - second
        return diff + empty if diff > 0 else diff - empty if diff < 0 else 0
    assert game.name == "connect4", "a new game needs its own expected result here"
    winners = fours(cells, game.rows, game.cols)
    if not winners:
        assert empty == 0, "a game without four in a row ends only on a full board"
        return 0
    # Only the player who made the last move can have won, with their last stone.
    mover = states[-2].to_move
    assert winners == {mover}
    stones = first if mover == 0 else second
    return 22 - stones if mover == 0 else stones - 22


def test_results_name_the_winner_the_final_board_shows(game: Game) -> None:
    rng = random.Random(20261122)
    signs = set()
    early_ends = 0
    for _ in range(3 * PLAYOUTS):
        states = playout(game, rng)
        result = states[-1].result()
        assert result == expected_result(game, states), game.format_position(states[-1])
        if game.name == "connect4" and result:
            assert 1 <= abs(result) <= 21
        signs.add((result > 0) - (result < 0))
        early_ends += None in game.cells(states[-1])
    assert {-1, 1} <= signs, "random playouts are won by either side"
    assert early_ends, "some playouts end before the board is full (empties to the winner)"


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
