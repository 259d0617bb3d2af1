"""The Connect Four opening book: proven moves, mirrored right, and played by the level bounded
by time alone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import ai
from ai.connect4 import book
from ai.connect4.book_build import positions
from ai.connect4.engine import clear
from ai.limits import Limits
from games.connect4 import GAME

TIME_BOUNDED = Limits(soft_time=1.0, hard_time=2.0)
"""How the expert level searches: by the clock alone, for the single best move."""


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("connect4")


def test_a_position_and_its_mirror_image_share_one_entry_with_the_move_mirrored(
    tmp_path: Path,
) -> None:
    state = GAME.parse_moves("3325")
    twin = GAME.parse_moves("5563")  # the same board read right to left
    assert book.canonical(state)[0] == book.canonical(twin)[0]
    key, mirrored = book.canonical(state)
    column = 1 if not mirrored else 5  # column 2 as the asking orientation sees it
    path = tmp_path / "book.txt"
    path.write_text(book.format_entry(key, column, 3) + "\n")
    assert book.lookup(state, path) == (1, 3)
    assert book.lookup(twin, path) == (5, 3)
    assert book.lookup(GAME.parse_moves("3324"), path) is None


def test_the_shipped_book_covers_every_position_its_builder_visits() -> None:
    entries = book.load()
    assert entries, "the book file is missing"
    visited = {book.canonical(s)[0] for s in positions(FIRST_PLIES, SECOND_PLIES, entries)}
    assert visited == set(entries)


def test_book_entries_hold_the_solvers_score_and_a_move_that_keeps_it() -> None:
    entries = book.load()
    deepest = [s for s in positions(FIRST_PLIES, SECOND_PLIES, entries)
               if s.ply >= max(FIRST_PLIES, SECOND_PLIES) - 2]
    for state in random.Random(3).sample(deepest, 4):
        move, score = book.lookup(state) or (-1, 0)
        clear()  # a proof of its own, not one the book's builder left in a table
        assert ai.best(state, Limits(exact=True)).score == score
        child = state.play(move)
        assert child.is_over() or -ai.best(child, Limits(exact=True)).score == score


def test_a_search_bounded_by_time_alone_plays_the_books_move_at_once() -> None:
    for moves in ("", "4", "3", "5", "44"):
        state = GAME.parse_moves(moves)
        found = ai.best(state, TIME_BOUNDED)
        assert (found.move, found.score) == book.lookup(state), moves
        assert found.exact and found.nodes == 0 and found.book  # shown as a book move


def test_past_the_book_a_search_bounded_by_time_proves_what_fits_in_its_clock(
    shared_data: Path,
) -> None:
    for line in (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()[:10]:
        moves, score = line.split()
        state = GAME.parse_position(moves)
        found = ai.best(state, TIME_BOUNDED)
        assert found.exact and found.score == int(score), line


def test_searches_bounded_by_depth_or_scoring_several_moves_do_not_use_the_book() -> None:
    start = GAME.initial()
    assert not ai.best(start, Limits(depth=4)).exact
    several = ai.best(start, Limits(soft_time=0.2, hard_time=0.4, multipv=7))
    assert len(several.root_scores) == 7 and not several.exact


FIRST_PLIES, SECOND_PLIES = book.PLIES


@pytest.mark.slow
def test_discus_book_stats_says_how_many_entries_and_what_each_ply_holds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from server.cli import main

    assert main(["book", "stats"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{len(book.load())} entries")
    lines = out.splitlines()
    second_file = next(n for n, line in enumerate(lines) if line.startswith("second file"))
    plies = [int(line.split()[1].rstrip(":")) for line in lines[1:second_file]]
    third_file = next(n for n, line in enumerate(lines) if line.startswith("outcomes file"))
    # Then the second file: how much of every position up to its last ply is held.
    assert [line.split()[1] for line in lines[second_file + 1:third_file]] == [
        f"{ply}:" for ply in range(book.EVERY_PLY + 1)]
    # Last the third: its entries, and how much of its ply the three files hold.
    assert lines[third_file:] == [lines[-1]]
    assert f": {len(book.load_outcomes(book.OUTCOMES_FILE))} entries (" in lines[-1]
    assert f"; ply {book.OUTCOMES_PLY}: " in lines[-1]
    first = range(0, FIRST_PLIES, 2)  # the first player moves at even plies
    second = range(1, SECOND_PLIES, 2)
    assert plies == sorted([*first, *second])  # every ply the book's sides move at
