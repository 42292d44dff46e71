"""A term's record a TA can trust, on the tiny course with real command lines: submission times
that no rerun, copy or --force moves; one intake at any depth; a group's one grade; a record that
only grows (absent students, late batches, make clean).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.batch import record_classes as rc
from tests.helpers.paths import ROOT
from tests.helpers.tiny_course import cli

COMPARED_EXPORTS = ("gradebook.csv", "canvas.csv", "checks.csv")


def _copy_download(src: Path, dest: Path) -> None:
    """``cp -r``, as a TA copies a download: every time in the copy is now."""
    subprocess.run(["cp", "-r", str(src), str(dest)], check=True)
    rc.stamp_all(dest, rc.LATE.replace(year=2027))


def _without(rows: list[dict], *columns) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in columns} for r in rows]


@pytest.mark.slow
def test_a_class_in_every_layout_graded_twice_with_a_copy_between_gives_identical_gradebooks(tmp_path):
    """Gradescope (a group, a late one), nbgrader, Moodle with folders and without (loose files,
    dated by the worksheet given to the first run only), Canvas (LATE, anonymized, a re-upload), a
    plain folder (a zip one folder deeper, a late zip, a notebook alone), an online-text-only
    Moodle student: graded, copied with cp -r, graded again and with --force, nothing moves."""
    course = rc.course(tmp_path, late=rc.POLICY)
    seen = 0
    for name, make in rc.LAYOUTS.items():
        src, copy, out = tmp_path / name, tmp_path / f"{name}-copy", tmp_path / f"out-{name}"
        expected = make(src)
        first = rc.grade(src, out, course, *rc.first_run_args(name, src))
        assert first.returncode == 0, (name, first.stderr[-2000:])
        assert "warning: most of the class" not in first.stderr, name
        totals = rc.by_student(out / "gradebook.csv")
        seen += len(rc.rows(out / "gradebook.csv"))
        for student, total in expected.items():
            assert float(totals[student]["total"]) == total, (name, student, totals[student])
        before = {f: (out / f).read_text() for f in COMPARED_EXPORTS}
        _copy_download(src, copy)
        again = rc.grade(copy, out, course)
        assert again.returncode == 0, (name, again.stderr[-2000:])
        assert f"skipping {len(totals) if name != 'gradescope' else 2} already graded" in again.stderr, name
        assert {f: (out / f).read_text() for f in COMPARED_EXPORTS} == before, name
        forced = rc.grade(copy, out, course, "--force")
        assert forced.returncode == 0, (name, forced.stderr[-2000:])
        assert _without(rc.rows(out / "gradebook.csv"), "graded_at") == _without(
            rc.rows_of_text(before["gradebook.csv"]), "graded_at"), name
    assert seen == 19   # 18 submissions; the Gradescope group gives its two members a row each


@pytest.mark.slow
def test_a_zip_one_folder_deeper_is_graded_by_grade_all_as_grade_grades_it(tmp_path):
    course = rc.course(tmp_path)
    src = tmp_path / "class"
    rc.zip_of(src / "dave" / "dave.zip", {"dave/work/deep/tiny/double.py": rc.GOOD})
    rc.write(src / "ann" / "double.py", rc.GOOD)
    proc = rc.grade(src, tmp_path / "out", course)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = rc.by_student(tmp_path / "out" / "gradebook.csv")
    assert (rows["dave"]["total"], rows["dave"]["note"]) == ("10", "")
    single = cli("grade", src / "dave", "--course", course, "--out", tmp_path / "dave.json")
    assert single.returncode == 0, single.stderr[-2000:]
    assert json.loads((tmp_path / "dave.json").read_text())["score"] == 10


def test_grade_all_pointed_one_level_too_high_says_so_and_grades_nobody(tmp_path):
    course = rc.course(tmp_path)
    root = tmp_path / "term"
    for term in ("fall", "spring"):
        for student in ("ann", "bob", "cy"):
            rc.write(root / term / student / "double.py", rc.GOOD)
    proc = rc.grade(root, tmp_path / "out", course)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: {root}: a folder of classes, not of students (fall, spring each hold submissions of "
        f"their own); point SUBMISSIONS_DIR at one of them")
    assert not (tmp_path / "out" / "gradebook.csv").exists()


@pytest.mark.slow
def test_an_override_names_one_group_member_only_by_the_group(tmp_path):
    course = rc.course(tmp_path)
    src, out = tmp_path / "export", tmp_path / "out"
    rc.gradescope(src)
    first = rc.grade(src, out, course)
    assert first.returncode == 0, first.stderr[-2000:]
    overrides = out / "overrides.csv"
    overrides.write_text("student,item,points,delta,reason,grader\n502,total,,-3,copied,TA Kim\n")
    refused = rc.grade(src, out, course)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1:] == [
        f"error: {overrides} row 2: '502' handed in with a group (Fay Group, Gus Group): one submission, one "
        f"grade, so this override would change every member's; to change the group's grade write student "
        f"group:501"]
    overrides.write_text("student,item,points,delta,reason,grader\ngroup:501,total,,-3,late demo,TA Kim\n")
    applied = rc.grade(src, out, course)
    assert applied.returncode == 0, applied.stderr[-2000:]
    totals = {r["sid"]: r["total"] for r in rc.rows(out / "gradebook.csv")}
    assert totals == {"501": "7", "502": "7", "503": "10"}


@pytest.mark.slow
def test_the_record_only_grows_absent_students_a_late_batch_and_stale_overrides(tmp_path):
    course = rc.course(tmp_path)
    first_batch, late_batch, out = tmp_path / "batch1", tmp_path / "batch2", tmp_path / "out"
    rc.write(first_batch / "ann" / "double.py", rc.GOOD)
    rc.write(first_batch / "bob" / "double.py", rc.WRONG)
    rc.write(late_batch / "cy" / "double.py", rc.GOOD)
    assert rc.grade(first_batch, out, course).returncode == 0
    (out / "overrides.csv").write_text("student,item,points,delta,reason,grader\n"
                                       "bob,total,,2,regrade accepted,TA Kim\nzed,total,,1,typo,TA Kim\n")
    proc = rc.grade(late_batch, out, course)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (f"warning: {out / 'overrides.csv'} row 3: no student 'zed' in the submissions (give the folder "
            f"name, SID, email or name); the row is not applied") in proc.stderr
    assert "kept 2 student(s) graded before but not in this download, marked absent" in proc.stderr
    rows = rc.by_student(out / "gradebook.csv")
    assert {s: r["total"] for s, r in rows.items()} == {"ann": "10", "bob": "2", "cy": "10"}
    assert rows["ann"]["note"].startswith("not in this download") and rows["cy"]["note"] == ""
    canvas = (out / "canvas.csv").read_text()
    assert all(name in canvas for name in ("ann", "bob", "cy"))
    mode = os.stat(out / "gradebook.csv").st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask and os.stat(out / "ann" / "results.json").st_mode & 0o777 == mode


def test_make_clean_keeps_the_terms_record(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    for kept in ("out/grades/gradebook.csv", "out/grades/overrides.csv", "out/why17-grades/regrades.csv"):
        rc.write(tmp_path / kept, "x\n")
    for gone in ("out/demo/summary.html", "out/demo-class/ann/bw.py", "out/why17-student.zip"):
        rc.write(tmp_path / gone, "x\n")
    proc = subprocess.run(["make", "-C", str(tmp_path), "clean", "VENV=.venv-none", "PYTHON=python3"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "out/grades/gradebook.csv", "out/grades/overrides.csv", "out/why17-grades/regrades.csv"]


@pytest.mark.slow
def test_a_delta_past_an_items_points_is_kept_within_them_with_a_warning(tmp_path):
    course = rc.course(tmp_path)
    src, out = tmp_path / "class", tmp_path / "out"
    rc.write(src / "ann" / "double.py", rc.GOOD)
    rc.write(src / "bob" / "double.py", rc.WRONG)
    assert rc.grade(src, out, course).returncode == 0
    overrides = out / "overrides.csv"
    overrides.write_text("student,item,points,delta,reason,grader\n"
                         "ann,doubles_like_reference,,3,bonus for style,TA Kim\n"
                         "bob,total,,-2,late demo,TA Kim\n")
    proc = rc.grade(src, out, course)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (f"warning: {overrides} row 2: ann's doubles_like_reference would score 13 with delta +3, "
            f"outside 0 to 10; counted as 10") in proc.stderr
    assert (f"warning: {overrides} row 3: bob's total would score -2 with delta -2, outside 0 to 10; "
            f"counted as 0") in proc.stderr
    rows = rc.by_student(out / "gradebook.csv")
    assert {s: r["total"] for s, r in rows.items()} == {"ann": "10", "bob": "0"}
    assert rows["ann"]["overrides"] == ("doubles_like_reference 10 (was 10; delta +3 kept within 0 to 10): "
                                        "bonus for style")
    again = rc.grade(src, out, course)
    assert again.stderr.count(f"warning: {overrides} row 2:") == 1


@pytest.mark.slow
def test_a_notebook_handed_in_alone_is_a_zero_whose_note_says_why(tmp_path):
    course = rc.course(tmp_path)
    data = yaml.safe_load((course / "course.yml").read_text())
    data["assignments"]["tiny"]["tasks"][0]["files"] = ["tiny.ipynb"]   # as why17 grades its notebook
    (course / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    src, out = tmp_path / "class", tmp_path / "out"
    rc.write(src / "ann" / "double.py", rc.GOOD)
    rc.write(src / "ann" / "tiny.ipynb", "{}")
    rc.write(src / "nb" / "work" / "tiny.ipynb", "{}")
    proc = rc.grade(src, out, course)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = rc.by_student(out / "gradebook.csv")
    said = ("nothing graded: only a notebook (tiny.ipynb) was handed in: the grader reads double.py as "
            "files, not the notebook; hand them in beside it")
    assert (rows["nb"]["total"], rows["nb"]["note"]) == ("0", said)
    assert (rows["ann"]["total"], rows["ann"]["note"]) == ("10", "")
    summary = json.loads((out / "summary.json").read_text())
    assert {"student": "nb", "reason": said} in summary["not_graded"]
    assert said in (out / "summary.html").read_text()
