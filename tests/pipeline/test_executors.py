"""``executor: ray`` gives what ``executor: local`` gives, on a real Ray cluster started on loopback for these
tests, and only public data reaches it."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from pcevolve.config import ExecutorConfig, parse_config
from pcevolve.executors import LocalExecutor, use_executor
from pcevolve.run_folder import RunFolder, outputs_digest

ray = pytest.importorskip("ray", reason="the Ray executor's tests need Ray (pip install 'pcevolve[ray]')")


@pytest.fixture(scope="module")
def cluster():
    """A two-CPU Ray cluster on 127.0.0.1 for this module, stopped after it (an executor joins, never stops it)."""
    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
    yield
    ray.shutdown()


def test_the_config_names_an_executor_and_its_place_is_not_part_of_the_run_identity():
    from pcevolve.config import config_hash

    assert parse_config({"executor": "ray"}, source="<t>").executor == ExecutorConfig(name="ray")
    with pytest.raises(Exception, match="executor.name: unknown executor 'spark'; known: local, ray"):
        parse_config({"executor": {"name": "spark"}}, source="<t>")
    assert config_hash(parse_config({"executor": "ray"}, source="<t>")) == config_hash(parse_config({}, source="<t>"))


def test_the_command_line_may_move_a_run_to_another_executor_without_changing_its_identity():
    from pcevolve.cli.run_commands import with_executor
    from pcevolve.config import ConfigError, config_hash

    config = parse_config({"search": {"population": 12}}, source="<t>")
    moved = with_executor(config, "ray")
    assert moved.executor.name == "ray" and moved.search.population == 12
    assert config_hash(moved) == config_hash(config)  # so `--resume RUN --executor ray` is accepted
    with pytest.raises(ConfigError, match="unknown executor 'spark'"):
        with_executor(config, "spark")


def test_a_missing_ray_is_named_with_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(Exception, match=r"executor ray needs Ray .* pip install 'pcevolve\[ray\]'"):
        parse_config({"executor": "ray"}, source="<t>")


@pytest.mark.slow
def test_chunks_on_the_cluster_come_back_in_row_order_as_the_local_call_gives_them(cluster):
    rows = np.arange(11)
    with use_executor(ExecutorConfig(name="ray", workers=2)) as executor:
        remote = executor.map_chunks(np.multiply, 3, rows)
        again = executor.map_chunks(np.multiply, 3, rows[:1])  # fewer rows than workers: one chunk
    assert remote == list(LocalExecutor().map_chunks(np.multiply, 3, rows)) == list(3 * rows)
    assert again == [0]


@pytest.mark.slow
def test_encoding_on_the_cluster_gives_the_local_floats_bit_for_bit(cluster):
    from pcevolve.config import RepresentationConfig
    from pcevolve.encoders import build_encoder
    from pcevolve.encoders.bulk import BULK_MIN_IMAGES

    encoder = build_encoder(RepresentationConfig(backbone="efficientnet-lite0", input_size=32, feature_dim=64),
                            seed=0, sample_shape=(28, 28)).eval()
    images = np.random.default_rng(0).integers(0, 256, (BULK_MIN_IMAGES + 100, 28, 28), dtype=np.uint8)
    local = LocalExecutor().encode(encoder, images, batch_size=256)
    # Several shards, the last one short, each below the bulk threshold on its own.
    with use_executor(ExecutorConfig(name="ray", workers=2, shard_rows=300)) as executor:
        remote = executor.encode(encoder, images, batch_size=256)
    for here, there in zip(local, remote):
        assert here.dtype == there.dtype and np.array_equal(here, there)


@pytest.mark.slow
def test_a_run_on_the_cluster_delivers_the_local_run_s_files_and_sends_only_public_samples(cluster, tiny_config,
                                                                                         tiny_data, tmp_path,
                                                                                         monkeypatch):
    from pcevolve.data import read_unlabeled_images
    from pcevolve.executors.ray_cluster import RayExecutor
    from pcevolve.pipeline import open_run, run_pipeline

    settings = {"privacy.reproducible_noise": True, "decoder.name": "nearest-public",
                "privacy.split": {"representation": 0.0, "release": 1.0}}
    folders = {}
    sent: list[np.ndarray] = []
    encode = RayExecutor.encode

    def recording_encode(self, encoder, samples, **kwargs):
        sent.append(np.asarray(samples))
        return encode(self, encoder, samples, **kwargs)

    monkeypatch.setattr(RayExecutor, "encode", recording_encode)
    for executor in ("local", "ray"):
        config = tiny_config(name=executor, **settings, **{"executor.name": executor, "executor.shard_rows": 64})
        config, folder, _ = open_run(config, root=tmp_path)
        run_pipeline(config, folder)
        folders[executor] = folder.path
    for name in ("synthetic", "synthetic.npz", "release.npz", "public_features.npz", "search/ranked.npz"):
        assert outputs_digest(folders["local"] / name) == outputs_digest(folders["ray"] / name), name
    curves = [RunFolder.open(folders[name]).records("generation") for name in ("local", "ray")]
    assert curves[0] == curves[1]  # the same fitness curve, generation by generation
    # Every sample the cluster saw is a public one (the public pool never holds a private image: checked on reading).
    public = {row.tobytes() for row in read_unlabeled_images(tiny_data / "public", size=16, mode="L").samples}
    assert sent and all(row.tobytes() in public for batch in sent for row in batch)
