"""GGF, the Generic Game Format of GGS (``(;GM[Othello]...B[F5]W[D6]...;)``): Othello's
file format, written and read. GGF boards are 64 characters, row 1 first (``*`` black, ``O``
white, ``-`` empty), then the colour to move; moves are squares in capitals or ``PA`` for a
pass, optionally ``/eval/seconds``; ``RE`` is the disc difference from black's side with
``:r`` after a resignation and ``:t`` after a loss on time. Pure text, no I/O; a text that
is not GGF Othello raises ``InvalidNotation``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from games.base import PlayedGame
from games.errors import InvalidNotation

PASS = "pass"
GGF_PASS = "PA"
START_BOARD = "-" * 27 + "O*" + "-" * 6 + "*O" + "-" * 27  # d4 white, e4 black, d5 black, e5 white
_PROPERTY = re.compile(r"([A-Z]{1,2})\[([^\]]*)\]")
_SQUARE = re.compile(r"[a-h][1-8]")


# -- GGF -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GgfGame:
    """What a GGF Othello record says. ``board``: 64 of ``*``/``O``/``-``, row 1 first;
    ``to_move``: 0 black, 1 white; ``moves``: squares in lower case or ``"pass"``."""

    black: str
    white: str
    board: str
    to_move: int
    moves: list[str]
    result: float | None = None
    result_flag: str | None = None
    seconds: list[float | None] = field(default_factory=list)
    date: str | None = None
    place: str | None = None


def board_from_cells(cells: Sequence[int | None]) -> str:
    """A GGF board from ``Game.cells`` (owner 0 black, 1 white, row 1 first)."""
    if len(cells) != 64:
        raise InvalidNotation(f"an Othello board has 64 cells, got {len(cells)}")
    return "".join("-" if c is None else "*" if c == 0 else "O" for c in cells)


def write_ggf(played: PlayedGame, board: str = START_BOARD, to_move: int = 0,
              place: str = "Discus") -> str:
    """One game as a GGF record. ``played.names``: black's then white's display names;
    ``board`` and ``to_move``: the start position (default: the standard one, black to move),
    e.g. ``board_from_cells(GAME.cells(start))``."""
    if len(board) != 64 or set(board) - set("*O-"):
        raise InvalidNotation("a GGF board is 64 of '*', 'O', '-'")
    when = datetime.fromtimestamp(played.started_at, UTC).strftime("%Y.%m.%d_%H:%M:%S.UTC")
    parts = [
        "(;GM[Othello]",
        f"PC[{_clean(place)}]",
        f"DT[{when}]",
        f"PB[{_clean(played.names[0])}]",
        f"PW[{_clean(played.names[1])}]",
    ]
    if played.result is not None:
        parts.append(f"RE[{played.result:+.2f}{_flag(played.reason)}]")
    parts.append("TY[8]")
    parts.append(f"BO[8 {' '.join(board[r * 8 : r * 8 + 8] for r in range(8))} "
                 f"{'*' if to_move == 0 else 'O'}]")
    for ply, (move, seconds) in enumerate(zip(played.moves, played.seconds, strict=True)):
        square = move.strip().lower()
        if square != PASS and not _SQUARE.fullmatch(square):
            raise InvalidNotation(f"not an Othello move: {move!r}")
        colour = "B" if (to_move + ply) % 2 == 0 else "W"
        text = GGF_PASS if square == PASS else square.upper()
        parts.append(f"{colour}[{text}//{seconds:.2f}]")
    parts.append(";)")
    return "".join(parts)


def parse_ggf(text: str) -> GgfGame:
    """An Othello GGF record (one game); ``InvalidNotation`` if it is not one."""
    body = text.strip()
    if not (body.startswith("(;") and body.endswith(";)")):
        raise InvalidNotation("a GGF game starts with '(;' and ends with ';)'")
    props = _PROPERTY.findall(body)
    values: dict[str, str] = {}
    moves: list[str] = []
    seconds: list[float | None] = []
    for name, value in props:
        if name in ("B", "W"):
            fields = value.split("/")
            square = fields[0].strip().lower()
            if square == GGF_PASS.lower():
                square = PASS
            elif not _SQUARE.fullmatch(square):
                raise InvalidNotation(f"not an Othello move in GGF: {value!r}")
            moves.append(square)
            seconds.append(float(fields[2]) if len(fields) > 2 and fields[2] else None)
        else:
            values.setdefault(name, value)
    if values.get("GM", "").lower() != "othello":
        raise InvalidNotation("not an Othello game (GM[Othello] missing)")
    board, to_move = _parse_board(values.get("BO", ""))
    result, flag = _parse_result(values.get("RE"))
    return GgfGame(
        black=values.get("PB", ""),
        white=values.get("PW", ""),
        board=board,
        to_move=to_move,
        moves=moves,
        result=result,
        result_flag=flag,
        seconds=seconds,
        date=values.get("DT"),
        place=values.get("PC"),
    )


def _parse_board(text: str) -> tuple[str, int]:
    fields = text.split()
    if not fields or fields[0] != "8":
        raise InvalidNotation(f"not an 8x8 Othello board: BO[{text}]")
    squares = "".join(fields[1:-1]) if len(fields) > 2 else ""
    colour = fields[-1] if len(fields) > 1 else ""
    if len(squares) != 64 or set(squares) - set("*O-") or colour not in ("*", "O"):
        raise InvalidNotation(f"bad Othello board: BO[{text}]")
    return squares, 0 if colour == "*" else 1


def _parse_result(text: str | None) -> tuple[float | None, str | None]:
    if not text:
        return None, None
    score, _, flag = text.partition(":")
    try:
        return float(score), flag or None
    except ValueError:
        raise InvalidNotation(f"bad GGF result: RE[{text}]") from None


def _flag(reason: str | None) -> str:
    reason = (reason or "").lower()
    if "resign" in reason:
        return ":r"
    if "time" in reason:
        return ":t"
    return ""


def _clean(text: str) -> str:
    """Property values cannot hold ']' (nor, for readers' sake, newlines)."""
    return re.sub(r"[\]\[\n\r]", " ", text)
