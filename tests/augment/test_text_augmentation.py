"""Word-level text views: each operation at its rate, reproducible from the generator, never an empty text; the
synonym table from an embedding matrix."""

from __future__ import annotations

import numpy as np
import pytest

from pcevolve.augment.text import TextAugmentation, embedding_synonyms

TEXT = "A sometimes tedious film, but the actors are funny."


def test_no_operation_leaves_the_text_as_it_is():
    assert TextAugmentation(mask=0, drop=0, swap=0, synonym=0)(TEXT, np.random.default_rng(0)) == TEXT


def test_views_are_reproducible_from_the_generator_and_differ_between_draws():
    augmentation = TextAugmentation(mask=0.2, drop=0.2, swap=0.2)
    first = [augmentation(TEXT, np.random.default_rng(4)) for _ in range(2)]
    assert first[0] == first[1]
    rng = np.random.default_rng(4)
    assert len({augmentation(TEXT, rng) for _ in range(20)}) > 10


def test_each_operation_does_what_it_says():
    rng = np.random.default_rng(0)
    assert TextAugmentation(mask=1, drop=0, swap=0, synonym=0, mask_token="<m>")("one two three", rng) == "<m> <m> <m>"
    assert TextAugmentation(mask=0, drop=1, swap=0, synonym=0)("one two three", rng) == "one"  # never empty
    assert TextAugmentation(mask=0, drop=0, swap=1, synonym=0)("one two", rng) == "two one"
    synonyms = TextAugmentation(mask=0, drop=0, swap=0, synonym=1, synonyms={"film": ("movie",), "funny": ("droll",)})
    assert synonyms(TEXT, rng) == "A sometimes tedious movie, but the actors are droll."
    assert synonyms("Film!", rng) == "Movie!"  # capital and punctuation kept


def test_a_rate_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="mask must be a probability"):
        TextAugmentation(mask=1.5)


def test_the_synonym_table_holds_the_nearest_whole_words_above_the_threshold():
    vocabulary = ["[PAD]", "film", "movie", "##s", "dog", "cat", "ab", "Film"]
    embeddings = np.array([[0, 0, 1], [1, 0, 0], [0.9, 0.1, 0], [1, 0, 0], [0, 1, 0], [0.1, 1, 0], [1, 0, 0],
                           [1, 0, 0]], np.float32)
    table = embedding_synonyms(vocabulary, embeddings, neighbours=1, min_cosine=0.5)
    # Word pieces, short tokens, capitalised and bracketed tokens are not words of the table.
    assert table == {"film": ("movie",), "movie": ("film",), "dog": ("cat",), "cat": ("dog",)}
