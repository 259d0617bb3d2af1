"""Text in, JSON lines out: the analysis behind ``discus analyse``.

Positions arrive in each game's text form (as in the shared reference files) and answers
leave as one JSON object per position, in input order, so the output can be diffed against a
reference file line by line. In a positions file, a line that cannot be answered (malformed,
illegal, or a finished game) gets a line with its ``position`` and an ``error`` instead of a
move, and the lines after it are still answered.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

import ai
import games
from ai.limits import Limits
from games.base import Game, State

DEFAULT_SECONDS = 2.0
"""Budget per position when the caller gives no limit at all."""


def limits_from(depth: int | None, time: float | None, exact: bool) -> Limits:
    """The ``Limits`` for the command-line options.

    ``time`` is a hard budget; no new iteration starts after half of it, because the next one
    usually costs more than all before it. With no option at all, ``DEFAULT_SECONDS``.
    """
    if depth is None and time is None and not exact:
        time = DEFAULT_SECONDS
    if time is None:
        return Limits(depth=depth, exact=exact)
    return Limits(depth=depth, soft_time=time / 2, hard_time=time, exact=exact)


def position_field(game_name: str, line: str) -> str | None:
    """The position part of one line of a positions file, or None for a line to skip.

    Connect Four lines are ``<moves> <score>`` (the first field); Othello lines are OBF, the
    position being everything before the first ``;``.
    """
    text = line.strip()
    if not text or text[0] in "#%":
        return None
    if game_name == "othello":
        return text.split(";", 1)[0].strip()
    return text.split()[0]


def parse(game: Game, text: str) -> State:
    """A position in the game's position form or, failing that, as moves from the start."""
    try:
        return game.parse_position(text)
    except games.InvalidNotation as position_error:
        try:
            return game.parse_moves(text)
        except games.InvalidNotation:
            raise position_error from None


def analyse(game: Game, text: str, limits: Limits) -> dict[str, object]:
    """The engine's answer for one position as a JSON-ready dict."""
    state = parse(game, text)
    result = ai.best(state, limits)
    return {
        "position": text,
        "move": game.format_move(result.move),
        "score": result.score,
        "depth": result.depth,
        "exact": result.exact,
        "nodes": result.nodes,
        "seconds": round(result.seconds, 6),
        "pv": [game.format_move(m) for m in result.pv],
    }


def analyse_lines(
    game_name: str, lines: Iterable[str], limits: Limits, raw: bool = False
) -> Iterator[str]:
    """One JSON line per position; ``raw`` lines are positions as they are (no file fields).

    Raw positions are the caller's own: the first bad one raises ``ValueError``. Lines of a
    file get an error line each instead (see ``answer_file``).
    """
    for answer in _answers(game_name, lines, limits, raw):
        yield json.dumps(answer)


def answer_file(
    game_name: str, lines: Iterable[str], limits: Limits, out: TextIO | None = None
) -> int:
    """Print the answer to every position of a positions file, in input order, as it comes.

    Returns the exit status for the command: 1 if any line got an ``error`` instead of a
    move, else 0; one bad line never keeps the later lines from being answered.
    """
    out = sys.stdout if out is None else out
    status = 0
    for answer in _answers(game_name, lines, limits, raw=False):
        if "error" in answer:
            status = 1
        print(json.dumps(answer), file=out, flush=True)
    return status


def _answers(
    game_name: str, lines: Iterable[str], limits: Limits, raw: bool
) -> Iterator[dict[str, object]]:
    game = games.load(game_name)
    ai.warm_up(game_name)
    for line in lines:
        text = line.strip() if raw else position_field(game_name, line)
        if text is None:
            continue
        if raw:
            yield analyse(game, text, limits)
            continue
        try:
            yield analyse(game, text, limits)
        except ValueError as error:
            yield {"position": text, "error": str(error)}
