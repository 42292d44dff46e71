"""pytest setup for the public tests of this assignment.

Two jobs:

* ``sys.path``: this folder (so the tests import *your* bw.py, flops.py, predict.py, roofline.py)
  and the project root, the nearest folder above holding ``shared/`` (the hardware and model tables).
* Task markers, declared once in ``course.yml`` (the nearest one above this folder): each task id
  of this assignment becomes a pytest marker, so ``pytest assignments/why17 -m task3`` runs one
  task's tests. A ``-m`` expression naming a task that course.yml does not have is refused.

Works the same in the course repository and in the unpacked student bundle.
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
#: Words of a ``-m`` expression that are operators, not marker names.
_MARK_OPERATORS = {"and", "or", "not"}


def _upward(name: str) -> Path | None:
    """The nearest ``name`` in this folder or one above it, or None."""
    for folder in (HERE, *HERE.parents):
        if (folder / name).exists():
            return folder / name
    return None


def _put_on_path() -> None:
    """The project root (for ``shared``), then this folder in front of it (for your modules)."""
    shared = _upward("shared/__init__.py")
    for folder in (shared.parent.parent if shared else None, HERE):
        if folder is not None:
            if str(folder) in sys.path:
                sys.path.remove(str(folder))
            sys.path.insert(0, str(folder))


def course_tasks(course_file: Path, folder: str) -> list[dict]:
    """The tasks of the assignment kept in ``folder``, as listed in ``course_file``.

    Read by shared/course_file.py, the parser the grader uses too. Raises pytest.UsageError with
    one line naming the key and the file when it cannot be used.
    """
    from shared import course_file as parser

    try:
        data = parser.read(course_file)
        return parser.tasks(data, parser.assignment_in_folder(data, folder, course_file), course_file)
    except parser.CourseFileError as exc:
        raise pytest.UsageError(str(exc)) from None


def _marker_names(config) -> set[str]:
    return {re.split(r"[:(]", line, maxsplit=1)[0].strip() for line in config.getini("markers")}


def pytest_configure(config) -> None:
    course_file = _upward("course.yml")
    if course_file is None:
        raise pytest.UsageError(f"no course.yml in {HERE} or any folder above it; the task markers come from it")
    tasks = course_tasks(course_file, HERE.name)
    for task in tasks:
        points = task.get("points", "?")
        config.addinivalue_line("markers", f"{task['id']}: {task.get('title', '')} ({points} points, from course.yml)")
    config.addinivalue_line("markers", "lesson(section): the lesson section a failure of this test points to")
    known = _marker_names(config)
    expression = config.getoption("markexpr", default="") or ""
    names_only = re.sub(r"\([^)]*\)", " ", expression)   # drop marker arguments: task1(x=1)
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", names_only):
        if word not in _MARK_OPERATORS and word not in known:
            ids = ", ".join(t["id"] for t in tasks)
            raise pytest.UsageError(f"-m {expression!r}: {word!r} is not a task in {course_file.name} (tasks: {ids})")


#: The test running now, so that a failed comparison can name its lesson section.
_RUNNING: dict = {}


def pytest_runtest_setup(item) -> None:
    _RUNNING["item"] = item


def pytest_assertrepr_compare(config, op, left, right):
    """A failed ``x == pytest.approx(v)`` also says what the ratio points to: the slip it matches
    and the lesson section, in the words the grader uses (shared/diagnose.py)."""
    expected = getattr(right, "expected", None)
    if op != "==" or not type(right).__name__.startswith("Approx") or expected is None:
        return None
    from shared import diagnose

    both = isinstance(left, (list, tuple)) and isinstance(expected, (list, tuple)) and len(left) == len(expected)
    pairs = list(zip(left, expected, strict=True)) if both else [(left, expected)]
    pairs = [(a, b) for a, b in pairs if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a != b]
    if not pairs:
        return None
    yours, want = pairs[0]
    item = _RUNNING.get("item")
    marker = item.get_closest_marker("lesson") if item is not None else None
    section = marker.args[0] if marker and marker.args else getattr(getattr(item, "module", None), "LESSON", "")
    if not (math.isfinite(yours) and want):
        return None
    reread = f" Reread: {section}." if section else ""
    # The lesson's numbers are rounded: a ratio matches a slip's factor within the test's own tolerance.
    slack = max((getattr(right, "abs", None) or 0.0) / abs(want), getattr(right, "rel", None) or 0.0)
    # A test that knows what the README's named slips return here passes them (``slips``): those first.
    note = diagnose.ratio_note(yours, want, slack=slack, slips=getattr(right, "slips", None))
    return [f"{left!r} == {right!r}", f"yours is {yours:.4g} {note}.{reread}"]


_put_on_path()
