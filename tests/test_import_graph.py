"""server/ has no import circle, type-only imports included (lint-imports checks run-time imports)."""

from __future__ import annotations

import grimp


def circles(graph: grimp.ImportGraph, prefix: str) -> list[list[str]]:
    """The strongly connected components of more than one module among the modules under `prefix`."""
    modules = sorted(m for m in graph.modules if m == prefix or m.startswith(prefix + "."))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in modules:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_server_has_no_import_circle_even_through_type_only_imports():
    graph = grimp.build_graph("server", exclude_type_checking_imports=False)
    assert circles(graph, "server") == []


def test_the_check_finds_a_circle():
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert circles(graph, "pkg") == [["pkg.a", "pkg.b"]]
