"""Adding a modality touches only its package plus one registry line.

A toy modality, ``vectors`` (fixed-length numeric vectors in CSV files), is written as a package outside pcevolve
(``toy_vectors`` in a temporary folder on ``sys.path``): its spec, its config check, its run parts (a reader of
labelled private and unlabelled public CSV files, a real encoder fitted on the public pool only, the writer and reader
of its ``synthetic.csv``), its judge, its console headline and its point on a sweep's curve. The one line that adds it
is its entry in :data:`~pcevolve.catalog.modalities.MODALITY_PACKAGES`; then the config takes it, ``pcevolve run``
runs it end to end (delivering public pool vectors), ``pcevolve evaluate`` judges it with its judge, and a sweep's
curve reads its point — with nothing in pcevolve edited.
"""

from __future__ import annotations

import csv
import importlib
import sys
import textwrap

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from pcevolve.catalog.modalities import MODALITY_PACKAGES, MODALITY_TRAITS, modality_spec
from pcevolve.cli.main import app
from pcevolve.config import ConfigError, load_config, parse_config, with_dotted
from pcevolve.decoders import load_decoder
from pcevolve.io import read_json
from pcevolve.modalities import MODALITIES
from pcevolve.pipeline import open_run, run_pipeline
from pcevolve.report.judges import JUDGES, judge_run
from pcevolve.run_folder import outputs_digest
from pcevolve.sweep.curve import CurvePoint, curve_point

# --- the toy modality's package, as its author would write it -----------------------------------------------------

TOY_INIT = '''
"""Vectors: fixed-length numeric vectors in CSV files (a labelled private file, an unlabelled public pool), a public
standardisation with random Fourier features as the encoder, ``synthetic.csv`` out. The spec only: its parts are
imported on first use."""

from pcevolve.catalog.modalities import ModalityFiles, ModalitySpec, ModalityTraits

SPEC = ModalitySpec(
    name="vectors",
    traits=ModalityTraits("vector", encoder_trains_under_dp=False, sample_form="arrays"),
    files=ModalityFiles(accepts=("csv",), run="a vector run",
                        fixes={"any": "give a CSV file of vectors, one column per coordinate"}),
    parts="toy_vectors.parts:VECTORS",
    judge="toy_vectors.judge:judge_vectors_run",
    headline="toy_vectors.judge:print_vectors_headline",
    curve_point="toy_vectors.judge:vectors_point",
    config_problems="toy_vectors.checks:config_problems",
)
'''

TOY_CHECKS = '''
"""What only the vectors modality knows to refuse in a config (run when a config is loaded: imports no torch)."""


def config_problems(config):
    """The encoder draws its random Fourier features for at most 128 dimensions (its map is kept in memory)."""
    width = config.representation.feature_dim
    return [] if width <= 128 else [f"representation.feature_dim: a vector run's random Fourier features are drawn "
                                    f"for at most 128 dimensions, got {width}"]
'''

