"""``bench.engine_ladder``: an engine as PROTOCOL[@DEPTH]:COMMAND run in its program's
directory, the ladder's clock as M+S, and a run that plays the levels asked for alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.engine_ladder import clock, engine, main
from clients.bridges.nboard import NBoard


def test_an_engine_runs_in_its_programs_directory_with_its_path_kept_as_given() -> None:
    bridge = engine(f"columns:{sys.executable} -u solver.py")
    assert bridge.cwd == Path(sys.executable).absolute().parent
    assert bridge.name.startswith(f"columns:{Path(sys.executable).absolute()} -u solver.py")
    assert engine("gtp:egaroucid -gtp").cwd is None  # on the PATH: the bench's directory


def test_an_nboard_engine_is_told_the_depth_after_its_protocol_and_8_without_one() -> None:
    deep, plain = engine("nboard@14:ntest x"), engine("nboard:ntest x")
    assert isinstance(deep.dialect, NBoard) and isinstance(plain.dialect, NBoard)
    assert (deep.dialect.depth, plain.dialect.depth) == (14, 8)
    assert deep.dialect.opening()[1].line == "set depth 14"


def test_bad_specs_and_clocks_are_refused() -> None:
    for spec in ("uci:stockfish", "nboard:", "edax", "nboard@:ntest", "nboard@0:ntest",
                 "nboard@deep:ntest", "gtp@10:egaroucid -gtp"):
        with pytest.raises(SystemExit):
            engine(spec)
    assert (clock("0.5+0.25").initial_ms, clock("0.5+0.25").increment_ms) == (30_000, 250)
    with pytest.raises(SystemExit):
        clock("fast")


@pytest.mark.slow
def test_the_ladder_plays_the_levels_asked_for_and_no_other(
        capsys: pytest.CaptureFixture[str]) -> None:
    solver = Path(__file__).resolve().parents[1] / "clients" / "engines" / "columns_engine.py"
    assert main(["connect4", "--engine", f"columns:{sys.executable} {solver} --scores",
                 "--levels", "easy", "--games", "2", "--minutes", "3", "--clock", "0.5+0.5",
                 "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["played"] >= 2
    assert {(row["name"], row["kind"]) for row in listed["entrants"]} == {
        ("columns_engine #1", "bot"), ("easy", "level")}  # the default, beginner, is not
