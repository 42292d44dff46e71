"""Size limits of the grader's code: no module in autograder/ over 400 lines, no function over 60.

Small modules, one concept each, and functions that read as named steps (docs/maintaining.md).
Every ``.py`` file under autograder/ is measured, the lessons' fixtures included; a module's
length is its number of lines, a function's runs from its ``def`` line to its last line (a nested
function counts in its own right and inside the function holding it).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

#: Most lines in one module of autograder/.
MAX_MODULE_LINES = 400
#: Most lines in one function (``def`` line to last line).
MAX_FUNCTION_LINES = 60
#: Generated code, exempt from the limits (paths from the checkout root): none.
GENERATED: frozenset[str] = frozenset()
#: Modules whose split is in progress on other branches, exempt until it lands: none.
PENDING: frozenset[str] = frozenset()


def over_limits(name: str, source: str) -> list[str]:
    """What in ``source`` (the module ``name``) breaks a limit, one line each; [] when nothing."""
    problems = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        problems.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES}): split it by concept")
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name} line {node.lineno}: {node.name}() is {length} lines "
                                f"(at most {MAX_FUNCTION_LINES}): split it into named steps")
    return problems


def _modules() -> dict[str, Path]:
    return {path.relative_to(ROOT).as_posix(): path for path in sorted((ROOT / "autograder").rglob("*.py"))}


def _problems(name: str, path: Path) -> list[str]:
    return over_limits(name, path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_no_module_or_function_in_autograder_is_over_its_limit():
    problems = [p for name, path in _modules().items() if name not in GENERATED | PENDING
                for p in _problems(name, path)]
    assert not problems, "\n".join(problems)


def test_every_exemption_names_a_file_that_needs_it():
    modules = _modules()
    for name in GENERATED | PENDING:
        assert name in modules, f"{name} is exempt from the size limits but is not in autograder/ any more"
    for name in PENDING:
        assert _problems(name, modules[name]), f"{name} is within the size limits now: remove it from PENDING"


@pytest.mark.parametrize("source, broken", [
    ("def f():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1), []),
    ("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES, ["m.py line 1: f() is 61 lines"]),
    ("class C:\n    async def g(self):\n" + "        x = 1\n" * MAX_FUNCTION_LINES, ["m.py line 2: g() is 61 lines"]),
    ("x = 1\n" * MAX_MODULE_LINES, []),
    ("x = 1\n" * (MAX_MODULE_LINES + 1), ["m.py: 401 lines"]),
])
def test_the_limits_catch_a_long_function_and_a_long_module(source, broken):
    found = over_limits("m.py", source)
    assert [p.split(" (")[0] for p in found] == broken