TOY_PARTS = '''
"""The vectors modality's run parts (:data:`VECTORS`)."""

from __future__ import annotations

import csv
import io
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.data import LabeledDataset
from pcevolve.data.hashing import sample_hashes
from pcevolve.io import atomic_write_bytes, atomic_write_json, atomic_write_npz, read_json, refuse_existing
from pcevolve.modalities.base import Modality


@dataclass(frozen=True)
class VectorLayout:
    """One vector's coordinates (the public pool's columns) and the label column of labelled files."""

    columns: tuple[str, ...]
    label: str = "label"


def vector_layout(data: Any) -> VectorLayout:
    """From the public file's header and the config (never from the private file)."""
    with open(data.public, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    return VectorLayout(tuple(name for name in header if name != data.label_column), data.label_column)


def _read(path: Any, layout: VectorLayout, *, labelled: bool) -> tuple[np.ndarray, list[str], tuple[str, ...]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    wanted = [*layout.columns, *([layout.label] if labelled else [])]
    missing = [name for name in wanted if rows and name not in rows[0]]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    samples = np.array([[float(row[name]) for name in layout.columns] for row in rows], dtype=np.float64)
    samples = samples.reshape(len(rows), len(layout.columns))
    if not np.isfinite(samples).all():
        raise ValueError(f"{path}: every coordinate must be a finite number")
    labels = [row[layout.label] for row in rows] if labelled else []
    return samples, labels, tuple(f"{Path(path).name}:row {i + 2}" for i in range(len(rows)))


def read_labelled(path: Any, layout: VectorLayout, class_names: Any) -> LabeledDataset:
    """Labelled vectors, each label one of ``class_names`` (a label outside them is an error naming the row)."""
    samples, labels, sources = _read(path, layout, labelled=True)
    names = tuple(str(name) for name in class_names)
    index = {name: i for i, name in enumerate(names)}
    unknown = [f"{source} ({label!r})" for source, label in zip(sources, labels) if label not in index]
    if unknown:
        raise ValueError(f"labels outside the declared classes {list(names)}: {', '.join(unknown[:3])}")
    return LabeledDataset(samples, np.array([index[label] for label in labels], dtype=np.int64), names, "vectors",
                          sources)


@dataclass(frozen=True)
class PublicVectors:
    """The public pool as read."""

    samples: np.ndarray
    sources: tuple[str, ...]

    def sample_hashes(self) -> list[str]:
        return sample_hashes(self.samples)


def read_public(data: Any, layout: VectorLayout) -> PublicVectors:
    samples, _, sources = _read(data.public, layout, labelled=False)
    return PublicVectors(samples, sources)


def write_vectors_csv(path: Any, samples: np.ndarray, labels: np.ndarray, class_names: Any, layout: VectorLayout,
                      *, overwrite: bool = False) -> Path:
    """The layout's columns then the label; each number written so that it reads back exactly; atomically."""
    refuse_existing(path, overwrite=overwrite, folder=False)
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2 or samples.shape[1] != len(layout.columns) or len(samples) != len(labels):
        raise ValueError(f"expected ({len(labels)}, {len(layout.columns)}) vectors, got {samples.shape}")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\\n")
    writer.writerow([*layout.columns, layout.label])
    for row, label in zip(samples, labels, strict=True):
        writer.writerow([repr(float(value)) for value in row] + [str(class_names[int(label)])])
    return atomic_write_bytes(Path(path), buffer.getvalue().encode("utf-8"))


class VectorEncoder:
    """Vectors → search features: each coordinate standardised by the public pool's mean and spread, then random
    Fourier features (a fixed map drawn from ``seed``) joined with the standardised vector, each part of length
    1/√2. Fitted on the public pool only: nothing is trained, nothing is charged."""

    def __init__(self, input_dim: int, *, width: int, seed: int) -> None:
        self.input_dim, self.width, self.seed = int(input_dim), int(width), int(seed)
        rng = np.random.default_rng(self.seed)
        self.weights = rng.normal(size=(self.input_dim, self.width))
        self.phases = rng.uniform(0.0, 2.0 * math.pi, self.width)
        self.mean = np.zeros(self.input_dim)
        self.scale = np.ones(self.input_dim)
        self.training = False

    @property
    def feature_dim(self) -> int:
        return self.input_dim + self.width

    def fit_public(self, public: np.ndarray) -> None:
        public = np.asarray(public, dtype=np.float64)
        spread = public.std(axis=0)
        self.mean, self.scale = public.mean(axis=0), np.where(spread > 1e-12, spread, 1.0)

    def encode_both(self, samples: np.ndarray, *, batch_size: int = 1024, progress: bool = False,
                    job_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(random Fourier features, search features), float32; row i depends on sample i only."""
        del batch_size, progress, job_size
        standard = (np.asarray(samples, dtype=np.float64).reshape(-1, self.input_dim) - self.mean) / self.scale
        waves = np.cos(standard @ self.weights + self.phases)

        def unit(part: np.ndarray) -> np.ndarray:
            return part / np.maximum(np.linalg.norm(part, axis=1, keepdims=True), 1e-12)

        features = np.concatenate([unit(standard), unit(waves)], axis=1) / math.sqrt(2.0)
        return waves.astype(np.float32), features.astype(np.float32)

    def encode(self, samples: np.ndarray) -> np.ndarray:
        return self.encode_both(samples)[1]

    def train(self, mode: bool = True) -> VectorEncoder:
        self.training = bool(mode)
        return self

    def eval(self) -> VectorEncoder:
        return self.train(False)

    def save(self, folder: Any) -> Path:
        target = Path(folder)
        atomic_write_npz(target / "vectors.npz", weights=self.weights, phases=self.phases, mean=self.mean,
                         scale=self.scale)
        atomic_write_json(target / "encoder.json", {"kind": "vectors", "input_dim": self.input_dim,
                                                    "width": self.width, "seed": self.seed})
        return target

    @classmethod
    def load(cls, folder: Any) -> VectorEncoder:
        meta = read_json(Path(folder) / "encoder.json")
        encoder = cls(meta["input_dim"], width=meta["width"], seed=meta["seed"])
        with np.load(Path(folder) / "vectors.npz", allow_pickle=False) as arrays:
            encoder.weights, encoder.phases = arrays["weights"], arrays["phases"]
            encoder.mean, encoder.scale = arrays["mean"], arrays["scale"]
        return encoder


@dataclass(frozen=True)
class VectorRepresentationResult:
    """The public fit: nothing trained on private vectors, nothing charged."""

    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"mode": "public", "noise_multiplier": None, "sampling_probability": None, "steps": 0,
                "stage_epsilon": 0.0, "public_steps": 0}


def train_vector_representation(encoder: VectorEncoder, private_samples: np.ndarray, public: np.ndarray | None, *,
                                ledger: Any, **settings: Any) -> VectorRepresentationResult:
    """Fit the standardisation on the public pool; the private vectors are not read."""
    del private_samples, settings
    if ledger.stages.get("representation", 0.0) > 0:
        raise ValueError("the vector encoder is fitted on public vectors only; set privacy.split.representation: 0")
    if public is None or len(public) < 2:
        raise ValueError("the vector encoder needs a public pool of at least two vectors")
    started = time.perf_counter()
    encoder.fit_public(public)
    return VectorRepresentationResult(seconds={"public_fit": time.perf_counter() - started})


class VectorModality(Modality):
    """Each part a named method (the toy's own functions above do the work)."""

    name = "vectors"
    delivered_name = "synthetic.csv"

    def layout(self, data):
        return vector_layout(data)

    def sample_shape(self, layout):
        return (len(layout.columns),)

    def read_public(self, data, layout):
        return read_public(data, layout)

    def read_private(self, data, layout):
        return read_labelled(data.private, layout, data.classes)

    def build_encoder(self, config, layout, seed):
        return VectorEncoder(len(layout.columns), width=config.representation.feature_dim, seed=seed)

    def train_representation(self, encoder, private_samples, public, **settings):
        return train_vector_representation(encoder, private_samples, public, **settings)

    def load_encoder(self, folder):
        return VectorEncoder.load(folder)

    def write_synthetic(self, path, samples, labels, class_names, layout, *, overwrite=False):
        return write_vectors_csv(path, samples, labels, class_names, layout, overwrite=overwrite)

    def read_synthetic(self, path, layout, class_names):
        return read_labelled(path, layout, class_names)


VECTORS = VectorModality()
'''

