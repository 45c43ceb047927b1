"""Property tests of the Python API's arguments: whatever a notebook passes, the answer is a TypeError, a ValueError
(ConfigError is one) or NotFittedError whose message names the argument — never an interpreter message, never a
folder made."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pcevolve
from pcevolve.config import ConfigError

ANYTHING = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=8), st.lists(st.integers(), max_size=3),
                     st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), st.binary(max_size=4))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(epsilon=ANYTHING, name=ANYTHING, settings_=ANYTHING)
def test_constructor_arguments_are_accepted_or_named(epsilon, name, settings_) -> None:
    with tempfile.TemporaryDirectory() as folder:
        try:
            pcevolve.Synthesizer(epsilon=epsilon, name=name, settings=settings_, runs_root=Path(folder) / "runs")
        except (TypeError, ValueError) as error:
            message = str(error)
            assert any(word in message for word in ("epsilon", "name", "settings")), message
            assert not isinstance(error, ConfigError) or "privacy.epsilon" in message or "settings" in message
        else:
            number = isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool)
            assert epsilon is None or (number and 0 < epsilon <= 100 and math.isfinite(epsilon))
            assert name is None or isinstance(name, str)
        assert not (Path(folder) / "runs").exists()  # nothing is written before fit()


@settings(max_examples=100, deadline=None)
@given(n=ANYTHING)
def test_sample_and_save_arguments_are_named_before_the_fit_is_asked_for(n) -> None:
    synth = pcevolve.Synthesizer()
    try:
        synth.sample(n)
    except TypeError as error:
        assert "n must be a whole number" in str(error)
        assert isinstance(n, bool) or not isinstance(n, int)
    except pcevolve.NotFittedError:
        assert n is None or (isinstance(n, int) and not isinstance(n, bool))
