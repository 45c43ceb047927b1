"""pcevolve as a library: build a synthesizer, ``fit`` it on your data, ``sample`` or ``save`` the synthetic set.

The same run as ``pcevolve run``: one run folder (``runs/NAME``), one signed privacy ledger, the same resume
semantics (``Synthesizer.resume(folder).fit()`` continues an interrupted run and never pays twice; fitting a
new synthesizer into an existing folder is refused), and the same checks before any budget is spent.

Example (this exact code runs as a test, on scikit-learn's digits)::

    from pcevolve import Synthesizer

    synth = Synthesizer(epsilon=8.0, name="digits")            # or Synthesizer("config.yaml")
    synth.fit("data/digits/private", public="data/digits/public")
    print(f"ε = {synth.epsilon:.2f}, δ = {synth.delta:g}")     # the accountant's total for the whole run
    synthetic = synth.sample()                                 # LabeledDataset: samples, labels, class_names
    synth.save("synthetic-digits")                             # one PNG folder per class, like the input
    evaluation = synth.evaluate("data/digits/test")            # report in runs/digits/report/
    print(evaluation.headline()["lines"]["synthetic"]["cnn_accuracy"])

In-memory data (a pandas DataFrame or a list of dicts for tables and texts, ``(X, y)`` numpy arrays for images) is
taken too, given a config or ``settings={"data.modality": ...}``: it is checked before anything is written, then
written only inside the run's ``secure/input/`` (:mod:`pcevolve.in_memory`), and :meth:`Synthesizer.sample` hands
the synthetic set back in the same form (docs/quickstart.md, "In-memory data").
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcevolve.api_arguments import check_data_arguments, check_path, described
from pcevolve.catalog.decoders import DECODER_TRAITS
from pcevolve.catalog.modalities import MODALITY_TRAITS
from pcevolve.config import RunConfig, check_budget, load_config, with_settings
from pcevolve.progress import loggable

if TYPE_CHECKING:
    from pcevolve.data import LabeledDataset
    from pcevolve.in_memory import InputPlan
    from pcevolve.evaluation import EvaluationSettings, RunEvaluation
    from pcevolve.pipeline import RunOutcome
    from pcevolve.sweep import SweepOutcome

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
#: A path, or in-memory data: a pandas DataFrame or a list of dicts (tables, texts), ``(X, y)`` numpy arrays
#: (labelled images) or an array X (the public images).
Data = PathLike | list[Mapping[str, Any]] | tuple[Any, Any] | Any


class NotFittedError(RuntimeError):
    """The synthesizer has no synthetic set yet: call :meth:`Synthesizer.fit` first."""


def _log(line: str) -> None:
    """A line the command line prints, as a log record: warnings (a pool holding private samples, a δ too large for
    the data) at warning level, so a notebook shows them. A log record may be kept (a notebook's output, a log file),
    so a line stating exact private counts is logged without them (:func:`pcevolve.progress.loggable`)."""
    kept = loggable(line)
    logger.log(logging.WARNING if kept.startswith("warning:") else logging.INFO, "%s", kept)


class Synthesizer:
    """A DP synthetic-data generator for one run.

    Args:
        config: A :class:`~pcevolve.config.RunConfig` or the path of a YAML config. ``None``: the settings are
            chosen from the data at :meth:`fit`, as ``pcevolve init`` would.
        epsilon: Total privacy budget (overrides the config's).
        name: The run's name, i.e. its folder ``runs_root/name`` (overrides the config's).
        settings: More settings by dotted key, e.g. ``{"search.synthetic_per_class": 200}``; applied last.
        runs_root: Where run folders are created.
        progress: Report progress on standard error (a bar on a terminal, lines otherwise).

    Every setting is validated before :meth:`fit` reads the private data or spends any budget.
    """

    def __init__(self, config: RunConfig | PathLike | None = None, *, epsilon: float | None = None,
                 name: str | None = None, settings: Mapping[str, Any] | None = None,
                 runs_root: PathLike = "runs", progress: bool = True) -> None:
        if not (config is None or isinstance(config, RunConfig)):
            check_path("config", config, "a RunConfig, the path of a YAML config, or None")
        if epsilon is not None:
            if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
                raise TypeError(f"epsilon must be a number, e.g. Synthesizer(epsilon=8.0); got {epsilon!r}")
            check_budget(epsilon, source="Synthesizer(epsilon=...)")  # fast: before a config is built
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string (the run folder's name), got {name!r}")
        if settings is not None and not (isinstance(settings, Mapping) and all(isinstance(k, str) for k in settings)):
            raise TypeError("settings must map dotted keys to values, e.g. settings={\"search.synthetic_per_class\": "
                            f"200}}; got {settings!r}")
        check_path("runs_root", runs_root, "a folder path")
        self._base = config if isinstance(config, RunConfig) or config is None else load_config(config)
        self._overrides: dict[str, Any] = dict(settings or {})
        if epsilon is not None:
            self._overrides["privacy.epsilon"] = float(epsilon)
        if name is not None:
            self._overrides["name"] = name
        if self._base is not None and self._overrides:  # fail now on a bad key, not after fitting starts
            with_settings(self._base, self._overrides, source="settings")
        self.runs_root = Path(runs_root).resolve()  # a later chdir must not move the run folder
        self.progress = progress
        self._resume: Path | None = None
        self._outcome: RunOutcome | None = None
        self._form: dict[str, Any] | None = None  # the input's form when fit() was given in-memory data
        self.config: RunConfig | None = self._base

    @classmethod
    def resume(cls, run_dir: PathLike, *, progress: bool = True) -> Synthesizer:
        """A synthesizer for an existing run folder: :meth:`fit` continues it (or reloads a finished one)."""
        check_path("run_dir", run_dir, "the path of a run folder")
        synth = cls(progress=progress)
        synth._resume = Path(run_dir).resolve()
        return synth

    @classmethod
    def load(cls, run_dir: PathLike, *, progress: bool = True) -> Synthesizer:
        """A finished run, reopened read-only: :meth:`sample`, :meth:`save`, :meth:`export` and :meth:`evaluate`
        work at once; nothing runs, no data is read and no budget is spent (the ledger is verified, not charged).

        Raises:
            pcevolve.pipeline.RunError: Not a run folder, a ledger that cannot be verified, or a run not finished
                (continue it with :meth:`resume`).
        """
        from pcevolve.in_memory import read_form
        from pcevolve.pipeline import finished_run

        check_path("run_dir", run_dir, "the path of a run folder")
        config, outcome = finished_run(Path(run_dir).resolve())
        synth = cls(progress=progress)
        synth.config, synth._outcome, synth._resume = config, outcome, outcome.folder
        synth._form = read_form(outcome.folder)
        return synth

    def _config_for(self, private: PathLike | None, public: PathLike | None, test: PathLike | None,
                    full: PathLike | None) -> RunConfig:
        if self._base is None:
            from pcevolve.starters import choose_config

            if private is None or public is None:
                raise ValueError("fit() without a config chooses the settings from the data: give both, "
                                 "fit(private, public=POOL) — the private labelled data and an unlabelled public "
                                 "pool like it (a folder of images, a CSV table, a JSONL file)")
            overrides = {key: value for key, value in self._overrides.items() if key not in ("privacy.epsilon",
                                                                                            "name")}
            starter = choose_config(private, public=public, test=test, full=full,
                                    epsilon=self._overrides.get("privacy.epsilon", 8.0),
                                    name=self._overrides.get("name"), overrides=overrides)
            for line in starter.findings:
                _log(line)
            # Classes read off the private labels are only a proposal: a run on them is refused, saying how to
            # declare them (as the command line names its --classes flag).
            return starter.confirmed(lambda choice: f"declare them with Synthesizer(settings={{{choice.key!r}: "
                                                    f"{choice.value!r}}}) (the values found in your data: check "
                                                    "that this is the task's whole list)"
                                     if choice.key == "data.classes" else
                                     f"declare it with Synthesizer(settings={{{choice.key!r}: FILE}}), a file you "
                                     "checked (`pcevolve init` drafts one)")
        paths = {key: str(Path(value).resolve()) for key, value in
                 (("data.private", private), ("data.public", public), ("data.test", test), ("data.full", full))
                 if value is not None}
        return with_settings(self._base, {**self._overrides, **paths}, source="settings")

    def _in_memory_config(self, test: PathLike | None, full: PathLike | None, *, pool: bool) -> RunConfig:
        """The config for in-memory data: the given one, or the defaults with ``settings`` (which must name the
        modality: settings are chosen from files only)."""
        paths = {key: str(Path(value).resolve()) for key, value in (("data.test", test), ("data.full", full))
                 if value is not None}
        if self._base is not None:
            return with_settings(self._base, {**self._overrides, **paths}, source="settings")
        if "data.modality" not in self._overrides:
            raise ValueError("fit() on in-memory data needs a config, or at least settings={\"data.modality\": "
                             "\"tabular\" | \"text\" | \"image\", \"data.classes\": [...]}: the settings are "
                             "chosen from the data only when it is given as paths")
        # The defaults are an image run's; their conv decoder draws images only. Samples it cannot draw (a table's,
        # texts) get the decoder `pcevolve init` chooses for them from files: each a public one chosen for its class.
        defaults = RunConfig()
        draws = DECODER_TRAITS[defaults.decoder.name].makes(self._overrides["data.modality"])
        retrieval = {} if draws else {"decoder.name": "nearest-public"}
        # Nothing of the defaults' demo paths: the data is what fit() is given (a pool only when one is; the plan
        # names its copy).
        unpooled = {} if pool else {"data.public": None}
        return with_settings(defaults, {**unpooled, "data.test": None, "data.full": None, **retrieval,
                                        **self._overrides, **paths}, source="settings")

    def _plan_inputs(self, private: Data | None, public: Data | None, test: PathLike | None,
                     full: PathLike | None, *, folder: Callable[[RunConfig], Path] | None = None
                     ) -> tuple[RunConfig, InputPlan]:
        """The config naming the ``secure/input/`` copies of the in-memory data inside the run folder (or the
        ``folder`` of that config: a sweep's), and the plan that writes them; the data is checked first (nothing is
        written, no folder made, when it has a problem)."""
        from pcevolve.in_memory import plan_inputs

        config = self._in_memory_config(test, full, pool=public is not None)
        target = self.runs_root / config.name if folder is None else folder(config)
        plan = plan_inputs(config.data, target, private, public)
        config = self._sized_to_pool(config, public)
        paths = {f"data.{key}": str(Path(value).resolve()) for key, value in (("private", private),
                                                                              ("public", public))
                 if value is not None and f"data.{key}" not in plan.settings}
        return with_settings(config, {**plan.settings, **paths}, source="fit()"), plan

    def _sized_to_pool(self, config: RunConfig, public: Data | None) -> RunConfig:
        """Settings alone (no config) that retrieve from an in-memory pool deliver as many per class as ``pcevolve
        init`` would choose from a pool of that size (public), unless the settings say how many."""
        from pcevolve.in_memory import looks_in_memory
        from pcevolve.starters.common import retrieval_per_class

        if (self._base is not None or "search.synthetic_per_class" in self._overrides or not looks_in_memory(public)
                or config.decoder.name != "nearest-public" or config.data.classes is None):
            return config
        pool = len(public) if not isinstance(public, tuple) else len(public[0])
        per_class = retrieval_per_class(pool, len(config.data.classes))
        return with_settings(config, {"search.synthetic_per_class": per_class}, source="settings")

    def fit(self, private: Data | None = None, public: Data | None = None, *,
            test: PathLike | None = None, full: PathLike | None = None) -> Synthesizer:
        """Run the whole pipeline and deliver the synthetic set into the run folder.

        Args:
            private: The private labelled data (default: the config's): a path (image class folders, a CSV table,
                a JSONL file), or in memory — a pandas DataFrame or a list of dicts with the label column
                (``data.label_column``; texts: and ``data.text_column``), or ``(X, y)`` numpy arrays of images
                (X: N×H×W or N×H×W×C, C 1 or 3, uint8 or float in [0, 1]; y: one declared class per image).
                In-memory data needs a config or ``settings={"data.modality": ...}``, and is written only inside
                ``RUN/secure/input/`` (the run's config names it there, so a crashed run resumes).
            public: The unlabelled public pool (default: the config's): a path, or a DataFrame / list of dicts
                without the label column, or an image array X.
            test, full: Real labelled folders for :meth:`evaluate` (not read by the run).

        Raises:
            pcevolve.config.ConfigError, pcevolve.data.DataError, pcevolve.pipeline.RunError: Bad settings, bad
                data (each problem named: a file and row, or an in-memory column and row index / array index) or a
                run folder that cannot be started or continued; raised before any budget is spent unless the
                message says otherwise.
            TypeError, ValueError: An argument of the wrong kind; in-memory data without a config or modality.
        """
        from pcevolve.data import DataError
        from pcevolve.in_memory import looks_in_memory, read_form
        from pcevolve.pipeline import discard_if_unstarted, open_run, run_pipeline

        check_data_arguments(private=private, public=public, test=test, full=full)
        plan: InputPlan | None = None
        if self._resume is not None:
            if any(value is not None for value in (private, public, test, full)):
                if self._outcome is not None:
                    raise ValueError(f"this synthesizer's run {self._resume} has finished; for other data or "
                                     "settings make a new Synthesizer (a run's data never changes)")
                raise ValueError(f"the run {self._resume} continues on the data it was started with; call fit() "
                                 "without data to continue it")
            config, folder, resumed = open_run(None, root=self.runs_root, resume=self._resume)
        elif looks_in_memory(private) or looks_in_memory(public):
            config, plan = self._plan_inputs(private, public, test, full)
            config, folder, resumed = open_run(config, root=self.runs_root,
                                               write_inputs=lambda made, inputs=plan: inputs.write(made.path))
        else:
            config, folder, resumed = open_run(self._config_for(private, public, test, full), root=self.runs_root)
        self.config = config
        try:
            self._outcome = run_pipeline(config, folder, progress=self.progress,
                                         say=_log)
        except BaseException as error:
            # As the CLI: a new run that failed before spending anything leaves no folder behind; any other
            # is continued by the next fit(), as `pcevolve run --resume` would.
            if resumed or not discard_if_unstarted(folder):
                self._resume = folder.path
            if plan is not None and isinstance(error, DataError):  # said of the user's rows, not our copy's lines
                raise plan.translate(error) from None
            raise
        self._resume = folder.path
        self._form = read_form(folder.path)
        return self

    def sweep(self, epsilons: Sequence[float], private: PathLike | None = None, public: PathLike | None = None, *,
              test: PathLike | None = None, full: PathLike | None = None, max_epsilon: float | None = None,
              out: PathLike | None = None, evaluate: bool = True) -> SweepOutcome:
        """Run this synthesizer's settings at each of ``epsilons`` on the same private data under one ledger, judge
        each run on ``test`` and draw the privacy–utility curve, as ``pcevolve sweep`` does (:mod:`pcevolve.sweep`).

        The runs compose: the sweep's ledger (``SWEEP/ledger.json``) is the accountant's composition of all of
        them, and a set chosen after comparing their test scores carries that ε, not its own (``export`` of a run
        records it); a choice steered by the attack figures, computed on the private data without noise, is covered
        by no ε.
        Open the one you choose with ``Synthesizer.load(outcome.folder / "eps-4")``.

        Args:
            epsilons: The ε of each run.
            private, public, test, full: As for :meth:`fit`: paths, or the private and public data in memory
                (written only inside ``SWEEP/secure/input/``; each run samples it back in the form given).
            max_epsilon: Refuse before anything runs when the runs together would pass this ε.
            out: The sweep folder (default ``runs_root/NAME-sweep``).
            evaluate: Judge the runs and draw the curve.

        Raises:
            pcevolve.sweep.SweepError: The plan passes ``max_epsilon`` (nothing written), or the folder exists.
            pcevolve.sweep.SweepPlanError, pcevolve.config.ConfigError, pcevolve.data.DataError: Bad values or data.
        """
        from pcevolve.in_memory import looks_in_memory
        from pcevolve.sweep import create_sweep, run_sweep
        from pcevolve.sweep.plan import API_TERMS
        from pcevolve.sweep.run import check_judging, sweep_folder

        if isinstance(epsilons, (str, bytes)) or not isinstance(epsilons, Sequence) or not all(
                isinstance(value, (int, float)) and not isinstance(value, bool) for value in epsilons):
            raise TypeError(f"epsilons must be a list of numbers, e.g. sweep([1, 2, 4, 8]); got {described(epsilons)}")
        check_data_arguments(private=private, public=public, test=test, full=full, out=out)
        if looks_in_memory(private) or looks_in_memory(public):
            if not looks_in_memory(private):
                raise ValueError("sweep() on in-memory data needs the private data in memory too (or both as paths)")
            root = self.runs_root.resolve()
            config, plan = self._plan_inputs(private, public, test, full,
                                             folder=lambda made: sweep_folder(made, out=out, root=root).resolve())
            count = len(private[1]) if isinstance(private, tuple) else len(private)
            if evaluate:
                check_judging(config, test, full)
            opened, _ = create_sweep(config, epsilons, out=out, root=root, max_epsilon=max_epsilon,
                                     in_memory=(count, plan.write), terms=API_TERMS)
        else:
            config = self._config_for(private, public, test, full)
            if evaluate:
                check_judging(config, test, full)
            opened, _ = create_sweep(config, epsilons, out=out, root=self.runs_root, max_epsilon=max_epsilon,
                                     terms=API_TERMS)
        return run_sweep(opened, test=test, full=full, evaluate=evaluate, progress=self.progress, say=_log)

    @staticmethod
    def resume_sweep(folder: PathLike, *, test: PathLike | None = None, full: PathLike | None = None,
                     evaluate: bool = True, progress: bool = True) -> SweepOutcome:
        """Continue an interrupted :meth:`sweep` (or redraw a finished one's curve); nothing finished runs again."""
        from pcevolve.sweep import open_sweep, run_sweep

        check_path("folder", folder, "the path of a sweep folder")
        return run_sweep(open_sweep(folder), test=test, full=full, evaluate=evaluate, progress=progress, say=_log)

    def _fitted(self) -> RunOutcome:
        if self._outcome is None:
            raise NotFittedError("no synthetic set yet: call fit() first")
        return self._outcome

    @property
    def folder(self) -> Path:
        """The run folder (ledger, synthetic set, records; ``secure/`` must not leave your machine)."""
        return self._fitted().folder

    @property
    def epsilon(self) -> float:
        """The accountant's total ε over every DP step of the run."""
        return self._fitted().total_epsilon

    @property
    def delta(self) -> float:
        return self._fitted().delta

    @property
    def is_dp(self) -> bool:
        """False only when the config asked for reproducible noise (tests and research): then it is NOT DP."""
        return self._fitted().is_dp

    def sample(self, n: int | None = None) -> Any:
        """The delivered synthetic set, or ``n`` of it with the same class balance (the first of each class).

        Returns:
            When :meth:`fit` was given paths: a :class:`~pcevolve.data.LabeledDataset`. When it was given in-memory
            data: a pandas DataFrame for tables and texts (the input's columns, in its order; a table's columns
            typed by its schema — whole numbers ``int64``, other numbers ``float64``, categories text, false/true
            ``bool`` — under the column names as given, and the label column holding the declared classes: booleans,
            whole numbers or text), or ``(X, y)`` numpy arrays for images (X
            uint8 in the input's layout, N×S×S or N×S×S×C with S = ``data.image_size``; y the declared classes:
            ``int64`` when every class is a whole number, else text). Nothing about them is read off the private
            data's own dtypes, which would let the private values shape what is delivered.

        Taking fewer is free (post-processing); for more, fit with a larger ``search.synthetic_per_class``.

        Raises:
            ImportError: In-memory tables or texts and pandas is missing (``pip install 'pcevolve[frames]'``).
        """
        synthetic = self._synthetic(n)
        if self._form is None:
            return synthetic
        from pcevolve.in_memory import as_given
        from pcevolve.modalities import MODALITIES

        assert self.config is not None  # set by fit()
        layout = MODALITIES.get_part(self.config.data.modality).layout(self.config.data)
        return as_given(synthetic, self._form, layout)

    def _synthetic(self, n: int | None) -> LabeledDataset:
        """The delivered set, or ``n`` of it with the same class balance, as a LabeledDataset."""
        import numpy as np

        from pcevolve.modalities import MODALITIES
        from pcevolve.search.delivery import largest_remainder

        if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
            raise TypeError(f"n must be a whole number of samples, e.g. sample(100); got {n!r}")
        outcome = self._fitted()
        assert self.config is not None  # set by fit()
        modality = MODALITIES.get_part(self.config.data.modality)
        synthetic = modality.read_synthetic(outcome.folder / modality.delivered_name,
                                            modality.layout(self.config.data), outcome.class_names)
        if n is None or n == len(synthetic):
            return synthetic
        if not 0 < n <= len(synthetic):
            raise ValueError(f"n must lie in 1..{len(synthetic)} (the delivered size), got {n}; for a larger set "
                             "fit with a larger search.synthetic_per_class")
        counts = np.bincount(synthetic.labels, minlength=len(synthetic.class_names))
        wanted = largest_remainder(n, counts)  # as delivery splits its total
        rows = np.concatenate([np.flatnonzero(synthetic.labels == k)[:m] for k, m in enumerate(wanted)])
        return synthetic.subset(np.sort(rows))

    def save(self, path: PathLike, *, n: int | None = None, overwrite: bool = False) -> Path:
        """Write the synthetic set (or ``n`` of it) in the input's format, atomically: ``path/<class name>/*.png``
        for images, a CSV at ``path`` for tables, a JSONL file for texts.

        Nothing of yours is replaced unless you say so: a path that holds a file or a non-empty folder is refused
        (an empty folder is filled), and with ``overwrite=True`` it is replaced only once the new set is complete.
        A folder never replaces a file, nor a file a folder.

        Raises:
            NotFittedError: :meth:`fit` has not run.
            pcevolve.io.TargetExistsError: ``path`` holds something (a :class:`FileExistsError`).
        """
        from pcevolve.modalities import MODALITIES

        self._fitted()
        check_path("path", path, "a file or folder path")
        assert self.config is not None  # set by fit()
        modality = MODALITIES.get_part(self.config.data.modality)
        synthetic = self._synthetic(n)
        return modality.write_synthetic(Path(path), synthetic.samples, synthetic.labels, synthetic.class_names,
                                        modality.layout(self.config.data), overwrite=bool(overwrite))

    def export(self, out: PathLike, *, with_report: bool = False) -> Path:
        """Copy what may be shared out of the run folder into ``out`` — the synthetic set, the ledger, config,
        manifest and a README.txt stating the guarantee; ``report/`` too with ``with_report`` (its attack and copy
        figures are not DP) — as ``pcevolve export`` does (:mod:`pcevolve.pipeline.export`).

        Raises:
            pcevolve.pipeline.ExportError: ``out`` exists, the ledger cannot be verified, the run is not DP, or the
                report was asked for and does not exist.
        """
        from pcevolve.pipeline.export import export_run

        return export_run(self._fitted().folder, out, with_report=with_report).path

    def evaluate(self, test: Data | None = None, full: PathLike | None = None, *,
                 settings: EvaluationSettings | None = None) -> RunEvaluation:
        """Judge the synthetic set against real labelled test data and write the report into ``RUN/report/``.

        Args:
            test: Held-out labelled data (default: the config's ``data.test``): a path, or in memory as :meth:`fit`
                takes the private data (a DataFrame or list of dicts with the label column, ``(X, y)`` arrays),
                written inside ``RUN/secure/input/``.
            full: Images only: a larger real labelled set, the reference line "trained on real data".

        The evaluation reads the private data (attacks, copy checks, the few-shot reference), so its
        exact figures are not DP: they go to ``RUN/secure/``, and the report says which numbers they are.
        """
        from pcevolve.evaluation import EvaluationSettings, evaluate_run
        from pcevolve.report.judges import judge_run
        from pcevolve.report import write_report

        outcome = self._fitted()
        assert self.config is not None  # set by fit()
        test = self._test_path(test, outcome.folder)
        if test is None:
            raise ValueError("evaluate() needs real held-out labelled test data: evaluate(test=...) with a path, or "
                             "in memory as fit() took the private data")
        if not MODALITY_TRAITS[self.config.data.modality].full_real_reference:  # its modality's judge, no --full
            return judge_run(outcome.folder, test, seed=0 if settings is None else settings.seed,
                             progress=self.progress).evaluation
        full = full if full is not None else self.config.data.full
        evaluation = evaluate_run(outcome.folder, test, full, settings=settings or EvaluationSettings(),
                                  progress=self.progress)
        write_report(evaluation)
        return evaluation

    def _test_path(self, test: Data | None, run: Path) -> PathLike | None:
        """The test data's path: ``test`` when it is one, the config's without it, and in-memory data written inside
        ``RUN/secure/input/`` (replacing what an earlier evaluate() wrote there) after the checks :meth:`fit` makes.
        """
        from pcevolve.in_memory import input_folder, looks_in_memory, plan_inputs

        assert self.config is not None
        if test is None:
            return self.config.data.test
        if not looks_in_memory(test):
            check_path("test", test, "a file or folder path, a pandas DataFrame, a list of dicts or (X, y) arrays")
            return test
        plan = plan_inputs(self.config.data, run, None, None, test=test)
        written = Path(plan.settings["data.test"])
        if written.is_dir() and written.parent == input_folder(run):
            shutil.rmtree(written)  # an earlier evaluate()'s copy: the folder writer never replaces a folder
        plan.write(run)
        return written

