"""An nbgrader course whose autograded cells run this package's grader, and the helper those cells call.

``write_course(out, assignment)`` lays out a working nbgrader course directory::

    out/nbgrader_config.py      # course id, cell timeout, the autograde steps, where this project lives
    out/shared/                 # the project's shared/ package (the notebook finds it upward)
    out/source/<folder>/<notebook>.ipynb  # the lab notebook with nbgrader cell metadata, solutions inside
    out/source/<folder>/*.py ...   # the student release's other files (stubs, README, public tests)

The source notebook is ``nbgrader_cells.instructor_notebook``: the one the student zip's notebook is
made from too, so a notebook from either autogrades. Each task's locked "autograder tests" cell
calls ``task_points(task_id)``, which runs ``python -m autograder grade`` on the student's submitted
folder in a separate process (once per notebook run), in the grader's sandbox with its per-call
limits, and returns the task's score as the cell's value: nbgrader takes a numeric cell value as
partial credit (nbgrader.utils.determine_grade). The grade's own output is captured, so nothing
reaches the cell's stderr, which nbgrader would score as zero. During `nbgrader autograde` only those
cells run (``nbgrader_hooks``): the lab is not re-measured on the grading machine; and grade-all has
first graded the class into <course>/autograder-grades/, whose results the cells read when they are
of the same files (``pregraded_results``).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.core import settings
from autograder.exports.nbgrader_cells import instructor_notebook, release_code_stub

#: Seconds nbgrader lets one cell run, a backstop: a task cell's grade bounds each call of the
#: student's code itself (the first task cell runs the whole grade, about the time `grade` takes).
CELL_TIMEOUT_S = 600
#: Environment variables nbgrader_config.py sets for the kernel that runs the task cells.
ROOT_ENV = settings.ROOT.name
PYTHON_ENV = settings.PYTHON.name
#: The course's folder where `nbgrader autograde` first runs grade-all on submitted/ (nbgrader_hooks).
PREGRADED_DIR = "autograder-grades"

_CONFIG = '''\
"""nbgrader configuration of the course, written by `python -m autograder nbgrader-course`.

The "autograder tests" cells run this project's grader ({root}) with {python};
regenerate this course after moving either.
"""
import os
import sys

os.environ.setdefault({root_env!r}, {root!r})
os.environ.setdefault({python_env!r}, {python!r})
sys.path.insert(0, os.environ[{root_env!r}])
from autograder.exports import nbgrader_hooks

c = get_config()  # noqa: F821 - provided by nbgrader
c.CourseDirectory.course_id = {course_id!r}
c.Execute.timeout = {timeout}
# the release's code stub is the student zip's, so both notebooks are the same
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
# autograde copies the source's files over the student's; never over the modules they wrote
c.Autograde.exclude_overwriting = {{{course_id!r}: {modules!r}}}
# autograde: refuse notebooks without the test cells, run only the test cells (the grader's sandbox)
c.Autograde.sanitize_preprocessors = nbgrader_hooks.SANITIZE
c.Autograde.autograde_preprocessors = nbgrader_hooks.AUTOGRADE
if nbgrader_hooks.autograding(sys.argv):
    # a student who handed in .py files but no notebook is graded with the released notebook
    for _notebook in {notebooks!r}:
        nbgrader_hooks.add_missing_notebooks({out!r}, {course_id!r}, _notebook, {modules!r})
    # grade-all grades the class first (new or changed submissions only), in parallel with one warm
    # sandbox per worker; the test cells read its results. Delete this line and each notebook's
    # first test cell runs `python -m autograder grade` itself (the same scores, slower).
    nbgrader_hooks.pregrade({out!r}, {course_id!r})
'''


def nbgrader_notebook(solution_nb: dict, assignment) -> dict:
    """The source notebook for nbgrader (``nbgrader_cells.instructor_notebook``)."""
    return instructor_notebook(solution_nb, assignment)


def student_modules(assignment) -> list[str]:
    """The files a student writes for ``assignment``: each task's modules, as 'bw.py' ..."""
    return sorted({f"{name.split('.', 1)[0]}.py" for task in assignment.tasks for name in task.functions})


def write_course(out: Path, assignment, *, python: str | None = None) -> Path:
    """Write (or refresh) the nbgrader course directory ``out`` for ``assignment``; returns it.

    Refreshes nbgrader_config.py, shared/ and source/<name>/; leaves the gradebook and every
    student folder alone.
    """
    from autograder.core import course
    from autograder.core.errors import UsageError
    from autograder.exports import generate, nbgrader_cells

    out = Path(out).resolve()
    notebooks = sorted(assignment.solutions_dir.glob("*.ipynb"))
    if not notebooks:
        raise UsageError(f"solutions/{assignment.folder} has no notebook to grade with nbgrader")
    solution_nbs = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in notebooks}
    try:
        stubs = {release_code_stub(nb, f"solutions/{assignment.folder}/{name}") for name, nb in solution_nbs.items()}
    except nbgrader_cells.CellError as exc:
        raise generate.GenerateError(str(exc)) from None
    stubs.discard(None)
    if len(stubs) > 1:
        raise generate.GenerateError(f"solutions/{assignment.folder}: the notebooks' code answer cells have "
                                     "different grader_task labels; nbgrader's release can write one code stub only")
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(_CONFIG.format(
        root=str(course.ROOT), python=python or sys.executable, root_env=ROOT_ENV, python_env=PYTHON_ENV,
        course_id=assignment.name, timeout=CELL_TIMEOUT_S, modules=student_modules(assignment),
        code_stub=stubs.pop() if stubs else "raise NotImplementedError()", notebooks=sorted(solution_nbs),
        out=str(out)), encoding="utf-8")
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
    for name, nb in solution_nbs.items():
        (source / name).write_text(json.dumps(nbgrader_notebook(nb, assignment), indent=1, ensure_ascii=False)
                                   + "\n", encoding="utf-8")
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


def pregraded_results(folder: Path) -> dict | None:
    """grade-all's results for submitted/<student>/<assignment> ``folder``, from the course's
    PREGRADED_DIR, when they are of these very files and every check (else None)."""
    from autograder.classdata.discover import Submission
    from autograder.classdata.store import MARKER, RESULTS, content_hash

    folder = Path(folder)
    if len(folder.parents) < 3 or folder.parents[1].name != "submitted":
        return None
    stored = folder.parents[2] / PREGRADED_DIR / folder.parent.name
    try:
        marker = json.loads((stored / MARKER).read_text(encoding="utf-8"))
        if not marker.get("full") or marker.get("hash") != content_hash(Submission(folder.parent.name, folder, ())):
            return None
        results = json.loads((stored / RESULTS).read_text(encoding="utf-8"))
    except (OSError, ValueError, AttributeError):
        return None
    return results if isinstance(results, dict) and isinstance(results.get("tests"), list) else None


def grade_results(folder: Path, assignment: str | None = None) -> dict:
    """The results dict of ``python -m autograder grade folder``, run once per folder and kernel;
    grade-all's, when the course's pre-grading graded these files (``pregraded_results``)."""
    key = f"{assignment}:{folder}"
    if key not in _RESULTS:
        pregraded = pregraded_results(folder)
        if pregraded is not None:
            _RESULTS[key] = pregraded
            return pregraded
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
