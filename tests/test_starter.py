"""A config chosen from the data (``pcevolve init`` and ``pcevolve run PRIVATE --public POOL``)."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import config_hash, load_config
from pcevolve.data import DataError, prepare_demo
from pcevolve.starters import StarterError, choose_config, run_name


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    root = tmp_path_factory.mktemp("starter") / "clinic" / "data"
    prepare_demo("digits", root, classes=(0, 1, 2), per_class=12, public_size=400, test_per_class=5, full_size=0,
                 progress=False)
    return root


def test_choices_come_from_the_public_pool_and_the_file_round_trips(digits, tmp_path) -> None:
    starter = choose_config(digits, epsilon=3.0)
    config = starter.config
    assert config.name == "clinic"  # "clinic/data/private": generic folder names are skipped
    assert (config.data.image_size, config.data.image_mode) == (8, "L")
    assert config.data.public.endswith("public") and config.data.test.endswith("test") and config.data.full is None
    assert config.decoder.name == "nearest-public" and config.decoder.public_images == 400
    assert config.search.synthetic_per_class == 400 // (2 * 3)
    # Territories cover three quarters of the pool (the demo's 1.5 x 2,000 of 20,000 over five classes), and the
    # encoder sees 128 pixels, as the demo.
    assert config.search.territory == round(0.75 * 400 / (66 * 3), 2) == 1.52
    assert config.representation.input_size == 128
    assert config.privacy.epsilon == 3.0
    # Handwritten digits are an oriented kind: a mirrored 2 is no 2, so no mirrored training copies.
    assert config.augment.flip is False
    path = tmp_path / "clinic.yaml"
    path.write_text(starter.yaml_text())
    assert config_hash(load_config(path)) == config_hash(config)
    text = path.read_text()
    assert "# every image is read at 8 x 8" in text and "SPEC" not in text
    assert re.search(r"no mirrored copies: only \d+% of 200 public", text) and "such as digits, letters or" in text
    assert all(len(line) <= 120 for line in text.splitlines())


def test_the_config_does_not_depend_on_the_private_counts(digits, tmp_path) -> None:
    # The config is copied into the run folder, which leaves the secure zone: it must carry no private number.
    other = tmp_path / "data"
    shutil.copytree(digits, other)
    for image in sorted((other / "private" / "1").iterdir())[:5]:
        image.unlink()
    first = choose_config(digits, name="same").yaml_text()
    second = choose_config(other, public=digits / "public", test=digits / "test", name="same").yaml_text()
    strip = re.compile(r"/\S+")  # the folders' paths differ, nothing else may
    assert strip.sub("", first) == strip.sub("", second)
    assert any("7" in line for line in choose_config(other, name="same").findings)  # shown on the console only


def test_bad_inputs_are_named_before_anything_is_written(digits, tmp_path) -> None:
    with pytest.raises(StarterError, match="--public"):
        choose_config(digits / "private")
    table = tmp_path / "records.csv"
    table.write_text("a,label\n1,x\n")
    with pytest.raises(DataError, match="is a folder but the private data is a CSV table") as caught:
        choose_config(table, public=digits / "public")
    assert "give a CSV table with the private table's columns and no label column" in str(caught.value)
    broken = tmp_path / "broken"
    shutil.copytree(digits / "private", broken)
    (broken / "0" / "bad.png").write_bytes(b"not a png")
    with pytest.raises(DataError) as caught:
        choose_config(broken, public=digits / "public")
    assert any("bad.png" in problem.path for problem in caught.value.problems)


def test_a_pool_holding_a_private_image_is_a_warning_about_its_source_never_a_refusal(digits, tmp_path) -> None:
    # The pool must be chosen without looking at the private set: refusing it, or asking for the shared image to
    # be removed, would make what the run uses depend on the private data.
    leaked = tmp_path / "leaky_pool"
    shutil.copytree(digits / "public", leaked)
    shutil.copy(next((digits / "private" / "2").iterdir()), leaked / "copied.png")
    starter = choose_config(digits / "private", public=leaked)
    warning = next(line for line in starter.findings if "also in the public pool" in line)
    assert warning.startswith("warning: 1 private image(s)") and "choose the pool from another source" in warning
    assert "Do not remove" in warning
    clean = choose_config(digits / "private", public=digits / "public")
    assert "no image is shared between the private set and the public pool" in clean.findings


def test_run_name() -> None:
    from pathlib import Path

    assert run_name(Path("/x/Hospital A/images/train")) == "Hospital-A"


def test_init_cli_writes_a_valid_config_and_refuses_to_overwrite(digits, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["init", str(digits), "--epsilon", "2", "--out", "c.yaml"])
    assert result.exit_code == 0, result.output
    assert "wrote c.yaml" in result.output and "budget plan --config c.yaml" in result.output
    assert load_config(tmp_path / "c.yaml").privacy.epsilon == 2.0
    again = runner.invoke(app, ["init", str(digits), "--out", "c.yaml"])
    assert again.exit_code == 1 and "already exists" in again.output
    bad = runner.invoke(app, ["init", str(digits / "private"), "--public", str(tmp_path / "nowhere"),
                              "--out", "d.yaml"])
    assert bad.exit_code == 2 and "nowhere" in bad.output and "Traceback" not in bad.output  # a mistyped path
    assert not (tmp_path / "d.yaml").exists()


def test_run_cli_applies_flags_on_top_of_a_config_file(digits, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("name: x\n")
    result = CliRunner().invoke(app, ["run", "c.yaml", "--epsilon", "2", "--set", "search.generations=0"])
    assert result.exit_code == 2 and "error: --set: key 'search.generations'" in result.output  # the flag at fault
    missing = CliRunner().invoke(app, ["run", "c.yaml", "--epsilon", "2"])  # default data paths do not exist here
    assert missing.exit_code == 1 and "data.private" in missing.output
    assert not (tmp_path / "runs").exists()  # a wrong path leaves no run folder behind


def test_set_overrides_any_key_and_bad_ones_are_named(digits, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["init", str(digits), "--out", "c.yaml", "--set", "search.synthetic_per_class=20",
                                 "--set", "search.release_min_snr=2"])
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "c.yaml")
    assert config.search.synthetic_per_class == 20 and config.search.release_min_snr == 2.0
    assert "# set by you" in (tmp_path / "c.yaml").read_text()
    typo = runner.invoke(app, ["init", str(digits), "--out", "d.yaml", "--set", "search.synthetic_per_clas=20"])
    assert typo.exit_code == 2 and "search.synthetic_per_clas" in typo.output and not (tmp_path / "d.yaml").exists()
    malformed = runner.invoke(app, ["init", str(digits), "--out", "e.yaml", "--set", "oops"])
    assert malformed.exit_code == 2 and "KEY=VALUE" in malformed.output



def test_a_large_text_pool_gets_a_wider_search_basis():
    from pcevolve.starters.text import TEXT_BASIS_LARGE, TEXT_BASIS_POOL, text_basis

    assert text_basis(TEXT_BASIS_POOL) == TEXT_BASIS_LARGE == 64 and text_basis(TEXT_BASIS_POOL - 1) == 16
