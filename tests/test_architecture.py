"""The arrows that must never exist between pcevolve's parts (docs/architecture.md), checked on the source.

Every ``import`` and ``from … import`` of a pcevolve module is read from the syntax tree, function-level imports
included, so a shortcut taken inside a function is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "pcevolve"

# part -> parts it must never import, and why
FORBIDDEN = {
    # The engine and the fitness terms see vectors and a DP release only: no data reader, no model, no judge.
    "evolution": ({"data", "encoders", "decoders", "search", "pipeline", "modalities", "evaluation", "report", "cli",
                   "api"},
                  "the evolutionary engine is generic: it optimises vectors"),
    "fitness": ({"data", "encoders", "decoders", "search", "pipeline", "modalities", "evaluation", "report", "cli",
                 "api"},
                "fitness terms are computed from one DP release and synthetic features only"),
    # The privacy core: a whitelist (test_privacy_imports_only_its_documented_whitelist), not a list of arrows.
    # Readers know files, not models or runs.
    "data": ({"encoders", "decoders", "search", "fitness", "evolution", "pipeline", "modalities", "evaluation",
              "report", "privacy", "cli", "api"}, "readers validate files; they do not depend on what uses them"),
    # The search is assembled from a run's saved outputs; the stages call it, never the reverse.
    "search": ({"pipeline", "sweep", "cli", "api"},
               "the search is rebuilt from saved outputs by the stages and the benchmarks alike; it knows no runner"),
    # An executor runs public work where it is told to: it reads no data and draws no noise.
    "executors": ({"data", "privacy", "pipeline", "modalities", "evaluation", "report", "cli", "api"},
                  "an executor only moves public encoding and fitness evaluation; it never sees private data"),
    # A network recipe knows tensors: it reads no data, draws no noise and knows nothing of runs or judges.
    "nets": ({"data", "privacy", "search", "fitness", "evolution", "pipeline", "modalities", "decoders", "evaluation",
              "report", "cli", "api"}, "a network recipe is shared by the run and its judges; it depends on neither"),
}
# The evaluation and the audit judge a finished run (or its code); nothing the run itself executes may depend on them
# (or on the report).
JUDGES = {"evaluation", "report", "audit"}
RUN_PARTS = {"data", "privacy", "encoders", "decoders", "search", "fitness", "evolution", "pipeline", "augment",
             "config", "io", "modalities", "executors", "nets"}


def _imports(path: Path) -> set[str]:
    parts = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        parts.update(name.split(".")[1] for name in names if name.startswith("pcevolve.") and "." in name)
    return parts


def _part(path: Path) -> str:
    """The part a source file belongs to: its top folder (or module); a modality's package
    (``modalities/<name>/``) is a part of its own, ``modalities/<name>/``, found by name and never imported."""
    relative = path.relative_to(PACKAGE)
    if relative.parts[0] == "modalities" and len(relative.parts) > 2:
        return "modalities/<name>/"
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_forbidden_arrows(part: str) -> None:
    never, why = FORBIDDEN[part]
    broken = {f"{path.relative_to(PACKAGE)} imports pcevolve.{target}"
              for path in SOURCES if _part(path) == part for target in _imports(path) & never}
    assert not broken, f"{part}: {why}; but " + "; ".join(sorted(broken))


def test_nothing_a_run_executes_depends_on_its_judges() -> None:
    broken = {f"{path.relative_to(PACKAGE)} imports pcevolve.{target}"
              for path in SOURCES if _part(path) in RUN_PARTS for target in _imports(path) & JUDGES}
    assert not broken, ("the run must not depend on the evaluation, the audit or the report: "
                        + "; ".join(sorted(broken)))


def test_the_checker_sees_function_level_imports(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from pcevolve.data import read_image_folder\n    import pcevolve.evaluation.x\n")
    assert _imports(probe) == {"data", "evaluation"}


# --- import cycles, between modules --------------------------------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in SOURCES}


def _lazy_exports(path: Path) -> dict[str, str]:
    """A package ``__init__``'s lazy re-exports (``lazy_exports(__name__, {module: [names]})``): name → module."""
    owner: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports" and len(node.args) == 2 \
                and isinstance(node.args[1], ast.Dict):
            for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                owner.update({name.value: key.value for name in value.elts})
    return owner


