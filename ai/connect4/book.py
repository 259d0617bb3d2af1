"""The Connect Four opening book: proven best moves where a search cannot prove them in time.

Early positions take the solver minutes (the empty board) to seconds (ply 8); a level bounded
by time alone would play them from its heuristic, whose choice then depends on the clock. The
book holds, for each position the builder visited (``ai.connect4.book_build``), a best move
and its exact score in Pons' units, so such a level plays a proven move at once.

Entries are keyed by the position under its mirror image (the board read right to left), so
one entry serves both; the move is mirrored back on the way out. The file is text, one entry
a line: the canonical key in hex, the best column (1-7, in the canonical orientation) and the
score (from the side to move). Ties between best moves were broken by the builder towards
the centre, so the book is reproducible. Two more files widen it: every position of the
first plies (``EVERY_FILE``), and outcomes only at the ply where even the weak solve does not
fit the expert's clock (``OUTCOMES_FILE``).
"""

from __future__ import annotations

import functools
from pathlib import Path

from games.connect4 import kernels
from games.connect4.rules import Connect4State

BOOK_FILE = Path(__file__).with_name("book.txt")
EVERY_FILE = Path(__file__).with_name("book_every.txt")
"""The book's second file: every position up to ``EVERY_PLY`` plies (``book_build
--every-ply``) that ``book.txt`` does not hold, in the same format. Kept apart because
``book.txt`` holds what the book's side faces on its own lines (what ``build``, ``verify`` and
``stats`` walk), while this one holds every early position whoever plays it: with both, every
move of every position before ``EVERY_PLY`` has a proven value, so the analysis board answers
the first plies of any game at once."""
EVERY_PLY = 4
OUTCOMES_FILE = Path(__file__).with_name("book_outcomes.txt")
"""The book's third file: win, draw or loss only (no exact score) and a move that keeps it,
for every position after ``EVERY_PLY`` up to ``OUTCOMES_PLY`` that the other two do not hold
(``book_build --outcomes-ply 6``, ``7`` and ``8``, then ``--derive`` for ply 5 from ply 6),
and may hold part of the ply after it (a build cut short ships what it holds, centre first). There
the weak solve takes the solver 1-20 s, past the expert's 3 s clock, so off the book's lines
(a take-back, the analysis board, a bot's odd opening) the expert played its heuristic's move
and lost the game's value in about one position of ten (two of 44 at ply 7). One line a
position: the canonical key in hex, the column (1-7, canonical orientation) and W, D or L from
the side to move."""
OUTCOMES_PLY = 8
_LETTERS = {"W": 1, "D": 0, "L": -1}
PLIES = (10, 9)
"""How far the shipped book reaches (``book_build --first-plies --second-plies``): positions
the first player faces before ply 10 and the second player before ply 9. From ply 8 the
solver already proved the expert's moves within half its clock on the machine the book was
built on (the longest proof 0.75 s of a 0.75 s share); two plies more leave a margin for a
slower machine."""
_COLUMN = (1 << (kernels.HEIGHT + 1)) - 1
"""One column's bits in Pons' layout (``HEIGHT + 1`` bits a column, the top one a sentinel)."""


def mirror(bits: int) -> int:
    """The bitboard read right to left: column c goes to column WIDTH - 1 - c."""
    stride = kernels.HEIGHT + 1
    out = 0
    for col in range(kernels.WIDTH):
        out |= ((bits >> (stride * col)) & _COLUMN) << (stride * (kernels.WIDTH - 1 - col))
    return out


def canonical(state: Connect4State) -> tuple[int, bool]:
    """(the key of ``state`` or of its mirror image, whichever is smaller; whether mirrored).

    The key is Pons' ``current + mask``: unique per position, as the solver's table uses."""
    key = state.current + state.mask
    mirrored = mirror(state.current) + mirror(state.mask)
    return (mirrored, True) if mirrored < key else (key, False)


def format_entry(key: int, column: int, score: int) -> str:
    return f"{key:x} {column + 1} {score:+d}"


def parse_entry(line: str) -> tuple[int, int, int]:
    """(key, column 0-6, score) of one line of the book file."""
    key, column, score = line.split()
    return int(key, 16), int(column) - 1, int(score)


@functools.lru_cache(maxsize=1)
def load(path: Path = BOOK_FILE) -> dict[int, tuple[int, int]]:
    """Canonical key -> (column in the canonical orientation, exact score); empty without a
    file (a build in progress, or a checkout without the book)."""
    if not path.exists():
        return {}
    entries = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, column, score = parse_entry(line)
            entries[key] = (column, score)
    return entries


def format_outcome(key: int, column: int, outcome: int) -> str:
    return f"{key:x} {column + 1} {'LDW'[outcome + 1]}"


@functools.lru_cache(maxsize=2)
def load_outcomes(path: Path) -> dict[int, tuple[int, int]]:
    """Canonical key -> (column in the canonical orientation, outcome 1, 0 or -1) of an
    outcomes file; empty without one."""
    if not path.exists():
        return {}
    entries = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, column, letter = line.split()
            entries[int(key, 16)] = (int(column) - 1, _LETTERS[letter])
    return entries


def outcome(state: Connect4State, path: Path | None = None) -> tuple[int, int] | None:
    """(a column that keeps it, outcome from the side to move: 1, 0 or -1) of ``state`` from
    the outcomes file (``path``, default ``OUTCOMES_FILE``), or None if it does not hold it.
    For a loss the column is one legal move (every move keeps a loss)."""
    key, mirrored = canonical(state)
    entry = load_outcomes(OUTCOMES_FILE if path is None else path).get(key)
    if entry is None:
        return None
    column, result = entry
    return (kernels.WIDTH - 1 - column if mirrored else column), result


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[int, tuple[int, int]]:
    """Both shipped files as one table (the second only adds positions)."""
    return {**load.__wrapped__(EVERY_FILE), **load(BOOK_FILE)}


def lookup(state: Connect4State, path: Path | None = None) -> tuple[int, int] | None:
    """(best column, exact score from the side to move) of ``state``, or None if the book does
    not hold it; ``path`` reads that one file instead of both shipped ones."""
    key, mirrored = canonical(state)
    entry = (_shipped() if path is None else load(path)).get(key)
    if entry is None:
        return None
    column, score = entry
    return (kernels.WIDTH - 1 - column if mirrored else column), score
