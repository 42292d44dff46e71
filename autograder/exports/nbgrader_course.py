"""An nbgrader course whose autograded cells run this package's grader, and the helper those cells call.

``write_course(out, assignment)`` lays out a working nbgrader course directory::

    out/nbgrader_config.py      # course id, cell timeout, where this project and its Python live
    out/shared/                 # the project's shared/ package (the notebook finds it upward)
    out/source/<folder>/<notebook>.ipynb  # the lab notebook with nbgrader cell metadata, solutions inside
    out/source/<folder>/*.py ...   # the student release's other files (stubs, README, public tests)

In the source notebook every ``### BEGIN SOLUTION`` code cell becomes an nbgrader "autograded answer",
every Explain It Back answer a "manually graded answer" (0 points: course.yml's points are all
autograded), and one "autograder tests" cell per task of course.yml is appended, worth that task's
points. Its hidden part calls ``task_points(task_id)``, which runs ``python -m autograder grade`` on the
student's submitted folder in a separate process (once per notebook run) and returns the task's score
as the cell's value: nbgrader takes a numeric cell value as partial credit (nbgrader.utils.
determine_grade). The grade's own output is captured, so nothing reaches the cell's stderr, which
nbgrader would score as zero.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.core import settings

BEGIN = "### BEGIN SOLUTION"
#: Seconds nbgrader lets one cell run: a task cell runs a whole grade the first time.
CELL_TIMEOUT_S = 1800
#: Environment variables nbgrader_config.py sets for the kernel that runs the task cells.
ROOT_ENV = settings.ROOT.name
PYTHON_ENV = settings.PYTHON.name
#: nbgrader's cell metadata schema version (nbgrader 0.9).
SCHEMA_VERSION = 3

_CONFIG = '''\
"""nbgrader configuration of the course, written by `python -m autograder nbgrader-course`.

The "autograder tests" cells run this project's grader ({root}) with {python};
regenerate this course after moving either.
"""
import os

os.environ.setdefault({root_env!r}, {root!r})
os.environ.setdefault({python_env!r}, {python!r})

c = get_config()  # noqa: F821 - provided by nbgrader
c.CourseDirectory.course_id = {course_id!r}
c.Execute.timeout = {timeout}
# autograde copies the source's files over the student's; never over the modules they wrote
c.Autograde.exclude_overwriting = {{{course_id!r}: {modules!r}}}
'''

_TASK_CELL = '''\
# {task_id}: {title}, {points:g} points. The course's autograder fills this in when it grades.
### BEGIN HIDDEN TESTS
import os as _os, sys as _sys
_sys.path.insert(0, _os.environ[{root_env!r}])
from autograder.exports.nbgrader_course import task_points
task_points({task_id!r}, {assignment!r})
### END HIDDEN TESTS
'''


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-").lower() or "cell"


def nbgrader_notebook(solution_nb: dict, assignment) -> dict:
    """The source notebook for nbgrader: cell metadata for answers, one task cell per task."""
    nb = json.loads(json.dumps(solution_nb))
    seen = set()
    for i, cell in enumerate(nb["cells"]):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if BEGIN not in source:
            continue
        grade_id = _slug(cell.get("metadata", {}).get("grader_task", f"answer-{i}"))
        if grade_id in seen:
            grade_id = f"{grade_id}-{i}"
        seen.add(grade_id)
        manual = cell["cell_type"] == "markdown"
        meta = {"grade": manual, "solution": True, "locked": False, "grade_id": grade_id,
                "schema_version": SCHEMA_VERSION}
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
                                      "grade_id": task.id, "points": task.points,
                                      "schema_version": SCHEMA_VERSION}},
            "source": _TASK_CELL.format(task_id=task.id, title=task.title, points=task.points,
                                        root_env=ROOT_ENV, assignment=assignment.name).rstrip("\n"),
        })
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def student_modules(assignment) -> list[str]:
    """The files a student writes for ``assignment``: each task's modules, as 'bw.py' ..."""
    return sorted({f"{name.split('.', 1)[0]}.py" for task in assignment.tasks for name in task.functions})


