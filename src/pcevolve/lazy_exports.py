"""Package re-exports that import their module only when a name is first used.

``import pcevolve.privacy.ledger`` runs ``pcevolve/privacy/__init__.py`` first; if that imported every
module of the package, reading a ledger would load torch and scikit-learn (seconds of start-up:
docs/performance.md), and every ``pcevolve`` command would start that slowly. A package that re-exports its
modules' names declares them here instead and imports a module when one of its names is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``, which re-exports ``exports``: module → its names.

    A name is imported from ``package.module`` on first access and then kept in the package's namespace.
    """
    owner = {name: module for module, names in exports.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module-level hook's name
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(set(namespace) | set(owner))

    return __getattr__, __dir__, sorted(owner)
