"""The package's rooms (its folders, and the modules at its root) import one another one way
only: no room imports one that imports it back, however long the way round; nor does a module."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "otel_scorers"


def room_imports() -> dict[str, set[str]]:
    """room -> the rooms its modules import (every import, deferred and type-only ones too)."""
    rooms: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        room = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "otel_scorers" and len(parts) > 1 and parts[1] != room:
                    rooms[room].add(parts[1])
    return rooms


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one room (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(room: str) -> None:
        index[room] = low[room] = len(index)
        stack.append(room)
        for other in sorted(graph.get(room, ())):
            if other not in index:
                visit(other)
                low[room] = min(low[room], low[other])
            elif other in stack:
                low[room] = min(low[room], index[other])
        if low[room] == index[room]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == room:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for room in sorted(graph):
        if room not in index:
            visit(room)
    return found


def test_no_room_imports_one_that_imports_it_back() -> None:
    graph = room_imports()
    assert len(graph) > 10  # the package was read
    assert loops(graph) == []


def module_imports() -> dict[str, set[str]]:
    """module -> the package's modules it imports (every import, deferred and type-only ones
    too; `from package import name` counts as importing the module `name` when it is one)."""
    modules: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    imported.add(whole if whole in modules else node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = {module for module in imported if module in modules and module != name}
    return graph


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Within a room too: a type-only import back is still a circle a reader has to untie."""
    graph = module_imports()
    assert "otel_scorers.config.schema" in graph["otel_scorers.config.loading"]  # the modules were read
    assert loops(graph) == []


def test_a_loop_of_three_rooms_is_found() -> None:
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
