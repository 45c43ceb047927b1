"""The one registry convention: a named mapping from config keys to parts, filled explicitly.

Every extension point a config names by key (backbones, decoders, mutation and crossover
operators) is a :class:`Registry`, filled in its own subpackage — never by import side
effects elsewhere. A config is checked, when it is loaded, against the catalogue of every registry it names
(:mod:`pcevolve.catalog`: the same keys as plain data, held equal to the registries by the tests), so an unknown
key is refused before any privacy budget is spent, without importing the parts. The modalities are the one
registry filled by name instead: each is a package that :data:`pcevolve.catalog.modalities.MODALITY_PACKAGES`
lists, and :class:`~pcevolve.catalog.modalities.ByModality` answers for its parts as a :class:`Registry` does
(``get_part``, :class:`UnknownKey` listing the known keys).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class UnknownKey(KeyError, ValueError):
    """A key no registry entry has; the message lists the known keys."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class Registry(dict[str, T]):
    """Config key → part. A ``dict`` so tests can add entries with ``monkeypatch.setitem``.

    Args:
        kind: What the entries are ("decoder", "mutation" …), used in error messages.
    """

    def __init__(self, kind: str, entries: dict[str, T] | None = None) -> None:
        super().__init__(entries or {})
        self.kind = kind

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("key")`` adds the decorated part under ``key``."""
        def add(part: T) -> T:
            if name in self:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self[name] = part
            return part
        return add

    def get_part(self, name: str) -> T:
        """The part registered as ``name``.

        Raises:
            UnknownKey: No such key; the message names the kind and lists the known keys.
        """
        self.check(name)
        return self[name]

    def check(self, name: str) -> str:
        """``name`` if it is registered, else :class:`UnknownKey` listing the known keys."""
        if name not in self:
            raise UnknownKey(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self))}")
        return name
