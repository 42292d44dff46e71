"""nbgrader end to end: a course written by `python -m autograder nbgrader-course`, the real nbgrader
commands, its real SQLite gradebook; a reference student gets the points `python -m autograder grade`
gives per task, a stub student zero."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core import course
from autograder.exports import nbgrader_course
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test reads a course graded by the real nbgrader.
pytestmark = pytest.mark.slow

ASSIGNMENT = "why17"
REFERENCE_TABLE = (ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements" / "reference"
                   / "measurements.json")


def run(*args, cwd: Path) -> subprocess.CompletedProcess:
    # nbgrader runs the `alembic` script from PATH: put this interpreter's bin folder first, as an
    # activated virtualenv would (make test does not activate it).
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def submit(course_dir: Path, student: str, *, reference: bool, table: Path | None = None) -> Path:
    """submitted/<student>/why17: the released files; the reference one filled in like a good student;
    ``table`` a measurements.json to hand in."""
    folder = course_dir / "submitted" / student / ASSIGNMENT
    shutil.copytree(course_dir / "release" / ASSIGNMENT, folder)
    if table is not None:
        shutil.copy(table, folder / "measurements.json")
    if reference:
        for path in (ROOT / "solutions" / ASSIGNMENT).glob("*.py"):
            shutil.copy(path, folder / path.name)
        source = json.loads((course_dir / "source" / ASSIGNMENT / "why17.ipynb").read_text())
        answers = {c["metadata"]["nbgrader"]["grade_id"]: c["source"] for c in source["cells"]
                   if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
        nb = json.loads((folder / "why17.ipynb").read_text())
        for cell in nb["cells"]:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                cell["source"] = answers[grade_id]
        (folder / "why17.ipynb").write_text(json.dumps(nb))
        shutil.copy(REFERENCE_TABLE, folder / "measurements.json")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course_dir = tmp_path_factory.mktemp("course")
    run("-m", "autograder", "nbgrader-course", "--out", str(course_dir), cwd=ROOT)
    run("-m", "nbgrader", "generate_assignment", ASSIGNMENT, cwd=course_dir)
    submit(course_dir, "ref", reference=True)
    submit(course_dir, "stub", reference=False)
    submit(course_dir, "half", reference=False, table=REFERENCE_TABLE.parent.parent / "pct_inverted" /
           "measurements.json")
    run("-m", "nbgrader", "autograde", ASSIGNMENT, cwd=course_dir)
    run("-m", "nbgrader", "generate_feedback", ASSIGNMENT, cwd=course_dir)
    run("-m", "nbgrader", "export", "--to", str(course_dir / "grades.csv"), cwd=course_dir)
    return course_dir


def gradebook_scores(course_dir: Path, student: str) -> dict:
    """grade_id -> score of the autograded task cells, read from nbgrader's SQLite gradebook."""
    from nbgrader.api import Gradebook

    tasks = course.load().assignment(ASSIGNMENT).tasks
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        return {t.id: gb.find_grade(t.id, "why17", ASSIGNMENT, student).score for t in tasks}


def grader_scores(folder: Path) -> dict:
    """task id -> points the grader gave ``folder``: grade-all's results, which nbgrader's autograde
    wrote before running the notebooks (what their test cells read), of these very files."""
    results = nbgrader_course.pregraded_results(folder)
    assert results is not None, f"no grade-all results of every check for {folder}"
    scores: dict[str, float] = {}
    for test in results["tests"]:
        scores[test["task"]] = scores.get(test["task"], 0.0) + test["score"]
    return scores


def test_reference_gets_the_graders_points_per_task(graded):
    """The gradebook holds the grader's points of the same grading (the points of one grading,
    not two gradings that happen to agree)."""
    nbgrader = gradebook_scores(graded, "ref")
    ours = grader_scores(graded / "submitted" / "ref" / ASSIGNMENT)
    assert set(nbgrader) == {t.id for t in course.load().assignment(ASSIGNMENT).tasks}
    for task_id, score in nbgrader.items():
        assert score == pytest.approx(ours.get(task_id, 0.0), abs=1e-3), task_id
    assert nbgrader["task5"] == pytest.approx(course.load().assignment(ASSIGNMENT).task("task5").points, abs=1e-3)


def test_stub_gets_zero_on_every_task(graded):
    assert all(score == 0 for score in gradebook_scores(graded, "stub").values())


