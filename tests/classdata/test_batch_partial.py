"""Exports never lie: a grading of some checks (--checks, --student) merges into the student's
stored full result, or, with no full result, is marked partial and left out of gradebook.csv and
canvas.csv with a one-line warning. The case that once lost a total: carol, fully graded, then
``grade-all CLASS --out OUT --student carol --checks sync_present``, keeps her total in both files."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.classdata import partial
from autograder.lessons.why17.fixtures.classes import write_student
from tests.helpers.paths import ROOT


def grade_all(src, out, *extra):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(src), "--out", str(out),
                           "--jobs", "1", *extra], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def gradebook(out: Path, name: str = "gradebook.csv") -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((out / name).open())}


def canvas(out: Path) -> dict[str, str]:
    rows = list(csv.reader((out / "canvas.csv").open()))
    return {r[3]: r[-1] for r in rows[2:]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("partial")
    write_student(base / "class", "carol", "bytes_once")   # a mistake: a total below the maximum
    write_student(base / "class", "dave", "stubs")
    grade_all(base / "class", base / "out", "--student", "carol")          # her full grading
    return base


@pytest.mark.slow
def test_a_partial_rerun_keeps_carols_total_in_both_exports(graded):
    out = graded / "out"
    before = gradebook(out)["carol"]
    total = float(before["total"])
    assert 0 < total < float(before["max_score"]) and before["checks"] == "all"
    assert canvas(out)["carol"] == before["total"]
    tests_before = json.loads((out / "carol" / "results.json").read_text())["tests"]
    proc = grade_all(graded / "class", out, "--student", "carol", "--checks", "sync_present")
    after = gradebook(out)["carol"]
    assert float(after["total"]) == total and canvas(out)["carol"] == before["total"]
    assert {k: after[k] for k in ("task1", "task2", "task3", "task4", "task5")} == {
        k: before[k] for k in ("task1", "task2", "task3", "task4", "task5")}
    assert after["checks"] == "all" and "sync_present regraded" in after["graded_at"]
    results = json.loads((out / "carol" / "results.json").read_text())
    assert results["score"] == pytest.approx(total, abs=0.01)
    assert len(results["tests"]) == len(tests_before)         # every check still there
    assert "warning" not in proc.stderr


@pytest.mark.slow
def test_a_partial_grading_with_no_full_result_is_kept_out_of_the_exports(graded):
    out = graded / "out"
    proc = grade_all(graded / "class", out, "--checks", "sync_present,bytes_counted_twice")
    assert "skipping 1 already graded" in proc.stderr        # carol's full result answers it
    assert "dave" not in gradebook(out) and "dave" not in canvas(out)
    assert "carol" in gradebook(out)
    (row,) = gradebook(out, "partial.csv").values()
    assert row["student"] == "dave" and row["checks"] == "partial: bytes_counted_twice sync_present"
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "dave" in warnings[0] and "left out of gradebook.csv and canvas.csv" in warnings[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] == ["dave"]
    assert "partial result" in (out / "summary.html").read_text()


def test_merge_replaces_the_regraded_checks_only():
    def t(name, check, score):
        return {"name": name, "check": check, "score": score, "max_score": 5, "task": "task1"}
    full = partial.mark({"score": 13, "tests": [t("a [sync_present]", "sync_present", 5),
                                                t("b [bytes_counted_twice]", "bytes_counted_twice", 0),
                                                t("c [sync_present]", "sync_present", 5),
                                                t("d [units_gb_per_s]", "units_gb_per_s", 3)]},
                        None, "2026-12-01T07:00:00Z")
    part = partial.mark({"score": 1, "tests": [t("a [sync_present]", "sync_present", 1),
                                               t("e [sync_present]", "sync_present", 0)]},
                        {"sync_present"}, "2026-12-01T08:00:00Z")
    merged = partial.merge(full, part, {"sync_present"}, "2026-12-01T08:00:00Z")
    assert [(x["name"], x["score"]) for x in merged["tests"]] == [
        ("a [sync_present]", 1), ("b [bytes_counted_twice]", 0), ("d [units_gb_per_s]", 3),
        ("e [sync_present]", 0)]
    assert merged["score"] == 4 and not partial.is_partial(merged)
    assert partial.coverage(merged) == ("all", "2026-12-01T07:00:00Z; sync_present regraded 2026-12-01T08:00:00Z")
    assert partial.coverage(part) == ("partial: sync_present", "2026-12-01T08:00:00Z")
