"""``python -m shared.submit``: the graded files come from course.yml, a missing one refuses the zip,
the public tests are run and reported per task, and the zip it writes is one the grader accepts.

Every run is the real command in a child process, in a student's working folder (course.yml,
shared/ and assignments/why17, as tests/helpers/public_runs.py lays it out).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.core import course
from shared.submit import plan
from tests.helpers.public_runs import ROOT, student_tree

#: Slow, left out of `make check`: every test runs python -m shared.submit and its child pytest.
pytestmark = pytest.mark.slow

ASSIGNMENT = course.load().assignment("why17")
MEASUREMENTS = ROOT / "autograder/lessons/why17/fixtures/measurements/reference/measurements.json"
SECONDS = 900


def submit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shared.submit", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=SECONDS, env=_env())


def _env() -> dict:
    import os
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}


def finished(where: Path, fixture: str | None = None, measurements: bool = True) -> Path:
    """A student's top folder whose lab has every graded file (the notebook, the Measure table)."""
    top = student_tree(where, fixture=fixture)
    lab = top / "assignments" / "why17"
    shutil.copyfile(ROOT / "solutions" / "why17" / "why17.ipynb", lab / "why17.ipynb")
    if measurements:
        shutil.copyfile(MEASUREMENTS, lab / "measurements.json")
    return top


# -- what is graded -----------------------------------------------------------------------------

def test_the_plan_is_the_graders_list_of_handed_in_files(tmp_path):
    the_plan = plan.load(finished(tmp_path) / "assignments" / "why17")
    assert the_plan.files == ASSIGNMENT.handed_in
    assert {t.id: t.files for t in the_plan.tasks} == {t.id: t.handed_in for t in ASSIGNMENT.tasks}
    assert "measurements.json" in the_plan.files and "why17.ipynb" in the_plan.files


def test_a_file_course_yml_adds_to_a_task_is_required_too(tmp_path):
    top = finished(tmp_path)
    text = (top / "course.yml").read_text(encoding="utf-8")
    marker = "        functions: [roofline.plot_roofline, roofline.plot_batch_curve]\n"
    assert marker in text
    (top / "course.yml").write_text(text.replace(marker, marker + "        files: [answers.md]\n"), encoding="utf-8")
    run = submit("--no-tests", cwd=top)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "answers.md (missing), graded in task4" in run.stderr


# -- refusing ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def no_measurements(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    top = finished(tmp_path_factory.mktemp("no-measurements"), measurements=False)
    return top, submit("--no-tests", cwd=top)


def test_a_folder_without_measurements_json_is_refused_in_one_line(no_measurements):
    top, run = no_measurements
    assert run.returncode == 1
    [line] = run.stderr.splitlines()
    assert line.startswith("python -m shared.submit: refused:") and "measurements.json (missing)" in line
    assert "task5 (8 points)" in line and "--allow-missing" in line and "why17.ipynb" in line
    assert not (top / "why17-submission.zip").exists()
    assert "MISSING: measurements.json" in run.stdout


def test_allow_missing_writes_the_zip_without_it_and_says_what_it_costs(tmp_path):
    top = finished(tmp_path, measurements=False)
    run = submit("--no-tests", "--allow-missing", cwd=top)
    assert run.returncode == 0, run.stderr
    assert "warning: handing in without measurements.json" in run.stdout
    with zipfile.ZipFile(top / "why17-submission.zip") as zf:
        assert sorted(zf.namelist()) == sorted(n for n in ASSIGNMENT.handed_in if n != "measurements.json")


def test_a_measurements_json_that_is_not_json_is_refused(tmp_path):
    top = finished(tmp_path)
    (top / "assignments" / "why17" / "measurements.json").write_text("{ not json", encoding="utf-8")
    run = submit("--no-tests", cwd=top)
    assert run.returncode == 1 and "measurements.json (not valid JSON)" in run.stderr


SIMULATED = ROOT / "autograder/lessons/why17/fixtures/measurements"


@pytest.mark.parametrize("case", ["simulated_run", "simulated_by_name"])
def test_a_simulated_measure_table_is_refused_unless_allowed(tmp_path, case):
    """The Measure table grades the student's own machine: a run on the simulated GPU (recorded by
    the notebook, or shown by the device's name) is refused in one line, and handed in with a
    warning under --allow-simulated."""
    top = finished(tmp_path)
    shutil.copyfile(SIMULATED / case / "measurements.json", top / "assignments" / "why17" / "measurements.json")
    run = submit("--no-tests", cwd=top)
    assert run.returncode == 1, run.stdout + run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith("python -m shared.submit: refused: measurements.json:") and "simulated" in line
    assert "--allow-simulated" in line and "your CPU or GPU" in line
    # the grade of such a file keeps task5's points for a file that is there (1.5 of 8): no "8 points at stake"
    assert "of task5's 8 points, only those for a present, readable file remain" in line
    assert not (top / "why17-submission.zip").exists()
    run = submit("--no-tests", "--allow-simulated", cwd=top)
    assert run.returncode == 0, run.stderr
    assert "warning: handing in a simulated run" in run.stdout
    assert (top / "why17-submission.zip").is_file()


