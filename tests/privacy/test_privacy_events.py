"""Events validate themselves and survive a JSON round trip exactly."""

import json
import math

import pytest

from pcevolve.privacy import (
    ExponentialSelection,
    GaussianRelease,
    LaplaceRelease,
    PostProcessing,
    SubsampledGaussianSteps,
    event_from_json,
    event_to_json,
)

EVENTS = [
    GaussianRelease(math.sqrt(3), 3),
    LaplaceRelease(0.5),
    ExponentialSelection(0.1, 7),
    SubsampledGaussianSteps(64 / 500, 4.9, 625),
    PostProcessing(),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_json_round_trip_is_exact(event):
    text = json.dumps(event_to_json(event))
    assert event_from_json(json.loads(text)) == event


@pytest.mark.parametrize(
    "bad",
    [
        lambda: GaussianRelease(0.0),
        lambda: GaussianRelease(-1.0),
        lambda: GaussianRelease(float("inf")),
        lambda: GaussianRelease(float("nan")),
        lambda: GaussianRelease(1.0, 0),
        lambda: LaplaceRelease(1.0, count=1.5),
        lambda: ExponentialSelection(0.0),
        lambda: SubsampledGaussianSteps(0.0, 1.0, 1),
        lambda: SubsampledGaussianSteps(1.5, 1.0, 1),
        lambda: SubsampledGaussianSteps(0.1, 1.0, 0),
        lambda: GaussianRelease(True),
    ],
)
def test_invalid_parameters_are_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        bad()


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "laplace_dp_event", "noise_multiplier": 1.0},
        {"kind": "gaussian_release", "noise_multiplier": 1.0, "extra": 1},
        {"kind": "gaussian_release"},
        {"kind": "gaussian_release", "noise_multiplier": "1.0"},
        {"noise_multiplier": 1.0},
        ["gaussian_release"],
    ],
)
def test_malformed_json_is_refused(data):
    with pytest.raises(ValueError):
        event_from_json(data)


def test_repetitions_merge_only_the_count():
    event = SubsampledGaussianSteps(0.1, 2.0, 8)
    assert event.repetitions == 8
    assert event.with_repetitions(100) == SubsampledGaussianSteps(0.1, 2.0, 100)
    with pytest.raises(ValueError):
        PostProcessing().with_repetitions(2)
