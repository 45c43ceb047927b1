"""What an evaluation reads: a finished run folder and the real data it is judged against.

Everything is read here, at the edge, and every problem becomes one :class:`EvaluationError`
whose message is one line naming the path. Reading rules:

* ``RUN/config.yaml`` says where the private and public data are (``data.private``,
  ``data.public``; relative paths are relative to the working directory, as for ``pcevolve run``)
  and how images are normalised (``data.image_size``, ``data.image_mode``). Every image set is
  read with those settings, so pixels are comparable across sets.
* Class names and order come from the private folder; the synthetic folder
  (``RUN/synthetic/<class>/*.png``), the test folder and the full folder must have exactly
  those classes.
* Large sets are thinned to fixed sizes by a seeded choice (sorted, so class order is kept):
  the full real set to ``full_max`` images, the public pool to ``public_max``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pcevolve.config import ConfigError, RunConfig, load_config
from pcevolve.data import DataError, LabeledDataset, read_image_folder
from pcevolve.data.image_files import list_folder, load_images
from pcevolve.evaluation.shipped import path_name
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.ledger_errors import LedgerError
from pcevolve.run_folder import RunFolder
from pcevolve.search.runner import generation_records


class EvaluationError(Exception):
    """The run or a data folder cannot be evaluated; the message is one line naming the path."""


#: Files a finished run folder must hold for an evaluation.
REQUIRED_RUN_FILES = ("config.yaml", "ledger.json", "synthetic", "encoder/encoder.json")


@dataclass(frozen=True)
class RunInputs:
    """A finished run and the real data it is judged against.

    Attributes:
        folder: The run folder.
        config: The run's resolved configuration.
        class_names: Class folder names, in label order (from the private folder).
        synthetic: The delivered synthetic set.
        private: The private samples (members, for the attacks and the copy check; the few-shot reference).
        test: The real held-out test set.
        full: The full real reference set, thinned to at most ``full_max`` (None without ``--full``).
        full_available: Images in the full folder before thinning (0 without it).
        public: Public-pool images, thinned to at most ``public_max`` (None if the run has no public pool).
        public_available: Images in the public folder before thinning.
        ledger: The run's privacy ledger (every ε recomputed on loading).
        generations: The search's generation records, last record per generation.
        dp_counts: The run's noisy (DP) per-class counts from ``release.npz``: what a shared report says about
            the private set's size, instead of the exact counts (None for a run without a release).
    """

    folder: Path
    config: RunConfig
    class_names: tuple[str, ...]
    synthetic: LabeledDataset
    private: LabeledDataset
    test: LabeledDataset
    full: LabeledDataset | None
    full_available: int
    public: np.ndarray | None
    public_available: int
    ledger: BudgetLedger
    generations: list[dict[str, Any]]
    dp_counts: np.ndarray | None = None

    @property
    def classes(self) -> int:
        return len(self.class_names)

    def dp_private_counts(self) -> list[int] | None:
        """The DP per-class counts rounded to whole images (post-processing of the release)."""
        return rounded_counts(self.dp_counts)

    def exact_private_counts(self) -> list[int]:
        """The private set's exact per-class counts: for ``secure/`` only."""
        return list(self.private.class_counts().values())

    def paths(self) -> dict[str, str | None]:
        """Where the run and every set were read from, in full: for ``secure/`` only (:meth:`describe` names them)."""
        data = self.config.data
        return {"run": str(self.folder), "synthetic": str(self.folder / "synthetic"), "private": str(data.private),
                "test": _source_root(self.test), "full": None if self.full is None else _source_root(self.full),
                "public": None if data.public is None else str(data.public)}

    def describe(self) -> dict[str, Any]:
        """Sizes and sources of every set (JSON-ready; counts only, no content; the private set by its DP counts;
        each folder by its own name only, :func:`~pcevolve.evaluation.shipped.path_name`)."""
        def counts(dataset: LabeledDataset | None) -> list[int] | None:  # every set is read with the same classes
            return None if dataset is None else list(dataset.class_counts().values())

        data = self.config.data
        name = {key: path_name(path) for key, path in self.paths().items()}
        return {"class_names": list(self.class_names), "image_size": data.image_size, "image_mode": data.image_mode,
                "synthetic": {"path": name["synthetic"], "per_class": counts(self.synthetic)},
                # Exact private counts are not DP: a shared report carries the release's noisy counts instead.
                "private": {"path": name["private"], "per_class_dp_estimate": self.dp_private_counts()},
                "test": {"path": name["test"], "per_class": counts(self.test)},
                "full": None if self.full is None else {"path": name["full"], "per_class": counts(self.full),
                                                        "available": self.full_available},
                "public": None if self.public is None else {"path": name["public"], "used": int(len(self.public)),
                                                            "available": self.public_available}}


