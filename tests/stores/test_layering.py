"""The storage layer's shape, checked on the source: code outside `stores/` names no backend, and the modules
of `stores/` import one another without a circle (a circle there is what makes a second backend copy files
rather than share them). Imports made only for the type checker count too: they tie modules as tightly."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import learnloop

PACKAGE = Path(learnloop.__file__).parent
BACKENDS = ("learnloop.stores.sqlite", "learnloop.stores.postgres")
# The one place a path or URL becomes a backend.
FACTORY = "learnloop.stores"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imports(module: str) -> Iterator[str]:
    """Every module `module` imports (absolute names; `from package import submodule` names the submodule)."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield submodule if submodule in MODULES else target


def _is_backend(name: str) -> bool:
    return any(name == backend or name.startswith(backend + ".") for backend in BACKENDS)


def test_no_module_outside_stores_imports_a_backend() -> None:
    offenders = sorted(
        f"{module} imports {name}"
        for module in MODULES
        if not module.startswith("learnloop.stores.") and module != "learnloop.stores"
        for name in _imports(module)
        if _is_backend(name)
    )
    assert offenders == []


def test_only_the_factory_resolves_a_backend_in_stores() -> None:
    """Inside `stores/`, the protocols and the SQL-agnostic modules stay free of any backend too."""
    offenders = sorted(
        f"{module} imports {name}"
        for module in MODULES
        if module.startswith("learnloop.stores") and module != FACTORY and not _is_backend(module)
        for name in _imports(module)
        if _is_backend(name)
    )
    assert offenders == []


def test_no_backend_imports_another() -> None:
    """What two backends share lives above them (`stores.sql`), not in one that the other imports."""
    offenders = sorted(
        f"{module} imports {name}"
        for module in MODULES
        if _is_backend(module)
        for name in _imports(module)
        if _is_backend(name) and _backend_of(name) != _backend_of(module)
    )
    assert offenders == []


def _backend_of(name: str) -> str:
    return next(backend for backend in BACKENDS if name == backend or name.startswith(backend + "."))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_stores_import_graph_is_acyclic() -> None:
    stores = {module for module in MODULES if module == "learnloop.stores" or module.startswith("learnloop.stores.")}
    graph = {module: {name for name in _imports(module) if name in stores and name != module} for module in stores}
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_engine_is_in_no_import_circle() -> None:
    """The layers above the engine (capture, governance, tools, agent) import it; it reaches them only through
    what its constructor is given (parts, start-up hooks), never by importing them back."""
    graph = {module: {name for name in _imports(module) if name in MODULES and name != module} for module in MODULES}
    assert [component for component in _cycles(graph) if "learnloop.engine" in component] == []


def test_parts_reach_their_users_through_the_engine() -> None:
    """Outside `stores/`, only the wiring (the engine's constructor, the factory) asks a backend for its parts;
    every other module reads the engine's fields."""
    wiring = {"learnloop.engine", "learnloop.factory"}
    offenders = sorted(
        module
        for module in MODULES
        if not module.startswith("learnloop.stores") and module not in wiring
        for name in _imports(module)
        if name == "learnloop.stores.parts"
    )
    assert offenders == []
