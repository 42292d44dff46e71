"""No two modules of autograder/ or shared/ import each other, directly or around a circle.

import-linter's layers keep packages apart; inside a package, a circle (a imports b, b imports a,
even from inside a function) means neither can be read or tested without the other: the piece
both need belongs in a module of its own. grimp (import-linter's graph) sees imports inside
functions too.
"""
from __future__ import annotations

import grimp


def circles(graph) -> list[list[str]]:
    """The groups of modules that reach each other through imports (Tarjan's strongly connected
    components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_the_finder_sees_a_circle_through_an_import_inside_a_function():
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    assert circles(graph) == []
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_no_module_imports_itself_around_a_circle():
    assert circles(grimp.build_graph("autograder", "shared", cache_dir=None)) == []