TOY_JUDGE = '''
"""The vectors modality's judge, console headline and sweep point: a logistic regression trained on the delivered
vectors and scored on the real test vectors. The same model trained on the private vectors is the real reference:
an exact private figure, written to ``secure/`` only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.evaluation.inputs import EvaluationError
from pcevolve.io import atomic_write_json
from pcevolve.pipeline import finished_run
from pcevolve.report.judges import JudgeRequest, Verdict
from pcevolve.sweep.curve import CurvePoint
from toy_vectors.parts import VECTORS, read_labelled

FIGURE = "logistic regression accuracy"


@dataclass(frozen=True)
class VectorsEvaluation:
    folder: Path
    epsilon: float
    synthetic_accuracy: float
    private_accuracy: float
    test_vectors: int

    def to_json(self) -> dict[str, Any]:
        """What the shareable report carries (no private figure)."""
        return {"modality": "vectors", "epsilon": self.epsilon, "test_vectors": self.test_vectors,
                "synthetic": {"model": "logistic regression", "accuracy": round(self.synthetic_accuracy, 3)}}


def _accuracy(train: Any, test: Any, seed: int) -> float:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=1000, random_state=seed).fit(train.samples, train.labels)
    return float(np.mean(model.predict(test.samples) == test.labels))


def judge_vectors_run(request: JudgeRequest) -> Verdict:
    if request.full is not None:
        raise EvaluationError("--full is for image runs: a vector run is judged against its private vectors")
    test_path = request.test if request.test is not None else request.config.data.test
    if test_path is None:
        raise EvaluationError(f"no test data: give --test TEST.csv ({request.run_dir} has no data.test)")
    config, outcome = finished_run(request.run_dir)
    layout = VECTORS.layout(config.data)
    classes = outcome.class_names
    synthetic = VECTORS.read_synthetic(request.run_dir / VECTORS.delivered_name, layout, classes)
    test = read_labelled(test_path, layout, classes)
    private = read_labelled(config.data.private, layout, classes)
    evaluation = VectorsEvaluation(request.run_dir, float(outcome.total_epsilon),
                                   _accuracy(synthetic, test, request.seed), _accuracy(private, test, request.seed),
                                   len(test))
    report = atomic_write_json(request.run_dir / "report" / "evaluation.json", evaluation.to_json()).parent
    secure = atomic_write_json(request.run_dir / "secure" / "evaluation.json",
                               {**evaluation.to_json(), "synthetic_accuracy": evaluation.synthetic_accuracy,
                                "private_reference": {"accuracy": evaluation.private_accuracy}})
    return Verdict("vectors", evaluation, report, secure)


def print_vectors_headline(evaluation: VectorsEvaluation, console: Any) -> None:
    console.print(f"{FIGURE} on the real test vectors ({evaluation.test_vectors}): synthetic "
                  f"{evaluation.synthetic_accuracy:.3f} at ε {evaluation.epsilon:.3g}", highlight=False)


def vectors_point(name: str, epsilon: float, evaluation: dict[str, Any]) -> CurvePoint:
    return CurvePoint(name, epsilon, float(evaluation["epsilon"]), {FIGURE: evaluation["synthetic"]["accuracy"]})
'''

