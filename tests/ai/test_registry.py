"""The engine registry: a game's engine, levels, measured strength and review rules are
found by its name, a plug-in's too, in this process and in any process that lists it in
``$DISCUS_PLUGINS``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import ai
import games
from ai import review
from ai.calibrate import OPENINGS, opening_moves
from ai.levels import DEFAULT_LEVELS, find, levels_of
from server.ratings.level_calibration import MEASURED
from tests import thirdgame


@pytest.fixture
def plugged() -> Iterator[None]:
    thirdgame.register()
    try:
        yield
    finally:
        thirdgame.unregister()


def test_every_game_has_an_engine_and_every_engine_a_game() -> None:
    assert ai.names() == games.names()
    for name in ai.names():
        entry = ai.engine(name)
        assert entry.levels == DEFAULT_LEVELS[name]
        assert set(entry.measured) <= {level.name for level in entry.levels}
        for line in OPENINGS[name]:
            opening_moves(games.load(name), line)  # every opening is legal
    with pytest.raises(ValueError, match="no engine"):
        ai.engine("chess")


def test_a_registered_engine_brings_its_levels_and_leaves_with_them(plugged: None) -> None:
    assert list(DEFAULT_LEVELS)[-1] == thirdgame.NAME
    assert [lv.name for lv in levels_of(thirdgame.NAME)] == ["beginner", "perfect"]
    assert find(thirdgame.NAME, "perfect").candidates == 1
    assert MEASURED[thirdgame.NAME] == {}
    thirdgame.unregister()
    assert thirdgame.NAME not in DEFAULT_LEVELS
    assert levels_of(thirdgame.NAME) == []


def test_a_plug_in_game_is_searched_and_reviewed_by_name(plugged: None) -> None:
    game = games.load(thirdgame.NAME)
    state = game.parse_moves("a1")
    assert game.format_move(ai.best(state, ai.Limits()).move) == "b2"  # only the centre holds
    reviewed = review.review(thirdgame.NAME, [0, 1, 3])
    assert [m.verdict for m in reviewed.moves] == ["best", "mistake", "best"]
    assert review.label(thirdgame.NAME, 1, -1, True) == "-1 exact"
    assert ai.win_in(thirdgame.NAME, 1, 1, True) is None


def test_a_proven_connect_four_score_reads_as_the_moves_to_the_win() -> None:
    assert ai.win_in("connect4", 6, 18, exact=True) == 1
    assert ai.win_in("connect4", 5, -18, exact=True) == -1
    assert ai.win_in("connect4", 0, 1, exact=True) == 21
    assert ai.win_in("othello", 50, 12, exact=True) is None
    assert ai.win_in("chess", 0, 1, exact=True) is None


def test_a_process_listing_a_plug_in_knows_its_game_once_it_imports_ai() -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, ai.PLUGINS_VARIABLE: thirdgame.PLUGIN, "PYTHONPATH": str(root)}
    script = "import ai, games; print(*games.names()); print(*ai.names())"
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=root,
                         capture_output=True, text=True, check=True, timeout=60).stdout
    every = f"connect4 othello {thirdgame.NAME}"
    assert out.splitlines() == [every, every]
