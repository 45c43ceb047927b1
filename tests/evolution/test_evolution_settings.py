"""EvolutionSettings: mirrors SearchConfig, validates each field, knows the operator registries."""

from dataclasses import fields

import pytest

from pcevolve.config.search import SearchConfig
from pcevolve.evolution import CROSSOVERS, MUTATIONS, EvolutionSettings, resolve_crossover, resolve_mutation


def test_from_config_copies_every_field_and_defaults_agree():
    config = SearchConfig(population=16, elite=2, mutation="differential", crossover="uniform")
    settings = EvolutionSettings.from_config(config)
    for field in fields(EvolutionSettings):
        assert getattr(settings, field.name) == getattr(config, field.name), field.name
    # The dataclass defaults are the seed's values too, i.e. the same as the config's.
    assert EvolutionSettings.from_config(SearchConfig()) == EvolutionSettings()


def test_json_round_trip():
    settings = EvolutionSettings(population=5, elite=1, mutation="polynomial")
    assert EvolutionSettings.from_json(settings.to_json()) == settings
    with pytest.raises(ValueError, match="unknown evolution settings: bogus"):
        EvolutionSettings.from_json({**settings.to_json(), "bogus": 1})


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"population": 1}, "population"),
        ({"elite": 0}, "elite"),
        ({"elite": 40}, "elite"),
        ({"generations": 0}, "generations"),
        ({"mutation_sigma": 0.0}, "mutation_sigma"),
        ({"fine_rate": 1.5}, "fine_rate"),
        ({"coarse_rate": float("nan")}, "coarse_rate"),
        ({"coarse_bound_scale": 0.9}, "coarse_bound_scale"),
        ({"diversity_threshold": 0.0}, "diversity_threshold"),
        ({"patience": 0}, "patience"),
        ({"tolerance": -1.0}, "tolerance"),
        ({"polynomial_every": 2.5}, "polynomial_every"),
    ],
)
def test_out_of_range_fields_are_named(change, field):
    with pytest.raises(ValueError, match=field):
        EvolutionSettings(**change)


@pytest.mark.parametrize("field", ["mutation", "crossover", "periodic_mutation"])
def test_unknown_operator_names_field_key_and_known_names(field):
    with pytest.raises(ValueError) as caught:
        EvolutionSettings(**{field: "no-such-op"})
    message = str(caught.value)
    assert field in message and "'no-such-op'" in message
    known = CROSSOVERS if field == "crossover" else MUTATIONS
    for name in known:
        assert name in message


def test_resolvers_name_the_key_and_the_known_names():
    with pytest.raises(ValueError, match=r"unknown mutation 'cauchy'; known: differential, gaussian, polynomial"):
        resolve_mutation("cauchy")
    with pytest.raises(ValueError, match=r"unknown crossover 'sbx'; known: interpolation, uniform"):
        resolve_crossover("sbx")