def rounded_counts(dp_counts: np.ndarray | None) -> list[int] | None:
    """Noisy (DP) per-class counts as whole, non-negative samples (post-processing of the release); None: none."""
    if dp_counts is None:
        return None
    return [max(round(float(c)), 0) for c in dp_counts]


class JudgedRun:
    """What the table and text evaluations of a run share, from their ``private``, ``ledger``, ``dp_counts``,
    ``judgement``, ``seconds`` and ``config`` fields: the classes, the run's (ε, δ), the DP counts as whole samples,
    and the common head of the shareable JSON and the secure JSON."""

    # Set by the dataclass that inherits this (annotations only: they are not fields here).
    folder: Path
    config: RunConfig
    private: LabeledDataset
    ledger: BudgetLedger
    dp_counts: np.ndarray | None
    judgement: Any
    seconds: dict[str, float]

    @property
    def class_names(self) -> tuple[str, ...]:
        return self.private.class_names

    @property
    def epsilon(self) -> float:
        return self.ledger.spent()

    @property
    def delta(self) -> float:
        return self.ledger.delta

    def dp_private_counts(self) -> list[int] | None:
        """The DP per-class counts rounded to whole samples (post-processing of the release)."""
        return rounded_counts(self.dp_counts)

    def paths(self) -> dict[str, str | None]:
        """Where the run and every set were read from, in full (for ``secure/``); each class that inherits this
        adds its own sets to the run folder given here."""
        return {"run": str(self.folder)}

    def path_names(self) -> dict[str, str | None]:
        """:meth:`paths` as a shared report names them: each by its own name only."""
        return {key: path_name(path) for key, path in self.paths().items()}

    def shared_head(self, format_name: str, version: int, modality: str) -> dict[str, Any]:
        """The first fields of ``report/evaluation.json``: format, the run (by its folder's name), whether DP,
        (ε, δ)."""
        config = self.config
        return {"format": format_name, "version": version, "modality": modality,
                "run": {"folder": path_name(self.folder), "name": config.name, "seed": config.seed},
                "dp": self.ledger.is_dp, "epsilon": self.epsilon, "delta": self.delta}

    def secure_json(self, format_name: str, version: int) -> dict[str, Any]:
        """``secure/evaluation.json``: the exact private-derived figures a shared report leaves out, and the full
        paths it names by their last part."""
        return {"format": format_name + ".secure", "version": version,
                "private_per_class": list(self.private.class_counts().values()),
                "paths": self.paths(),
                **self.judgement.to_secure_json(),
                "seconds": {**self.judgement.seconds, **self.seconds}}


def audit_json(folder: Path) -> dict[str, Any] | None:
    """``RUN/audit.json`` as the report shows it (``pcevolve audit``), or ``None`` when the run was not audited.

    The per-mechanism part comes from synthetic games and ships as it is. The end-to-end part's bound comes from a
    second run on the private data (with canaries); it ships rounded to 2 decimals, as other private-derived
    figures do.
    """
    from pcevolve.audit.results import read_audit

    audit = read_audit(folder)
    if audit is None:
        return None
    end_to_end = audit.get("end_to_end")
    if isinstance(end_to_end, dict):
        end_to_end = {key: _rounded_bounds(value) if key in _END_TO_END_BOUNDS else value
                      for key, value in end_to_end.items()}
        end_to_end["grid"] = [{key: _rounded_bounds(value) if key == "epsilon" else value for key, value in row.items()}
                              for row in end_to_end.get("grid", []) if isinstance(row, dict)]
    return {key: value for key, value in (("mechanisms", audit.get("mechanisms")), ("end_to_end", end_to_end))
            if value is not None}


