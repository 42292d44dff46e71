"""grade-all end to end, as a TA runs it: a real command, real workers, real sandboxed children.

The class (autograder/lessons/why17/fixtures/classes.py) mixes folders and zips: the reference, classic mistakes,
stubs, entries with nothing gradable, a hang, a crash and a memory hog. To keep the suite fast the
runs grade the checks that tell these apart (``--checks``) with a short per-call time limit; the
full grading of 200 submissions is bench/grade_all.py's job.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.core import settings
from autograder.lessons.why17.fixtures.classes import (
    KINDS,
    MISTAKE_OF,
    NOT_GRADABLE,
    QUICK_CHECKS,
    make_class,
    write_student,
)
from tests.batch.interrupt import sigint_as_at_a_terminal
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test runs the real grade-all (a class of 28, reruns, interrupts).
pytestmark = pytest.mark.slow

#: Every kind of the class twice (KINDS): each mistake is counted over two students, and no kind
#: is graded a third time to prove nothing more.
CLASS_SIZE = 2 * len(KINDS)
QUICK = ["--checks", ",".join(QUICK_CHECKS), "--time-limit-s", "5"]


def rows_of(out: Path) -> list[dict]:
    """Every student's row: gradebook.csv (full results and zeros without grading) and partial.csv
    (results of a --checks run with no full result to merge into, which the exports leave out)."""
    found = list(csv.DictReader((out / "gradebook.csv").open()))
    if (out / "partial.csv").exists():
        found += list(csv.DictReader((out / "partial.csv").open()))
    return sorted(found, key=lambda r: r["student"])


def grade_all(src, out, *extra, check=True, jobs=2):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--jobs", str(jobs), *QUICK, *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("class")
    kinds = make_class(base / "submissions", CLASS_SIZE)
    proc = grade_all(base / "submissions", base / "out")
    return kinds, base / "out", proc


def test_every_student_gets_results_feedback_and_a_gradebook_row(graded):
    kinds, out, proc = graded
    students = sorted(kinds)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == students
    for name in students:
        results = json.loads((out / name / "results.json").read_text())
        assert {"score", "max_score", "tests", "output"} <= set(results)
        assert (out / name / "feedback.html").read_text().startswith("<!DOCTYPE html>")
    assert [r["student"] for r in rows_of(out)] == students
    # a --checks run is partial: only the zeros without grading (whatever the checks) are grades
    exported = list(csv.DictReader((out / "gradebook.csv").open()))
    assert sorted(r["student"] for r in exported) == sorted(n for n, k in kinds.items() if k in NOT_GRADABLE)
    assert {r["checks"] for r in exported} == {"none (not graded)"}
    assert {r["checks"] for r in csv.DictReader((out / "partial.csv").open())} == {
        "partial: " + " ".join(sorted(QUICK_CHECKS))}
    assert len(list(csv.reader((out / "canvas.csv").open()))) == 2 + len(exported)
    assert "left out of gradebook.csv and canvas.csv" in proc.stderr
    assert (out / "summary.html").is_file() and (out / "canvas.csv").is_file()
    assert "found: one folder or .zip per student" in proc.stderr
    assert f"{CLASS_SIZE}/{CLASS_SIZE}" in proc.stderr


def test_summary_counts_each_mistake_exactly(graded):
    kinds, out, _ = graded
    summary = json.loads((out / "summary.json").read_text())
    counted = {m["id"]: sorted(m["who"]) for m in summary["mistakes"]}
    for mistake in set(MISTAKE_OF.values()):
        expected = sorted(n for n, k in kinds.items() if MISTAKE_OF.get(k) == mistake)
        assert counted[mistake] == expected, mistake
    # stubs, hang, crash and memory hog never produced a value: "code did not run", no mistake
    assert summary["not_run"]["who"] == sorted(
        n for n, k in kinds.items() if k in ("stubs", "hang", "crash", "memory_hog"))
    assert sorted(e["student"] for e in summary["not_graded"]) == sorted(
        n for n, k in kinds.items() if k in NOT_GRADABLE)
    assert summary["students"] == CLASS_SIZE and sum(summary["histogram"]["counts"]) == CLASS_SIZE


def test_scores_order_reference_above_mistakes_above_zero(graded):
    kinds, out, _ = graded
    total = {r["student"]: float(r["total"]) for r in rows_of(out)}
    best = {total[n] for n, k in kinds.items() if k.startswith("reference")}
    assert len({total[n] for n, k in kinds.items() if k in ("reference_folder", "reference_zip")}) == 1
    for name, kind in kinds.items():
        if kind in MISTAKE_OF:
            assert 0 < total[name] < min(best)
        if kind in NOT_GRADABLE or kind in ("stubs", "hang", "crash", "memory_hog"):
            assert total[name] == 0


def test_pathological_code_costs_only_its_own_checks(graded):
    kinds, out, _ = graded
    for name, kind in kinds.items():
        if kind in ("hang", "crash", "memory_hog"):
            results = json.loads((out / name / "results.json").read_text())
            outputs = " ".join(t["output"] for t in results["tests"] if t["check"] == "sync_present")
            assert {"hang": "did not return within", "crash": "exited with code 3",
                    "memory_hog": "MemoryError"}[kind] in outputs


def test_a_hang_past_the_grading_budget_is_charged_check_by_check_not_zeroed(tmp_path):
    """The grading's budget (--budget-s) ends a hanging submission's grading with each check
    charged on its own line; the watchdog that zeroes a worker waits well past it. With the
    watchdog below the grading's own budget, a hang was zeroed whenever a busy machine stretched
    its grading past the watchdog (CI, 2026-12-05: one of the class's two hangs)."""
    write_student(tmp_path / "in", "s000", "hang")
    grade_all(tmp_path / "in", tmp_path / "out", "--budget-s", "20", jobs=1)
    results = json.loads((tmp_path / "out" / "s000" / "results.json").read_text())
    assert "reason" not in results["grade_all"], results["output"]
    outputs = {t["check"]: t["output"] for t in results["tests"] if t["check"] != "measure_file"}
    assert all("did not return within" in out or "whole budget" in out for out in outputs.values()), outputs
    # three calls that each run their 15 s grace cannot fit a budget of 20 s: the grading's own
    # budget (the one --budget-s gives the worker) is what ended it
    assert any("whole budget" in out for out in outputs.values()), outputs


def test_unchanged_rerun_grades_nothing_and_student_and_force_regrade(graded, tmp_path):
    kinds, out, _ = graded
    stamps = {n: (out / n / "results.json").stat().st_mtime_ns for n in kinds}
    proc = grade_all(out.parent / "submissions", out)
    assert f"skipping {CLASS_SIZE} already graded" in proc.stderr
    assert {n: (out / n / "results.json").stat().st_mtime_ns for n in kinds} == stamps
    one = sorted(n for n, k in kinds.items() if k == "stubs")[0]
    grade_all(out.parent / "submissions", out, "--student", one)
    changed = [n for n in kinds if (out / n / "results.json").stat().st_mtime_ns != stamps[n]]
    assert changed == [one]
    assert len(rows_of(out)) == CLASS_SIZE


def test_changed_content_is_regraded_and_force_regrades_all(tmp_path):
    # one worker: what is regraded is the point here, not the pool (the class above has two)
    make_class(tmp_path / "s", 4, kinds=("stubs", "empty_folder", "crash", "stubs"))
    (tmp_path / "s" / "s003" / "link.py").symlink_to("/etc/passwd")   # the grader refuses it
    grade_all(tmp_path / "s", tmp_path / "o", jobs=1)
    refused = [r for r in rows_of(tmp_path / "o") if r["student"] == "s003"]
    assert refused[0]["total"] == "0" and "symlink" in refused[0]["note"]
    assert "symlink" in json.loads((tmp_path / "o" / "s003" / "results.json").read_text())["output"]
    (tmp_path / "s" / "s003" / "link.py").unlink()
    before = {n: (tmp_path / "o" / n / "results.json").stat().st_mtime_ns for n in ("s000", "s001", "s002")}
    (tmp_path / "s" / "s001" / "bw.py").write_text("def copy_bandwidth(n_bytes, iters=50, device=None):\n"
                                                   "    return 1.0\n")
    proc = grade_all(tmp_path / "s", tmp_path / "o", jobs=1)
    assert "skipping 2 already graded" in proc.stderr      # s001 and s003 changed
    after = {n: (tmp_path / "o" / n / "results.json").stat().st_mtime_ns for n in before}
    assert [n for n in before if after[n] != before[n]] == ["s001"]
    assert "symlink" not in (tmp_path / "o" / "s003" / "results.json").read_text()
    assert "nothing to grade" not in (tmp_path / "o" / "s001" / "results.json").read_text()
    grade_all(tmp_path / "s", tmp_path / "o", "--force", jobs=1)
    forced = {n: (tmp_path / "o" / n / "results.json").stat().st_mtime_ns for n in before}
    assert all(forced[n] != after[n] for n in before)


def _markers(out: Path) -> dict[str, int]:
    found = {}
    for marker in out.glob("*/.grade-all.json"):
        found[marker.parent.name] = (marker.parent / "results.json").stat().st_ino
    return found


def _workers_of(pid: int) -> list[int]:
    """Live processes started by the grade-all process ``pid``: its workers, their fork servers
    and the sandboxed children (all inherit the tag in their environment block)."""
    tag = f"{settings.BATCH_PARENT.name}={pid}".encode()
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if tag in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    alive.append(int(entry))
        except OSError:
            continue
    return alive


def _run_until(src, out, count: int, sig: int, log: Path) -> tuple[subprocess.Popen, str]:
    """Start grade-all, send ``sig`` once ``count`` students are finished; (process, its stderr)."""
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade-all", str(src), "--out",
                                 str(out), "--jobs", "2", *QUICK], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=err, text=True, preexec_fn=sigint_as_at_a_terminal)
        deadline = time.monotonic() + 600
        while len(_markers(out)) < count and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        proc.send_signal(sig)
        proc.wait(timeout=120)
    return proc, log.read_text()


