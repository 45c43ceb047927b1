"""A tiny fake run folder: 3 classes of 16×16 grey images, a saved Lite0 encoder, a ledger, generation records.

Images of class k are a bright horizontal bar at rows 4k+2…4k+4 on a dark background with Gaussian pixel
noise (sd 30), so classes are learnable and two images are never near copies of each other (RMS ≈ 35).
The independent encoder runs at 48 px: at 32 px EfficientNet-Lite2 maps all of these 16 px images to one point.
``make_run(root, leaky=True)`` plants every private image into the synthetic set.
"""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import torch

from pcevolve.config import dump_config, parse_config
from pcevolve.encoders import ImageEncoder
from pcevolve.evaluation import EvaluationSettings, evaluate_run
from pcevolve.io import append_jsonl, atomic_write_json
from pcevolve.privacy import BudgetLedger, GaussianRelease

CLASSES = ("0_bar_top", "1_bar_middle", "2_bar_low")
SIZE = 16

#: Every size of the evaluation scaled down, so the whole evaluation takes seconds.
TINY = EvaluationSettings(seed=0, cnn_epochs=2, full_max=24, public_max=40, public_features=24,
                          distribution_max=30, independent_input_size=48, resamples=30, domias_dims=3,
                          projections=16, batch_size=64, workers=1)


def draw(rng, label, count):
    images = rng.normal(40, 30, size=(count, SIZE, SIZE))
    images[:, 4 * label + 2 : 4 * label + 5, 2:14] += 160
    return np.clip(images, 0, 255).round().astype(np.uint8)


def write_class_folder(root, images_by_class):
    for name, images in zip(CLASSES, images_by_class):
        (root / name).mkdir(parents=True, exist_ok=True)
        for i, image in enumerate(images):
            Image.fromarray(image).save(root / name / f"{i:04d}.png")
    return root


def write_flat(root, images):
    root.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(images):
        Image.fromarray(image).save(root / f"{i:05d}.png")
    return root


def _data(root):
    rng = np.random.default_rng(123)
    private = [draw(rng, k, 10) for k in range(3)]
    sets = {
        "private": write_class_folder(root / "private", private),
        "test": write_class_folder(root / "test", [draw(rng, k, 12) for k in range(3)]),
        "full": write_class_folder(root / "full", [draw(rng, k, 14) for k in range(3)]),
        "public": write_flat(root / "public", np.concatenate([draw(rng, k % 3, 1) for k in range(45)])),
    }
    return sets, private


def make_run(root: Path, *, leaky: bool = False, generations: int = 4, reproducible: bool = False) -> Path:
    """A finished-looking run folder under ``root/run`` with data folders under ``root/data``."""
    sets, private = _data(root / "data")
    run = root / "run"
    run.mkdir(parents=True)
    config = parse_config({"name": "tiny", "seed": 0,
                           "data": {"private": str(sets["private"]), "public": str(sets["public"]),
                                    "test": str(sets["test"]), "full": str(sets["full"]), "image_size": SIZE},
                           "representation": {"input_size": 32, "proj_hidden_dim": 32, "feature_dim": 64}},
                          source="<tiny eval config>")
    dump_config(config, run / "config.yaml")
    atomic_write_json(run / "manifest.json", {"seed": 0})
    rng = np.random.default_rng(7)
    synthetic = [draw(rng, k, 14) for k in range(3)]
    if leaky:
        synthetic = [np.concatenate([private[k], synthetic[k][:4]]) for k in range(3)]
    write_class_folder(run / "synthetic", synthetic)
    ledger = BudgetLedger(8.0, 1e-5, {"representation": 3.0, "release": 5.0}, path=run / "ledger.json",
                          reproducible_noise=reproducible)
    ledger.charge("representation", GaussianRelease(3.0), description="stand-in for DP-SGD")
    ledger.charge("release", GaussianRelease(2.0), description="class statistics")
    # The release's noisy counts: what a shared report says about the private set's size (10 per class here).
    np.savez(run / "release.npz", counts=np.array([10.4, 9.7, 11.2]))
    terms = {"accuracy": 0.5, "mmd": 0.1, "attack": 0.0, "privacy": 0.0, "diversity": 0.8, "consistency": 0.9}
    for g in list(range(generations)) + [generations - 1]:  # the last generation twice, as after a resume
        append_jsonl(run / "records.jsonl", {"kind": "generation", "generation": g, "best": 0.1 * g,
                                             "mean": 0.05 * g, "terms": terms, "engine": {"best_so_far": 0.1 * g}})
    ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=1, input_size=32, proj_hidden_dim=32,
                            feature_dim=64).save(run / "encoder")
    return run


@pytest.fixture(scope="session")
def tiny_settings():
    return TINY


@pytest.fixture(scope="session")
def fake_run():
    """``fake_run(root, leaky=False)`` → a new fake run folder under ``root``."""
    return make_run


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("clean"))


@pytest.fixture(scope="session")
def leaky_run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("leaky"), leaky=True)


def evaluate_fake(run, settings):
    """``evaluate_run`` on a fake run folder, judged on its test and full folders."""
    data = run.parent / "data"
    return evaluate_run(run, data / "test", data / "full", settings=settings)


@pytest.fixture(scope="session")
def clean(tiny_run, tiny_settings):
    """``(evaluation, report folder)`` of the clean fake run, its report written (shared by the report tests: an
    evaluation takes seconds, not none)."""
    from pcevolve.report import write_report

    threads = torch.get_num_threads()
    evaluation = evaluate_fake(tiny_run, tiny_settings)
    assert torch.get_num_threads() == threads, "the evaluation must restore torch's thread count"
    return evaluation, write_report(evaluation)


@pytest.fixture(scope="session")
def leaky(leaky_run, tiny_settings):
    """The evaluation of the fake run whose synthetic set holds every private image (no report written)."""
    return evaluate_fake(leaky_run, tiny_settings)