LAZY = {name: _lazy_exports(path) for name, path in MODULES.items() if path.name == "__init__.py"}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (imports for annotations only: never run)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            hidden.update(id(inner) for child in node.body for inner in ast.walk(child))
    return hidden


def _module_imports(path: Path, *, annotations: bool = False) -> set[str]:
    """The pcevolve modules ``path`` runs an import of, anywhere in it (function level included; annotations-only
    imports under ``if TYPE_CHECKING:`` only with ``annotations``, since they never run but still say which way a
    type points): ``from pkg import name`` counts the package and, when ``name`` is a module or one of the
    package's lazy re-exports, the module that defines it; every module counts the packages above it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = set() if annotations else _type_checking_only(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
            out.add(node.module)
            for alias in node.names:
                if f"{node.module}.{alias.name}" in MODULES:
                    out.add(f"{node.module}.{alias.name}")
                elif alias.name in LAZY.get(node.module, {}):
                    out.add(f"{node.module}.{LAZY[node.module][alias.name]}")
    # Importing a module runs its packages' __init__ first, unless they are this module's own (already running).
    me = _module_name(path) if path.is_relative_to(PACKAGE) else path.stem
    own = {".".join(me.split(".")[:i]) for i in range(1, me.count(".") + 2)}
    parents = {".".join(name.split(".")[:i]) for name in out for i in range(2, name.count(".") + 1)}
    return (out | parents) - own


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    """Imports point one way: no module reaches itself through the imports it runs (function-level ones too)."""
    cycles = _cycles({name: _module_imports(path) & set(MODULES) for name, path in MODULES.items()})
    assert not cycles, "import cycles: " + " | ".join(", ".join(cycle) for cycle in cycles)


def test_the_cycle_finder_finds_one(tmp_path) -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# --- layers, as docs/architecture.md lists them ----------------------------------------------------------------------

ARCHITECTURE = PACKAGE.parents[1] / "docs" / "architecture.md"


def _documented_layers() -> list[set[str]]:
    """The parts of each layer of docs/architecture.md's "Layers, bottom to top" list, bottom first."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("## Layers, bottom to top", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in text.splitlines():
        number, _, rest = line.partition(". ")
        if number.isdigit():
            layers.append({name for name in rest.split(" — ")[0].replace("`", "").split(", ")})
    return layers


def _hooks(path: Path) -> set[str]:
    """The modules a modality's spec names as ``"module:attribute"`` strings
    (:data:`pcevolve.catalog.modalities.HOOKS`), which the catalogue imports by name: arrows as real as imports."""
    from pcevolve.catalog.modalities import HOOKS

    named = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg in HOOKS and isinstance(node.value, ast.Constant):
            named.add(str(node.value.value).partition(":")[0])
    return named


def _defines(module: str, name: str) -> bool:
    """Whether ``module``'s source defines ``name`` at its top level (a function, a class or an assignment)."""
    for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(getattr(target, "id", None) == name for target in targets):
            return True
    return False


def _arrows(path: Path) -> set[str]:
    """Every module ``path`` points to: its imports, annotations-only ones included, and the hooks it names."""
    return _module_imports(path, annotations=True) | {name for name in _hooks(path) if name in MODULES}