def test_interrupt_and_kill_lose_nothing_finished_and_a_rerun_finishes_the_rest(tmp_path):
    kinds = make_class(tmp_path / "s", 10, kinds=("reference_folder", "bytes_once", "no_sync",
                                                  "tiny_buffer", "reference_zip", "stubs"))
    out = tmp_path / "o"
    # Ctrl-C: exit 130, class files written for what is finished
    first, err = _run_until(tmp_path / "s", out, 2, signal.SIGINT, tmp_path / "first.log")
    assert first.returncode == 130, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err
    done_after_int = _markers(out)
    assert sorted(r["student"] for r in rows_of(out)) == sorted(done_after_int)
    # SIGKILL (a power cut for the parent): nothing is written on the way out
    second, _ = _run_until(tmp_path / "s", out, len(done_after_int) + 2, signal.SIGKILL,
                           tmp_path / "second.log")
    assert second.returncode == -signal.SIGKILL
    done_before = _markers(out)
    deadline = time.monotonic() + 15
    while _workers_of(second.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _workers_of(second.pid) == [], "workers outlived the killed grade-all"
    assert 2 < len(done_before) < len(kinds)
    stamps = {n: (out / n / "results.json").stat().st_mtime_ns for n in done_before}
    third = grade_all(tmp_path / "s", out)
    assert f"skipping {len(done_before)} already graded" in third.stderr
    assert sorted(_markers(out)) == sorted(kinds)
    for name, inode in done_before.items():   # finished ones were not regraded or rewritten
        assert (out / name / "results.json").stat().st_ino == inode
        assert (out / name / "results.json").stat().st_mtime_ns == stamps[name]
    assert len(rows_of(out)) == len(kinds)
    assert not list(out.glob("*/.*.tmp")), "a temporary file survived"


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "--jobs"),
    (["--checks", "no_such_check"], "unknown check id"),
    (["--student", "nobody"], "no such student"),
])
def test_bad_usage_is_one_line_and_exit_2(tmp_path, args, message):
    make_class(tmp_path / "s", 1, kinds=("empty_folder",))
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(tmp_path / "s"),
                           "--out", str(tmp_path / "o"), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_submissions_dir_is_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "o")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "no such folder" in proc.stderr and "Traceback" not in proc.stderr