TOY_PACKAGE = {"__init__.py": TOY_INIT, "checks.py": TOY_CHECKS, "parts.py": TOY_PARTS, "judge.py": TOY_JUDGE}
CLASSES = ["left", "right"]
COLUMNS = ["x0", "x1", "x2", "x3"]


# --- tiny data and config -----------------------------------------------------------------------------------------

def _vectors(rng, n, side):
    """``n`` vectors of one class: the classes differ in their mean along the first two coordinates."""
    shift = np.array([1.5, -1.0, 0.0, 0.0]) * (1 if side else -1)
    return rng.normal(size=(n, len(COLUMNS))) + shift


def _write_csv(path, samples, labels=None):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS + ([] if labels is None else ["label"]))
        for i, row in enumerate(samples):
            writer.writerow([f"{value:.6f}" for value in row] + ([] if labels is None else [labels[i]]))
    return path


def _write_data(root):
    rng = np.random.default_rng(17)
    _write_csv(root / "private.csv", np.concatenate([_vectors(rng, 20, 0), _vectors(rng, 20, 1)]),
               [CLASSES[0]] * 20 + [CLASSES[1]] * 20)
    public = np.concatenate([_vectors(rng, 100, 0), _vectors(rng, 100, 1)])
    _write_csv(root / "public.csv", public[rng.permutation(len(public))])
    _write_csv(root / "test.csv", np.concatenate([_vectors(rng, 30, 0), _vectors(rng, 30, 1)]),
               [CLASSES[0]] * 30 + [CLASSES[1]] * 30)


