"""The Othello opening book: symmetric positions share entries, the shipped file is what its
builder makes, and the expert level plays its moves at once and not always the same."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import ai
from ai.levels import choose_move, find
from ai.limits import Limits
from ai.othello import book, book_build, patterns
from games.othello import GAME

EXPERT = find("othello", "expert")


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    ai.warm_up("othello")


@pytest.mark.slow
def test_symmetric_positions_share_one_entry_with_the_moves_mapped_back(tmp_path: Path) -> None:
    state = GAME.parse_moves("f5d6c3")
    key, t = book.canonical(state)
    source = patterns.TRANSFORMS[t].tolist()
    d3 = GAME.parse_move(state, "d3")
    path = tmp_path / "book.txt"
    path.write_text(book.format_entry(key, ((source.index(d3), 2),)) + "\n")
    assert book.lookup(state, path) == ((d3, 2),)
    for source in patterns.TRANSFORMS:
        P, O = state.mover_boards()
        image = type(state)(*(sum(1 << int(source[sq]) for sq in range(64) if b >> sq & 1)
                              for b in (P, O)), 0)
        hit = book.lookup(image, path)
        assert hit is not None
        ((move, score),) = hit
        assert score == 2
        # The move is d3's image: it flips the images of the discs d3 flips.
        assert image.play(move).black.bit_count() == state.play(d3).white.bit_count()
    assert book.lookup(GAME.parse_moves("f5d6c4"), path) is None


def test_the_shipped_book_covers_every_position_its_builder_visits() -> None:
    entries = book.load()
    assert entries, "the book file is missing"
    visited = {book.canonical(s)[0] for s in book_build.positions(book.PLIES, entries)}
    assert visited == set(entries)
    assert book.BOOK_FILE.stat().st_size < 200_000


@pytest.mark.slow
def test_book_entries_are_what_a_fresh_search_finds() -> None:
    entries = book.load()
    held = list(book_build.positions(book.PLIES, entries))
    for state in random.Random(4).sample(held, 2):
        assert book.lookup(state) == book_build.score_moves(state)


def test_the_expert_plays_the_start_from_the_book_at_once_and_varies_it() -> None:
    state = GAME.initial()
    last = ai.best(state, EXPERT.limits())
    assert last.book and last.nodes == 0
    moves = {choose_move(state, EXPERT, seed, [last]) for seed in range(20)}
    assert len(moves) >= 2
    assert moves <= {m for m, _ in last.root_scores}


def test_a_level_searching_by_depth_does_not_use_the_book() -> None:
    assert not ai.best(GAME.initial(), Limits(depth=2)).book
