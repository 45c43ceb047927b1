"""The retrieval decoder: nearest public sample by cosine, exact stored encodings, distinct delivery, save/load."""

import numpy as np
import pytest
from pydantic import ValidationError

from pcevolve.config import DecoderConfig
from pcevolve.decoders import KnownEncodings, NearestPublicDecoder, load_decoder
from pcevolve.search.basis import PublicBasis
from pcevolve.similarity import unit_vectors
from pcevolve.search.roundtrip import ExactRoundTrip
from pcevolve.decoders.territories import ClassTerritories


class StubEncoder:
    """Encodes an image as its first ``feature_dim`` pixel values (centred): a deterministic, checkable map."""

    feature_dim = 6
    training = False

    def eval(self):
        return self

    def train(self, mode=True):
        return self

    def encode_both(self, samples, *, batch_size=256, progress=False):
        flat = np.asarray(samples, dtype=np.float32).reshape(len(samples), -1)[:, :self.feature_dim] - 127.5
        return flat, flat


def _pool(n=40, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=(n, 4, 4), dtype=np.uint8)


def _fitted(pool, **config):
    decoder = NearestPublicDecoder(DecoderConfig(name="nearest-public", **config), feature_dim=6,
                                   sample_shape=(4, 4), seed=0)
    result = decoder.fit(pool, encoder=StubEncoder(), seed=0)
    return decoder, result


def test_decoding_a_pool_encoding_returns_that_sample():
    pool = _pool()
    decoder, result = _fitted(pool)
    assert result.images == 40 and result.final_consistency == 1.0
    features = StubEncoder().encode_both(pool)[1]
    np.testing.assert_array_equal(decoder.decode(features * 3.0), pool)  # scale does not matter: cosine
    samples, encodings = decoder.decode_known(features, distinct=False)
    np.testing.assert_array_equal(samples, pool)
    np.testing.assert_allclose(encodings, features)
    assert isinstance(decoder, KnownEncodings)


def test_distinct_assignment_uses_every_pool_sample_once_before_any_twice():
    pool = _pool(30)
    decoder, _ = _fitted(pool)
    one_target = np.tile(StubEncoder().encode_both(pool[:1])[1], (45, 1))  # all ask for the same sample
    rows = decoder.assign_distinct(one_target)
    assert rows[0] == 0  # the first request gets the exact match
    counts = np.bincount(rows, minlength=30)
    assert counts.min() == 1 and counts.max() == 2  # 30 once, then 15 a second time
    assert len(set(rows[:30].tolist())) == 30
    # Rows that do not compete still get their nearest.
    np.testing.assert_array_equal(decoder.assign_distinct(StubEncoder().encode_both(pool)[1]), np.arange(30))


def test_pool_is_a_seeded_subset_and_survives_save_and_load(tmp_path):
    pool = _pool(50)
    decoder, _ = _fitted(pool, public_images=20)
    assert decoder.pool_size == 20
    again, _ = _fitted(pool, public_images=20)
    np.testing.assert_array_equal(decoder.samples, again.samples)
    decoder.save(tmp_path / "decoder")
    loaded = load_decoder(tmp_path / "decoder")
    assert isinstance(loaded, NearestPublicDecoder)
    queries = np.random.default_rng(1).standard_normal((12, 6))
    np.testing.assert_array_equal(loaded.decode(queries), decoder.decode(queries))


def test_exact_round_trip_in_the_reduced_space_matches_the_decoder():
    pool = _pool(60, seed=2)
    decoder, _ = _fitted(pool)
    encodings = decoder.encodings
    basis = PublicBasis.fit(encodings, 4)
    exact = ExactRoundTrip.build(encodings, basis)
    z = np.random.default_rng(3).standard_normal((200, 4)) * 0.5
    chosen = exact.choose(z)
    np.testing.assert_array_equal(chosen, decoder.nearest(basis.expand(z)))
    np.testing.assert_allclose(exact.predict(z), basis.reduce(encodings[chosen]))


def test_class_territories_confine_retrieval_and_the_exact_round_trip_alike():
    pool = _pool(60, seed=4)
    decoder, _ = _fitted(pool)
    basis = PublicBasis.fit(decoder.encodings, 4)
    territories = ClassTerritories(members=(np.arange(0, 60, 3), np.arange(1, 60, 3)), spreads=np.zeros((2, 4, 4)))
    z = np.random.default_rng(5).standard_normal((40, 4)) * 0.5
    labels = np.repeat([0, 1], 20)
    exact = ExactRoundTrip.build(decoder.encodings, basis, territories)
    chosen = exact.choose(z, labels)
    assert np.all(chosen[:20] % 3 == 0) and np.all(chosen[20:] % 3 == 1)
    # Within its territory each row gets what the unconfined decoder would give it among those samples.
    for k in (0, 1):
        members = territories.members[k]
        rows = labels == k
        scores = unit_vectors(basis.expand(z[rows]).astype(np.float32)) @ unit_vectors(decoder.encodings[members]).T
        np.testing.assert_array_equal(chosen[rows], members[np.argmax(scores, axis=1)])
    np.testing.assert_allclose(exact.predict(z, labels), basis.reduce(decoder.encodings[chosen]))
    # Delivery: distinct samples, each class from its own territory; a territory smaller than the request is
    # used round by round.
    rows = decoder.assign_distinct(basis.expand(z).astype(np.float32), labels, territories=territories)
    assert np.all(rows[:20] % 3 == 0) and np.all(rows[20:] % 3 == 1) and len(set(rows.tolist())) == 40
    many = np.zeros(45, dtype=np.int64)
    rows = decoder.assign_distinct(np.ones((45, 6), np.float32), many, territories=territories)
    assert set(rows.tolist()) == set(territories.members[0].tolist()) and np.bincount(rows).max() == 3
    with pytest.raises(ValueError, match="each row's class"):
        exact.choose(z)


def test_unfitted_decoder_and_wrong_inputs_are_refused():
    decoder = NearestPublicDecoder(DecoderConfig(name="nearest-public"), feature_dim=6, sample_shape=(4, 4), seed=0)
    with pytest.raises(ValueError, match="no pool yet"):
        decoder.decode(np.ones((2, 6)))
    with pytest.raises(ValueError, match="uint8"):
        decoder.fit(np.zeros((5, 3, 3), np.uint8), encoder=StubEncoder(), seed=0)
    fitted, _ = _fitted(_pool())
    with pytest.raises(ValueError, match="expected features"):
        fitted.decode(np.ones((2, 5)))


def test_retrieval_decoder_cannot_be_trained_under_dp():
    from pcevolve.config import RunConfig

    with pytest.raises(ValidationError, match="nothing to train"):
        RunConfig(decoder=DecoderConfig(name="nearest-public", training="public-then-dp"),
                  privacy={"split": {"release": 0.5, "decoder": 0.5}})