def test_partial_credit_reaches_the_gradebook(graded):
    """Stubs with an inverted % of ceiling: task5 fails one of its six checks, and nbgrader records
    the cell's numeric value as partial credit, the grader's points."""
    nbgrader = gradebook_scores(graded, "half")
    ours = grader_scores(graded / "submitted" / "half" / ASSIGNMENT)["task5"]
    task5 = course.load().assignment(ASSIGNMENT).task("task5").points
    assert 0 < nbgrader["task5"] < task5
    assert nbgrader["task5"] == pytest.approx(ours, abs=1e-3)
    pct = dict(course.load().assignment(ASSIGNMENT).task("task5").check_points)["measure_pct_of_ceiling"]
    assert nbgrader["task5"] == pytest.approx(task5 - pct, abs=1e-3)   # all but the % of ceiling


def test_task_cells_write_nothing_to_stderr_and_end_in_a_number(graded):
    nb = json.loads((graded / "autograded" / "ref" / ASSIGNMENT / "why17.ipynb").read_text())
    task_cells = [c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade")
                  and c["cell_type"] == "code"]
    assert len(task_cells) == len(course.load().assignment(ASSIGNMENT).tasks)
    for cell in task_cells:
        kinds = [(o["output_type"], o.get("name")) for o in cell["outputs"]]
        assert ("stream", "stderr") not in kinds and all(k != "error" for k, _ in kinds)
        result = [o for o in cell["outputs"] if o["output_type"] == "execute_result"]
        float("".join(result[0]["data"]["text/plain"]))


def test_export_and_feedback(graded):
    rows = {r["student_id"]: r for r in csv.DictReader((graded / "grades.csv").open())}
    assert set(rows) == {"ref", "stub", "half"}
    assert float(rows["stub"]["score"]) == 0.0
    assert float(rows["ref"]["score"]) == pytest.approx(sum(gradebook_scores(graded, "ref").values()), abs=1e-3)
    assert float(rows["ref"]["max_score"]) == course.load().assignment(ASSIGNMENT).max_score
    for student in ("ref", "stub", "half"):
        html = (graded / "feedback" / student / ASSIGNMENT / "why17.html").read_text()
        assert "task5" in html


def test_autograde_keeps_the_students_own_modules(graded):
    ours = (graded / "autograded" / "ref" / ASSIGNMENT / "bw.py").read_text()
    assert ours == (ROOT / "solutions" / ASSIGNMENT / "bw.py").read_text()


def test_nbgrader_course_refuses_an_unknown_assignment(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "nbgrader-course", "--out", str(tmp_path),
                           "--assignment", "nope"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "unknown assignment 'nope'" in done.stderr


def test_task_cells_grade_the_submission_as_handed_in(tmp_path):
    """While nbgrader autogrades, the notebook runs in autograded/<student>/why17 and rewrites
    measurements.json there; the task cells grade submitted/<student>/why17, as `grade` would."""
    from autograder.exports.nbgrader_course import submission_dir

    autograded = tmp_path / "autograded" / "ann" / ASSIGNMENT
    autograded.mkdir(parents=True)
    assert submission_dir(autograded) == autograded.resolve()      # no submitted copy: grade here
    submitted = tmp_path / "submitted" / "ann" / ASSIGNMENT
    submitted.mkdir(parents=True)
    assert submission_dir(autograded) == submitted.resolve()
    elsewhere = tmp_path / "mine" / "ann" / ASSIGNMENT
    elsewhere.mkdir(parents=True)
    assert submission_dir(elsewhere) == elsewhere.resolve()


def test_source_notebook_metadata(tmp_path):
    """Answers are nbgrader answer cells, each task one locked test cell worth its points."""
    run("-m", "autograder", "nbgrader-course", "--out", str(tmp_path), cwd=ROOT)
    nb = json.loads((tmp_path / "source" / ASSIGNMENT / "why17.ipynb").read_text())
    meta = [c["metadata"]["nbgrader"] for c in nb["cells"] if "nbgrader" in c.get("metadata", {})]
    tasks = course.load().assignment(ASSIGNMENT).tasks
    graded = {m["grade_id"]: m["points"] for m in meta if m["grade"] and not m["solution"]}
    assert graded == {t.id: t.points for t in tasks}
    assert sum(1 for m in meta if m["solution"] and not m["grade"]) == 1        # the Measure table
    assert sum(1 for m in meta if m["solution"] and m["grade"]) == 5            # Explain It Back
    assert len({m["grade_id"] for m in meta}) == len(meta)
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert "c.Execute.timeout" in config and "'bw.py'" in config
    assert (tmp_path / "shared" / "tables.py").is_file()
    assert (tmp_path / "source" / ASSIGNMENT / "bw.py").read_text() == \
        (course.load().assignment(ASSIGNMENT).assignments_dir / "bw.py").read_text()
