"""How tests/ is laid out (docs/maintaining.md, "Tests: where they live"): a folder per package of
the engine (tests/core/ for autograder/core/, ...), tests/shared/ for shared/, tests/lessons/<name>/
for each lesson's proofs, each keeping tests that are not marked slow (``make check`` runs those);
every folder of test modules a package; no two test modules of one name; and no test module
imports another: what tests share lives in a helper module or a conftest.py.

Read with ast, nothing is imported. A few synthetic sources prove the import check can fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import ROOT

TESTS = ROOT / "tests"
#: Data the tests read (a whole second course with its own grader package), not test modules.
DATA = TESTS / "fixtures"


def module_files() -> list[Path]:
    """Every test module under tests/, fixtures' data left out."""
    return sorted(p for p in TESTS.rglob("test_*.py") if DATA not in p.parents)


def _is_test_module(name: str) -> bool:
    """``tests.x.test_y`` or a relative ``.test_y``: a dotted name that reaches a test module."""
    parts = name.split(".")
    return (parts[0] in ("tests", "")) and any(part.startswith("test_") for part in parts[1:])


def imported_test_modules(source: str) -> list[str]:
    """The test modules ``source`` imports (``tests.x.test_y``, ``from tests.x import test_y``, ``.test_y``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "") if node.level else node.module
            if _is_test_module(module) or (node.level and (node.module or "").startswith("test_")):
                found.append(module)
            elif node.level or module.split(".")[0] == "tests":
                found += [f"{module}.{alias.name}".replace("..", ".") for alias in node.names
                          if alias.name.startswith("test_")]
    return sorted(set(found))


def test_the_import_check_finds_every_spelling():
    assert imported_test_modules("from tests.core.test_course import X\n") == ["tests.core.test_course"]
    assert imported_test_modules("import tests.shared.test_simgpu as s\n") == ["tests.shared.test_simgpu"]
    assert imported_test_modules("def f():\n    from tests.lessons.why17 import test_grade_wrong\n") == [
        "tests.lessons.why17.test_grade_wrong"]
    assert imported_test_modules("from .test_settings import ROOT\nfrom . import test_late\n") == [
        ".test_late", ".test_settings"]
    assert imported_test_modules("from tests.helpers.paths import ROOT\nfrom tests.shared.drills import TOL\n"
                                 "from autograder.core import course\nfrom . import drills\n") == []


def test_no_test_module_imports_another():
    """A test module is collected, never imported: what two of them share is a helper module."""
    found = {p.relative_to(ROOT).as_posix(): names for p in module_files() + sorted(TESTS.rglob("conftest.py"))
             if (names := imported_test_modules(p.read_text(encoding="utf-8")))}
    assert found == {}, "move what they import into a helper module (tests/helpers/ or beside its users)"


def test_every_folder_of_test_modules_is_a_package():
    """tests/<package>/test_x.py is imported as tests.<package>.test_x: each folder has __init__.py."""
    folders = {p.parent for p in module_files()}
    folders |= {parent for folder in folders for parent in folder.parents if TESTS in parent.parents}
    assert sorted(f.relative_to(ROOT).as_posix() for f in folders if not (f / "__init__.py").is_file()) == []


def test_test_module_names_are_unique():
    names = [p.name for p in module_files()]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_each_package_has_its_folder_of_tests():
    """autograder/<package>/ -> tests/<package>/, autograder/lessons/<name>/ -> tests/lessons/<name>/,
    shared/ -> tests/shared/; each with at least one test module."""
    engine = [p.name for p in (ROOT / "autograder").iterdir() if (p / "__init__.py").is_file() and p.name != "lessons"]
    lessons = [f"lessons/{p.name}" for p in (ROOT / "autograder" / "lessons").iterdir()
               if (p / "__init__.py").is_file()]
    missing = [name for name in [*engine, *lessons, "shared"] if not list((TESTS / name).glob("test_*.py"))]
    assert missing == [], "a package without tests/<package>/test_*.py"


def _is_slow_mark(node: ast.expr) -> bool:
    """``pytest.mark.slow`` (or ``mark.slow``), called or not."""
    node = node.func if isinstance(node, ast.Call) else node
    return isinstance(node, ast.Attribute) and node.attr == "slow" and isinstance(node.value, ast.Attribute) \
        and node.value.attr == "mark"


def fast_tests(source: str) -> list[str]:
    """The test functions of a module that ``-m "not slow"`` keeps (marked neither on the module,
    through ``pytestmark``, nor on the function or its class)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            if any(_is_slow_mark(m) for m in marks):
                return []
    found = []
    for node in tree.body:
        scopes = [(node, [])] if not isinstance(node, ast.ClassDef) else [
            (item, node.decorator_list) for item in node.body]
        for fn, outer in scopes:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test_") \
                    and not any(_is_slow_mark(d) for d in [*outer, *fn.decorator_list]):
                found.append(fn.name)
    return found


def test_the_fast_test_finder_reads_module_class_and_function_marks():
    assert fast_tests("import pytest\npytestmark = pytest.mark.slow\ndef test_a():\n    pass\n") == []
    assert fast_tests("pytestmark = [pytest.mark.skipif(True, reason='x'), pytest.mark.slow]\n"
                      "def test_a():\n    pass\n") == []
    assert fast_tests("@pytest.mark.slow\ndef test_a():\n    pass\n"
                      "@pytest.mark.parametrize('x', [1])\ndef test_b(x):\n    pass\n"
                      "@pytest.mark.slow\nclass TestC:\n    def test_c(self):\n        pass\n"
                      "def helper():\n    pass\n") == ["test_b"]


def test_make_check_covers_every_package():
    """Each folder of tests keeps at least one test that is not marked slow, so ``make check``
    exercises every package of autograder/ and shared/ and every lesson."""
    folders = {p.parent for p in module_files()}
    without = sorted(f.relative_to(ROOT).as_posix() for f in folders
                     if not any(fast_tests(p.read_text(encoding="utf-8")) for p in f.glob("test_*.py")))
    assert without == [], "mark fewer tests slow there, or add a cheaper one"
