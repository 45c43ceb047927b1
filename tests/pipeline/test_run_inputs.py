"""Inputs a run refuses before its ledger exists: a public pool that holds a private image, a missing folder."""

import shutil

import pytest

from pcevolve.pipeline import RunError, open_run, run_pipeline
from pcevolve.pipeline.secure_zone import SecureZone


def test_a_pool_holding_a_private_image_is_refused_before_any_budget_exists(tiny_config, tiny_data, tmp_path):
    pool = tmp_path / "pool"
    shutil.copytree(tiny_data / "public", pool)
    private_image = sorted((tiny_data / "private").rglob("*.png"))[3]
    shutil.copy(private_image, pool / "looks-public.png")
    config, folder, _ = open_run(tiny_config(name="leaky", **{"data.public": str(pool)}), root=tmp_path / "runs")
    with pytest.raises(RunError, match="shares 1 image") as caught:
        run_pipeline(config, folder)
    assert "looks-public.png" in str(caught.value)
    assert not SecureZone(folder).has_ledger()


def test_a_missing_data_folder_leaves_no_run_folder(tiny_config, tmp_path):
    with pytest.raises(RunError, match="data.private"):
        open_run(tiny_config(name="nowhere", **{"data.private": str(tmp_path / "absent")}), root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()
