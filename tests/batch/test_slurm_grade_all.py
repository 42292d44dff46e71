"""grade-all --executor slurm on a real single-node cluster: the same outputs as the local executor,
and a killed array task loses nothing finished; a rerun grades only its unfinished slice."""
from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.lessons.why17.fixtures.classes import KINDS, make_class
from tests.batch.interrupt import sigint_as_at_a_terminal
from tests.batch.slurm.fixtures import slurm_cluster  # noqa: F401 - fixture
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test grades through Slurm's daemons.
pytestmark = pytest.mark.slow

#: Every kind of student but the hang, which costs a whole time limit and says nothing new here.
CLASS_KINDS = tuple(k for k in KINDS if k != "hang")
#: Checks that tell the kinds apart (one GPU sanity check, the Measure table) at a test's cost.
CHECKS = "bytes_counted_twice,measure_file"
#: Outputs that must be the same whichever executor graded (--checks results are partial: they go
#: to partial.csv, not gradebook.csv; its graded_at column is the time of each run).
CLASS_FILES = ("partial.csv", "gradebook.csv", "canvas.csv", "summary.json")
#: Per-student files the store writes (results, feedback page, commit marker).
STUDENT_FILES = ("results.json", "feedback.html", ".grade-all.json")
WAIT_S = 600.0


