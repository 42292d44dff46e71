"""Hostile intake (autograder/lessons/why17/fixtures/intake.py): zips that clash, overflow the file
system's names, lie about their size or count, nest a bomb; a measurements.json nested 100,000
deep, with a 400-digit number, a superscript digit or the wrong encoding; a predict.py of 6 MiB.
Each gets one line naming the file and the problem, charged to that student (grade: exit 2;
grade-all: a zero with the line; a measurements.json: task 5's checks), never a traceback, a
"grader failed" or a grader that grows by the size of what it parsed."""
from __future__ import annotations

import ast
import csv
import json
import shutil
import subprocess
import sys
import tracemalloc

import pytest

from autograder.classdata import discover
from autograder.core import course, submission, ziplimits
from autograder.grading.grade import grade_submission, handed_in
from autograder.lessons.why17.fixtures import intake
from autograder.sandbox import imports
from tests.helpers.paths import ROOT

ASG = course.load().assignment("why17")
MEASURE = {"measure_file", "measure_ceiling_own_bw", "measure_pct_of_ceiling", "measure_not_above_ceiling",
           "measure_bw_plausible", "measure_ridge_point"}
ZIPS = sorted(intake.ZIPS, key=lambda f: f.__name__)
#: (module, function) calls that parse Python source.
PARSERS = {("ast", "parse"), ("tokenize", "tokenize"), ("tokenize", "generate_tokens"), ("builtins", "compile")}


@pytest.mark.parametrize("build", [pytest.param(f, marks=pytest.mark.slow) if f is intake.nested_bomb else f
                                   for f in ZIPS], ids=[f.__name__ for f in ZIPS])   # the bomb: seconds
def test_a_hostile_zip_is_one_line_or_graded(build, tmp_path):
    path = build(tmp_path)
    refused, words = intake.ZIPS[build]
    if refused:
        with pytest.raises(submission.SubmissionError) as info:
            submission.load(path, handed_in(ASG))
        message = str(info.value)
        assert message.startswith(f"{path}: ") and words in message and "\n" not in message, message
    else:
        with submission.load(path, handed_in(ASG)) as sub:
            assert {"bw.py", "predict.py", "extra/bomb.zip"} <= set(sub.files)
            assert (sub.folder / "extra" / "bomb.zip").stat().st_size < 2**20   # never opened
    problem = discover.problem_of(path, discover.gradable_names(ASG))
    assert problem is None or ("\n" not in problem and problem.startswith("nothing to grade: ")), problem


def test_the_end_record_refuses_before_the_central_directory_is_read(tmp_path):
    """The count refused is the one the end record claims (the directory holds 4 entries)."""
    path = intake.declared_entries(tmp_path)
    with pytest.raises(ziplimits.ZipRefused, match="holds 65534 entries"):
        ziplimits.check(path)


@pytest.mark.parametrize("build", [intake.name_clash, intake.long_folder_name, intake.lzma_damaged, intake.bad_crc],
                         ids=lambda f: f.__name__)
def test_grade_answers_a_hostile_zip_with_one_line_and_exit_2(build, tmp_path):
    path = build(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(path), "--out", str(tmp_path / "r.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and intake.ZIPS[build][1] in lines[0], lines


@pytest.mark.slow
def test_grade_all_gives_each_hostile_zip_a_zero_with_its_line(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    for build in ZIPS:
        shutil.move(build(tmp_path / "built" / build.__name__), klass / f"{build.__name__}.zip")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(klass), "--out", str(out),
                           "--jobs", "1", "--checks", "measure_file"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    # the refused in gradebook.csv with their zero; the graded one (with --checks) in partial.csv
    rows = {r["student"] for name in ("gradebook.csv", "partial.csv")
            for r in csv.DictReader((out / name).open())}
    assert rows == {b.__name__ for b in ZIPS}
    for build in ZIPS:
        refused, words = intake.ZIPS[build]
        words = {intake.not_a_zip: "not_a_zip.zip is not a readable zip file"}.get(build, words)   # discovery's line
        results = json.loads((out / build.__name__ / "results.json").read_text())
        if refused:
            reason = results["grade_all"]["reason"]
            assert words in reason and "\n" not in reason and "grader failed" not in reason, reason
        else:
            assert results["tests"], results["output"]


@pytest.mark.parametrize("name", sorted(intake.TABLES))
def test_a_malformed_measurements_json_gets_task5s_message(name, tmp_path):
    folder = tmp_path / name
    folder.mkdir()
    make, words = intake.TABLES[name]
    (folder / "measurements.json").write_bytes(make())
    results = grade_submission(folder, device="cpu", only=MEASURE)
    for test in results["tests"]:
        assert test["outcome"] == "failed", test
        assert words in test["output"] and "\n" not in test["output"], test["output"]
        assert "could not interpret" not in test["output"]


def test_a_giant_source_file_is_never_parsed_in_the_grader(tmp_path):
    folder = intake.giant_literal(tmp_path)
    assert (folder / "predict.py").stat().st_size > 5 * 2**20
    tracemalloc.start()
    try:
        assert imports.imports_only(folder, "predict") is False
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak   # the bounded read (64 KiB), not the 6 MiB parsed (gigabytes)


def test_the_grader_parses_student_source_only_through_the_bounded_reader():
    """Every ast.parse / compile / tokenize in the grader's own code (not the child's runtime,
    not fixtures) is in a place that bounds the bytes first."""
    bounded = {("autograder/sandbox/imports.py", "parse"),
               ("autograder/sandbox/inprocess.py", "compile"),    # the jail and runner: grader code
               ("autograder/sandbox/forkserver/child.py", "compile"),   # python -c CODE: the caller's
               ("autograder/sandbox/jail.py", "compile"),         # confine.py, rootfs.py: grader code
               ("autograder/grading/preflight.py", "compile"),      # the reference solution: the course's
               ("autograder/similarity/dictated.py", "parse"),    # the released stubs: the course's
               ("autograder/batch/fingerprint.py", "parse")}      # the grader's and reference's imports
    found = set()
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if "/fixtures/" in rel or rel.startswith("autograder/runtime/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                fn = node.func
                if isinstance(fn, ast.Name) and fn.id == "compile":
                    found.add((rel, "compile"))
                elif isinstance(fn, ast.Attribute) and (getattr(fn.value, "id", ""), fn.attr) in PARSERS:
                    found.add((rel, fn.attr))
    assert found <= bounded, found - bounded