def write_course(out: Path, assignment, *, python: str | None = None) -> Path:
    """Write (or refresh) the nbgrader course directory ``out`` for ``assignment``; returns it.

    Refreshes nbgrader_config.py, shared/ and source/<name>/; leaves the gradebook and every
    student folder alone.
    """
    from autograder.core import course
    from autograder.exports import generate

    out = Path(out).resolve()
    notebooks = sorted(assignment.solutions_dir.glob("*.ipynb"))
    if not notebooks:
        from autograder.core.errors import UsageError
        raise UsageError(f"solutions/{assignment.folder} has no notebook to grade with nbgrader")
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(_CONFIG.format(
        root=str(course.ROOT), python=python or sys.executable, root_env=ROOT_ENV, python_env=PYTHON_ENV,
        course_id=assignment.name, timeout=CELL_TIMEOUT_S, modules=student_modules(assignment)),
        encoding="utf-8")
    shared = out / "shared"
    if shared.exists():
        shutil.rmtree(shared)
    shutil.copytree(course.ROOT / "shared", shared, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    source = out / "source" / assignment.name
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    for rel, data in generate.release_files(assignment).items():
        if not rel.endswith(".ipynb"):
            target = source / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for path in notebooks:
        nb = nbgrader_notebook(json.loads(path.read_text(encoding="utf-8")), assignment)
        (source / path.name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


# ---- inside the notebook's kernel, while nbgrader autogrades ------------------------------------

_RESULTS: dict[str, dict] = {}


def submission_dir(cwd: Path | None = None) -> Path:
    """The folder to grade: the student's submitted copy when nbgrader autogrades, else ``cwd``.

    nbgrader runs the notebook in <course>/autograded/<student>/<assignment>/, where the notebook
    has just rewritten measurements.json on the grading machine; the submission as handed in stays
    in <course>/submitted/<student>/<assignment>/, and that is what `python -m autograder grade`
    grades too.
    """
    cwd = Path(cwd or Path.cwd()).resolve()
    if len(cwd.parents) >= 3 and cwd.parents[1].name == "autograded":
        submitted = cwd.parents[2] / "submitted" / cwd.parent.name / cwd.name
        if submitted.is_dir():
            return submitted
    return cwd


def grade_results(folder: Path, assignment: str | None = None) -> dict:
    """The results dict of ``python -m autograder grade folder``, run once per folder and kernel."""
    key = f"{assignment}:{folder}"
    if key not in _RESULTS:
        root = settings.ROOT.get() or str(Path(__file__).resolve().parents[2])
        python = settings.PYTHON.get() or sys.executable
        with tempfile.TemporaryDirectory(prefix="grader-nbgrader-") as tmp:
            out = Path(tmp) / "results.json"
            done = subprocess.run([python, "-m", "autograder", "grade", str(folder), "--assignment", assignment,
                                   "--out", str(out)], cwd=root, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True)
            if done.returncode != 0 or not out.is_file():
                last = (done.stderr.strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"the grader failed on {folder} (exit {done.returncode}): {last}")
            _RESULTS[key] = json.loads(out.read_text(encoding="utf-8"))
    return _RESULTS[key]


def task_score(results: dict, task_id: str) -> tuple[float, float]:
    """(score, max_score) of one task, summed over its tests in a results dict."""
    tests = [t for t in results.get("tests", []) if t.get("task") == task_id]
    return sum(t["score"] for t in tests), sum(t["max_score"] for t in tests)


def task_points(task_id: str, assignment: str | None = None) -> float:
    """Print each check of ``task_id`` and return the task's points (the task cell's value)."""
    from autograder.core import course

    task = course.load().assignment(assignment).task(task_id)
    results = grade_results(submission_dir(), assignment)
    score, _max = task_score(results, task_id)
    for test in results.get("tests", []):
        if test.get("task") == task_id:
            mark = "passed" if test.get("status") == "passed" else "FAILED"
            print(f"{mark}: {test['name']} ({test['score']:.4g}/{test['max_score']:.4g})")
            if test.get("status") != "passed":
                print(f"    {test.get('output', '')}")
    # nbgrader refuses a value above the cell's points: never let float sums overshoot
    return round(min(max(score, 0.0), task.points), 4)
