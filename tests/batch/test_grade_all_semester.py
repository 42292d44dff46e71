"""grade-all through a semester, as a TA runs it on the tiny course (tests/fixtures/tiny_course):
the preflight of the course, grader failures never exported as numbers, overrides and manual
scores that stick, extensions kept with the class, the per-check CSV, and LMS downloads.

Real command lines, real workers and sandboxes; one job each to spare the machine.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.batch import lms_layouts
from tests.batch.record_classes import by_student as _by_student
from tests.batch.record_classes import course as _course
from tests.batch.record_classes import grade as _grade
from tests.batch.record_classes import rows as _rows
from tests.helpers.tiny_course import TINY

GOOD = TINY / "submissions" / "good_adds"
WRONG = TINY / "submissions" / "wrong_squares"


def _class(tmp_path: Path, **students: Path) -> Path:
    root = tmp_path / "class"
    for name, src in students.items():
        shutil.copytree(src, root / name)
    return root


# --- the preflight and grader failures --------------------------------------------------------

def test_preflight_refuses_a_course_without_its_solutions_and_grades_nobody(tmp_path):
    course = _course(tmp_path)
    shutil.rmtree(course / "solutions")
    out = tmp_path / "out"
    proc = _grade(_class(tmp_path, ann=GOOD), out, course)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {course / 'course.yml'}: assignment 'tiny': no reference solution folder "
        f"{course / 'solutions' / 'tiny'} (every grading compares with it); nobody was graded"]
    assert not out.exists()


def test_preflight_refuses_a_reference_that_is_not_python(tmp_path):
    course = _course(tmp_path)
    (course / "solutions" / "tiny" / "double.py").write_text("def double(x):\n    return 2 *\n")
    proc = _grade(_class(tmp_path, ann=GOOD), tmp_path / "out", course)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "double.py line 2 is not valid Python" in proc.stderr and "nobody was graded" in proc.stderr


@pytest.mark.slow
def test_a_grader_failure_is_never_exported_as_a_number_and_a_rerun_retries_it(tmp_path):
    course = _course(tmp_path)
    reference = course / "solutions" / "tiny" / "double.py"
    fixed = reference.read_text()
    reference.write_text('raise RuntimeError("the reference is broken")\n' + fixed)   # compiles, fails to import
    src, out = _class(tmp_path, ann=GOOD, bob=WRONG), tmp_path / "out"
    proc = _grade(src, out, course)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "error: the grader itself failed on 2 student(s): ann, bob" in proc.stderr
    rows = _by_student(out / "gradebook.csv")
    for row in rows.values():
        assert (row["double"], row["raw_total"], row["total"]) == ("", "", "")
        assert row["note"].startswith("GRADER FAILED, not a grade: the reference solution failed")
    canvas = list(csv.reader((out / "canvas.csv").open()))
    assert [r[-1] for r in canvas[2:]] == ["", ""]
    checks = _by_student(out / "checks.csv")
    assert checks["ann"]["total"] == "" and checks["ann"]["note"].startswith("GRADER FAILED")
    results = json.loads((out / "ann" / "results.json").read_text())
    assert results["score"] is None and "not your score" in results["output"]
    summary = json.loads((out / "summary.json").read_text())
    assert [e["student"] for e in summary["grader_failed"]] == ["ann", "bob"] and summary["students"] == 0
    reference.write_text(fixed)            # the grader fixed: the same command grades them
    again = _grade(src, out, course)
    assert again.returncode == 0, again.stderr[-2000:]
    rows = _by_student(out / "gradebook.csv")
    assert (rows["ann"]["total"], rows["bob"]["total"]) == ("10", "0")
    assert not (out / "regrades.csv").exists()      # a failure had no score to change from


# --- overrides and manual scores --------------------------------------------------------------

MANUAL = [{"id": "explain", "title": "Explain It Back", "points": 5}]


@pytest.mark.slow
def test_overrides_and_manual_scores_stick_across_reruns(tmp_path):
    course = _course(tmp_path, manual=MANUAL)
    src, out = _class(tmp_path, ann=GOOD, bob=WRONG, cy=WRONG), tmp_path / "out"
    first = _grade(src, out, course)
    assert first.returncode == 0, first.stderr[-2000:]
    assert (out / "overrides.csv").read_text() == "student,item,points,delta,reason,grader\n"
    rows = _by_student(out / "gradebook.csv")
    assert rows["ann"]["explain"] == "" and rows["ann"]["total"] == "10" and rows["ann"]["max_score"] == "15"
    assert f"manual item explain: scored for 0 of 3 student(s); score the rest in {out / 'overrides.csv'}" \
        in first.stderr
    (out / "overrides.csv").write_text(
        "student,item,points,delta,reason,grader\n"
        "ann,explain,4,,clear answer,TA Kim\n"
        "bob,doubles_like_reference,6,,regrade request accepted,TA Kim\n"
        "cy,total,,2,\"+2, regrade request accepted\",TA Lee\n")
    for extra in ((), ("--force",)):        # a rerun, then a full regrade: the overrides stay
        proc = _grade(src, out, course, *extra)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rows = _by_student(out / "gradebook.csv")
        assert (rows["ann"]["explain"], rows["ann"]["total"]) == ("4", "14")
        assert (rows["bob"]["double"], rows["bob"]["total"]) == ("6", "6")
        assert (rows["cy"]["double"], rows["cy"]["total"]) == ("0", "2")
        assert rows["bob"]["overrides"] == "doubles_like_reference 6 (was 0): regrade request accepted"
        assert "manual item explain: scored for 1 of 3 student(s)" in proc.stderr
        assert list(csv.reader((out / "canvas.csv").open()))[2:] == [
            ["ann", "", "", "ann", "", "14"], ["bob", "", "", "bob", "", "6"], ["cy", "", "", "cy", "", "2"]]
        bob = json.loads((out / "bob" / "results.json").read_text())
        assert bob["score"] == 6 and bob["overrides"][0]["reason"] == "regrade request accepted"
        page = (out / "cy" / "feedback.html").read_text()
        assert "Scores changed by the course staff" in page and "+2, regrade request accepted" in page
    assert (out / "overrides.csv").read_text().count("\n") == 4       # never rewritten
    logged = [r for r in _rows(out / "regrades.csv") if r["check"].startswith("override")]
    assert sorted((r["student"], r["check"], r["new_score"]) for r in logged) == [
        ("ann", "override explain", "4"), ("bob", "override doubles_like_reference", "6"),
        ("cy", "override total", "2")]                                  # logged once, not per run
    checks = _by_student(out / "checks.csv")
    assert (checks["Points Possible"]["doubles_like_reference"], checks["Points Possible"]["explain"]) == ("10", "5")
    bob, ann = checks["bob"], checks["ann"]
    assert (bob["doubles_like_reference"], ann["explain"], bob["explain"]) == ("6", "4", "")


def test_bad_override_rows_are_a_line_each_and_nothing_is_graded(tmp_path):
    course = _course(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "overrides.csv").write_text("student,item,points,delta,reason,grader\n"
                                       "zed,double,1,,x,\nann,nope,1,,x,\nann,double,20,,x,\n"
                                       "ann,double,,,x,\nann,double,3,,,\n")
    proc = _grade(_class(tmp_path, ann=GOOD), out, course)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    path = out / "overrides.csv"
    assert (f"warning: {path} row 2: no student 'zed' in the submissions (give the folder name, SID, email "
            f"or name); the row is not applied") in proc.stderr   # a student absent from the download
    assert errors == [
        f"error: {path} row 3: 'nope' is not a check, task or manual item of tiny, nor 'total'",
        f"error: {path} row 4: points must be a number from 0 to 10 (task double), got '20'",
        f"error: {path} row 5: give points (the task's new score) or delta (points added), one of them",
        f"error: {path} row 6: no reason (the student sees it on their feedback page)"]
    assert not (out / "ann").exists()


@pytest.mark.slow
def test_a_hand_edited_gradebook_is_kept_aside_with_a_warning(tmp_path):
    course = _course(tmp_path)
    src, out = _class(tmp_path, ann=WRONG), tmp_path / "out"
    assert _grade(src, out, course).returncode == 0
    original = (out / "gradebook.csv").read_text()
    edited = original.replace(",0,0,0,10,", ",9,9,0,9,")
    assert edited != original
    (out / "gradebook.csv").write_text(edited)
    proc = _grade(src, out, course)
    assert proc.returncode == 0
    aside = [p for p in out.iterdir() if p.name.startswith("gradebook.csv.edited-")]
    assert len(aside) == 1 and aside[0].read_text() == edited
    assert f"warning: {out / 'gradebook.csv'} was edited since grade-all wrote it" in proc.stderr
    assert "overrides.csv" in proc.stderr and _by_student(out / "gradebook.csv")["ann"]["total"] == "0"


# --- extensions -------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_extension_once_given_is_kept_and_changing_it_is_explicit(tmp_path):
    late = {"due": "2026-12-01T23:59:00Z", "policy": "percent_per_day", "percent_per_day": 10}
    course = _course(tmp_path, late=late)
    src, out = _class(tmp_path, ann=GOOD, bob=GOOD), tmp_path / "out"
    stamp = 1796428800   # 2026-12-05T00:00:00Z: 4 started days after the due date
    for path in src.rglob("*"):
        os.utime(path, (stamp, stamp))
    given = tmp_path / "ext.csv"
    given.write_text("student,days\nbob,5\n")
    first = _grade(src, out, course, "--extensions", given)
    assert first.returncode == 0, first.stderr[-2000:]
    assert f"extensions in force ({out / 'extensions.csv'}): bob 5 days" in first.stderr
    assert {s: r["total"] for s, r in _by_student(out / "gradebook.csv").items()} == {"ann": "6", "bob": "10"}
    again = _grade(src, out, course)                        # no flag: the extension stays
    assert again.returncode == 0 and "bob 5 days" in again.stderr
    assert _by_student(out / "gradebook.csv")["bob"]["total"] == "10"
    given.write_text("student,days\nbob,1\n")
    changed = _grade(src, out, course, "--extensions", given)
    assert changed.returncode == 2
    assert changed.stderr.strip().splitlines()[-1] == (
        f"error: {given}: 'bob' has 1 days, but {out / 'extensions.csv'} already gives 5 days; "
        f"to change an extension, edit {out / 'extensions.csv'}")
    kept = (out / "extensions.csv").read_text().replace("bob,5,", "bob,1,")
    (out / "extensions.csv").write_text(kept)                # the explicit change
    edited = _grade(src, out, course)
    assert edited.returncode == 0 and "bob 1 days" in edited.stderr
    assert _by_student(out / "gradebook.csv")["bob"]["total"] == "7"


# --- LMS downloads ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("layout", sorted(lms_layouts.LAYOUTS))
def test_lms_downloads_are_read_as_they_come(tmp_path, layout):
    make, words = lms_layouts.LAYOUTS[layout]
    src, out = tmp_path / "download", tmp_path / "out"
    expected = make(src)
    course = _course(tmp_path)
    proc = _grade(src, out, course)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"found: {words} in {src}" in proc.stderr
    rows = _by_student(out / "gradebook.csv")
    assert sorted(rows) == sorted(expected)
    for student, (name, lms_id, points) in expected.items():
        row = rows[student]
        assert (row["name"], row["lms_id"], float(row["total"])) == (name, lms_id, points), student
    canvas = {r[0]: r for r in csv.reader((out / "canvas.csv").open())}
    for name, lms_id, points in expected.values():
        assert canvas[name][1] == lms_id and float(canvas[name][-1]) == points
    if layout == "canvas":
        assert "1 student(s) marked LATE by Canvas: babbagecharles" in proc.stderr
    rerun = _grade(src, out, course)                # the staged copies hash the same
    assert f"skipping {len(expected)} already graded" in rerun.stderr


# --- the pieces, without a run ----------------------------------------------------------------

def test_manual_items_are_checked_like_every_course_key(tmp_path):
    from autograder.core import course
    from autograder.core.errors import UsageError
    clash = _course(tmp_path / "clash", manual=[{"id": "double", "title": "clash", "points": 2}])
    with pytest.raises(UsageError, match=r"manual\[0\]\.id' 'double' is already a task"):
        course.load(clash / "course.yml")
    folder = _course(tmp_path / "good", manual=[{"id": "explain", "title": "x", "points": 2}])
    asg = course.load(folder / "course.yml").assignment("tiny")
    assert [m.id for m in asg.manual] == ["explain"] and asg.max_score == 12


def test_applying_overrides_twice_or_taking_them_back_gives_the_grader_s_results():
    from autograder.classdata import overrides
    from autograder.core import course
    asg = course.load(TINY / "course.yml").assignment("tiny")
    graded = {"score": 4.0, "tests": [{"name": "double d [doubles_like_reference]", "task": "double",
                                       "check": "doubles_like_reference", "score": 4.0, "max_score": 10.0}]}
    rows = [overrides.Override("ann", "doubles_like_reference", 7.0, None, "regrade", "TA", 2),
            overrides.Override("ann", "total", None, -1.0, "late file", "TA", 3)]
    once = overrides.apply(graded, rows, asg)
    assert once["score"] == 6.0 and [o["points"] for o in once["overrides"]] == [7.0, 6.0]
    assert overrides.apply(once, rows, asg) == once
    assert overrides.strip(once) == {**graded, "score": 4.0}
    assert overrides.apply(once, [], asg)["tests"] == graded["tests"]


def test_points_past_a_weighted_checks_share_are_kept_within_it_and_said(tmp_path):
    """A check worth 5 of its task's 10 (split by weight): overrides.csv accepts points up to the
    task's 10, so 8 is kept at the check's 5, said in the gradebook cell and in a warning line."""
    import io

    from autograder.batch import class_files
    from autograder.classdata import overrides
    from autograder.core import course
    asg = course.load(TINY / "course.yml").assignment("tiny")
    graded = {"score": 4.0, "tests": [{"name": "double d [doubles_like_reference]", "task": "double",
                                       "check": "doubles_like_reference", "score": 4.0, "max_score": 5.0}]}
    row = overrides.Override("ann", "doubles_like_reference", 8.0, None, "regrade", "TA", 2)
    applied = overrides.apply(graded, [row], asg)
    assert applied["score"] == 5.0
    assert overrides.describe(applied) == "doubles_like_reference 5 (was 4; points 8 kept within 0 to 5): regrade"
    said = io.StringIO()
    class_files._warn_clamped(tmp_path, "ann", applied, said)
    assert said.getvalue() == (f"warning: {tmp_path / 'overrides.csv'} row 2: ann's doubles_like_reference "
                               f"would score 8 with points 8, outside 0 to 5; counted as 5\n")


def test_a_saving_that_did_not_read_overrides_csv_keeps_the_stored_overrides(tmp_path):
    """A Slurm task saves its grading without reading OUT/overrides.csv: the stored overrides stay,
    and nothing is logged as removed."""
    from autograder.batch import record
    from autograder.classdata import overrides, store
    from autograder.classdata.discover import Member, Submission
    from autograder.core import course
    asg = course.load(TINY / "course.yml").assignment("tiny")
    graded = {"score": 4.0, "tests": [{"name": "double d [doubles_like_reference]", "task": "double",
                                       "check": "doubles_like_reference", "score": 4.0, "max_score": 10.0}]}
    row = overrides.Override("ann", "doubles_like_reference", 7.0, None, "regrade", "TA", 2)
    sub = Submission("ann", tmp_path, (Member("ann"),))
    with store.Store(tmp_path / "out", "key") as st:
        common = dict(store=st, asg=asg, only=None, key="key", full_key="key", run_at="2026-12-02T08:00:00Z",
                      extensions={}, stream=None)
        record.record(record.Context(**common, overrides_of={"ann": [row]}), sub, "digest", graded, 1.0)
        saved = record.record(record.Context(**common), sub, "digest", graded, 1.0)   # the Slurm task's call
        assert saved["score"] == 7.0 and saved["overrides"][0]["reason"] == "regrade"
        assert st.regraded == 0 and not (tmp_path / "out" / "regrades.csv").exists()