#: The end-to-end audit's ε figures, rounded to 2 decimals in a shared report.
_END_TO_END_BOUNDS = ("epsilon_lower_bound", "ceiling", "highest_ceiling", "claimed_epsilon", "audit_run_epsilon",
                      "audits_epsilon", "with_run_epsilon")


def _rounded_bounds(value: Any) -> Any:
    return round(value, 2) if isinstance(value, float) and math.isfinite(value) else value


def ledger_json(ledger: BudgetLedger, folder: Path) -> dict[str, Any]:
    """A run's ledger as every evaluation report shows it: totals, per-stage caps and spending, every event, and for a
    run a sweep made, the sweep's ε (:func:`sweep_json`)."""
    return {"total_epsilon": ledger.spent(), "cap": ledger.total_epsilon, "delta": ledger.delta, "dp": ledger.is_dp,
            "stages": {stage: {"cap": cap, "epsilon": ledger.spent(stage)} for stage, cap in ledger.stages.items()},
            "events": [entry.to_json() for entry in ledger.history], "sweep": sweep_json(folder)}


def sweep_json(folder: Path) -> dict[str, Any] | None:
    """For a run ``pcevolve sweep`` made: its sweep (by name), the ε a set chosen among the sweep's runs carries (its
    spent total once every run finished, its cap before; None when the sweep's folder is not beside the run) and
    whether every run finished. None for any other run."""
    from pcevolve.pipeline.sweep_member import SweepMemberError, membership, sweep_guarantee

    try:
        swept = sweep_guarantee(folder)
    except SweepMemberError:
        member = membership(folder)
        return {"name": str(None if member is None else member.get("sweep")), "epsilon": None, "finished": None}
    return None if swept is None else {"name": swept.sweep.name, "epsilon": swept.epsilon, "finished": swept.finished}


def _source_root(dataset: LabeledDataset) -> str:
    # sources are root/<class>/<file>; the root is two levels up.
    return str(Path(dataset.sources[0]).parent.parent) if dataset.sources else ""


def one_line(error: Exception) -> str:
    if isinstance(error, DataError):
        first = error.problems[0]
        more = len(error.problems) - 1
        return str(first) + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")
    lines = str(error).strip().splitlines()
    return lines[0] + (f" (and {len(lines) - 1} more lines)" if len(lines) > 1 else "")


def read_ledger(folder: Path) -> BudgetLedger:
    """The run's privacy ledger (``RUN/ledger.json``, every ε recomputed on loading)."""
    try:
        return BudgetLedger.load(folder / "ledger.json")
    except (LedgerError, ValueError, OSError) as error:
        raise EvaluationError(f"ledger {folder / 'ledger.json'}: {one_line(error)}") from None


def read_dp_counts(folder: Path) -> np.ndarray | None:
    """The run's noisy (DP) per-class counts from ``RUN/release.npz``; None for a run without a release."""
    if not (folder / "release.npz").is_file():
        return None
    with np.load(folder / "release.npz", allow_pickle=False) as release:
        return np.asarray(release["counts"], dtype=np.float64)


def _folder(path: str | os.PathLike[str], what: str) -> Path:
    folder = Path(path)
    if not folder.is_dir():
        raise EvaluationError(f"{what} {folder} does not exist or is not a folder")
    return folder


def _read_labeled(path: str | os.PathLike[str], what: str, config: RunConfig,
                  class_names: tuple[str, ...] | None, *, min_per_class: int = 2) -> LabeledDataset:
    folder = _folder(path, what)
    try:
        return read_image_folder(folder, size=config.data.image_size, mode=config.data.image_mode,
                                 class_names=class_names, min_per_class=min_per_class)
    except (DataError, ValueError, OSError) as error:
        raise EvaluationError(f"{what} {folder}: {one_line(error)}") from None


def thin(dataset: LabeledDataset, most: int, rng: np.random.Generator) -> LabeledDataset:
    """At most ``most`` samples chosen without replacement by ``rng``, in their original order."""
    if len(dataset.labels) <= most:
        return dataset
    return dataset.subset(np.sort(rng.choice(len(dataset.labels), most, replace=False)))


