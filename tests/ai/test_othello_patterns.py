"""The learned Othello evaluation: its compiled pattern indices against a plain-Python
reading of the squares, its symmetry, the shipped weights and the trainer's fit."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ai.othello import engine, patterns, train
from ai.othello.alphabeta import leaf
from ai.othello.evaluation import terminal
from games.othello import GAME, OthelloState

_U = np.uint64


def random_positions(seed: int, count: int) -> list[OthelloState]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        state = GAME.initial()
        for _ in range(rng.randrange(0, 61)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_moves()))
        out.append(state)
    return out


def image(bits: int, source: np.ndarray) -> int:
    """The board under a symmetry: the disc on ``sq`` moves to ``source[sq]``."""
    return sum(1 << int(source[sq]) for sq in range(64) if bits >> sq & 1)


def random_table(seed: int) -> np.ndarray:
    compact = np.random.default_rng(seed).integers(
        -300, 300, (patterns.STAGES, patterns.FEATURES)).astype(np.int16)
    return patterns.expand(compact)


def test_compiled_feature_indices_equal_a_plain_reading_of_the_squares() -> None:
    offsets = {p.name: int(o) for p, o in zip(patterns.PATTERNS, patterns.PATTERN_OFFSETS,
                                               strict=True)}
    for state in random_positions(1, 300):
        P, O = state.mover_boards()
        expected = [offsets[name] + index for name, index in patterns.instance_indices(P, O)]
        expected += patterns.extra_indices(P, O)
        got = patterns.full_indices(np.array([P], dtype=np.uint64),
                                    np.array([O], dtype=np.uint64))[0]
        assert got.tolist() == expected, GAME.format_position(state)


def test_every_pattern_instance_is_an_image_of_its_base_squares() -> None:
    for p in patterns.PATTERNS:
        base = p.instances[0]
        for t, inst in zip(p.transforms, p.instances, strict=True):
            assert inst.tolist() == patterns.TRANSFORMS[t][base].tolist()
        sets = {frozenset(i.tolist()) for i in p.instances}
        assert len(sets) == len(p.instances)
        # Every symmetric image of the base is one of the instances.
        for source in patterns.TRANSFORMS:
            assert frozenset(source[base].tolist()) in sets


def test_the_eight_symmetries_of_a_position_get_the_same_evaluation() -> None:
    table = random_table(2)
    for state in random_positions(3, 150):
        P, O = state.mover_boards()
        scores = {int(patterns.score(_U(image(P, t)), _U(image(O, t)), table))
                  for t in patterns.TRANSFORMS}
        assert len(scores) == 1, GAME.format_position(state)


def test_the_eight_symmetries_are_distinct() -> None:
    assert len({tuple(t.tolist()) for t in patterns.TRANSFORMS}) == 8


def test_a_score_is_the_bias_plus_one_weight_per_instance() -> None:
    compact = np.random.default_rng(4).integers(
        -300, 300, (patterns.STAGES, patterns.FEATURES)).astype(np.int16)
    table = patterns.expand(compact)
    for state in random_positions(5, 50):
        P, O = state.mover_boards()
        empties = 64 - (P | O).bit_count()
        features = patterns.features(P, O)
        expected = int(compact[patterns.stage_of(empties), features].astype(np.int64).sum())
        assert int(patterns.score(_U(P), _U(O), table)) == expected


def test_the_shipped_weights_load_with_their_version_and_shape() -> None:
    compact = patterns.load_compact()
    assert compact.shape == (patterns.STAGES, patterns.FEATURES)
    assert compact.dtype == np.int16
    assert patterns.WEIGHTS_FILE.stat().st_size < 2_000_000
    assert patterns.load().shape == (patterns.STAGES, patterns.ROW)
    # Fitted, not a placeholder: every stage has weights.
    assert all(np.count_nonzero(compact[s]) > 500 for s in range(patterns.STAGES))


def test_a_benchmark_can_name_a_weights_file_as_the_evaluation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    patterns.save(tmp_path / "zero.npz",
                  np.zeros((patterns.STAGES, patterns.FEATURES), np.int16))
    state = GAME.initial().play(GAME.initial().legal_moves()[0])
    assert engine.leaf_value(state, str(tmp_path / "zero.npz")) == 0
    assert engine.leaf_value(state, str(patterns.WEIGHTS_FILE)) == engine.leaf_value(state)


def test_a_weights_file_of_another_version_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "w.npz"
    np.savez(path, version=np.array(patterns.VERSION + 1),
             weights=np.zeros((patterns.STAGES, patterns.FEATURES), np.int16))
    with pytest.raises(ValueError, match="version"):
        patterns.load_compact(path)


def test_the_fit_recovers_known_weights_of_a_small_synthetic_problem() -> None:
    rng = np.random.default_rng(6)
    features, per_row, count = 40, 5, 3000
    truth = rng.normal(0, 3, features)
    rows = rng.integers(0, features, (count, per_row))
    y = truth[rows].sum(axis=1)
    w = train.fit(rows, y, lam=1e-3, features=features, iterations=500, tolerance=1e-10)
    assert np.abs(w - truth).max() < 0.01
    # Regularised harder, the weights shrink towards 0.
    shrunk = train.fit(rows, y, lam=1e4, features=features)
    assert np.abs(shrunk).sum() < 0.5 * np.abs(truth).sum()


def test_the_fit_leaves_unseen_features_at_zero() -> None:
    rows = np.array([[0, 1], [1, 2], [0, 2]])
    w = train.fit(rows, np.array([3.0, 5.0, 4.0]), lam=1e-6, features=6, tolerance=1e-12)
    assert np.allclose(w[:3], [1.0, 2.0, 3.0], atol=1e-3)
    assert np.all(w[3:] == 0)


def test_a_finished_game_gets_its_final_score_not_the_patterns() -> None:
    state = GAME.parse_position("X" * 40 + "-" * 4 + "X" * 20 + " O")  # white has no disc
    P, O = state.mover_boards()
    assert state.is_over()
    assert leaf(_U(P), _U(O), random_table(7)) == terminal(_U(P), _U(O))


@pytest.mark.slow
def test_the_trainer_gives_the_same_weights_in_one_process_or_several(
        tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Jobs take whole chunks of games and blocks of positions: the result must not depend on
    how many there are (the constants are the parent's: it cuts the work)."""
    monkeypatch.setattr(train, "CHUNK", 2)
    monkeypatch.setattr(train, "BLOCK", 40)
    with open(tmp_path / "report", "w") as quiet:
        one = train.train(tmp_path / "one", tmp_path / "one.npz", games=5, seed=3,
                          exact_empties=12, depth=5, report=quiet)
        two = train.train(tmp_path / "two", tmp_path / "two.npz", games=5, seed=3,
                          exact_empties=12, depth=5, report=quiet, jobs=2)
    assert np.abs(one).sum() > 0
    assert np.array_equal(one, two)
    data = np.load(tmp_path / "two" / "positions.npz")
    labels = np.load(tmp_path / "two" / "labels.npy")
    assert sorted(set(data["game"])) == [0, 1, 2, 3, 4] and not np.isnan(labels).any()
    empties = train.empties_of(data["players"], data["opponents"])
    for i in np.flatnonzero(empties <= 12)[::25]:  # the solved labels are the exact scores
        state = OthelloState(int(data["players"][i]), int(data["opponents"][i]), 0)
        assert labels[i] == engine.exact_value(state)[0]
