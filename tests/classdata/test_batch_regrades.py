"""The regrade log: a grade-all run that changes a stored result appends to OUT/regrades.csv
(student, check, old and new score, reason: a changed check or a changed submission), and the
class summary lists the students whose totals changed.

The changed check: carol is graded, then her stored result is put back to what an earlier
version of sync_present left (a score of 0, that check file's older fingerprint and the grading
key of that grader). The rerun, without --force, sees the key change, regrades her and logs why.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.batch import fingerprint
from autograder.classdata import regrades
from autograder.lessons.why17.fixtures.classes import SOLUTION, write_student
from tests.helpers.paths import ROOT


def grade_all(src, out, *extra):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--jobs", "1", *extra], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def log(out: Path) -> list[dict]:
    return list(csv.DictReader((out / "regrades.csv").open())) if (out / "regrades.csv").exists() else []


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("regrade")
    write_student(base / "class", "carol", "bytes_once")
    grade_all(base / "class", base / "out")
    return base


@pytest.mark.slow
def test_a_first_grading_and_an_unchanged_rerun_log_nothing(graded):
    out = graded / "out"
    assert log(out) == []
    proc = grade_all(graded / "class", out)
    assert "skipping 1 already graded" in proc.stderr and log(out) == []


@pytest.mark.slow
def test_a_changed_check_is_logged_with_its_reason(graded):
    out = graded / "out"
    path = out / "carol" / "results.json"
    results = json.loads(path.read_text())
    fresh = {t["name"]: t["score"] for t in results["tests"] if t["check"] == "sync_present"}
    assert fresh and all(score > 0 for score in fresh.values())
    # what the older sync_present left: 0 points, its file's older fingerprint, the older grader's key
    for test in results["tests"]:
        if test["check"] == "sync_present":
            test["score"], test["status"] = 0.0, "failed"
    results["score"] = sum(t["score"] for t in results["tests"])
    fps = results["grade_all"]["fingerprints"]
    module = fps["sync_present"].split(":")[0]
    fps["sync_present"] = f"{module}:000000000000"
    path.write_text(json.dumps(results))
    marker = out / "carol" / ".grade-all.json"
    stored = json.loads(marker.read_text())
    stored["key"] = "an-older-grader"
    marker.write_text(json.dumps(stored))
    old_total = results["score"]

    proc = grade_all(graded / "class", out)
    assert "regrades:" in proc.stderr and "regrades.csv" in proc.stderr
    rows = log(out)
    checks = {r["check"]: r for r in rows}
    assert set(checks) == {"sync_present", regrades.TOTAL}       # nothing else changed
    row = checks["sync_present"]
    assert (row["student"], float(row["old_score"]), float(row["new_score"])) == (
        "carol", 0.0, pytest.approx(sum(fresh.values())))
    assert row["reason"] == f"changed check sync_present ({module})"
    total = checks[regrades.TOTAL]
    assert float(total["old_score"]) == pytest.approx(old_total, abs=1e-3)
    assert float(total["new_score"]) == pytest.approx(old_total + sum(fresh.values()), abs=1e-3)
    summary = json.loads((out / "summary.json").read_text())
    assert [r["student"] for r in summary["regraded"]] == ["carol"]
    html = (out / "summary.html").read_text()
    assert "Regrades that changed a total" in html and "changed check sync_present" in html


@pytest.mark.slow
def test_a_changed_submission_is_logged_and_appended(graded):
    out = graded / "out"
    old_rows = log(out)
    before = len(old_rows)
    (graded / "class" / "carol" / "bw.py").write_text((SOLUTION / "bw.py").read_text())   # fixed
    grade_all(graded / "class", out)
    rows = log(out)[before:]
    assert rows and log(out)[:before] == old_rows   # appended; the earlier rows stay
    changed = {r["check"]: r for r in rows}
    assert "bytes_counted_twice" in changed and changed["bytes_counted_twice"]["reason"] == "changed submission"
    assert float(changed["bytes_counted_twice"]["new_score"]) > float(changed["bytes_counted_twice"]["old_score"])
    assert changed[regrades.TOTAL]["student"] == "carol"


def test_editing_a_check_file_a_module_it_imports_or_the_reference_changes_the_fingerprint(tmp_path, monkeypatch):
    package = tmp_path / "tmpgrader15"
    (package / "checks").mkdir(parents=True)
    (package / "__init__.py").write_text("from autograder.api import Lesson\n"
                                         "LESSON = Lesson(package=__name__, checks=__name__ + '.checks')\n")
    (package / "checks" / "__init__.py").write_text("")
    (package / "checks" / "one.py").write_text("from tmpgrader15 import helper\nLIMIT = 1\n")
    (package / "helper.py").write_text("from .deep import rule\n")
    (package / "deep").mkdir()
    (package / "deep" / "__init__.py").write_text("")
    (package / "deep" / "rule.py").write_text("RULE = 1\n")
    (package / "fixtures").mkdir()
    (package / "fixtures" / "x.py").write_text("a = 1\n")
    solutions = tmp_path / "solutions" / "tmp15"
    solutions.mkdir(parents=True)
    (solutions / "double.py").write_text("def double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class Asg:
        grader = "tmpgrader15"
        solutions_dir = solutions

    def digest():
        fingerprint._manifest.cache_clear()
        return fingerprint.grader_digest(Asg)

    first = digest()
    (package / "fixtures" / "x.py").write_text("a = 2\n")        # fixtures do not grade
    assert digest() == first
    seen = {first}
    for path, text in ((package / "checks" / "one.py", "from tmpgrader15 import helper\nLIMIT = 2\n"),
                       (package / "cases.json", "[1]\n"),                 # data a check reads
                       (package / "deep" / "rule.py", "RULE = 2\n"),     # reached through imports
                       (solutions / "double.py", "def double(x):\n    return x + x\n")):   # the reference
        path.write_text(text)
        now = digest()
        assert now not in seen, path
        seen.add(now)
    fingerprint._manifest.cache_clear()


def test_every_file_that_decides_a_verdict_is_fingerprinted():
    """The engine's GPU checks, the simulated GPU, the lesson's GPU rubric, the reference and the
    grader package; not its fixtures nor what only records or reports a grading."""
    from autograder.core import course
    asg = course.load().assignment("why17")
    names = {p.relative_to(ROOT).as_posix() for p in fingerprint.deciding_files(asg)}
    for needed in ("autograder/gpu/checks.py", "autograder/grading/grade.py", "autograder/runtime/child.py",
                   "shared/simgpu/judging.py", "shared/simgpu/device.py", "shared/data/simgpu.yml",
                   "shared/lessons/why17/gpu/rubric.py", "shared/validate.py", "solutions/why17/bw.py",
                   "autograder/lessons/why17/checks/bw_cpu.py", "autograder/lessons/why17/mistakes.yml"):
        assert needed in names, needed
    assert not [n for n in names if "/fixtures/" in n or n.startswith(("autograder/reports/", "autograder/batch/"))]


def test_the_log_names_the_files_and_settings_a_new_grading_key_changed(tmp_path):
    regrades.remember_key(tmp_path, "old", {"shared/simgpu/judging.py": "a", "solutions/why17/bw.py": "b"},
                          {"device": "sim", "course.yml tasks": [1]})
    regrades.remember_key(tmp_path, "new", {"shared/simgpu/judging.py": "c", "solutions/why17/bw.py": "b"},
                          {"device": "sim", "course.yml tasks": [2]})
    assert regrades.key_change(tmp_path, "old", "new") == (
        "changed shared/simgpu/judging.py; changed course.yml tasks")
    assert regrades.key_change(tmp_path, "old", "unknown").startswith("changed grading key (")