def open_run_folder(run_dir: str | os.PathLike[str], *,
                    required: tuple[str, ...] = REQUIRED_RUN_FILES) -> tuple[Path, RunConfig]:
    """Check that ``run_dir`` is a finished run folder (it holds every path of ``required``) and read its config."""
    folder = _folder(run_dir, "run folder")
    missing = [name for name in required if not (folder / name).exists()]
    if missing:
        raise EvaluationError(f"run folder {folder} is not a finished pcevolve run (missing {', '.join(missing)})")
    try:
        config = load_config(folder / "config.yaml")
    except ConfigError as error:
        raise EvaluationError(one_line(error)) from None
    return folder, config


def load_run_inputs(run_dir: str | os.PathLike[str], test_dir: str | os.PathLike[str],
                    full_dir: str | os.PathLike[str] | None = None, *, full_max: int = 5000,
                    public_max: int = 2000, seed: int = 0) -> RunInputs:
    """Read a finished run and the data it is judged against.

    Args:
        run_dir: The run folder (``pcevolve run`` output).
        test_dir: Real held-out test images, one folder per class.
        full_dir: Optional full real training set, one folder per class (the upper reference line).
        full_max: Most full-set images kept (seeded choice).
        public_max: Most public-pool images kept (seeded choice); they are the attacks' reference data.
        seed: Seeds the thinning.

    Raises:
        EvaluationError: Anything missing or unreadable; one line naming the path.
    """
    folder, config = open_run_folder(run_dir)
    _folder(test_dir, "test folder")  # checked before the slow reads
    if full_dir is not None:
        _folder(full_dir, "full folder")
    where = f"(data.private in {folder / 'config.yaml'})"
    if not Path(config.data.private).is_dir():
        raise EvaluationError(f"private folder {config.data.private} {where} does not exist; run the evaluation "
                              "from the folder the run was started in")
    # As the run read it: against the declared classes (or its class folders), a class with no image accepted.
    private = _read_labeled(config.data.private, "private folder", config, config.data.classes, min_per_class=0)
    names = private.class_names
    synthetic = _read_labeled(folder / "synthetic", "synthetic folder", config, names, min_per_class=1)
    test = _read_labeled(test_dir, "test folder", config, names)
    rng = np.random.default_rng([seed, 7])
    full, full_available = None, 0
    if full_dir is not None:
        whole = _read_labeled(full_dir, "full folder", config, names)
        full_available = len(whole.labels)
        full = thin(whole, full_max, rng)
    public, public_available = _read_public(config, rng, public_max)
    ledger = read_ledger(folder)
    generations = generation_records(RunFolder(folder).records("generation"))
    dp_counts = read_dp_counts(folder)
    return RunInputs(folder=folder, config=config, class_names=names, synthetic=synthetic, private=private,
                     test=test, full=full, full_available=full_available, public=public,
                     public_available=public_available, ledger=ledger, generations=generations, dp_counts=dp_counts)


def _read_public(config: RunConfig, rng: np.random.Generator, most: int) -> tuple[np.ndarray | None, int]:
    if config.data.public is None:
        return None, 0
    folder = _folder(config.data.public, "public folder")
    images, _, _ = list_folder(folder)
    if not images:
        raise EvaluationError(f"public folder {folder} holds no images")
    chosen = [images[i] for i in np.sort(rng.choice(len(images), min(most, len(images)), replace=False))]
    samples, problems = load_images(chosen, size=config.data.image_size, mode=config.data.image_mode)
    if problems:
        raise EvaluationError(f"public folder {folder}: {one_line(DataError(problems))}")
    return samples, len(images)


def delivery_note(folder: Path, key: str) -> str | None:
    """A sentence the delivery stage wrote of the run (``stages/delivery.json``), or None: ``made_by``, how a run
    without a public pool made its samples; ``pool``, how much of a retrieval decoder's pool looked like the task.
    Public: the run's own summary lines, functions of the DP release and public data."""
    marker = Path(folder) / "stages" / "delivery.json"
    if not marker.is_file():
        return None
    from pcevolve.io import read_json

    note = read_json(marker).get(key)
    return note if isinstance(note, str) else None
