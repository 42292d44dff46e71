"""nbgrader at class scale, with the real nbgrader and its SQLite gradebook: a notebook from the
student zip and one from nbgrader's release autograde alike, a student whose predict.py never
returns costs only the checks it hangs (the grader's sandbox stops it), a student with no notebook is
graded from the .py files, the lab is not re-run on the grading machine, and a notebook without the
nbgrader cell metadata is refused with one line naming the student and the file. grade-all grades
the class first and the test cells read its results; without it each notebook grades itself."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core import course, settings
from autograder.exports import nbgrader_cells
from autograder.lessons.why17.fixtures.build import overlay
from tests.helpers.paths import ROOT

ASSIGNMENT = "why17"
MODULES = ("bw", "flops", "predict", "roofline")
REFERENCE_TABLE = (ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements" / "reference"
                   / "measurements.json")


def nbgrader(*args, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    # nbgrader runs `alembic` from PATH: this interpreter's bin folder first, as an activated venv would
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check:
        assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def hand_in(course_dir: Path, student: str, *, notebook: str | None, hang: bool = False) -> Path:
    """submitted/<student>/why17: the reference's modules (predict.py looping forever when ``hang``),
    the reference Measure table, and the notebook: 'release' (nbgrader's), 'zip' (the student zip's,
    assignments/why17), 'bare' (nbgrader's with its nbgrader metadata stripped) or None."""
    folder = course_dir / "submitted" / student / ASSIGNMENT
    shutil.copytree(course_dir / "release" / ASSIGNMENT, folder)
    (folder / "why17.ipynb").unlink()
    if notebook == "zip":
        shutil.copy(ROOT / "assignments" / ASSIGNMENT / "why17.ipynb", folder / "why17.ipynb")
    elif notebook in ("release", "bare"):
        nb = json.loads((course_dir / "release" / ASSIGNMENT / "why17.ipynb").read_text())
        if notebook == "bare":
            for cell in nb["cells"]:
                cell["metadata"].pop("nbgrader", None)
        (folder / "why17.ipynb").write_text(json.dumps(nb))
    if hang:
        overlay("hostile", "endless_loop", folder)
    else:
        for module in MODULES:
            shutil.copy(ROOT / "solutions" / ASSIGNMENT / f"{module}.py", folder / f"{module}.py")
    shutil.copy(REFERENCE_TABLE, folder / "measurements.json")
    return folder


def gradebook_scores(course_dir: Path, student: str) -> dict:
    """task id -> score of its test cell in nbgrader's SQLite gradebook."""
    from nbgrader.api import Gradebook

    tasks = course.load().assignment(ASSIGNMENT).tasks
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        return {t.id: gb.find_grade(t.id, "why17", ASSIGNMENT, student).score for t in tasks}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("class")
    nbgrader("-m", "autograder", "nbgrader-course", "--out", str(course_dir), cwd=ROOT)
    nbgrader("-m", "nbgrader", "generate_assignment", ASSIGNMENT, cwd=course_dir)
    hand_in(course_dir, "rel", notebook="release")
    hand_in(course_dir, "zip", notebook="zip")
    hand_in(course_dir, "hang", notebook="zip", hang=True)
    hand_in(course_dir, "nonb", notebook=None)
    done = nbgrader("-m", "nbgrader", "autograde", ASSIGNMENT, cwd=course_dir)
    return course_dir, done


@pytest.mark.slow
def test_test_cells_handed_in_as_released_are_not_reported_as_edited(graded):
    """nbgrader releases a test cell without its hidden tests and would report its checksum changed
    (its word for an edited locked cell) for every test cell of every student."""
    _, done = graded
    log = done.stdout + done.stderr
    assert "'checksum'" not in log and "Inconsistent checksums" not in log, log[-3000:]


def full_marks() -> dict:
    return {t.id: t.points for t in course.load().assignment(ASSIGNMENT).tasks}


@pytest.mark.slow
def test_release_and_zip_notebooks_are_one_notebook(graded):
    """nbgrader's release of the course's source notebook is the student zip's notebook, cell for
    cell and metadata for metadata, all but nbgrader's own checksums."""
    course_dir, _ = graded

    def cells(path: Path) -> list[dict]:
        out = []
        for cell in json.loads(path.read_text())["cells"]:
            cell = dict(cell, source="".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
            cell.get("metadata", {}).get("nbgrader", {}).pop("checksum", None)
            out.append(cell)
        return out

    released = cells(course_dir / "release" / ASSIGNMENT / "why17.ipynb")
    zipped = cells(ROOT / "assignments" / ASSIGNMENT / "why17.ipynb")
    assert released == zipped
    assert sum(1 for c in zipped if nbgrader_cells.is_test_cell(c)) == len(full_marks())


@pytest.mark.slow
def test_notebooks_from_the_zip_and_the_release_get_full_marks(graded):
    course_dir, _ = graded
    for student in ("rel", "zip"):
        assert gradebook_scores(course_dir, student) == pytest.approx(full_marks(), abs=1e-3), student


@pytest.mark.slow
def test_a_hanging_student_loses_only_the_checks_that_hang(graded):
    """predict.py's prefill_seconds never returns: the grader's sandbox stops each call at its limit,
    task 3 (where prefill_seconds is graded) loses points and every other task keeps its own."""
    course_dir, _ = graded
    scores, full = gradebook_scores(course_dir, "hang"), full_marks()
    assert scores["task3"] < full["task3"]
    assert {k: v for k, v in scores.items() if k != "task3"} == pytest.approx(
        {k: v for k, v in full.items() if k != "task3"}, abs=1e-3)
    nb = json.loads((course_dir / "autograded" / "hang" / ASSIGNMENT / "why17.ipynb").read_text())
    task3 = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "task3")
    printed = "".join("".join(o.get("text", "")) for o in task3["outputs"] if o["output_type"] == "stream")
    assert "FAILED" in printed and "prefill_seconds did not return within" in printed


@pytest.mark.slow
def test_a_student_without_a_notebook_is_graded_from_the_py_files(graded):
    course_dir, done = graded
    assert gradebook_scores(course_dir, "nonb") == pytest.approx(full_marks(), abs=1e-3)
    assert "nonb: no why17.ipynb handed in" in done.stderr
    assert (course_dir / "submitted" / "nonb" / ASSIGNMENT / "why17.ipynb").read_bytes() == \
        (course_dir / "release" / ASSIGNMENT / "why17.ipynb").read_bytes()


@pytest.mark.slow
def test_only_the_test_cells_run_while_autograding(graded):
    """The lab cells are not run again: no cell but the test cells has an output or an execution
    record, and measurements.json is the student's own, not rewritten on the grading machine."""
    course_dir, _ = graded
    for student in ("rel", "zip", "hang", "nonb"):
        folder = course_dir / "autograded" / student / ASSIGNMENT
        nb = json.loads((folder / "why17.ipynb").read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            ran = bool(cell["outputs"]) or cell.get("execution_count") is not None
            assert ran == nbgrader_cells.is_test_cell(cell), (student, cell.get("id"))
        assert (folder / "measurements.json").read_bytes() == REFERENCE_TABLE.read_bytes()


@pytest.mark.slow
def test_a_notebook_without_the_metadata_is_refused_in_one_line(graded):
    course_dir, _ = graded
    hand_in(course_dir, "bare", notebook="bare")
    done = nbgrader("-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "bare", cwd=course_dir, check=False)
    assert done.returncode != 0
    lines = [line for line in (done.stdout + done.stderr).splitlines()
             if line.startswith("[AutogradeApp | ERROR] bare:")]
    assert len(lines) == 1
    assert "submitted/bare/why17/why17.ipynb has no nbgrader cell metadata" in lines[0]


@pytest.mark.slow
def test_the_test_cells_read_grade_alls_results_for_the_same_files(graded, tmp_path):
    """The hook's grade-all wrote a result per student; a result is read back only for the very
    files it graded."""
    from autograder.exports.nbgrader_course import PREGRADED_DIR, pregraded_results

    course_dir, done = graded
    assert "with grade-all first" in done.stderr
    for student in ("rel", "zip", "hang", "nonb"):
        stored = json.loads((course_dir / PREGRADED_DIR / student / "results.json").read_text())
        assert pregraded_results(course_dir / "submitted" / student / ASSIGNMENT) == stored
    copy = tmp_path / "course"
    shutil.copytree(course_dir / "submitted" / "zip", copy / "submitted" / "zip")
    shutil.copytree(course_dir / PREGRADED_DIR / "zip", copy / PREGRADED_DIR / "zip")
    folder = copy / "submitted" / "zip" / ASSIGNMENT
    assert pregraded_results(folder) is not None
    with open(folder / "predict.py", "a") as f:
        f.write("\n# changed after grading\n")
    assert pregraded_results(folder) is None


@pytest.mark.slow
def test_without_grade_all_a_hanging_notebook_grades_itself_in_the_sandbox(graded):
    """With the pre-grading off (settings.PREGRADED set) and no stored result, the hanging student's
    first test cell runs `python -m autograder grade`: the same scores, the hang stopped by the
    sandbox's per-call limit."""
    from autograder.exports.nbgrader_course import PREGRADED_DIR

    course_dir, _ = graded
    before = gradebook_scores(course_dir, "hang")
    shutil.rmtree(course_dir / PREGRADED_DIR / "hang")
    env = dict(os.environ, **{settings.PREGRADED.name: "1"},
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    done = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", "hang", "--force"],
                          cwd=course_dir, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "with grade-all first" not in done.stderr
    assert not (course_dir / PREGRADED_DIR / "hang").exists()
    assert gradebook_scores(course_dir, "hang") == pytest.approx(before, abs=1e-3)


def test_only_nbgrader_autograde_runs_the_hooks():
    from autograder.exports.nbgrader_hooks import autograding

    assert autograding(["nbgrader", "autograde", "why17"])
    assert autograding(["/x/nbgrader/__main__.py", "--debug", "autograde", "why17", "--student", "ann"])
    assert not autograding(["nbgrader", "generate_feedback", "why17"])
    assert not autograding(["nbgrader", "export", "--to", "autograde"])
    assert not autograding(["jupyter-lab"])