def _mapping(root, name="vectors"):
    """A small retrieval run on the vector files, as the other tiny file runs (tests/pipeline/conftest.py)."""
    return {
        "name": name, "seed": 5,
        "data": {"modality": "vectors", "private": str(root / "private.csv"), "public": str(root / "public.csv"),
                 "test": str(root / "test.csv"), "full": None, "classes": list(CLASSES)},
        "representation": {"feature_dim": 64},
        "decoder": {"name": "nearest-public"},
        "search": {"population": 8, "elite": 2, "generations": 6, "candidate_per_class": 10, "eval_seeds": 2,
                   "basis_dim": 8, "roundtrip_public": 200, "rff_features": 32, "validation_per_class": 20,
                   "synthetic_per_class": 50, "top_candidates": 2, "coarse_generations": 2, "polynomial_every": 3,
                   "delivery_oversample": 1.0},
        "privacy": {"split": {"representation": 0.0, "release": 1.0}, "reproducible_noise": True},
    }


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """The toy package written outside pcevolve and registered by its one line; its data; one finished run."""
    root = tmp_path_factory.mktemp("new_modality")
    package = root / "plugins" / "toy_vectors"
    package.mkdir(parents=True)
    for name, source in TOY_PACKAGE.items():
        (package / name).write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    _write_data(root)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.syspath_prepend(str(root / "plugins"))
        monkeypatch.setitem(MODALITY_PACKAGES, "vectors", "toy_vectors")  # the one line that adds the modality
        config = parse_config(_mapping(root), source="<vectors test config>")
        _, folder, _ = open_run(config, root=root / "runs")
        outcome = run_pipeline(config, folder)
        yield {"root": root, "package": package, "config": config, "folder": folder.path, "outcome": outcome}
    for name in [name for name in sys.modules if name == "toy_vectors" or name.startswith("toy_vectors.")]:
        del sys.modules[name]


def test_the_package_is_the_whole_modality(vectors):
    files = sorted(path.name for path in vectors["package"].iterdir() if path.suffix == ".py")
    assert files == ["__init__.py", "checks.py", "judge.py", "parts.py"]
    assert MODALITY_PACKAGES["vectors"] == "toy_vectors"
    # Every registry by modality finds the toy's parts from that line alone.
    parts, judge = importlib.import_module("toy_vectors.parts"), importlib.import_module("toy_vectors.judge")
    assert MODALITY_TRAITS["vectors"].sample_form == "arrays" and MODALITY_TRAITS["vectors"].noun == "vector"
    assert MODALITIES["vectors"] is parts.VECTORS
    assert JUDGES["vectors"] is judge.judge_vectors_run
    assert modality_spec("vectors").load("headline") is judge.print_vectors_headline
    assert modality_spec("vectors").load("curve_point") is judge.vectors_point


