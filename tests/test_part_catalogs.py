"""The parts' catalogues (plain data the config's checks read) say what the parts themselves do, and reading a
config, planning a budget or showing a ledger loads no torch: light commands answer at once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pcevolve.catalog.decoders import DECODER_TRAITS, LLM_DECODER, DecoderTraits
from pcevolve.catalog.encoders import BACKBONE_BLOCKS
from pcevolve.catalog.executors import EXECUTOR_NAMES
from pcevolve.catalog.modalities import HOOKS, MODALITY_PACKAGES, MODALITY_TRAITS, modality_spec
from pcevolve.catalog.search import CROSSOVER_NAMES, MUTATION_NAMES
from pcevolve.decoders import DECODERS
from pcevolve.decoders.round_trips import RetrievalRoundTrip
from pcevolve.decoders.text_variation import TextVariationDecoder
from pcevolve.encoders import BACKBONES
from pcevolve.evolution import CROSSOVERS, MUTATIONS
from pcevolve.executors import EXECUTORS
from pcevolve.modalities import MODALITIES
from pcevolve.registry import UnknownKey


def test_every_decoder_is_catalogued_with_what_its_class_says() -> None:
    assert set(DECODER_TRAITS) == set(DECODERS)
    for name, part in DECODERS.items():
        assert DECODER_TRAITS[name] == DecoderTraits(
            part.modalities, trainable_under_dp=part.trainable_under_dp,
            needs_pixel_view=getattr(part, "needs_pixel_view", False),
            retrieval=issubclass(part, RetrievalRoundTrip), settings=DECODER_TRAITS[name].settings), name
        # The settings it reads are held to the config's keys in tests/test_config.py.
    assert LLM_DECODER == TextVariationDecoder.name


def test_every_modality_and_backbone_is_catalogued() -> None:
    assert set(MODALITIES) == set(MODALITY_TRAITS)
    assert all(MODALITIES[name].name == name and MODALITIES[name].traits is MODALITY_TRAITS[name]
               for name in MODALITIES)
    listed = {m for traits in DECODER_TRAITS.values() for m in traits.modalities or ()}
    assert listed <= set(MODALITY_TRAITS)
    assert all(any(traits.makes(m) for traits in DECODER_TRAITS.values()) for m in MODALITY_TRAITS)
    assert {name: spec.n_blocks for name, spec in BACKBONES.items()} == BACKBONE_BLOCKS


def test_every_operator_and_executor_is_catalogued() -> None:
    assert MUTATION_NAMES == tuple(MUTATIONS) and CROSSOVER_NAMES == tuple(CROSSOVERS)
    assert EXECUTOR_NAMES == tuple(EXECUTORS)


def _loaded(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", "import sys\n" + code + "\nprint('torch' in sys.modules, "
                           "'sklearn' in sys.modules)"], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.split()[-2:]


def test_building_and_checking_a_config_loads_neither_torch_nor_scikit_learn() -> None:
    assert _loaded("from pcevolve.config import RunConfig, parse_config\nRunConfig()\n"
                   "parse_config({'decoder': {'name': 'pixel-view'}, 'search': {'pixel_frequencies': 4}})") \
        == ["False", "False"]


def test_budget_plan_loads_no_torch() -> None:
    code = ("from pcevolve.cli.main import app\ntry:\n    app(['budget', 'plan', '--config', 'configs/demo.yaml'])\n"
            "except SystemExit as e:\n    assert not e.code, e.code")
    assert _loaded(code)[0] == "False"


def test_every_modality_spec_names_its_parts() -> None:
    """Each package in the registry holds a spec of its own name whose every part can be imported, and no two
    modalities claim the same kind of private data when no config says which."""
    for name in MODALITY_PACKAGES:
        spec = modality_spec(name)
        assert spec.name == name
        assert all(callable(spec.load(hook)) for hook in HOOKS if hook not in ("parts", "config_problems")), name
        assert spec.config_problems is None or callable(spec.load("config_problems")), name
        assert spec.load("parts").name == name
        assert spec.files.accepts and set(spec.files.fixes) <= {"public", "test", "full", "any"}
    defaults = [modality_spec(name).files.default_for for name in MODALITY_PACKAGES]
    assert len([kind for kind in defaults if kind]) == len({kind for kind in defaults if kind})


def test_an_unknown_modality_is_named_with_the_known_ones() -> None:
    """The registries by modality refuse a name they do not hold (or a value that is not a name) as a Registry does."""
    for wrong in ("voxels", ["image"], None):
        assert wrong not in MODALITY_TRAITS and wrong not in MODALITIES
    with pytest.raises(UnknownKey, match=r"unknown modality 'voxels'; known: image, tabular, text"):
        MODALITIES.get_part("voxels")
    with pytest.raises(UnknownKey, match=r"unknown modality \['image'\]"):
        modality_spec(["image"])  # type: ignore[arg-type]


def test_a_modality_s_parts_are_checked_when_loaded() -> None:
    from pcevolve.modalities.base import Modality, checked_parts
    from pcevolve.modalities.image.parts import ImageModality

    assert checked_parts(MODALITIES["image"], "image").name == "image"
    with pytest.raises(TypeError, match="must be an instance of pcevolve.modalities.Modality"):
        checked_parts(object(), "image")
    with pytest.raises(TypeError, match="say they are modality 'image'"):
        checked_parts(MODALITIES["image"], "text")
    with pytest.raises(TypeError, match="must set the class attribute 'delivered_name'"):
        type("Nameless", (ImageModality,), {"delivered_name": None})

    class Partial(Modality):  # a part left out: it cannot be built at all
        name, delivered_name = "partial", "synthetic"

    with pytest.raises(TypeError, match="abstract"):
        Partial()
