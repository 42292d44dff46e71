"""The student release is generated from solutions/: no drift, no leaks, clear refusals, and
stubs that keep every signature and docstring."""
from __future__ import annotations

import ast
import json

import pytest

from autograder.core import course
from autograder.exports import generate

ASSIGNMENT = course.load().assignment("why17")
SOLUTIONS = ASSIGNMENT.solutions_dir
RELEASE = ASSIGNMENT.assignments_dir
#: Lines too generic to count as a leak when they show up in a stub file.
TRIVIAL = {"pass", "return", "continue", "break", "else:", "try:", ")", "]", "}", "return results",
           "return fig"}


def _region_lines(text: str) -> tuple[list[str], set[str]]:
    """(stripped lines inside solution regions, stripped lines outside them)."""
    inside, outside, open_ = [], set(), False
    for line in text.splitlines():
        s = line.strip()
        if s == generate.BEGIN:
            open_ = True
        elif s == generate.END:
            open_ = False
        elif open_:
            inside.append(s)
        else:
            outside.add(s)
    return inside, outside


def _sources(path) -> list[str]:
    """A file's text, or each cell's source for a notebook."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    return [path.read_text(encoding="utf-8")]


def test_committed_release_equals_a_fresh_generation():
    assert generate.drift(ASSIGNMENT) == []


def test_fresh_generation_writes_the_same_bytes(tmp_path):
    out = generate.write(ASSIGNMENT, tmp_path / "release")
    fresh = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    committed = {p.relative_to(RELEASE).as_posix(): p.read_bytes() for p in RELEASE.rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts}
    assert fresh == committed


def test_every_region_is_found():
    files = [p for p in SOLUTIONS.rglob("*") if p.suffix in (".py", ".ipynb")]
    regions = sum(src.count(generate.BEGIN) for p in files for src in _sources(p))
    functions = sum(len(t.functions) for t in ASSIGNMENT.tasks)
    assert regions >= functions > 0


@pytest.mark.parametrize("path", sorted(p.relative_to(SOLUTIONS).as_posix() for p in SOLUTIONS.rglob("*")
                                        if p.suffix in (".py", ".ipynb") and "__pycache__" not in p.parts))
def test_no_solution_line_leaks_into_the_release(path):
    solution, release = SOLUTIONS / path, RELEASE / path
    released = {line.strip() for src in _sources(release) for line in src.splitlines()}
    for src in _sources(solution):
        inside, outside = _region_lines(src)
        for line in inside:
            if len(line) < 6 or line in TRIVIAL or line.startswith("#") or line in outside:
                continue
            assert line not in released, f"{path}: solution line leaks into the release: {line!r}"


def _dump(node) -> str | None:
    return ast.dump(node) if node is not None else None


def _functions(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("module", sorted({f.split(".")[0] for t in ASSIGNMENT.tasks for f in t.functions}))
def test_stubs_keep_signatures_and_docstrings(module):
    solution, stub = _functions(SOLUTIONS / f"{module}.py"), _functions(RELEASE / f"{module}.py")
    assert set(solution) == set(stub)
    for name, fn in solution.items():
        twin = stub[name]
        assert ast.dump(fn.args) == ast.dump(twin.args), name
        assert _dump(fn.returns) == _dump(twin.returns), name
        assert [ast.dump(d) for d in fn.decorator_list] == [ast.dump(d) for d in twin.decorator_list]
        assert ast.get_docstring(fn) == ast.get_docstring(twin), name


def test_each_stub_raises_not_implemented_naming_its_task():
    for task in ASSIGNMENT.tasks:
        for function in task.functions:
            module, name = function.split(".")
            fn = _functions(RELEASE / f"{module}.py")[name]
            raises = [n for n in ast.walk(fn) if isinstance(n, ast.Raise)]
            assert len(raises) == 1, function
            call = raises[0].exc
            assert call.func.id == "NotImplementedError"
            assert call.args[0].value == task.label(function) == (
                f"{task.id}.{task.functions.index(function) + 1}: {name}")


def _label(_function):
    return "task9.9: f"


@pytest.mark.parametrize("text, line, words", [
    ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    x = 1\n    ### END SOLUTION\n", 3, "nested"),
    ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", 2, "never closed"),
    ("def f():\n    return 1\n    ### END SOLUTION\n", 3, "without a"),
])
def test_broken_markers_are_refused_naming_file_and_line(text, line, words):
    with pytest.raises(generate.GenerateError) as info:
        generate.strip_regions(text, "solutions/why17/bad.py", _label)
    message = str(info.value)
    assert message.startswith(f"solutions/why17/bad.py:{line}:") and words in message
    assert "\n" not in message


def test_a_broken_file_in_the_folder_stops_the_release(tmp_path):
    (tmp_path / "predict.py").write_text("def predict_decode():\n    ### BEGIN SOLUTION\n    return 1\n")
    with pytest.raises(generate.GenerateError, match=r"solutions/why17/predict.py:2: .* never closed"):
        generate.release_files(ASSIGNMENT, src=tmp_path)


def test_region_in_a_function_without_a_task_is_refused(tmp_path):
    (tmp_path / "predict.py").write_text("def helper():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n")
    with pytest.raises(generate.GenerateError, match="predict.helper has a solution region but no task"):
        generate.release_files(ASSIGNMENT, src=tmp_path)


def test_stub_keeps_the_region_indentation():
    text = ("def f(x):\n    if x:\n        ### BEGIN SOLUTION\n        return 1\n"
            "        ### END SOLUTION\n    return 0\n")
    out = generate.strip_regions(text, "f.py", lambda _f: "task1.1: f")
    assert "        raise NotImplementedError('task1.1: f')\n" in out
    ast.parse(out)
