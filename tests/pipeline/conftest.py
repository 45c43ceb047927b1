"""A tiny end-to-end setting: scikit-learn digits at 16 px, 3 classes, every stage scaled down."""

import pytest

from pcevolve.config import parse_config
from pcevolve.data import prepare_demo


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "digits"
    prepare_demo("digits", root, classes=(0, 1, 2), per_class=20, public_size=300, test_per_class=10,
                 full_size=60, size=16, progress=False)
    return root


@pytest.fixture(scope="session")
def tiny_config(tiny_data):
    """``tiny_config(name=..., **{"section.key": value})`` → a validated RunConfig on the tiny data."""
    return lambda name="tiny", **overrides: _tiny_config(tiny_data, name, **overrides)


def _tiny_config(data_root, name="tiny", **overrides):
    mapping = {
        "name": name, "seed": 3,
        "data": {"private": str(data_root / "private"), "public": str(data_root / "public"),
                 "test": str(data_root / "test"), "full": None, "image_size": 16},
        "representation": {"input_size": 32, "proj_hidden_dim": 32, "feature_dim": 64, "epochs": 1,
                           "views_per_sample": 2, "public_pool": 200, "batch_size": 20, "public_batch_size": 64},
        "decoder": {"width": 8, "epochs": 1, "public_images": 200, "batch_size": 32, "consistency_every": 1000},
        "search": {"population": 8, "elite": 2, "generations": 6, "candidate_per_class": 10, "eval_seeds": 2,
                   "basis_dim": 8, "roundtrip_public": 100, "roundtrip_every": 2, "roundtrip_per_class": 4,
                   "rff_features": 32, "validation_per_class": 20, "synthetic_multiplier": 1,
                   "top_candidates": 2, "coarse_generations": 2, "polynomial_every": 3},
        # The seed's split, not the default (all on the release), so that end-to-end tests run DP-SGD too.
        "privacy": {"split": {"representation": 0.375, "release": 0.625}},
    }
    for dotted, value in overrides.items():
        section, key = dotted.split(".")
        mapping.setdefault(section, {})[key] = value
    return parse_config(mapping, source="<tiny test config>")
