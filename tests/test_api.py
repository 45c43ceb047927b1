"""The Python API: the documented example runs as written, with the CLI's ledger, folder and resume rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import pcevolve
from pcevolve.data import prepare_demo, read_image_folder
from pcevolve.pipeline import RunError

QUICKSTART = Path(__file__).resolve().parents[1] / "docs" / "quickstart.md"


def _python_example() -> str:
    text = QUICKSTART.read_text(encoding="utf-8")
    section = text[text.index("## From Python"):]
    match = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert match, "docs/quickstart.md has no python example under 'From Python'"
    return match.group(1)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The quickstart's example, run exactly as written in a folder holding data/digits."""
    root = tmp_path_factory.mktemp("api")
    prepare_demo("digits", root / "data" / "digits", progress=False)
    namespace: dict[str, object] = {}
    cwd = Path.cwd()
    try:
        import os

        os.chdir(root)
        exec(compile(_python_example(), str(QUICKSTART), "exec"), namespace)  # noqa: S102 - our own docs
    finally:
        os.chdir(cwd)
    return root, namespace


@pytest.mark.slow
def test_the_documented_example_runs(example_run) -> None:
    root, namespace = example_run
    synth = namespace["synth"]
    assert isinstance(synth, pcevolve.Synthesizer)
    assert synth.is_dp and synth.epsilon == pytest.approx(8.0, rel=5e-3) and synth.epsilon <= 8.0
    ledger = json.loads((root / "runs" / "digits" / "ledger.json").read_text())
    assert ledger  # the same signed ledger as `pcevolve run`
    saved = read_image_folder(root / "synthetic-digits")
    synthetic = namespace["synthetic"]
    assert saved.class_names == synthetic.class_names == ("0", "1", "2", "3", "4")
    assert len(saved) == len(synthetic) == 5 * 50  # the pool has 500 images: 500 / (2 x 5) per class
    assert np.array_equal(np.sort(saved.labels), np.sort(synthetic.labels))
    evaluation = namespace["evaluation"]
    accuracy = evaluation.headline()["lines"]["synthetic"]["cnn_accuracy"]
    assert 0.5 < accuracy <= 1.0  # five digit classes: chance is 0.2
    assert (root / "runs" / "digits" / "report" / "report.html").is_file()
    shared = root / "shared-digits"
    assert sorted(p.name for p in shared.iterdir()) == ["README.txt", "config.yaml", "ledger.json", "manifest.json",
                                                        "report", "synthetic"]
    assert "NOT covered by the guarantee" in (shared / "README.txt").read_text()


@pytest.mark.slow
def test_sample_keeps_the_class_balance(example_run) -> None:
    synth = example_run[1]["synth"]
    part = synth.sample(12)
    assert len(part) == 12 and set(np.bincount(part.labels, minlength=5).tolist()) == {2, 3}  # 12 over 5 equal classes
    with pytest.raises(ValueError, match="synthetic_per_class"):
        synth.sample(10_000)


@pytest.mark.slow
def test_resume_never_pays_twice_and_a_second_run_into_the_folder_is_refused(example_run, monkeypatch) -> None:
    root, namespace = example_run
    monkeypatch.chdir(root)
    ledger_before = (root / "runs" / "digits" / "ledger.json").read_bytes()
    again = pcevolve.Synthesizer.resume(root / "runs" / "digits", progress=False).fit()
    assert again.epsilon == namespace["synth"].epsilon
    assert (root / "runs" / "digits" / "ledger.json").read_bytes() == ledger_before
    with pytest.raises(RunError, match="already exists"):
        pcevolve.Synthesizer(epsilon=8.0, name="digits", progress=False).fit(
            "data/digits/private", public="data/digits/public")


def test_bad_settings_fail_before_any_data_is_read(tmp_path) -> None:
    from pcevolve.config import ConfigError, RunConfig

    with pytest.raises(ConfigError, match="synthetic_per_clas"):
        pcevolve.Synthesizer(RunConfig(), settings={"search.synthetic_per_clas": 3})
    with pytest.raises(pcevolve.NotFittedError):
        pcevolve.Synthesizer().sample()


@pytest.mark.slow
def test_save_never_replaces_what_is_already_there(example_run, tmp_path) -> None:
    from pcevolve.io import TargetExistsError

    synth = example_run[1]["synth"]
    notes = tmp_path / "mine"
    notes.mkdir()
    (notes / "notes.md").write_text("my notes")
    single = tmp_path / "x.txt"
    single.write_text("a file of mine")
    for target in (notes, single):
        with pytest.raises(TargetExistsError, match="nothing was written|is a file"):
            synth.save(target)
    with pytest.raises(TargetExistsError, match="is a file"):
        synth.save(single, overwrite=True)  # a folder never replaces a file, whatever overwrite says
    assert (notes / "notes.md").read_text() == "my notes" and single.read_text() == "a file of mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind
    empty = tmp_path / "empty"
    empty.mkdir()
    assert len(read_image_folder(synth.save(empty, n=10))) == 10  # an empty folder is filled
    synth.save(notes, n=10, overwrite=True)  # said so: replaced, once the new set is complete
    assert not (notes / "notes.md").exists() and len(read_image_folder(notes)) == 10


def test_api_arguments_are_checked_in_api_terms(tmp_path) -> None:
    from pcevolve.config import ConfigError

    cases = [
        (TypeError, "settings must map dotted keys", lambda: pcevolve.Synthesizer(settings=["a"])),
        (TypeError, "epsilon must be a number", lambda: pcevolve.Synthesizer(epsilon="eight")),
        (ConfigError, r"privacy.epsilon.*\(0, 100\]", lambda: pcevolve.Synthesizer(epsilon=float("inf"))),
        (ConfigError, r"privacy.epsilon.*\(0, 100\]", lambda: pcevolve.Synthesizer(epsilon=1e4)),
        (TypeError, "name must be a string", lambda: pcevolve.Synthesizer(name=3)),
        (TypeError, "config must be a RunConfig", lambda: pcevolve.Synthesizer(config=8)),
        (TypeError, "n must be a whole number", lambda: pcevolve.Synthesizer().sample(2.5)),
        (TypeError, "n must be a whole number", lambda: pcevolve.Synthesizer().sample("5")),
        (pcevolve.NotFittedError, "call fit", lambda: pcevolve.Synthesizer().save(tmp_path / "out")),
        (pcevolve.NotFittedError, "call fit", lambda: pcevolve.Synthesizer().evaluate(tmp_path)),
        (TypeError, "private must be a file or folder path", lambda: pcevolve.Synthesizer().fit(3, public="p")),
        (TypeError, "run_dir must be", lambda: pcevolve.Synthesizer.resume(None)),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            call()
    with pytest.raises(ValueError, match=r"fit\(private, public=POOL\)") as caught:
        pcevolve.Synthesizer(runs_root=tmp_path / "runs").fit(tmp_path)
    assert "--public" not in str(caught.value)  # an API user is told in API terms
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()
