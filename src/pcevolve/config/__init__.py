"""Run configuration: frozen, validated once at the edge (YAML file or CLI)."""

from pcevolve.config.loader import (
    ConfigError,
    check_budget,
    config_hash,
    dump_config,
    load_config,
    parse_config,
    with_dotted,
    with_settings,
)
from pcevolve.config.schema import (
    AugmentConfig,
    DataConfig,
    DecoderConfig,
    ExecutorConfig,
    PrivacyConfig,
    RepresentationConfig,
    RunConfig,
    VariationConfig,
)
from pcevolve.config.search import FitnessWeights, SearchConfig

__all__ = [
    "AugmentConfig",
    "ConfigError",
    "DataConfig",
    "DecoderConfig",
    "ExecutorConfig",
    "FitnessWeights",
    "PrivacyConfig",
    "RepresentationConfig",
    "RunConfig",
    "SearchConfig",
    "VariationConfig",
    "check_budget",
    "config_hash",
    "dump_config",
    "load_config",
    "parse_config",
    "with_dotted",
    "with_settings",
]
