"""State dicts and checkpoint folders: resuming is bit-identical; damaged checkpoints are refused."""

import json

import numpy as np
import pytest
from evolution_helpers import BOX, run, small_settings, sphere

from pcevolve.evolution import (
    Bounds,
    CheckpointError,
    Evolution,
    GenerationSummary,
    generator_from_json,
    generator_state_to_json,
)
from pcevolve.io import atomic_write_npz


def _trace(engine, populations):
    return [p.copy() for p in populations], engine.history, engine.best


def _assert_same(reference, resumed):
    (pops_a, history_a, best_a), (pops_b, history_b, best_b) = reference, resumed
    assert len(pops_a) == len(pops_b)
    for a, b in zip(pops_a, pops_b, strict=True):
        np.testing.assert_array_equal(a, b)
    assert history_a == history_b
    np.testing.assert_array_equal(best_a[0], best_b[0])
    assert best_a[1] == best_b[1]


# The split points fall inside the coarse phase, on its last generation, on a periodic one, and after.
@pytest.mark.parametrize("split", [1, 4, 5, 8, 11])
@pytest.mark.parametrize(("mutation", "crossover"), [("gaussian", "interpolation"), ("differential", "uniform")])
def test_resume_from_a_folder_is_bit_identical(tmp_path, split, mutation, crossover):
    settings = small_settings(mutation=mutation, crossover=crossover)
    whole = Evolution(settings, BOX, seed=11)
    reference = _trace(whole, run(whole))

    first = Evolution(settings, BOX, seed=11)
    head = run(first, tells=split)
    first.save(tmp_path / "ckpt")
    del first
    resumed = Evolution.load(tmp_path / "ckpt", settings, BOX)
    assert resumed.generation == split
    tail = run(resumed)
    _assert_same(reference, _trace(resumed, head + tail))


def test_state_dict_survives_a_json_round_trip():
    settings = small_settings()
    whole = Evolution(settings, BOX, seed=5)
    reference = _trace(whole, run(whole))

    first = Evolution(settings, BOX, seed=5)
    head = run(first, tells=6)
    arrays, meta = first.state_dict()
    meta = json.loads(json.dumps(meta, allow_nan=False))
    resumed = Evolution.from_state_dict(settings, BOX, {k: v.copy() for k, v in arrays.items()}, meta)
    _assert_same(reference, _trace(resumed, head + run(resumed)))


def test_a_fresh_engine_resumes_before_any_evaluation(tmp_path):
    settings = small_settings()
    whole = Evolution(settings, BOX, seed=2)
    reference = _trace(whole, run(whole))
    Evolution(settings, BOX, seed=2).save(tmp_path)
    resumed = Evolution.load(tmp_path, settings, BOX)
    _assert_same(reference, _trace(resumed, run(resumed)))


def test_generator_state_keeps_its_128_bit_integers_exactly():
    rng = np.random.Generator(np.random.PCG64(2**100 + 3))
    rng.random(7)
    rng.integers(0, 10, dtype=np.uint32)  # leaves a buffered 32-bit half (has_uint32)
    document = json.loads(json.dumps(generator_state_to_json(rng)))
    assert isinstance(document["state"], str) and int(document["state"]) > 2**64
    clone = generator_from_json(document)
    assert clone.bit_generator.state == rng.bit_generator.state
    np.testing.assert_array_equal(clone.random(5), rng.random(5))
    with pytest.raises(ValueError, match="PCG64"):
        generator_state_to_json(np.random.Generator(np.random.MT19937(0)))


def test_checkpoint_refuses_other_settings_or_bounds(tmp_path):
    settings = small_settings()
    engine = Evolution(settings, BOX, seed=0)
    run(engine, tells=2)
    engine.save(tmp_path)
    with pytest.raises(CheckpointError, match="fine_rate, population"):
        Evolution.load(tmp_path, small_settings(population=14, fine_rate=0.3), BOX)
    with pytest.raises(CheckpointError, match="bounds"):
        Evolution.load(tmp_path, settings, Bounds.uniform(-4, 4, 10))


def test_a_crash_between_the_two_writes_leaves_the_previous_checkpoint(tmp_path):
    settings = small_settings()
    engine = Evolution(settings, BOX, seed=0)
    run(engine, tells=3)
    engine.save(tmp_path)
    expected = engine.ask()
    run(engine, tells=1)
    arrays, _ = engine.state_dict()
    atomic_write_npz(tmp_path / "evolution-g000004.npz", **arrays)  # new arrays written, JSON not yet
    resumed = Evolution.load(tmp_path, settings, BOX)
    assert resumed.generation == 3
    np.testing.assert_array_equal(resumed.ask(), expected)
    engine.save(tmp_path)  # the next save cleans up and moves on
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evolution-g000004.npz", "evolution.json"]
    assert Evolution.load(tmp_path, settings, BOX).generation == 4


def test_the_first_save_creates_the_folder_only_when_complete(tmp_path, monkeypatch):
    import pcevolve.evolution.checkpoint as checkpoint

    engine = Evolution(small_settings(), BOX, seed=0)
    run(engine, tells=1)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint, "atomic_write_json", crash)
    with pytest.raises(OSError, match="disk full"):
        engine.save(tmp_path / "ckpt")
    assert list(tmp_path.iterdir()) == []  # no half-made folder that a resume would trip over
    monkeypatch.undo()
    engine.save(tmp_path / "ckpt")
    assert Evolution.load(tmp_path / "ckpt", small_settings(), BOX).generation == 1


def test_damaged_or_missing_checkpoints_are_refused(tmp_path):
    settings = small_settings()
    with pytest.raises(CheckpointError, match="no evolution checkpoint"):
        Evolution.load(tmp_path, settings, BOX)
    engine = Evolution(settings, BOX, seed=0)
    run(engine, tells=2)
    engine.save(tmp_path)
    arrays_file = tmp_path / "evolution-g000002.npz"
    arrays_file.write_bytes(arrays_file.read_bytes()[:-5])
    with pytest.raises(CheckpointError, match="hash"):
        Evolution.load(tmp_path, settings, BOX)
    arrays_file.unlink()
    with pytest.raises(CheckpointError, match="missing"):
        Evolution.load(tmp_path, settings, BOX)
    arrays, meta = engine.state_dict()
    with pytest.raises(CheckpointError, match="format"):
        Evolution.from_state_dict(settings, BOX, arrays, {**meta, "format": "other/9"})
    with pytest.raises(CheckpointError, match="history"):
        Evolution.from_state_dict(settings, BOX, arrays, {**meta, "history": meta["history"][:1]})


def test_summary_json_round_trip():
    engine = Evolution(small_settings(), BOX, seed=0)
    summary = engine.tell(sphere(engine.ask()))
    assert GenerationSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    with pytest.raises(ValueError, match="keys"):
        GenerationSummary.from_json({"generation": 0})
