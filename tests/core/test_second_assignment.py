"""A second assignment needs a course.yml entry and a grader package, no engine change.

tests/fixtures/tiny_course is a course of its own: one assignment (``tiny``), one task, one function
with a solution region, a grader package ``tiny_grader`` beside its course.yml with one check, one
wrong submission (squares instead of doubling) and one correct one in another style. The course is
copied outside the checkout and graded, generated and checked through the real command line.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from autograder.core import course
from autograder.grading.grade import load_checks
from tests.helpers.tiny_course import TINY, cli, copy_of_tiny


@pytest.fixture
def tiny(tmp_path) -> Path:
    """A copy of the tiny course outside the checkout (generate writes into it)."""
    return copy_of_tiny(tmp_path)


def grade(folder: Path, submission: Path, out: Path) -> dict:
    proc = cli("grade", submission, "--assignment", "tiny", "--course", folder, "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == f"course: {folder / 'course.yml'}"
    return json.loads(out.read_text())


def test_the_tiny_course_has_its_own_tasks_folders_and_checks():
    asg = course.load(TINY / "course.yml").assignment("tiny")
    assert asg.solutions_dir == TINY / "solutions" / "tiny"
    assert asg.assignments_dir == TINY / "assignments" / "tiny"
    assert [t.id for t in asg.tasks] == ["double"] and asg.max_score == 10
    checks = load_checks(asg)
    assert set(checks) == {"doubles_like_reference"}          # none of why17's checks leak in
    assert checks["doubles_like_reference"].task == "double"
    assert "doubles_like_reference" not in load_checks(course.load().assignment("why17"))


@pytest.mark.slow
def test_wrong_fails_and_good_passes_end_to_end(tiny, tmp_path):
    wrong = grade(tiny, tiny / "submissions" / "wrong_squares", tmp_path / "wrong.json")
    good = grade(tiny, tiny / "submissions" / "good_adds", tmp_path / "good.json")
    assert (wrong["score"], wrong["max_score"]) == (0, 10)
    assert [t["status"] for t in wrong["tests"]] == ["failed"]
    assert wrong["tests"][0]["outcome"] == "failed"            # a value came back: the mistake seen
    assert "double(1.5) returned 2.25, expected 3" in wrong["tests"][0]["output"]
    assert (good["score"], good["max_score"]) == (10, 10)
    assert [(t["check"], t["status"]) for t in good["tests"]] == [("doubles_like_reference", "passed")]


def test_generate_replaces_the_region_and_the_stub_fails_loudly(tiny, tmp_path):
    made = cli("generate", "--course", tiny, "--assignment", "tiny")
    assert made.returncode == 0, made.stderr
    stub = (tiny / "assignments" / "tiny" / "double.py").read_text()
    assert "raise NotImplementedError('double.1: double')" in stub
    assert "return 2 * x" not in stub and "### BEGIN SOLUTION" not in stub
    assert '"""Twice ``x``, in the unit of ``x``."""' in stub            # the docstring stays
    assert cli("generate", "--course", tiny, "--check").returncode == 0
    (tiny / "solutions" / "tiny" / "double.py").write_text("def double(x):\n    return x + x\n")
    drifted = cli("generate", "--course", tiny, "--check")
    assert drifted.returncode == 1 and "drift: assignments/tiny/double.py" in drifted.stderr


def test_release_bundles_the_tiny_course_and_none_of_its_grader(tiny, tmp_path):
    proc = cli("release", "tiny", "--out", tmp_path / "out", "--course", tiny)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "out" / "tiny-student.zip") as zf:
        names = set(zf.namelist())
        stub = zf.read("tiny-student/assignments/tiny/double.py").decode()
        assert zf.read("tiny-student/course.yml") == (tiny / "course.yml").read_bytes()
    assert "raise NotImplementedError('double.1: double')" in stub and "return 2 * x" not in stub
    assert "tiny-student/README.md" in names and "tiny-student/shared/course_file.py" in names
    assert not [n for n in names if "tiny_grader" in n or "solutions" in n or "submissions" in n]


@pytest.mark.slow
@pytest.mark.parametrize("name,status,words", [
    ("gpu_good_events", "passed", "waits for the device"),
    ("gpu_wrong_no_sync", "failed", "synchronize before reading the clock"),
    ("gpu_forged_constant", "failed", "does not follow the device"),
])
def test_a_second_assignment_brings_its_own_gpu_rubric(tiny, tmp_path, name, status, words):
    # tinygpu's rubric lives in its grader package alone (tiny_gpu_grader/checks/fill.py); the
    # engine runs it on the simulated GPU behind its probe, as it runs why17's.
    proc = cli("grade", tiny / "submissions" / name, "--assignment", "tinygpu", "--course", tiny,
               "--out", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    tests = {t["check"]: t for t in json.loads((tmp_path / "r.json").read_text())["tests"]}
    assert set(tests) == {"fill_waits"}
    assert tests["fill_waits"]["status"] == status and words in tests["fill_waits"]["output"]
