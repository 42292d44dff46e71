"""The lab notebook's nbgrader cells: one source for the student zip's notebook and nbgrader's release.

``instructor_notebook(solution_nb, assignment)`` is the notebook nbgrader's course holds in
source/<assignment>/: every ``### BEGIN SOLUTION`` code cell an nbgrader "autograded answer", every
Explain It Back answer a "manually graded answer" (0 points: course.yml's points are all autograded),
and one locked "autograder tests" cell per task of course.yml, worth that task's points, whose hidden
part calls ``autograder.exports.nbgrader_course.task_points``.

``student_notebook(solution_nb, assignment)`` is what `nbgrader generate_assignment` makes of it, done
here without nbgrader: solution regions become stubs (``raise NotImplementedError('<label>')`` in code,
``YOUR ANSWER HERE`` in markdown), hidden tests are removed, and the answer and test cells get
nbgrader's lock flags. `python -m autograder generate` writes it to assignments/, so the notebook in
the student zip carries the same cell metadata as nbgrader's release (all but nbgrader's checksums)
and autogrades the same way.
"""
from __future__ import annotations

import json
import re

from autograder.core import settings

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
TEXT_STUB = "YOUR ANSWER HERE"
#: nbgrader's cell metadata schema version (nbgrader 0.9).
SCHEMA_VERSION = 3
#: Environment variable naming the project root, set for the grading kernel by nbgrader_config.py.
ROOT_ENV = settings.ROOT.name

_TASK_CELL = '''\
# {task_id}: {title}, {points:g} points. The course's autograder fills this in when it grades.
### BEGIN HIDDEN TESTS
import os as _os, sys as _sys
_sys.path.insert(0, _os.environ[{root_env!r}])
from autograder.exports.nbgrader_course import task_points
task_points({task_id!r}, {assignment!r})
### END HIDDEN TESTS'''


class CellError(Exception):
    """A notebook cell whose regions cannot be cleared."""


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-").lower() or "cell"


def code_stub(cell: dict) -> str:
    """The line a code answer cell's solution region becomes: raise NotImplementedError('<label>')."""
    return f"raise NotImplementedError({cell.get('metadata', {}).get('grader_task', 'this cell')!r})"


def is_test_cell(cell: dict) -> bool:
    """An nbgrader "autograder tests" cell: graded, not an answer, code."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def instructor_notebook(solution_nb: dict, assignment) -> dict:
    """The nbgrader source notebook: answers with their solutions, one test cell per task."""
    nb = json.loads(json.dumps(solution_nb))
    seen = set()
    for i, cell in enumerate(nb["cells"]):
        if BEGIN not in _source(cell):
            continue
        grade_id = _slug(cell.get("metadata", {}).get("grader_task", f"answer-{i}"))
        if grade_id in seen:
            grade_id = f"{grade_id}-{i}"
        seen.add(grade_id)
        manual = cell["cell_type"] == "markdown"
        meta = {"grade": manual, "solution": True, "locked": False, "grade_id": grade_id,
                "cell_type": cell["cell_type"], "schema_version": SCHEMA_VERSION}
        if manual:
            meta["points"] = 0
        cell.setdefault("metadata", {})["nbgrader"] = meta
    nb["cells"].append({"id": "grader-autograder", "cell_type": "markdown", "metadata": {}, "source":
                        "## Autograder\n\nOne cell per task of the course, worth its points; the grader "
                        "fills them in and runs them when it grades your submission."})
    for task in assignment.tasks:
        nb["cells"].append({
            "id": f"grader-{task.id}", "cell_type": "code", "execution_count": None, "outputs": [],
            "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True,
                                      "grade_id": task.id, "points": task.points, "cell_type": "code",
                                      "schema_version": SCHEMA_VERSION}},
            "source": _TASK_CELL.format(task_id=task.id, title=task.title, points=task.points,
                                        root_env=ROOT_ENV, assignment=assignment.name),
        })
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def clear_region(source: str, begin: str, end: str, stub: str | None, where: str) -> str:
    """``source`` with each begin..end region replaced by ``stub`` at the marker's indentation (or
    dropped when ``stub`` is None), line by line as nbgrader does it."""
    out: list[str] = []
    inside_since = None
    for number, line in enumerate(source.split("\n"), 1):
        if begin in line:
            if inside_since is not None:
                raise CellError(f"{where}:{number}: nested {begin} (region opened on line {inside_since})")
            inside_since = number
            if stub is not None:
                out.append(line[: len(line) - len(line.lstrip())] + stub)
        elif end in line:
            if inside_since is None:
                raise CellError(f"{where}:{number}: {end} without a {begin}")
            inside_since = None
        elif inside_since is None:
            out.append(line)
    if inside_since is not None:
        raise CellError(f"{where}:{inside_since}: {begin} is never closed by {end}")
    return "\n".join(out)


def _lock(cell: dict) -> None:
    """nbgrader's LockCells flags: answers cannot be deleted, test cells neither deleted nor edited."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if not meta:
        return
    cell["metadata"]["deletable"] = False
    if meta.get("grade") and not meta.get("solution"):
        cell["metadata"]["editable"] = False


def student_notebook(solution_nb: dict, assignment, where: str = "notebook") -> dict:
    """The released notebook: stubs for solutions, no hidden tests, outputs cleared, cells locked."""
    nb = instructor_notebook(solution_nb, assignment)
    for i, cell in enumerate(nb["cells"]):
        source = _source(cell)
        if BEGIN in source or END in source:
            stub = code_stub(cell) if cell["cell_type"] == "code" else TEXT_STUB
            source = clear_region(source, BEGIN, END, stub, f"{where} cell {i}")
        if BEGIN_HIDDEN in source or END_HIDDEN in source:
            source = clear_region(source, BEGIN_HIDDEN, END_HIDDEN, None, f"{where} cell {i}")
        if source != _source(cell):
            cell["source"] = source
        _lock(cell)
    return nb


def release_code_stub(solution_nb: dict, where: str = "notebook") -> str | None:
    """The one code stub nbgrader's ClearSolutions must write so its release equals ours (None when
    no code cell has a solution region); several different ones cannot be configured."""
    stubs = {code_stub(c) for c in solution_nb.get("cells", [])
             if c.get("cell_type") == "code" and BEGIN in _source(c)}
    if len(stubs) > 1:
        raise CellError(f"{where}: code answer cells with different grader_task labels ({', '.join(sorted(stubs))});"
                        " nbgrader's release can write one code stub only")
    return stubs.pop() if stubs else None
