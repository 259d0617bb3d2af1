"""The engine protocols' framing, as text: what the bridge says for a position and how it
reads the answers (no process here; ``test_engine_bots`` runs real ones)."""

from __future__ import annotations

import time

import pytest

from clients.bridges import bridge_from, program_name
from clients.bridges.columns import Columns, best_column
from clients.bridges.framing import IllegalAnswer, Position, Resigned
from clients.bridges.gtp import Gtp, Refused, answer_reader
from clients.bridges.nboard import NBoard, ggf
from clients.turns import Turn, TurnClock

CLOCK = TurnClock(mine_ms=61_500, theirs_ms=50_000, initial_ms=180_000, increment_ms=2_000)


def read(until: object, lines: list[str]) -> object:
    assert callable(until)
    for line in lines:
        value = until(line)
        if value is not None:
            return value
    return None


def test_nboard_sends_the_game_as_one_ggf_line_with_black_first_and_passes_as_pa() -> None:
    text = ggf(Position("othello", ("f5", "d6", "pass"), (), CLOCK))
    assert "\n" not in text and text.startswith("(;GM[Othello]") and text.endswith(";)")
    assert "TI[03:00/00:02/]" in text
    assert "BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]" \
        in text
    assert text.index("B[F5]") < text.index("W[D6]") < text.index("B[PA]")


def test_nboard_reads_past_stale_output_until_its_pong_then_takes_the_move() -> None:
    nboard = NBoard(depth=5)
    opening = nboard.opening()
    assert [a.line for a in opening] == ["nboard 2", "set depth 5", "ping 1"]
    assert read(opening[-1].until, ["set myname Edax 4.4", "pong 1"]) is True
    assert nboard.identity() is not None and nboard.identity().text() == "Edax 4.4"  # type: ignore[union-attr]
    asks = nboard.turn(Position("othello", ("f5",), ("d6", "f6", "f4"), None))
    assert [a.line.split()[0] for a in asks] == ["set", "ping", "go"]
    assert read(asks[1].until, ["=== C4", "pong 1", "pong 2"]) is True
    answer = read(asks[2].until, ["status thinking", "nodestats 100 0.1", "=== F6/-2.00/0.5"])
    assert nboard.move(answer, ("d6", "f6", "f4")) == "f6"
    with pytest.raises(IllegalAnswer):
        nboard.move("A1", ("d6", "f6", "f4"))
    assert nboard.move("PA", ("pass",)) == "pass"


def test_gtp_replays_the_game_tells_the_clock_less_the_margin_and_reads_genmove() -> None:
    gtp = Gtp()
    asks = gtp.turn(Position("othello", ("f5", "pass"), ("d6",), CLOCK))
    assert [a.line for a in asks] == [
        "boardsize 8", "clear_board", "play b f5", "play w pass", "time_settings 180 0 0",
        "time_left b 61 0", "genmove b"]
    assert read(asks[-1].until, ["", "= D6", ""]) == "D6"
    assert gtp.move("D6", ("d6",)) == "d6"
    with pytest.raises(Resigned):
        gtp.move("resign", ("d6",))
    with pytest.raises(IllegalAnswer):
        gtp.move(Refused("illegal color"), ("d6",))
    assert read(answer_reader(), ["?5 unknown command", ""]) == Refused("unknown command")


def test_gtp_takes_the_engines_name_and_version_from_its_opening() -> None:
    gtp = Gtp()
    name, version, _ = gtp.opening()
    read(name.until, ["= Egaroucid", ""])
    read(version.until, ["= 7.4.0", ""])
    assert gtp.identity() is not None and gtp.identity().text() == "Egaroucid 7.4.0"  # type: ignore[union-attr]


def test_columns_sends_the_moves_and_plays_a_column_or_the_best_scored_legal_one() -> None:
    columns = Columns("solver")
    (ask,) = columns.turn(Position("connect4", ("4", "4", "5", "3"), tuple("1234567"), None))
    assert ask.line == "4453"
    assert best_column("6", tuple("1234567")) == "6"
    # As Pons' solver prints with -a: the position, then column 1's score first.
    assert best_column("4453 -2 -1 3 3 -1000 1 3", tuple("1234567")) == "4"
    assert best_column("4453 -2 -1 3 3 -1000 1 3", tuple("123567")) == "3"
    for bad in ("8", "4453 1 2", "x y z a b c d"):
        with pytest.raises(IllegalAnswer):
            best_column(bad, tuple("1234567"))


def test_the_bridge_keeps_its_margin_and_the_time_already_spent_off_the_clock() -> None:
    bridge = bridge_from("engine", "gtp", margin_ms=300)
    since = time.monotonic() - 0.2
    deadline, clock = bridge._deadline(Turn("othello", (), ("f5",), 0, CLOCK, since))
    assert clock is not None and 60_950 <= clock.mine_ms <= 61_000
    assert 60.9 < deadline - time.monotonic() <= 61.0
    untimed, none = bridge._deadline(Turn("othello", (), ("f5",), 0, None, since))
    assert none is None and 9.9 < untimed - time.monotonic() <= 10.0


def test_an_interpreted_engine_is_named_by_its_script() -> None:
    assert program_name("python3 -u engines/solver.py --scores") == "solver"
    assert program_name("./c4solver -a") == "c4solver"