def grade_all(src: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--checks", CHECKS, *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=WAIT_S)


def _results_without_time(out: Path, student: str) -> dict:
    data = json.loads((out / student / "results.json").read_text())
    data.pop("execution_time")
    data.get("grade_all", {}).pop("graded_at", None)
    return data


def _without_times(path: Path) -> list:
    """A class file's content, the graded_at column of a CSV left out."""
    if path.suffix != ".csv":
        return [path.read_text()]
    return [{k: v for k, v in row.items() if k != "graded_at"} for row in csv.DictReader(path.open())]


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "submissions"
    return folder, make_class(folder, 20, kinds=CLASS_KINDS)


@pytest.fixture(scope="module")
def local_out(klass, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "out"
    proc = grade_all(klass[0], out, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_slurm_and_local_executors_grade_a_class_identically(slurm_cluster, klass, local_out, tmp_path):
    src, kinds = klass
    out = tmp_path / "out"
    proc = grade_all(src, out, "--executor", "slurm", "--students-per-task", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "submitted job array" in proc.stderr and "4 tasks of up to 5 students" in proc.stderr
    assert "20/20" in proc.stderr                                  # the same progress bar, to the end
    for state in ("pending", "running", "4 done"):
        assert state in proc.stderr, f"the array's state {state!r} was never shown"
    for name in CLASS_FILES:
        assert _without_times(out / name) == _without_times(local_out / name), name
    for student in kinds:
        assert _results_without_time(out, student) == _results_without_time(local_out, student), student
    # the class is not all one score: the comparison could have failed
    totals = {row["total"] for row in csv.DictReader((out / "partial.csv").open())}
    assert len(totals) >= 3, totals


def test_a_second_run_finds_everything_graded_and_submits_nothing(slurm_cluster, klass, local_out):
    # local_out's store, graded locally, is complete for the slurm executor too: same grading key
    proc = grade_all(klass[0], local_out, "--executor", "slurm")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "skipping 20 already graded" in proc.stderr
    assert "submitted job array" not in proc.stderr


def _stat(out: Path, student: str) -> list[tuple[int, int]]:
    return [((out / student / f).stat().st_mtime_ns, (out / student / f).stat().st_ino)
            for f in STUDENT_FILES]


def test_a_killed_task_loses_nothing_finished_and_a_rerun_grades_only_its_rest(slurm_cluster, tmp_path):
    src = tmp_path / "submissions"
    # slice 0 = s000 reference, s001 hang, s002 bytes_once; slice 1 = s003..s005, graded beside it.
    # The hang keeps task 0 busy for a whole time limit after s000 is saved: the kill lands inside
    # the slice, whatever the machine's speed.
    kinds = make_class(src, 6, kinds=("reference_folder", "hang", "bytes_once", "reference_zip",
                                      "no_sync", "stubs"))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
            "--checks", "bytes_counted_twice", "--time-limit-s", "15", "--executor", "slurm",
            "--students-per-task", "3"]
    first = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (out / "s000" / ".grade-all.json").is_file():
            assert first.poll() is None, first.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "task 0 never saved its first student"
            time.sleep(0.1)
        (run,) = list((out / ".slurm").iterdir())
        job = json.loads((run / "job.json").read_text())["job_id"]
        subprocess.run(["scancel", f"{job}_0"], check=True, timeout=60)
        _, err = first.communicate(timeout=WAIT_S)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 1, err[-2000:]
    assert f"task {job}_0 (CANCELLED" in err and "left 2 of 3 students ungraded (s001, s002)" in err
    assert "2 students not graded: rerun the same command" in err
    finished = ["s000", "s003", "s004", "s005"]
    before = {s: _stat(out, s) for s in finished}
    assert not (out / "s001" / ".grade-all.json").exists() and not (out / "s002" / ".grade-all.json").exists()

    second = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "skipping 4 already graded" in second.stderr and "1 tasks of up to 3 students" in second.stderr
    runs = sorted((out / ".slurm").iterdir())
    manifest = json.loads((runs[-1] / "manifest.json").read_text())
    assert [[j["student"] for j in part] for part in manifest["slices"]] == [["s001", "s002"]]
    assert {s: _stat(out, s) for s in finished} == before      # not one finished file rewritten
    rows = (out / "partial.csv").read_text().splitlines()[1:]
    assert sorted(r.split(",")[0] for r in rows) == sorted(kinds)
    hang = _results_without_time(out, "s001")
    assert hang["score"] == 0 and "15 s" in json.dumps(hang["tests"])   # graded: the hang's timeout


def test_no_second_array_while_an_earlier_one_still_grades_into_out(slurm_cluster, tmp_path):
    src = tmp_path / "submissions"
    make_class(src, 1, kinds=("hang",))          # keeps its task busy for a whole time limit
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
            "--checks", "bytes_counted_twice", "--time-limit-s", "30", "--executor", "slurm"]
    first = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    job = None
    try:
        deadline = time.monotonic() + WAIT_S
        while job is None:
            assert first.poll() is None and time.monotonic() < deadline, "the array was never submitted"
            jobs = list(out.glob(".slurm/*/job.json"))
            job = json.loads(jobs[0].read_text())["job_id"] if jobs else None
            time.sleep(0.1)
        first.kill()                                   # the submitting host goes away; the array does not
        first.wait(timeout=60)
        second = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)
    finally:
        if first.poll() is None:
            first.kill()
        if job is not None:
            subprocess.run(["scancel", job], timeout=60)
    assert second.returncode == 2
    assert f"job array {job} of an earlier run is still grading into it" in second.stderr
    assert f"scancel {job}" in second.stderr and "Traceback" not in second.stderr
    assert len(list(out.glob(".slurm/*"))) == 1      # nothing else was submitted


def test_a_request_the_cluster_cannot_meet_is_one_line_exit_2(slurm_cluster, tmp_path):
    src = tmp_path / "submissions"
    make_class(src, 1, kinds=("reference_folder",))
    proc = grade_all(src, tmp_path / "out", "--executor", "slurm", "--gpus-per-task", "1")
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: sbatch failed") and "Traceback" not in proc.stderr


@pytest.mark.parametrize("flag", [["--partition", "gpu"], ["--gpus-per-task", "1"],
                                  ["--sbatch-arg=--qos=short"]])
def test_cluster_options_without_the_slurm_executor_are_refused(tmp_path, flag):
    src = tmp_path / "submissions"
    make_class(src, 1, kinds=("stubs",))
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out",
                           str(tmp_path / "out"), *flag], cwd=ROOT, capture_output=True, text=True,
                          timeout=WAIT_S)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {flag[0].split('=')[0]}: only with --executor slurm"


def test_ctrl_c_cancels_the_array_and_exits_130(slurm_cluster, tmp_path):
    from autograder.batch.executors.slurm import queue
    src = tmp_path / "submissions"
    make_class(src, 1, kinds=("hang",))
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                            "--checks", "bytes_counted_twice", "--time-limit-s", "30",
                            "--executor", "slurm"], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
    try:
        deadline = time.monotonic() + WAIT_S
        while not list(out.glob(".slurm/*/job.json")):
            assert run.poll() is None and time.monotonic() < deadline, "the array was never submitted"
            time.sleep(0.1)
        time.sleep(1.0)                       # let the driver reach its polling loop
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=WAIT_S)
    finally:
        if run.poll() is None:
            run.kill()
    job = json.loads(next(out.glob(".slurm/*/job.json")).read_text())["job_id"]
    assert run.returncode == 130, err[-2000:]
    assert f"cancelled job array {job}" in err and "Traceback" not in err
    deadline = time.monotonic() + WAIT_S
    while queue.category(queue.task_states(job).get(0, "")) != queue.FAILED:
        assert time.monotonic() < deadline, queue.task_states(job)
        time.sleep(0.5)
    assert queue.task_states(job)[0].startswith("CANCELLED")
