"""One run's random sources: secure mechanism noise by default, public streams seeded and apart from the noise."""

import numpy as np
import pytest

from pcevolve.privacy import GeneratorNoise, SecureNoise
from pcevolve.randomness import NOISE_STREAMS, PUBLIC_STREAMS, RunRandomness, derived_seed


def test_mechanism_noise_is_secure_unless_reproducible_is_asked_for():
    assert isinstance(RunRandomness(3).noise("release"), SecureNoise)
    seeded = RunRandomness(3, reproducible_noise=True).noise("release")
    assert isinstance(seeded, GeneratorNoise) and not seeded.secure


def test_reproducible_noise_repeats_and_public_streams_repeat():
    a, b = RunRandomness(3, reproducible_noise=True), RunRandomness(3, reproducible_noise=True)
    assert np.array_equal(a.noise("release").normal(1.0, 5), b.noise("release").normal(1.0, 5))
    assert np.array_equal(a.public("release").normal(size=5), b.public("release").normal(size=5))
    assert a.public_seed("views") == derived_seed(3, "views")


def test_no_public_stream_starts_like_a_noise_stream():
    randomness = RunRandomness(3, reproducible_noise=True)
    noise = {stage: randomness.noise(stage).generator.standard_normal(64) for stage in NOISE_STREAMS}
    public = {name: randomness.public(name).standard_normal(64) for name in PUBLIC_STREAMS}
    for p in public.values():
        for n in noise.values():
            assert abs(np.corrcoef(p, n)[0, 1]) < 0.6
    assert len({tuple(v[:4]) for v in (*noise.values(), *public.values())}) == len(noise) + len(public)


def test_unknown_stream_names_are_refused():
    with pytest.raises(KeyError, match="unknown public stream"):
        RunRandomness(0).public("searchh")
    with pytest.raises(KeyError, match="unknown noise stream"):
        RunRandomness(0).noise("fitness")  # the release's former name
