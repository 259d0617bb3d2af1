"""The Othello opening book: near-best moves of the first plies, found by a deep search.

Othello's openings cannot be solved, so unlike the Connect Four book (``ai.connect4.book``)
this one holds search results: for each position its builder visited
(``ai.othello.book_build``), every move whose score in a ``DEPTH``-ply search with the
shipped evaluation is within ``MARGIN`` discs of the best, with that score. The expert level
plays one of them at once (``engine.search`` yields them as a ``book`` iteration and
``levels.choose_move`` picks one by its seed), so it spends no time on the first moves and
its openings vary between games.

Entries are keyed by the position under the board's eight symmetries (the least of its
images), so one entry serves all of them; moves are mapped back on the way out. The file is
text, one entry a line: the key (the side to move's discs and the opponent's, 16 hex digits
each), then ``move:score`` pairs in the key's orientation, best first, scores in discs from
the side to move.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ai.othello import patterns
from games.othello import GAME, OthelloState

BOOK_FILE = Path(__file__).with_name("book.txt")
DEPTH = 12
"""Plies of the search that scores the book's moves."""
MARGIN = 1
"""Discs below the best a book move may score (scores are whole discs)."""
PLIES = 7
"""The book holds positions the book's side faces before this ply, both colours."""

Entry = tuple[tuple[int, int], ...]
"""(move, score) pairs in the key's orientation, best first."""


def _image(bits: int, t: int) -> int:
    return int(patterns.image_of(np.uint64(bits), t))


def canonical(state: OthelloState) -> tuple[tuple[int, int], int]:
    """(the least image of the position as (mover's discs, opponent's), the symmetry that
    makes it). A move ``m`` of the key is square ``patterns.TRANSFORMS[t][m]`` of ``state``."""
    P, O = state.mover_boards()
    return min(((_image(P, t), _image(O, t)), t) for t in range(8))


def format_entry(key: tuple[int, int], moves: Entry) -> str:
    pairs = " ".join(f"{GAME.format_move(m)}:{s:+d}" for m, s in moves)
    return f"{key[0]:016x}{key[1]:016x} {pairs}"


def parse_entry(line: str) -> tuple[tuple[int, int], Entry]:
    key, *pairs = line.split()
    moves = []
    for pair in pairs:
        move, score = pair.split(":")
        moves.append((_square(move), int(score)))
    return (int(key[:16], 16), int(key[16:], 16)), tuple(moves)


def _square(name: str) -> int:
    return "abcdefgh".index(name[0]) + 8 * (int(name[1]) - 1)


@functools.lru_cache(maxsize=2)
def load(path: Path = BOOK_FILE) -> dict[tuple[int, int], Entry]:
    """Key -> its moves; empty without a file (a build in progress, or none shipped)."""
    if not path.exists():
        return {}
    entries = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, moves = parse_entry(line)
            entries[key] = moves
    return entries


def lookup(state: OthelloState, path: Path = BOOK_FILE) -> Entry | None:
    """The book's (move, score) pairs for ``state``, best first, moves as squares of
    ``state``; None if the book does not hold it."""
    key, t = canonical(state)
    moves = load(path).get(key)
    if moves is None:
        return None
    source = patterns.TRANSFORMS[t]
    return tuple((int(source[m]), s) for m, s in moves)
