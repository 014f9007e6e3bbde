"""The package's layers: no import cycle between its subpackages (``core``, ``web``, ...), counting every
import statement, lazy ones inside functions and ``TYPE_CHECKING`` ones included. Read from the source with
``ast``; nothing is imported."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[1] / "assistant_bridge"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, module: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            names.update(f"{target}.{a.name}" for a in node.names)
    return names


def package_graph() -> dict[str, set[str]]:
    """Subpackage → the other subpackages it imports (top-level modules such as ``cli`` are not layers)."""
    subpackages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in subpackages:
            continue
        for name in _imported(path, module):
            target = name.split(".")
            if len(target) >= 2 and target[0] == PACKAGE.name and target[1] in subpackages and target[1] != parts[1]:
                graph[parts[1]].add(target[1])
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_package_cycles() -> None:
    assert cycles(package_graph()) == []


def test_the_graph_sees_imports() -> None:
    graph = package_graph()
    assert "core" in graph["web"]  # the routes call the core loop
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_core_stays_below_the_edges() -> None:
    assert not package_graph()["core"] & {"web", "ingest", "generators", "conversation", "tools", "relay"}