def test_the_config_takes_the_new_modality_and_refuses_an_unknown_one(vectors, tmp_path, monkeypatch):
    path = tmp_path / "vectors.yaml"
    path.write_text(yaml.safe_dump(_mapping(vectors["root"])), encoding="utf-8")
    config = load_config(path)
    assert (config.data.modality, config.decoder.name) == ("vectors", "nearest-public")
    assert config.data.classes == tuple(CLASSES)

    unknown = tmp_path / "voxels.yaml"
    unknown.write_text(yaml.safe_dump(with_dotted(_mapping(vectors["root"]), {"data.modality": "voxels"})),
                       encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown modality 'voxels'; known: .*vectors"):
        load_config(unknown)

    # The modality's own checks refuse what only it knows it cannot do, when the config is loaded.
    narrow = tmp_path / "narrow.yaml"
    narrow.write_text(yaml.safe_dump(with_dotted(_mapping(vectors["root"]), {"representation.feature_dim": 256})),
                      encoding="utf-8")
    with pytest.raises(ConfigError, match=r"representation.feature_dim: a vector run's random Fourier features"):
        load_config(narrow)

    # Without its line the same file is refused: the registry line is what adds the modality.
    monkeypatch.delitem(MODALITY_PACKAGES, "vectors")
    with pytest.raises(ConfigError, match=r"unknown modality 'vectors'"):
        load_config(path)


def test_a_run_delivers_public_pool_vectors_reproducibly(vectors, run_command, tmp_path):
    folder, outcome = vectors["folder"], vectors["outcome"]
    modality = MODALITIES["vectors"]
    delivered = folder / "synthetic.csv"
    assert outcome.delivered == delivered and delivered.is_file()
    assert outcome.class_names == tuple(CLASSES)

    # The delivered set reads back through the toy's reader with the counts the run states, every vector a
    # vector of the public pool (the nearest-public decoder returns pool samples).
    layout = modality.layout(vectors["config"].data)
    synthetic = modality.read_synthetic(delivered, layout, outcome.class_names)
    assert synthetic.samples.shape == (sum(outcome.synthetic_counts), len(COLUMNS))
    assert np.bincount(synthetic.labels, minlength=len(CLASSES)).tolist() == outcome.synthetic_counts
    assert all(count > 0 for count in outcome.synthetic_counts)
    pool = {tuple(row) for row in modality.read_public(vectors["config"].data, layout).samples}
    assert all(tuple(row) in pool for row in synthetic.samples)

    # The encoder the run saved loads back and encodes the pool as the run did (the retrieval decoder's index).
    encoder = modality.load_encoder(folder / "encoder")
    assert type(encoder).__module__ == "toy_vectors.parts"
    decoder = load_decoder(folder / "decoder")
    np.testing.assert_allclose(encoder.encode(decoder.samples), decoder.encodings, atol=1e-6)

    # `pcevolve run` on the same config delivers the same bytes (reproducible noise).
    code, output = run_command(parse_config(_mapping(vectors["root"], name="again"), source="<again>"))
    assert code == 0, output
    assert outputs_digest(tmp_path / "runs" / "again" / "synthetic.csv") == outputs_digest(delivered)
    assert outputs_digest(tmp_path / "runs" / "again" / "synthetic.npz") == outputs_digest(folder / "synthetic.npz")


def test_evaluate_judges_with_the_toy_judge_and_the_curve_reads_its_point(vectors):
    folder = vectors["folder"]
    verdict = judge_run(folder)
    assert verdict.modality == "vectors"
    assert type(verdict.evaluation).__module__ == "toy_vectors.judge"
    report = read_json(folder / "report" / "evaluation.json")
    secure = read_json(folder / "secure" / "evaluation.json")
    assert verdict.report == folder / "report" and verdict.secure == folder / "secure" / "evaluation.json"
    assert report["modality"] == "vectors" and "private_reference" not in report
    assert 0.0 <= secure["private_reference"]["accuracy"] <= 1.0
    assert report["synthetic"]["accuracy"] > 0.6  # the classes differ: the synthetic set teaches them apart
    assert report["epsilon"] == pytest.approx(vectors["outcome"].total_epsilon)

    point = curve_point("member", 1.0, report)
    assert isinstance(point, CurvePoint)
    assert point.metrics == {"logistic regression accuracy": report["synthetic"]["accuracy"]}
    assert point.spent == pytest.approx(report["epsilon"])

    # `pcevolve evaluate` dispatches to the toy's judge and prints the toy's headline.
    result = CliRunner().invoke(app, ["evaluate", str(folder), "-q"])
    assert result.exit_code == 0, result.output
    assert "logistic regression accuracy on the real test vectors (60): synthetic" in result.output
