"""The report refuses to carry a private sample, or a near copy of one, out of the secure zone."""

import numpy as np
import pytest

from pcevolve.evaluation import NEAR_COPY_RMS, near_copy_threshold
from pcevolve.report import Document, Paragraph, PrivateSampleInReport, SampleGrid, Section, check_no_private_samples
from pcevolve.report.write import write_document


def _images(seed, n=6):
    return np.random.default_rng(seed).integers(0, 256, size=(n, 12, 12)).astype(np.uint8)


def _document(images):
    grid = SampleGrid("samples", images=images, rows=np.arange(len(images)) % 2, row_names=("a", "b"),
                      sources=tuple(f"synthetic/{i}.png" for i in range(len(images))))
    return Document("t", (Section("Samples", (grid, Paragraph("text"))),))


def test_threshold_is_the_documented_rms():
    assert NEAR_COPY_RMS == 10.0
    assert near_copy_threshold((28, 28)) == pytest.approx(280.0)
    assert near_copy_threshold((12, 12, 3)) == pytest.approx(10 * np.sqrt(432))


def test_distinct_images_pass():
    assert check_no_private_samples(_document(_images(1)), _images(2, 20)) == 6


def test_a_planted_private_image_is_refused():
    private = _images(2, 20)
    images = _images(1)
    images[3] = private[7]
    with pytest.raises(PrivateSampleInReport, match=r"synthetic/3\.png.*distance 0\.0"):
        check_no_private_samples(_document(images), private)


def test_a_near_copy_is_refused_and_the_threshold_is_inclusive():
    private = _images(2, 20)
    images = _images(1)
    noise = np.random.default_rng(3).integers(-4, 5, size=private[0].shape)
    images[0] = np.clip(private[0].astype(int) + noise, 0, 255).astype(np.uint8)  # RMS difference ≈ 2.6
    with pytest.raises(PrivateSampleInReport):
        check_no_private_samples(_document(images), private)
    distance = float(np.linalg.norm(images[0].astype(float) - private[0]))
    check_no_private_samples(_document(images), private, threshold=distance - 1e-6)  # just under: passes
    with pytest.raises(PrivateSampleInReport):
        check_no_private_samples(_document(images), private, threshold=distance)


def test_images_that_cannot_be_compared_are_refused():
    with pytest.raises(PrivateSampleInReport, match="cannot be compared"):
        check_no_private_samples(_document(_images(1)), np.zeros((3, 10, 10), np.uint8))


def test_a_refused_report_writes_nothing_and_keeps_the_previous_one(tmp_path):
    private = _images(2, 20)
    folder = tmp_path / "report"
    write_document(folder, _document(_images(1)), private=private, evaluation_json={"ok": 1})
    before = sorted(p.name for p in folder.iterdir())
    assert before == ["evaluation.json", "report.html", "report.md", "samples.png"]
    leaky = _images(1)
    leaky[0] = private[0]
    with pytest.raises(PrivateSampleInReport):
        write_document(folder, _document(leaky), private=private, evaluation_json={"ok": 2})
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (folder / "evaluation.json").read_text().strip().endswith("}") and '"ok": 1' in (
        folder / "evaluation.json").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
