"""The site's module graph (static/js): acyclic, the router handed its views by main.js.

Parses each module's `import ... from './x.js'` lines (no browser): a circle of imports means a
module runs before one it needs has finished evaluating (a view reading the router's half-built
state), and it made every view part of every other's first load."""

from __future__ import annotations

import os
import re

from handlers.site import STATIC_DIR, module_closure

JS_DIR = os.path.join(STATIC_DIR, "js")
IMPORT = re.compile(r"""^\s*import\s[^'"]*?['"]\./([\w.-]+\.js)['"]""", re.MULTILINE)


def import_graph(sources: dict[str, str]) -> dict[str, list[str]]:
    return {name: IMPORT.findall(text) for name, text in sources.items()}


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One circle of imports (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in graph.get(node, []):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def site_sources() -> dict[str, str]:
    sources = {}
    for name in sorted(os.listdir(JS_DIR)):
        if name.endswith(".js"):
            with open(os.path.join(JS_DIR, name), encoding="utf-8") as file:
                sources[name] = file.read()
    return sources


def test_the_cycle_finder_finds_circles_and_passes_trees():
    assert find_cycle({"a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"]}) == ["a.js", "b.js", "c.js", "a.js"]
    assert find_cycle({"a.js": ["b.js", "c.js"], "b.js": ["c.js"], "c.js": []}) is None
    assert find_cycle({"m.js": ["x.js"], "x.js": ["y.js"], "y.js": ["x.js"]}) == ["x.js", "y.js", "x.js"]
    graph = import_graph(
        {"a.js": "import { b } from './b.js';\nimport './c.js';\n", "b.js": "import { a } from './a.js';"}
    )
    assert graph == {"a.js": ["b.js", "c.js"], "b.js": ["a.js"]}
    assert find_cycle(graph) == ["a.js", "b.js", "a.js"]


def test_the_site_modules_import_one_another_without_a_circle():
    graph = import_graph(site_sources())
    assert len(graph) > 10 and all(target in graph for targets in graph.values() for target in targets)
    assert find_cycle(graph) is None, f"a circle of imports in static/js: {' -> '.join(find_cycle(graph) or [])}"


def test_the_router_imports_no_view_and_main_hands_it_the_table():
    sources = site_sources()
    graph = import_graph(sources)
    # The router reaches only the leaves (DOM helpers, the shared state, nav), never a view's module.
    reached = {os.path.basename(m) for m in module_closure("js/router.js")}
    assert reached <= {"render.js", "api.js", "nav.js"}, reached
    assert "router.js" in graph["main.js"]
    assert not any("router.js" in targets for name, targets in graph.items() if name != "main.js")
    # main.js builds {view: route function} and hands it over.
    main = sources["main.js"]
    assert re.search(r"startRouter\(VIEWS\)", main)
    for view in ("player", "tank", "tanks", "marks", "rankings", "vehicles", "status"):
        assert re.search(rf"^\s*{view}: [\w(]", main, re.MULTILINE), view
