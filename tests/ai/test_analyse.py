"""``discus analyse --positions``: every line is answered, in order, bad lines included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from games.othello import GAME
from server.cli import main


def rows(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_bad_lines_get_an_error_line_and_the_rest_of_the_file_is_still_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    pons = (shared_data / "connect4" / "Test_L3_R1").read_text().splitlines()[:2]
    finished = "1212121"  # the first player's fourth stone in column 1 has won
    malformed = "4853"  # there is no column 8
    positions = tmp_path / "positions.txt"
    positions.write_text("\n".join([pons[0], finished, malformed, pons[1]]) + "\n")

    assert main(["analyse", "connect4", "--exact", "--positions", str(positions)]) == 1

    answers = rows(capsys)
    assert [a["position"] for a in answers] == [pons[0].split()[0], finished, malformed,
                                                pons[1].split()[0]]
    for answer, line in ((answers[0], pons[0]), (answers[3], pons[1])):
        assert "error" not in answer
        assert answer["exact"] is True and answer["score"] == int(line.split()[1])
    for answer in answers[1:3]:
        assert "move" not in answer
        assert isinstance(answer["error"], str) and answer["error"]
    assert "over" in str(answers[1]["error"])
    assert "8" in str(answers[2]["error"])


@pytest.mark.slow
def test_an_othello_file_with_a_finished_board_and_a_short_board_answers_every_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    positions = tmp_path / "positions.obf"
    positions.write_text(
        "% an OBF comment\n"
        + "X" * 64 + " O; the board is full\n"
        + "XO-- X\n"
        + "f5d6c3\n"
    )

    assert main(["analyse", "othello", "--depth", "2", "--positions", str(positions)]) == 1

    answers = rows(capsys)
    assert [a["position"] for a in answers] == ["X" * 64 + " O", "XO-- X", "f5d6c3"]
    assert [("error" in a) for a in answers] == [True, True, False]
    after = GAME.parse_moves("f5d6c3")
    assert answers[2]["move"] in {GAME.format_move(m) for m in after.legal_moves()}


def test_a_file_without_bad_lines_exits_with_status_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    positions = tmp_path / "positions.txt"
    positions.write_text("4453\n44\n")
    assert main(["analyse", "connect4", "--depth", "4", "--positions", str(positions)]) == 0
    assert [a["position"] for a in rows(capsys)] == ["4453", "44"]


def test_the_empty_connect_four_board_is_answered_exactly_from_the_book_at_once(
    capsys: pytest.CaptureFixture[str]
) -> None:
    # The game's published value (Allis, Pons): the first player wins with their last stone
    # (score 1), by the centre column; the solver needs minutes for it, the book holds it.
    assert main(["analyse", "connect4", "", "--exact"]) == 0
    (answer,) = rows(capsys)
    assert answer["exact"] is True and answer["score"] == 1 and answer["move"] == "4"
    assert answer["nodes"] == 0 and answer["depth"] == 42
    assert answer["pv"][:1] == ["4"] and len(answer["pv"]) > 1


def test_every_first_move_gets_its_published_exact_value_from_the_book() -> None:
    import ai
    import games
    from ai.limits import Limits

    found = ai.best(games.load("connect4").initial(), Limits(exact=True, multipv=7))
    assert found.exact and found.nodes == 0
    assert sorted(found.root_scores) == list(enumerate((-2, -1, 0, 1, 0, -1, -2)))
    assert found.root_scores[0] == (3, 1)