@pytest.mark.parametrize("args, says", [
    (["no/such/folder"], "no such folder"),
    (["--no-such-option"], "unrecognized arguments"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, says):
    run = submit(*args, cwd=finished(tmp_path))
    assert run.returncode == 2 and len(run.stderr.splitlines()) == 1 and says in run.stderr


def test_a_folder_outside_any_course_is_named(tmp_path):
    (tmp_path / "lab").mkdir()
    run = submit(str(tmp_path / "lab"), cwd=finished(tmp_path))
    assert run.returncode == 2 and "no course.yml" in run.stderr and len(run.stderr.splitlines()) == 1


def test_a_measure_table_older_than_the_code_is_warned_about(tmp_path):
    import os
    top = finished(tmp_path)
    lab = top / "assignments" / "why17"
    written = (lab / "measurements.json").stat().st_mtime
    os.utime(lab / "bw.py", (written + 60, written + 60))
    run = submit("--no-tests", cwd=top)
    assert run.returncode == 0 and "warning: measurements.json is older than bw.py" in run.stdout


# -- the public tests, and the grader taking the zip -------------------------------------------------

@pytest.fixture(scope="module")
def submitted(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    top = finished(tmp_path_factory.mktemp("finished"))
    return top, submit("assignments/why17", cwd=top)


def test_a_finished_lab_runs_its_public_tests_and_lists_each_task(submitted):
    _top, run = submitted
    assert run.returncode == 0, run.stdout + run.stderr
    for task in ASSIGNMENT.tasks:
        assert f"{task.id}  {task.points:g} points  {task.title}" in run.stdout
    for line in ("graded: bw.py", "graded: why17.ipynb, measurements.json"):
        assert line in run.stdout
    tasks_with_tests = [t.id for t in ASSIGNMENT.tasks if t.functions]
    blocks = run.stdout.split("\n\n")
    for task_id in tasks_with_tests:
        block = next(b for b in blocks if b.startswith(task_id + " "))
        assert "passed" in block and "failed" not in block, block
    assert "wrote " in run.stdout and "why17-submission.zip" in run.stdout


def test_the_grader_accepts_the_zip_and_grades_every_file(submitted, tmp_path):
    top, run = submitted
    archive = top / "why17-submission.zip"
    with zipfile.ZipFile(archive) as zf:
        assert sorted(zf.namelist()) == sorted(ASSIGNMENT.handed_in)
    out = tmp_path / "results.json"
    graded = subprocess.run([sys.executable, "-m", "autograder", "grade", str(archive), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=SECONDS)
    assert graded.returncode == 0, graded.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["score"] == pytest.approx(ASSIGNMENT.max_score)
    assert all(t["status"] == "passed" for t in results["tests"])


def test_failing_public_tests_are_reported_under_their_task_but_do_not_refuse(tmp_path):
    top = finished(tmp_path, fixture="public_wrong/wrong_units")   # predict.py reads GB/s as GiB/s
    run = submit(cwd=top)
    assert run.returncode == 0, run.stdout + run.stderr
    blocks = {b.split(" ", 1)[0]: b for b in run.stdout.split("\n\n") if b.startswith("task")}
    assert "failed" in blocks["task3"] and "\n    - assert" in blocks["task3"], blocks["task3"]
    # bw.py and flops.py are right: their tasks say so (roofline.py draws with this predict.py, so task4 may fail)
    assert "failed" not in blocks["task1"] + blocks["task2"]
    assert "public test(s) failed" in run.stdout


def test_a_module_that_does_not_import_is_named_and_the_other_tasks_still_run(tmp_path):
    top = finished(tmp_path)
    bw = top / "assignments" / "why17" / "bw.py"
    lines = bw.read_text(encoding="utf-8").count("\n")
    bw.write_text(bw.read_text(encoding="utf-8") + "def broken(:\n", encoding="utf-8")
    run = submit(cwd=top)
    assert run.returncode == 0, run.stdout + run.stderr
    blocks = {b.split(" ", 1)[0]: b for b in run.stdout.split("\n\n") if b.startswith("task")}
    assert "none ran" in blocks["task1"] and "passed" in blocks["task2"] and "passed" in blocks["task3"]
    assert (f"test_bw.py could not be loaded, so none of them ran: bw.py line {lines + 1}: SyntaxError"
            in run.stdout)
