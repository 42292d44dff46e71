"""The people loop on a real Moodle download, graded by the real grade-all (the tiny course,
given a notebook of two hand-graded questions and a manual item): review, a regrade request, the
next run applying both, the feedback zip and the Moodle worksheet carrying them."""
from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile

import pytest
import yaml

from tests.batch import lms_layouts
from tests.helpers.tiny_course import TINY, cli


def _notebook(answers: tuple[str, str]) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Doubling, explained"}]
    for n, (question, answer) in enumerate(zip(("**1. Why does doubling need no loop?**",
                                                 "**2. What does double(1.5) return?**"), answers), start=1):
        cells.append({"cell_type": "markdown", "source": f"{question}\n\n{answer}", "metadata": {
            "nbgrader": {"grade": True, "solution": True, "locked": False, "grade_id": f"q{n}",
                         "points": 0, "cell_type": "markdown", "schema_version": 3}}})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _course(tmp_path):
    folder = tmp_path / "course"
    shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("__pycache__", "submissions"))
    data = yaml.safe_load((folder / "course.yml").read_text())
    data["assignments"]["tiny"]["tasks"][0]["files"] = ["answers.ipynb"]
    data["assignments"]["tiny"]["manual"] = [{"id": "explain", "title": "Explain it", "points": 4}]
    (folder / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    (folder / "assignments" / "tiny").mkdir(parents=True)
    (folder / "assignments" / "tiny" / "answers.ipynb").write_text(_notebook(("YOUR ANSWER HERE",) * 2))
    return folder


@pytest.mark.slow
def test_review_and_a_regrade_reach_the_gradebook_the_feedback_zip_and_the_worksheet(tmp_path):
    course, root, out = _course(tmp_path), tmp_path / "download", tmp_path / "out"
    lms_layouts.moodle_flat(root)
    (root / "Ada Lovelace_12345_assignsubmission_file_answers.ipynb").write_text(
        _notebook(("It is one multiply.", "3.0")))
    grade = ("--course", course, "grade-all", root, "--out", out, "--jobs", "1")
    first = cli(*grade)
    assert first.returncode == 0, first.stderr[-2000:]

    (tmp_path / "review.txt").write_text("2\nclear\n1.5\nright, say why\n0\nno answer\n0\nno answer\n")
    review = cli("--course", course, "review", root, "--out", out, "--grader", "TA Kim",
                 "--answers", tmp_path / "review.txt")
    assert review.returncode == 0, review.stderr
    assert "It is one multiply." in review.stdout and "(no answer: no answers.ipynb in the submission)" in review.stdout

    (tmp_path / "requests.csv").write_text("student,check,message\n12346,doubles_like_reference,integers work\n")
    (tmp_path / "decide.txt").write_text("a\n5\nright for integers\n")
    decide = cli("--course", course, "regrade-requests", tmp_path / "requests.csv", "--out", out,
                 "--decide", "--grader", "TA Lee", "--answers", tmp_path / "decide.txt")
    assert decide.returncode == 0, decide.stderr

    second = cli(*grade)
    assert second.returncode == 0, second.stderr[-2000:]
    rows = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert (rows["Ada_Lovelace_12345"]["explain"], rows["Ada_Lovelace_12345"]["total"]) == ("3.5", "13.5")
    assert (rows["Charles_Babbage_12346"]["double"], rows["Charles_Babbage_12346"]["total"]) == ("5", "5")

    zipped = cli("--course", course, "feedback-zip", root, "--out", out)
    assert zipped.returncode == 0, zipped.stderr
    with zipfile.ZipFile(out / "feedback-moodle.zip") as zf:
        page = zf.read("Ada Lovelace_12345_assignsubmission_file_/tiny-feedback.html").decode()
        assert "Q1 2/2: clear; Q2 1.5/2: right, say why" in page and "TA Kim" in page
        assert "right for integers" in zf.read(
            "Charles Babbage_12346_assignsubmission_file_/tiny-feedback.html").decode()

    sheet = cli("--course", course, "moodle-worksheet", "--out", out)
    assert sheet.returncode == 0, sheet.stderr
    graded = {r["Identifier"]: r for r in csv.DictReader(io.StringIO((out / "moodle-worksheet.csv").read_text()))}
    assert (graded["Participant 12345"]["Grade"], graded["Participant 12345"]["Maximum Grade"]) == ("13.5", "14")
    assert "regrade request accepted: right for integers" in graded["Participant 12346"]["Feedback comments"]
