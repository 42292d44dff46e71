"""``review``: the hand-graded answers scored student by student in the terminal, written to
overrides.csv as grade-all reads it; real notebooks, folders and zips, the real command line."""
from __future__ import annotations

import dataclasses
import json

import pytest

from autograder.classdata import discover
from autograder.core import course
from autograder.core.course import ManualItem
from autograder.core.errors import UsageError
from autograder.people import answers, ledger, review
from tests.helpers.tiny_course import cli
from tests.people import classes

EXPLAIN = [{"id": "explain", "title": "Explain It Back answers", "points": 5}]


def _class(tmp_path):
    root = tmp_path / "class"
    classes.hand_in_folder(root, "ann", classes.answered({n: f"Ann's answer {n}." for n in range(1, 6)}))
    classes.hand_in_zip(root, "bob", classes.answered({1: "Bob: bytes per token.", 4: "Bob: prefill."}))
    (root / "cy").mkdir()
    (root / "cy" / "bw.py").write_text("def copy_bandwidth(n_bytes, iters=50, device=None):\n    return 1.0\n")
    return root


def _review(course_dir, root, out, answers_text, *extra, tmp_path):
    given = tmp_path / "answers.txt"
    given.write_text(answers_text)
    return cli("--course", course_dir, "review", root, "--out", out, "--grader", "TA Kim",
               "--answers", given, *extra)


def test_a_review_writes_a_row_per_student_and_resumes_where_it_stopped(tmp_path):
    course_dir, root, out = classes.why17_course(tmp_path, EXPLAIN), _class(tmp_path), tmp_path / "out"
    first = _review(course_dir, root, out, "1\nright\n0.5\nhalf\n1\nok\n1\nok\n0\nmissed\n1\nq\n", tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Ann's answer 2." in first.stdout and "**2. Your measurements came in below" in first.stdout
    assert (out / "overrides.csv").read_text().splitlines() == [
        "student,item,points,delta,reason,grader",
        "ann,explain,3.5,,Q1 1/1: right; Q2 0.5/1: half; Q3 1/1: ok; Q4 1/1: ok; Q5 0/1: missed,TA Kim"]
    assert "1 row(s) written" in first.stdout and "2 left (run the same command to resume)" in first.stdout

    second = _review(course_dir, root, out, "1\nyes\n0\nnone\n0\nnone\n1\nyes\n0\nnone\n" + "0\nnothing\n" * 5,
                     tmp_path=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "2 to score (1 already in overrides.csv)" in second.stdout
    assert "Ann's answer" not in second.stdout                       # scored: not asked again
    assert "Bob: bytes per token." in second.stdout and "Bob: prefill." in second.stdout
    assert "(no answer: no why17.ipynb in the submission)" in second.stdout
    asg = course.load(course_dir / "course.yml").assignment("why17")
    rows = ledger.existing(out, discover.discover(root, asg), asg)     # read as grade-all reads it
    assert {s: (o.points, o.grader) for (s, _), o in rows.items()} == {
        "ann": (3.5, "TA Kim"), "bob": (2.0, "TA Kim"), "cy": (0.0, "TA Kim")}


def test_a_gradescope_groups_answers_are_scored_once_for_the_group(tmp_path):
    """A group handed in one notebook and has one grade: its row names the group, as grade-all
    takes it (a row naming one member would stop grade-all)."""
    course_dir, out = classes.why17_course(tmp_path, EXPLAIN), tmp_path / "out"
    root = classes.gradescope_group(tmp_path / "export", {"why17.ipynb": json.dumps(classes.answered({1: "Ours."}))})
    done = _review(course_dir, root, out, "1\nright\n" + "0\nnone\n" * 4, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "overrides.csv").read_text().splitlines()[1:] == [
        "group:501,explain,1,,Q1 1/1: right; Q2 0/1: none; Q3 0/1: none; Q4 0/1: none; Q5 0/1: none,TA Kim"]
    asg = course.load(course_dir / "course.yml").assignment("why17")
    rows = ledger.existing(out, discover.discover(root, asg), asg)     # read as grade-all reads it
    assert {s: o.points for (s, _), o in rows.items()} == {"501": 1.0}


def test_points_out_of_range_and_an_empty_reason_are_asked_again(tmp_path):
    course_dir, root, out = classes.why17_course(tmp_path, EXPLAIN), _class(tmp_path), tmp_path / "out"
    proc = _review(course_dir, root, out, "2\nabc\n1\n\nclear\n", "--student", "ann", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("give a number from 0 to 1") == 2
    assert "a reason is required" in proc.stdout
    assert "0 row(s) written" in proc.stdout                         # the input ended mid-student


def test_a_course_that_gives_the_answers_no_points_is_refused_in_one_line(tmp_path):
    root, out = _class(tmp_path), tmp_path / "out"
    proc = cli("review", root, "--out", out, "--grader", "TA Kim")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "no points" in proc.stderr and "manual" in proc.stderr


def test_an_unknown_student_is_one_line(tmp_path):
    course_dir, root, out = classes.why17_course(tmp_path, EXPLAIN), _class(tmp_path), tmp_path / "out"
    proc = _review(course_dir, root, out, "", "--student", "zed", tmp_path=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "error: --student zed: no such student in the submissions (give the folder name, SID, email or name)")


def _asg(manual):
    asg = course.load(classes.ROOT / "course.yml").assignment("why17")
    return dataclasses.replace(asg, manual=tuple(ManualItem(**m) for m in manual))


def test_an_item_named_after_a_question_scores_it_alone_and_the_rest_share_the_other():
    asg = _asg([{"id": "explain-it-back-1", "title": "Q1", "points": 2.0},
                {"id": "explain", "title": "the rest", "points": 4.0}])
    plan = review.units(asg, answers.questions(asg))
    assert [(u.item, u.points, [q.number for q in u.questions], u.weight()) for u in plan] == [
        ("explain-it-back-1", 2.0, [1], 2.0), ("explain", 4.0, [2, 3, 4, 5], 1.0)]


def test_two_items_that_name_no_question_need_item():
    asg = _asg([{"id": "explain", "title": "answers", "points": 5.0},
                {"id": "talk", "title": "oral exam", "points": 5.0}])
    with pytest.raises(UsageError, match="say which scores the answers with --item"):
        review.units(asg, answers.questions(asg))
    assert [u.item for u in review.units(asg, answers.questions(asg), item="talk")] == ["talk"]
    with pytest.raises(UsageError, match="--item nope: not a manual item"):
        review.units(asg, answers.questions(asg), item="nope")
