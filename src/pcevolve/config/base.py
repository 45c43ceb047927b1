"""The base of every settings model: frozen, and refusing unknown keys, so that a typo in a YAML file is an error
that names the key instead of a silently ignored setting."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A settings model that is immutable once built and validates its defaults too."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)
