"""Run folders hold the resolved config, a manifest and append-only records."""

import pytest

from pcevolve.config import RunConfig, config_hash, load_config
from pcevolve.run_folder import RunFolder


def test_create_writes_config_and_manifest(tmp_path):
    config = RunConfig.model_validate({"name": "trial", "seed": 3})
    folder = RunFolder.create(tmp_path, config, data_fingerprints={"private": {"count": 10, "sha256": "ab"}})
    assert folder.path == tmp_path / "trial"
    assert load_config(folder.config_path) == config
    manifest = folder.manifest()
    assert manifest["config_hash"] == config_hash(config)
    assert manifest["seed"] == 3
    assert manifest["data"]["private"]["count"] == 10
    assert manifest["versions"]["torch"].startswith("2.")


def test_create_refuses_existing_folder(tmp_path):
    RunFolder.create(tmp_path, RunConfig())
    with pytest.raises(FileExistsError, match="resume"):
        RunFolder.create(tmp_path, RunConfig())


def test_records_append_in_order(tmp_path):
    folder = RunFolder.create(tmp_path, RunConfig())
    folder.record("generation", index=0, best=0.1)
    folder.record("stage", name="representation")
    folder.record("generation", index=1, best=0.2)
    assert [r["index"] for r in RunFolder.open(folder.path).records("generation")] == [0, 1]
    assert len(folder.records()) == 3


def test_open_rejects_non_run_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a pcevolve run folder"):
        RunFolder.open(tmp_path)
