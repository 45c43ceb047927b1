"""The lexical view: public IDF, unit rows, a fixed projection, and style that a topic model would miss."""

import numpy as np
import pytest

from pcevolve.encoders.lexical import HASH_BUCKETS, LexicalView

PUBLIC = np.array(["Flu season starts early this year http://bbc.in/a1",
                   "New drug approved for diabetes http://reut.rs/x", "Hospital waiting times grow http://cnn.it/q",
                   "Exercise helps the heart http://bbc.in/b2", "Measles cases rise in Europe http://reut.rs/y",
                   "Sleep and memory, a study http://cnn.it/r"] * 3)


def test_rows_are_unit_length_deterministic_and_empty_texts_are_zero():
    view = LexicalView.fit(PUBLIC, dim=32, seed=1)
    rows = view.transform(np.array(["Flu drug approved", "", "Flu drug approved"]))
    assert rows.shape == (3, 32) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows[[0, 2]], axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(rows[0], rows[2])
    np.testing.assert_array_equal(rows[1], 0.0)
    again = LexicalView.from_arrays(view.to_arrays())
    np.testing.assert_array_equal(again.transform(np.array(["Flu drug approved"])), rows[:1])


def test_a_text_row_depends_on_that_text_and_the_public_pool_only():
    view = LexicalView.fit(PUBLIC, dim=16, seed=0)
    alone = view.transform(np.array(["Measles cases rise"]))
    with_others = view.transform(np.array(["Measles cases rise", "something else entirely"]))[:1]
    np.testing.assert_allclose(alone, with_others, rtol=1e-6)
    assert view.idf.shape == (2 * HASH_BUCKETS,)
    other = LexicalView.fit(PUBLIC[:6], dim=16, seed=0)  # the IDF is the pool's: another pool, another view
    assert not np.allclose(other.transform(np.array(["Measles cases rise"])), alone)


def test_the_view_tells_sources_apart_by_how_they_write():
    view = LexicalView.fit(PUBLIC, dim=64, seed=0)
    same_topic = view.transform(np.array(["Vaccine news today http://bbc.in/zz", "Vaccine news today http://reut.rs/zz",
                                          "Heart study published http://bbc.in/kk"]))
    # The same words with another outlet's link are further apart than other words with the same outlet's link.
    assert same_topic[0] @ same_topic[2] > 0.2 and same_topic[0] @ same_topic[1] < 1.0


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="idf"):
        LexicalView(dim=8, seed=0, idf=np.ones(10))
