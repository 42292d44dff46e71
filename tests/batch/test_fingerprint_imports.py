"""The grading key's reading of imports (autograder/batch/fingerprint.py): only statements are
visited, and that finds exactly the imports a walk of every node finds."""
from __future__ import annotations

import ast
import textwrap

from autograder.batch import fingerprint
from tests.helpers.paths import ROOT

NESTED = textwrap.dedent("""
    import a
    def f():
        import b
        class C:
            def g(self):
                from . import c
    try:
        import d
    except ImportError:
        from e import x
    else:
        import f2
    finally:
        import g
    match y:
        case 1 if (lambda: 0)():
            import h
    with open(z) as w:
        for i in w:
            while i:
                import k
""")


def _walked(tree: ast.AST) -> list[ast.AST]:
    return sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                  key=lambda n: (n.lineno, n.col_offset))


def _found(tree: ast.AST) -> list[ast.AST]:
    return sorted((n for n in fingerprint._statements(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                  key=lambda n: (n.lineno, n.col_offset))


def test_imports_at_every_depth_are_found():
    tree = ast.parse(NESTED)
    assert len(_walked(tree)) == 9 and _found(tree) == _walked(tree)


def test_every_module_of_the_grader_gives_the_same_imports_as_a_walk_of_every_node():
    files = [p for top in ("autograder", "shared") for p in (ROOT / top).rglob("*.py")]
    assert len(files) > 100
    for path in files:
        tree = ast.parse(path.read_bytes())
        assert _found(tree) == _walked(tree), path
