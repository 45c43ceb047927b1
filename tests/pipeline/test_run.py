"""`pcevolve run` end to end on tiny data: outputs, ledger, determinism, crash and resume, no private reads after the
release."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from pcevolve.cli.main import app
from pcevolve.config import dump_config
from pcevolve.pipeline import RunError, open_run, run_pipeline
from pcevolve.privacy import BudgetLedger
from pcevolve.search import runner as search_runner


def synthetic_arrays(folder):
    with np.load(folder / "synthetic.npz", allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


class Crash(BaseException):
    """Stands in for kill -9: not an Exception, so nothing in the pipeline can catch it."""


def _run(config, root):
    config, folder, _ = open_run(config, root=root)
    return run_pipeline(config, folder)


# Determinism and resume are compared with reproducible noise (a secure run is not repeatable by design).
REPRODUCIBLE = {"privacy.reproducible_noise": True}


@pytest.fixture(scope="module")
def uninterrupted(tiny_config, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    outcome = _run(tiny_config(**REPRODUCIBLE), root)
    return outcome


def test_run_writes_the_synthetic_set_ledger_and_records(uninterrupted):
    folder = uninterrupted.folder
    names = sorted(p.name for p in (folder / "synthetic").iterdir())
    assert len(names) == 3
    counts = [len(list((folder / "synthetic" / n).glob("*.png"))) for n in names]
    assert counts == uninterrupted.synthetic_counts and all(c > 0 for c in counts)
    arrays = synthetic_arrays(folder)
    # The search features: the 64-d projection joined with the images' own pixels (the tiny config's 16 px, grey).
    assert len(arrays["labels"]) == sum(counts) and arrays["features"].shape[1] == 64 + 16 * 16
    for name in ("ledger.json", "records.jsonl", "manifest.json", "config.yaml", "fitness_curve.png"):
        assert (folder / name).exists(), name
    ledger = BudgetLedger.load(folder / "ledger.json")  # recomputes every ε from the events
    assert {e.stage for e in ledger.history} == {"representation", "release"}
    # The whole budget asked for is spent: the accountant's total is 8 within 1 %, never above.
    assert 0.99 * 8.0 <= ledger.spent() <= 8.0 and ledger.spent("release") <= ledger.stages["release"]
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    generations = [r for r in records if r["kind"] == "generation"]
    assert [r["generation"] for r in generations] == list(range(len(generations)))
    assert {"accuracy", "mmd", "attack", "privacy", "diversity", "consistency"} <= set(generations[0]["terms"])
    assert any("roundtrip" in r for r in generations)
    # Exact private counts and hashes stay out of the delivered manifest.
    assert "private" not in json.dumps(json.loads((folder / "manifest.json").read_text())["data"])


def test_same_seed_same_synthetic_set(uninterrupted, tiny_config, tmp_path):
    again = _run(tiny_config(**REPRODUCIBLE), tmp_path)
    a, b = synthetic_arrays(uninterrupted.folder), synthetic_arrays(again.folder)
    for key in ("features", "coordinates", "labels"):
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("crash_at", ["search", "delivery"])
def test_crash_then_resume_equals_the_uninterrupted_run(uninterrupted, tiny_config, tmp_path, monkeypatch, crash_at):
    config = tiny_config(**REPRODUCIBLE)
    _, folder, _ = open_run(config, root=tmp_path)
    if crash_at == "search":
        original = search_runner.Evolution.save
        calls = []

        def save_then_crash(self, target):
            calls.append(self.generation)
            if len(calls) == 3:
                raise Crash  # after generation 2's record, before its checkpoint
            return original(self, target)

        monkeypatch.setattr(search_runner.Evolution, "save", save_then_crash)
    else:
        import pcevolve.pipeline.stages as stages_module

        def crash(*args, **kwargs):
            raise Crash

        monkeypatch.setattr(stages_module, "write_synthetic_arrays", crash)
    with pytest.raises(Crash):
        run_pipeline(config, folder)
    monkeypatch.undo()
    spent_before = BudgetLedger.load(folder.ledger_path).spent()
    events_before = len(BudgetLedger.load(folder.ledger_path).history)

    resumed_config, resumed_folder, resumed = open_run(None, resume=folder.path)
    assert resumed and resumed_config == config
    run_pipeline(resumed_config, resumed_folder)
    ledger = BudgetLedger.load(folder.ledger_path)
    assert len(ledger.history) == events_before and ledger.spent() == spent_before  # nothing paid twice
    a, b = synthetic_arrays(uninterrupted.folder), synthetic_arrays(folder.path)
    for key in ("features", "coordinates", "labels"):
        np.testing.assert_array_equal(a[key], b[key])


def test_a_retrieval_run_killed_after_its_pool_labels_resumes_to_the_same_set(tiny_config, tmp_path, monkeypatch):
    import pcevolve.pipeline.stages as stages_module
    import pcevolve.search.assembly as assembly

    config = tiny_config(name="labels-resume", **{"decoder.name": "nearest-public"}, **REPRODUCIBLE)
    whole = _run(config, tmp_path / "whole")
    _, folder, _ = open_run(config, root=tmp_path / "killed")

    def crash(*args, **kwargs):
        raise Crash

    monkeypatch.setattr(stages_module, "run_search", crash)  # killed as the search starts
    with pytest.raises(Crash):
        run_pipeline(config, folder)
    monkeypatch.undo()
    assert (folder.path / "pool_labels.npz").exists() and (folder.path / "stages" / "labels.json").exists()
    resumed_config, resumed_folder, _ = open_run(None, resume=folder.path)
    monkeypatch.setattr(assembly, "co_trained", crash)
    run_pipeline(resumed_config, resumed_folder)  # the labels are loaded, not learnt again
    a, b = synthetic_arrays(whole.folder), synthetic_arrays(folder.path)
    for key in ("features", "coordinates", "labels"):
        np.testing.assert_array_equal(a[key], b[key])


def test_existing_folder_needs_resume_and_resume_refuses_another_config(uninterrupted, tiny_config):
    root = uninterrupted.folder.parent
    with pytest.raises(RunError, match="--resume"):
        open_run(tiny_config(**REPRODUCIBLE), root=root)
    with pytest.raises(RunError, match="another configuration"):
        open_run(tiny_config(**REPRODUCIBLE, **{"search.generations": 7}), resume=uninterrupted.folder)


def test_cli_run_prints_a_summary_and_bad_data_fails_cleanly(tiny_config, tmp_path):
    config = tiny_config(name="cli")
    path = tmp_path / "run.yaml"
    dump_config(config, path)
    result = CliRunner().invoke(app, ["run", str(path), "--runs-root", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "total" in result.output and "synthetic set" in result.output

    broken = tmp_path / "broken"
    (broken / "a").mkdir(parents=True)
    (broken / "a" / "x.png").write_bytes(b"not a png")
    bad = tiny_config(name="bad", **{"data.private": str(broken)})
    dump_config(bad, path)
    result = CliRunner().invoke(app, ["run", str(path), "--runs-root", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 1 and "x.png" in result.output


def test_retrieval_decoder_run_delivers_distinct_public_samples_with_an_exact_round_trip(tiny_config, tiny_data,
                                                                                          tmp_path, monkeypatch):
    from pcevolve.data import read_image_folder, read_unlabeled_images
    from pcevolve.decoders import load_decoder
    from pcevolve.pipeline import stages
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import class_territories, load_in_task, load_pool_labels, load_public_features
    from pcevolve.privacy.released_statistics import StatisticsRelease

    def second_pass(*args, **kwargs):
        raise AssertionError("the public features stage encoded the pool again instead of reusing the decoder's index")

    monkeypatch.setattr(stages, "bulk_encode", second_pass)
    config = tiny_config(name="retrieval", **{"decoder.name": "nearest-public"})
    outcome = _run(config, tmp_path)
    folder = outcome.folder
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    generations = [r for r in records if r["kind"] == "generation"]
    assert generations and not any("roundtrip" in r for r in generations)  # exact: nothing to check or refit
    delivered = read_image_folder(folder / "synthetic", size=16, mode="L")
    public = read_unlabeled_images(tiny_data / "public", size=16, mode="L").samples
    public_rows = {row.tobytes() for row in public}
    delivered_rows = [row.tobytes() for row in delivered.samples]
    assert all(row in public_rows for row in delivered_rows)  # every sample is a public one
    assert len(set(delivered_rows)) == len(delivered_rows)  # and none twice (the pool is large enough)
    assert sum(outcome.synthetic_counts) == len(delivered_rows)
    assert BudgetLedger.load(folder / "ledger.json").spent() <= 8.0 + 1e-9
    # Class k is delivered only from k's territory, which is rebuilt from the folder's public files alone.
    run = RunFolder.open(folder)
    territories = class_territories(config, StatisticsRelease.load(folder / "release.npz"),
                                    load_public_features(run).basis, load_decoder(folder / "decoder"),
                                    load_pool_labels(run), load_in_task(run))
    pool = {k: {row.tobytes() for row in load_decoder(folder / "decoder").samples[members]}
            for k, members in enumerate(territories.members)}
    assert all(row in pool[k] for row, k in zip(delivered_rows, delivered.labels))
    assert next(r for r in records if r["kind"] == "territories")["sizes"] == territories.sizes()
    # The territories were cut from pool labels of the class model co-trained with the pixel CNN (images' default).
    labels = next(r for r in records if r["kind"] == "labels")
    assert labels["labeller"] == "pixel-cnn" and sum(labels["assigned"]) == load_decoder(folder / "decoder").pool_size


def test_pixel_view_run_searches_a_basis_with_the_pixel_frequencies_and_draws_what_it_asks_for(tiny_config, tmp_path):
    from pcevolve.data import read_image_folder
    from pcevolve.decoders import load_decoder
    from pcevolve.encoders import ImageEncoder
    from pcevolve.encoders.pixel_view import PixelLayout
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import load_public_features
    from pcevolve.privacy.released_statistics import StatisticsRelease

    config = tiny_config(name="pixels", **{"decoder.name": "pixel-view", "search.pixel_frequencies": 4,
                                           "privacy.split": {"representation": 0.0, "release": 1.0}})
    outcome = _run(config, tmp_path)
    folder = outcome.folder
    public = load_public_features(RunFolder.open(folder))
    assert public.basis.dim == config.basis_size == 8 + 16
    assert public.local_variances.shape == (24,) and np.all(public.local_variances <= public.basis.variances.sum())
    # The 16 cosine images of the pixel view's 4 x 4 lowest frequencies lie inside the basis the search moved in.
    encoder = ImageEncoder.load(folder / "encoder")
    cosines = PixelLayout.of(encoder.meta).cosine_directions(4, encoder.feature_dim)
    directions = public.basis.directions
    np.testing.assert_allclose(directions @ (directions.T @ cosines), cosines, atol=1e-9)
    assert StatisticsRelease.load(folder / "release.npz").statistics.sums.shape[1] == 24
    # The delivered images are the decoder's drawings of the delivered features.
    with np.load(folder / "synthetic.npz") as arrays:
        features, labels = arrays["features"], arrays["labels"]
    delivered = read_image_folder(folder / "synthetic", size=16, mode="L")
    assert sum(outcome.synthetic_counts) == len(delivered) == len(features)
    drawn = load_decoder(folder / "decoder").decode(features)
    assert sorted(map(bytes, drawn)) == sorted(map(bytes, delivered.samples))
    assert np.bincount(labels).tolist() == np.bincount(delivered.labels).tolist()


@pytest.mark.parametrize("share, advice", [(None, "pixel-view"), (0.4, "search.synthetic_per_class")])
def test_a_class_with_too_few_lookalikes_in_the_pool_is_named_before_delivery(tiny_config, tmp_path, monkeypatch,
                                                                               share, advice):
    # Two images of a class: the pool may lack it (another decoder); 80% of what is asked: ask for fewer.
    from pcevolve.decoders.territories import ClassTerritories
    from pcevolve.search import assembly as assembly_module

    real = assembly_module.cut_territories
    kept: list[int] = []

    def starved(pool, labels, sizes, eligible=None):  # class 0's territory shrinks (territory 2: twice the delivery)
        found = real(pool, labels, sizes, eligible)
        kept.append(2 if share is None else int(share * sizes[0]))
        return ClassTerritories(members=(found.members[0][:kept[-1]], *found.members[1:]), spreads=found.spreads)

    monkeypatch.setattr(assembly_module, "cut_territories", starved)
    # 300 tiny digits are too few for the mirror test to tell (tests/augment/test_mirror.py tests it): here its
    # verdict is set, to see that the run passes it on before it spends.
    from pcevolve.augment import mirror as mirror_module

    monkeypatch.setattr(mirror_module, "mirror_test",
                        lambda images, rng: mirror_module.MirrorTest(share=0.02, queries=60))
    config = tiny_config(name="starved", **{"decoder.name": "nearest-public"})
    said: list[str] = []
    config, folder, _ = open_run(config, root=tmp_path)
    outcome = run_pipeline(config, folder, say=said.append)
    warnings = [line for line in said if line.startswith(f"warning: only {kept[-1]} public images")]
    assert len(warnings) == 1 and repr(outcome.class_names[0]) in warnings[0] and advice in warnings[0]
    # The tiny config mirrors images of an oriented kind: the run says so before it spends.
    flip = [line for line in said if line.startswith("warning: augment.flip is on")]
    release = next(line for line in said if line.startswith("release:"))
    assert len(flip) == 1 and said.index(flip[0]) < said.index(release)


def test_a_vote_run_releases_counts_and_one_selection_and_delivers_from_the_chosen_centres(tiny_config, tmp_path):
    from pcevolve.decoders import load_decoder
    from pcevolve.privacy import ExponentialSelection, GaussianRelease
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import class_territories, load_in_task, load_pool_labels, load_public_features
    from pcevolve.privacy.released_statistics import StatisticsRelease

    config = tiny_config(name="votes", **{"decoder.name": "nearest-public", "search.class_means": "votes",
                                          "search.synthetic_multiplier": None, "search.synthetic_per_class": 20,
                                          "privacy.split": {"representation": 0.0, "release": 1.0},
                                          **REPRODUCIBLE})
    outcome = _run(config, tmp_path)
    folder = outcome.folder
    ledger = BudgetLedger.load(folder / "ledger.json")
    events = ledger.events("release")
    assert [type(e) for e in events] == [GaussianRelease, ExponentialSelection]
    assert 0.999 * 8.0 <= ledger.spent() <= 8.0
    public = load_public_features(RunFolder.open(folder))
    assert public.vote_centres.shape == (8, public.basis.dim)  # 2.5 clusters per class, 3 classes, rounded
    assert public.vote_width > 0  # partial votes, their kernel width from the public points
    release = StatisticsRelease.load(folder / "release.npz")
    assert len(set(release.vote.chosen.tolist())) == 3
    np.testing.assert_allclose(release.statistics.sums / release.statistics.counts[:, None],
                               public.vote_centres[release.vote.chosen])
    with np.load(folder / "release.npz") as saved:
        assert "sums" not in saved and "second_moments" not in saved and "rff_sums" not in saved
    # Equal classes whose noisy counts differ by noise alone (count noise std ≈ 9 here) are delivered equal.
    assert outcome.synthetic_counts == [20, 20, 20]
    territories = class_territories(config, release, public.basis, load_decoder(folder / "decoder"),
                                    load_pool_labels(RunFolder.open(folder)), load_in_task(RunFolder.open(folder)))
    assert all(len(m) for m in territories.members)


def test_a_vote_config_the_data_cannot_serve_is_refused_with_the_data_checks(tiny_config):
    from types import SimpleNamespace

    from pcevolve.pipeline.run import _check_data

    config = tiny_config(name="votes", **{"search.class_means": "votes", "search.vote_clusters_per_class": 2})
    pool = np.zeros((30, 16, 16), dtype=np.uint8)

    def folders(count):  # an image run without data.classes: one class per folder, the folders being declared
        return SimpleNamespace(class_names=tuple(map(str, range(count))), labels=np.zeros(5, dtype=np.int64))

    with pytest.raises(RunError, match="has 17 class folders; search.class_means: votes takes at most 16"):
        _check_data(config, folders(17), pool, "image")
    with pytest.raises(RunError, match="fewer than the 32 clusters the classes vote among"):
        _check_data(config, folders(16), pool[:20], "image")
    _check_data(config, folders(3), pool, "image")  # 6 clusters: fine
    with pytest.raises(ValueError, match="data.classes: 17 classes; search.class_means: votes takes at most 16"):
        tiny_config(name="votes", **{"search.class_means": "votes", "data.classes": list(map(str, range(17)))})


def test_a_run_that_does_not_evolve_delivers_its_one_shot_start_and_says_so(table_config, tmp_path):
    """The default (search.evolve off): the delivered individual is the released Gaussians themselves; no generation is
    recorded or drawn; the summary and the report say the start was delivered. The evolving run of the same seed reads
    the same release (the pairing bench/evolve.py relies on)."""
    from rich.console import Console

    from pcevolve.cli.run_commands import print_summary
    from pcevolve.decoders import load_decoder
    from pcevolve.report.build import fitness_section
    from pcevolve.run_folder import RunFolder
    from pcevolve.search.assembly import (class_territories, load_in_task, load_pool_labels, load_public_features,
                                          search_targets)
    from pcevolve.privacy.released_statistics import StatisticsRelease

    config = table_config(name="start", **REPRODUCIBLE)
    assert not config.search.evolve
    outcome = _run(config, tmp_path)
    folder = outcome.folder
    search = json.loads((folder / "stages" / "search.json").read_text())
    assert (search["evolved"], search["generations"], outcome.generations) == (False, 0, 0)
    assert search["candidates"][0]["fitness"] == search["baseline_fitness"] == outcome.best_fitness
    assert not RunFolder.open(folder).records("generation") and not (folder / "fitness_curve.png").exists()
    release = StatisticsRelease.load(folder / "release.npz")
    public = load_public_features(RunFolder.open(folder))
    territories = class_territories(config, release, public.basis, load_decoder(folder / "decoder"),
                                    load_pool_labels(RunFolder.open(folder)), load_in_task(RunFolder.open(folder)))
    with np.load(folder / "search" / "ranked.npz") as ranked:
        np.testing.assert_array_equal(ranked["vectors"], search_targets(config, release, public, territories)[1]
                                      .baseline()[None, :])
    console = Console(record=True, width=300)
    print_summary(outcome, console)
    text = console.export_text()
    assert "search: not evolved — the one-shot start" in text and "fitness_curve.png" not in text
    # The in-task estimate of the retrieval pool is said and kept (public: the release and the pool's own).
    delivery = json.loads((folder / "stages" / "delivery.json").read_text())
    assert delivery["pool"].startswith("public pool: ") and delivery["pool"] in text.replace("\n", " ")
    assert delivery["in_task"]["pool"] == len(load_decoder(folder / "decoder").pool_encodings())
    section = fitness_section(folder)
    assert section.title == "Search: the one-shot start" and "search.evolve: false" in section.blocks[0].text

    evolved = _run(table_config(name="evolved", **REPRODUCIBLE, **{"search.evolve": True}), tmp_path)
    assert (evolved.folder / "release.npz").read_bytes() == (folder / "release.npz").read_bytes()
    assert evolved.baseline_fitness == outcome.baseline_fitness and evolved.generations > 0
    assert (evolved.folder / "fitness_curve.png").exists()
    assert fitness_section(evolved.folder).title == "Search: fitness curves"