def test_every_import_goes_down_the_documented_layers() -> None:
    layers = _documented_layers()
    level = {part: i for i, layer in enumerate(layers) for part in layer}
    parts = {_part(path) for path in SOURCES} - {"__init__"}
    assert set(level) == parts, f"parts missing from docs/architecture.md's layers: {sorted(parts - set(level))}; " \
                                f"listed but absent: {sorted(set(level) - parts)}"
    upward = {f"{name} imports {target} (layer {level[_part(MODULES[target])] + 1} above {level[_part(path)] + 1})"
              for name, path in MODULES.items() if _part(path) in level
              for target in _arrows(path)
              if _part(MODULES[target]) in level and level[_part(MODULES[target])] > level[_part(path)]}
    assert not upward, "imports up the layers of docs/architecture.md: " + "; ".join(sorted(upward))


def test_every_hook_a_modality_names_exists() -> None:
    from pcevolve.catalog.modalities import HOOKS, MODALITY_SPECS

    missing = {f"{name}.{hook}: {path}" for name, spec in MODALITY_SPECS.items() for hook in HOOKS
               if (path := getattr(spec, hook)) is not None
               and ((module := path.partition(":")[0]) not in MODULES or not _defines(module, path.partition(":")[2]))}
    assert not missing, "hooks naming nothing: " + "; ".join(sorted(missing))


def test_the_layer_check_sees_annotations_and_hooks(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pcevolve.search.territory\n"
                     "SPEC = dict(headline='pcevolve.cli.main:app')\n")
    assert "pcevolve.search.territory" in _arrows(probe) and "pcevolve.search.territory" not in _module_imports(probe)
    assert "pcevolve.cli.main" in _arrows(probe)


def _privacy_whitelist() -> set[str]:
    """What docs/architecture.md says ``privacy`` may import: the parts named in "(only `a`, `b` and `c`)"."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    rule = text.split("- `privacy` imports nothing that reads data or trains models (only ", 1)[1].split(")", 1)[0]
    return {name.strip("`") for name in rule.replace(" and ", ", ").split(", ")}


def test_privacy_imports_only_its_documented_whitelist() -> None:
    allowed = _privacy_whitelist() | {"privacy"}
    assert allowed >= {"config", "io"}  # the documented rule was found
    broken = {f"{path.relative_to(PACKAGE)} imports pcevolve.{target}"
              for path in SOURCES if _part(path) == "privacy" for target in _imports(path) - allowed}
    assert not broken, f"privacy may import only {sorted(allowed)}; but " + "; ".join(sorted(broken))



# --- modality packages: found by name, never imported -------------------------------------------------------------

def _modality_package(module: str) -> str | None:
    """``pcevolve.modalities.<name>`` for a module of a modality's package, else None."""
    package = ".".join(module.split(".")[:3])
    is_package = package.startswith("pcevolve.modalities.") and package in MODULES and \
        MODULES[package].name == "__init__.py"
    return package if is_package else None


def test_no_module_imports_a_modality_package() -> None:
    """The catalogue's registry line is how pcevolve finds a modality: only the package's own modules import it."""
    broken = {f"{name} imports {target}" for name, path in MODULES.items() for target in _module_imports(path)
              if (package := _modality_package(target)) is not None and _modality_package(name) != package}
    assert not broken, "a modality's package is found through pcevolve.catalog.modalities only: " + \
        "; ".join(sorted(broken))


def test_a_modality_runs_without_its_judges() -> None:
    """What a run executes of a modality (its spec and the parts module it names, with the package modules these
    import) imports no judge: the evaluation, the report and the audit never feed a run."""
    from pcevolve.catalog.modalities import MODALITY_PACKAGES, modality_spec

    broken = set()
    for name, package in MODALITY_PACKAGES.items():
        todo, seen = [package, modality_spec(name).parts.partition(":")[0]], set()
        while todo:
            module = todo.pop()
            if module in seen or module not in MODULES:
                continue
            seen.add(module)
            imported = _module_imports(MODULES[module])
            broken |= {f"{module} imports {target}" for target in imported
                       if target.split(".")[1] in JUDGES}
            todo += [target for target in imported if _modality_package(target) == package]
    assert not broken, "a modality's run parts must not depend on its judges: " + "; ".join(sorted(broken))
