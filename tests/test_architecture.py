"""The arrows of docs/ARCHITECTURE.md, checked on the source: the engine imports nothing of the
project (tests/engine/test_purity.py), ``config`` imports no app but in ``urls.py`` and
``asgi.py``, an app reaches another only through its public services and selectors, the
ledger's postings are read only by ``ledger.selectors``, and no module imports itself back
through others."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("games", "ledger", "tournaments", "frontend")
PACKAGES = ("config", *APPS)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path, *, top_level_only: bool = False
             ) -> Iterator[tuple[str, list[str]]]:
    """(module imported, names imported from it) for each import of the module; relative
    imports resolved. ``top_level_only``: the imports a module runs when it is imported."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [a.name for a in node.names]
            # ``from games import selectors`` imports a module, not its package's own code.
            submodules = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
            if len(submodules) < len(names):
                yield module, names
            for submodule in submodules:
                yield submodule, []


def test_config_imports_no_app_but_in_urls_and_asgi() -> None:
    offenders = [
        f"{name} imports {module}" for name, path in MODULES.items()
        if name.startswith("config") and name not in ("config.urls", "config.asgi")
        for module, _ in _imports(name, path) if module.split(".")[0] in APPS
    ]
    assert offenders == []


def test_an_app_uses_anothers_services_only_through_their_public_package() -> None:
    """``games.services`` and ``ledger.services`` are packages whose ``__init__`` is their
    public face; their modules are theirs alone."""
    offenders = []
    for name, path in MODULES.items():
        app = name.split(".")[0]
        for module, _ in _imports(name, path):
            owner = module.split(".")[0]
            for package in ("games.services", "ledger.services"):
                if module.startswith(package + ".") and owner != app:
                    offenders.append(f"{name} imports {module}")
    assert offenders == []


def test_postings_are_read_only_by_the_ledger() -> None:
    offenders = [f"{name} imports Posting" for name, path in MODULES.items()
                 if not name.startswith("ledger")
                 for module, names in _imports(name, path)
                 if module == "ledger.models" and "Posting" in names]
    assert offenders == []


def test_no_module_imports_itself_back_through_others() -> None:
    graph = {name: {m for m, _ in _imports(name, path, top_level_only=True) if m in MODULES}
             for name, path in MODULES.items()}
    cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found
