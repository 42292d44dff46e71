"""Docstrings of the student API carry units, and their Args sections match the real parameters.

Read from the source with ast (nothing is imported), in solutions/why17 and in the generated
assignments/why17 the students see. A few synthetic functions prove the checker can fail.
"""
from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from tests.helpers.paths import ROOT

TREES = [ROOT / "solutions" / "why17", ROOT / "assignments" / "why17"]
MODULES = sorted(p.name for p in TREES[0].glob("*.py") if p.name != "conftest.py")

#: Words that state a unit somewhere in a function's summary or Returns section.
UNITS = ("GB/s", "TFLOP/s", "FLOPs", "bytes", "MiB", "tokens/s", "seconds", "parameters")
#: A parameter whose name says its unit must say it in its description too: name pattern -> unit.
NAME_UNITS = [(r"_gbs$", "GB/s"), (r"_tflops$", "TFLOP/s"), (r"bytes", "bytes"), (r"_mb$", "MiB"),
              (r"intensity", "FLOPs"), (r"_s$", "second")]
_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def sections(docstring: str) -> dict[str, str]:
    """Google-style sections of a cleaned docstring: {'summary': ..., 'Args': ..., 'Returns': ...}."""
    found, name, lines = {}, "summary", []
    for line in inspect.cleandoc(docstring).splitlines():
        match = _SECTION.match(line)
        if match and not line.startswith(" "):
            found[name] = "\n".join(lines)
            name, lines = match.group(1), []
        else:
            lines.append(line)
    found[name] = "\n".join(lines)
    return found


def documented_args(args_section: str) -> dict[str, str]:
    """Argument name -> its description (continuation lines joined) from an Args section."""
    body = textwrap.dedent(args_section)
    args, current = {}, None
    for line in body.splitlines():
        if not line.strip():
            continue
        match = _ARG.match(line)
        if match and not line.startswith(" "):
            current = match.group(1).lstrip("*")
            args[current] = match.group(2)
        elif current is not None:
            args[current] += " " + line.strip()
    return args


def parameters(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def docstring_problems(source: str, filename: str) -> list[str]:
    """Every way the public functions' docstrings in ``source`` break the house rules."""
    tree = ast.parse(source, filename=filename)
    problems = []
    module_doc = ast.get_docstring(tree) or ""
    if "Units:" not in module_doc:
        problems.append(f"{filename}: the module docstring has no 'Units:' line")
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
            continue
        where = f"{filename}:{fn.name}"
        doc = ast.get_docstring(fn, clean=False)
        if not doc:
            problems.append(f"{where}: no docstring")
            continue
        parts = sections(doc)
        params = parameters(fn)
        args = documented_args(parts.get("Args", ""))
        for name in args.keys() - set(params):
            problems.append(f"{where}: documents {name!r}, which is not a parameter")
        for name in [p for p in params if p not in args]:
            problems.append(f"{where}: parameter {name!r} is not documented in Args")
        if "Returns" not in parts:
            problems.append(f"{where}: no Returns section")
        said = parts.get("summary", "") + " " + parts.get("Returns", "")
        if not any(unit in said for unit in UNITS):
            problems.append(f"{where}: neither the summary nor Returns states a unit ({', '.join(UNITS)})")
        for name, text in args.items():
            for pattern, unit in NAME_UNITS:
                if re.search(pattern, name) and unit not in text:
                    problems.append(f"{where}: {name!r} is documented without its unit {unit}")
    return problems


@pytest.mark.parametrize("tree", TREES, ids=["solutions", "assignments"])
@pytest.mark.parametrize("module", MODULES)
def test_student_api_docstrings(tree, module):
    path = tree / module
    assert docstring_problems(path.read_text(encoding="utf-8"), f"{tree.name}/{module}") == []


def test_every_function_of_course_yml_is_checked():
    from autograder.core import course

    functions = {f for t in course.load().assignment("why17").tasks for f in t.functions}
    defined = set()
    for module in MODULES:
        tree = ast.parse((TREES[0] / module).read_text(encoding="utf-8"))
        defined |= {f"{module[:-3]}.{fn.name}" for fn in tree.body if isinstance(fn, ast.FunctionDef)}
    assert functions <= defined


GOOD = '''
"""A module. Units: GB/s."""


def ceiling(params_read, bw_gbs, *, batch=1) -> float:
    """Tokens/s ceiling.

    Args:
        params_read: parameters read per token.
        bw_gbs: memory bandwidth in GB/s
            (1e9 bytes/s).
        batch: streams.

    Returns:
        tokens/s.
    """
'''


def test_the_checker_accepts_a_good_docstring():
    assert docstring_problems(GOOD, "good.py") == []


@pytest.mark.parametrize("edit, complaint", [
    (("params_read: parameters", "params: parameters"), "documents 'params', which is not a parameter"),
    (("        batch: streams.\n", ""), "parameter 'batch' is not documented"),
    (("bw_gbs: memory bandwidth in GB/s", "bw_gbs: memory bandwidth in"),
     "'bw_gbs' is documented without its unit GB/s"),
    (("    Returns:\n        tokens/s.\n", ""), "no Returns section"),
    (("Tokens/s ceiling.", "The ceiling."), None),   # Returns still says tokens/s: fine
    (('"""A module. Units: GB/s."""', '"""A module."""'), "no 'Units:' line"),
])
def test_the_checker_finds_each_problem(edit, complaint):
    old, new = edit
    assert old in GOOD
    problems = docstring_problems(GOOD.replace(old, new), "bad.py")
    if complaint is None:
        assert problems == []
    else:
        assert any(complaint in p for p in problems), problems


def test_the_checker_wants_a_unit_in_summary_or_returns():
    bad = GOOD.replace("Tokens/s ceiling.", "The ceiling.").replace("        tokens/s.\n", "        a number.\n")
    assert any("states a unit" in p for p in docstring_problems(bad, "bad.py"))
