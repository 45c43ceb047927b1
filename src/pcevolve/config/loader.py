"""Loading, hashing and writing run configurations. Errors name the key, the value and the file."""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pcevolve.config.schema import PrivacyConfig, RunConfig
from pcevolve.config.sections import file_mapping
from pcevolve.io import atomic_write_text


class ConfigError(ValueError):
    """A configuration file or mapping is invalid; the message names key, value and source."""


def parse_config(mapping: dict[str, Any] | None, *, source: str = "<config>") -> RunConfig:
    """Validate a plain mapping into a frozen :class:`RunConfig`.

    Args:
        mapping: Nested mapping as read from YAML; ``None`` means all defaults.
        source: Name used in error messages (usually the file path).

    Raises:
        ConfigError: One line per problem, each naming the dotted key and the offending value.
    """
    if mapping is None:
        mapping = {}
    if not isinstance(mapping, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, got {type(mapping).__name__}")
    try:
        return RunConfig.model_validate(mapping)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problem_lines(exc, source))) from None


def with_settings(config: RunConfig, dotted: dict[str, Any], *, source: str) -> RunConfig:
    """``config`` with each ``"section.key": value`` of ``dotted`` set, validated as a whole (``config`` itself
    when ``dotted`` is empty).

    Raises:
        ConfigError: As :func:`parse_config`, naming ``source`` (the flags or arguments the values came from).
    """
    if not dotted:
        return config
    return parse_config(with_dotted(config.model_dump(mode="json"), dotted), source=source)


def check_budget(epsilon: object = None, delta: object = None, *, source: str) -> None:
    """Check a total ε and δ given apart from a config (a command-line flag, an API argument) as ``privacy.epsilon``
    and ``privacy.delta`` would be checked, alone: nothing else of the config is built (no registry, no torch),
    so a bad budget is refused in well under a second, before any data is read or any folder made.

    Raises:
        ConfigError: One line per bad value, naming its key, the value and the allowed range.
    """
    given = {key: value for key, value in (("epsilon", epsilon), ("delta", delta)) if value is not None}
    try:
        PrivacyConfig.model_validate(given)
    except ValidationError as exc:
        raise ConfigError("\n".join(_problem_lines(exc, source, prefix="privacy."))) from None


def _problem_lines(exc: ValidationError, source: str, *, prefix: str = "") -> list[str]:
    """One line per validation error, naming the dotted key (under ``prefix``) and the value."""
    lines = []
    for error in exc.errors():
        key = prefix + ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if not key:  # a rule across fields: its message names the keys, one line per problem
            lines.extend(f"{source}: {line}" for line in message.splitlines())
        elif isinstance(error["input"], dict):  # a rule of a whole section: the section, not its contents
            lines.extend(f"{source}: section '{key}': {line}" for line in message.splitlines())
        elif error["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key '{key}' (value {error['input']!r})")
        else:
            lines.append(f"{source}: key '{key}' has bad value {error['input']!r}: {message}")
    return lines


def packaged_configs() -> dict[str, str]:
    """Configs that ship inside the package, by name (``demo``: the Fashion-MNIST demo of ``make demo``)."""
    folder = resources.files("pcevolve") / "configs"
    return {entry.name.removesuffix(".yaml"): entry.read_text(encoding="utf-8")
            for entry in folder.iterdir() if entry.name.endswith(".yaml")}


def with_dotted(mapping: dict[str, Any], dotted: dict[str, Any]) -> dict[str, Any]:
    """A copy of the nested ``mapping`` with each ``"section.key": value`` of ``dotted`` set (sections created)."""
    merged = {key: (dict(value) if isinstance(value, dict) else value) for key, value in mapping.items()}
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        node = merged
        for part in parents:
            child = node.get(part)
            node[part] = dict(child) if isinstance(child, dict) else {}
            node = node[part]
        node[leaf] = value
    return merged


def load_config(path: str | os.PathLike[str] | None) -> RunConfig:
    """Read and validate a YAML run configuration (``None``: every default).

    A name that is not a file but names a packaged config (``demo``) loads that one, so an installed
    pcevolve runs its demo without the source tree.
    """
    if path is None:
        return RunConfig()
    source = Path(path)
    packaged = packaged_configs() if not source.exists() and source.suffix == "" else {}
    if str(path) in packaged:
        text = packaged[str(path)]
        source = Path(f"<packaged config {path}>")
    else:
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            names = ", ".join(sorted(packaged_configs()))
            raise ConfigError(f"{source}: cannot read config file ({exc.strerror}); packaged configs, usable by "
                              f"name: {names}") from None
    try:
        mapping = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    return parse_config(mapping, source=str(source))


def config_hash(config: RunConfig) -> str:
    """SHA-256 of the canonical JSON of the resolved config (every default filled in), without ``executor``:
    where the work runs does not change what it computes. ``data.classes`` and ``data.public_text_column`` left
    null, and ``search.evolve`` left off, are left out too, so a run started before those settings existed keeps
    its hash and can be resumed (a resumed search that had not finished then delivers its one-shot start); so are
    ``search.in_task`` and ``search.in_task_fraction`` at their defaults (a resumed delivery then follows the pool's
    estimated in-task part)."""
    resolved = config.model_dump(mode="json", exclude={"executor"})
    for key in ("classes", "public_text_column"):
        if resolved["data"][key] is None:
            del resolved["data"][key]
    if not resolved["search"]["evolve"]:
        del resolved["search"]["evolve"]
    for key, default in (("in_task", True), ("in_task_fraction", 1.0)):
        if resolved["search"][key] == default:
            del resolved["search"][key]
    canonical = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def dump_config(config: RunConfig, path: str | os.PathLike[str]) -> Path:
    """Write the resolved config as YAML atomically, with its hash in a header comment. The settings the run does not
    read (another modality's or decoder's) are left out at their defaults (:func:`~pcevolve.config.sections.
    file_mapping`): reading the file back gives the same config and hash."""
    body = yaml.safe_dump(file_mapping(config), sort_keys=False)
    header = (f"# resolved pcevolve config; sha256 {config_hash(config)}\n"
              "# settings this run does not read (other modalities' and decoders') are left out at their defaults\n")
    return atomic_write_text(path, header + body)
