"""The ``discus`` command answers as the README says, checked against the shared data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.cli import main

CONNECT4_PERFT = [7, 49, 343, 2401, 16807, 117649, 823536, 5686266]


def last_line(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


@pytest.mark.parametrize("depth", range(1, 9))
def test_perft_prints_the_known_connect4_count_alone_on_the_last_line(
    depth: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["perft", "connect4", str(depth)]) == 0
    assert last_line(capsys) == str(CONNECT4_PERFT[depth - 1])


@pytest.mark.parametrize("depth", range(1, 9))
def test_perft_prints_the_shared_othello_count_alone_on_the_last_line(
    depth: int, capsys: pytest.CaptureFixture[str], othello_perft: dict[int, int]
) -> None:
    assert main(["perft", "othello", str(depth)]) == 0
    assert last_line(capsys) == str(othello_perft[depth])


def test_analyse_solves_pons_positions_from_a_file_in_input_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    lines = (shared_data / "connect4" / "Test_L2_R1").read_text().splitlines()[:12]
    positions = tmp_path / "positions.txt"
    positions.write_text("# a comment line is skipped\n" + "\n".join(lines) + "\n")
    assert main(["analyse", "connect4", "--exact", "--positions", str(positions)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["position"] for r in rows] == [line.split()[0] for line in lines]
    for row, line in zip(rows, lines, strict=True):
        assert row["exact"] is True
        assert row["score"] == int(line.split()[1]), row
        assert row["move"] in list("1234567")
        assert row["pv"][0] == row["move"]


@pytest.mark.slow
def test_analyse_takes_an_othello_board_string_and_finds_a_best_move_of_the_suite(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    # FFO #40 (20 empties): the suite lists every move with its exact score, best first.
    line = (shared_data / "othello" / "ffo_40_59.obf").read_text().splitlines()[0]
    board, answers = line.split(";", 1)
    best_score = answers.split(";")[0].strip().split(":")[1]
    assert main(["analyse", "othello", board.strip(), "--exact"]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["exact"] is True
    assert row["score"] == int(best_score)
    assert row["move"] in {
        a.split(":")[0].strip().lower()
        for a in answers.split(";")
        if a.strip() and int(a.split(":")[1]) == int(best_score)
    }


@pytest.mark.slow
def test_analyse_with_a_depth_limit_reports_that_depth_and_no_proof(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["analyse", "othello", "f5d6", "--depth", "3"]) == 0
    row = json.loads(capsys.readouterr().out.strip())
    assert row["depth"] == 3 and row["exact"] is False
    assert row["position"] == "f5d6"
    assert len(row["move"]) == 2


def test_analyse_rejects_a_bad_position_with_a_message_and_exit_code_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["analyse", "connect4", "48"]) == 2
    assert "8" in capsys.readouterr().err


@pytest.mark.parametrize("count", ["-1", "two"])
def test_serve_refuses_a_worker_count_that_is_no_count(
    count: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--workers", count])
    assert exited.value.code == 2 and "--workers" in capsys.readouterr().err


def test_a_server_without_workers_or_a_worker_needs_redis(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import server.serve

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setattr(server.serve, "run", lambda **options: pytest.fail("it ran"))
    assert main(["serve", "--workers", "0"]) == 2
    assert "needs Redis" in capsys.readouterr().err
    assert main(["worker"]) == 2
    assert "needs Redis" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["worker", "--processes", "0"])


def test_serve_passes_its_worker_count_to_the_ai_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    import server.serve

    seen: dict[str, object] = {}
    monkeypatch.setattr(server.serve, "run", lambda **options: seen.update(options))
    assert main(["serve", "--workers", "3"]) == 0
    assert seen["workers"] == 3
    assert main(["serve"]) == 0
    assert seen["workers"] is None  # one per core
    assert seen["chat_guests"] is False
    assert main(["serve", "--chat-guests"]) == 0
    assert seen["chat_guests"] is True


@pytest.mark.slow
def test_warm_up_says_where_the_engines_came_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warm-up"]) == 0
    line = last_line(capsys)
    assert line.startswith("engines in ") and "kernels loaded from numba's cache" in line


def test_the_server_runs_on_uvloop_where_installed_and_on_asyncio_when_asked() -> None:
    import asyncio
    import importlib.util

    from server.serve import run_loop

    seen: list[str] = []

    async def note_loop() -> None:
        seen.append(type(asyncio.get_running_loop()).__module__)

    run_loop(note_loop(), "asyncio")
    run_loop(note_loop())
    has_uvloop = importlib.util.find_spec("uvloop") is not None
    assert seen[0].startswith("asyncio")
    assert seen[1].startswith("uvloop") == has_uvloop
    with pytest.raises(ValueError, match="unknown event loop"):
        coroutine = note_loop()
        try:
            run_loop(coroutine, "trio")
        finally:
            coroutine.close()
