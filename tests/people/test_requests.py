"""``regrade-requests``: each request shown with the checks and feedback it concerns, the TA's
decision written to overrides.csv as grade-all reads it; a bad row is one line, not a crash."""
from __future__ import annotations

from autograder.classdata import discover
from tests.helpers.tiny_course import TINY, cli
from tests.people import classes

REQUESTS = ("student,check,message\n"
            "bob,doubles_like_reference,My double is right for integers\n"
            "cy,double,Please look again\n"
            "zed,double,I am not in this class\n"
            "ann,nope,No such check\n")


def _out(tmp_path):
    root, out = tmp_path / "class", tmp_path / "out"
    for name in ("ann", "bob", "cy"):
        (root / name).mkdir(parents=True)
    asg = classes.tiny_asg()
    classes.write_out(out, discover.discover(root, asg), asg, {"ann": 10.0, "bob": 0.0, "cy": 0.0})
    requests = tmp_path / "requests.csv"
    requests.write_text(REQUESTS)
    return out, requests


def _run(out, requests, *extra, answers=None, tmp_path=None):
    if answers is not None:
        given = tmp_path / "answers.txt"
        given.write_text(answers)
        extra = (*extra, "--answers", given)
    return cli("--course", TINY, "regrade-requests", requests, "--out", out, *extra)


def test_each_request_is_shown_with_its_checks_and_a_bad_row_is_one_line(tmp_path):
    out, requests = _out(tmp_path)
    proc = _run(out, requests)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {requests} row 4: no student 'zed' in the graded class (give the folder name, SID, "
        f"email, name or LMS id of gradebook.csv)",
        f"error: {requests} row 5: 'nope' is not a check, task or manual item of tiny, nor 'total'"]
    bob = proc.stdout.split("=== bob")[1].split("=== cy")[0]
    assert "asks: My double is right for integers" in bob
    assert "doubles_like_reference]: 0/10 failed" in bob and "double(1.5) returned 2.25, expected 3" in bob
    assert "regrade requests: 2 shown, 2 refused" in proc.stdout
    assert (out / "overrides.csv").read_text() == "student,item,points,delta,reason,grader\n"


def test_decisions_are_written_once_and_not_asked_again(tmp_path):
    out, requests = _out(tmp_path)
    proc = _run(out, requests, "--decide", "--grader", "TA Kim", tmp_path=tmp_path,
                answers="x\na\n11\n6\nright for integers\nr\nthe check is right: 1.5 doubles to 3\n")
    assert proc.returncode == 1, proc.stderr                   # the two bad rows
    assert "answer a, r, s or q" in proc.stdout and "give a number from 0 to 10, or +N / -N" in proc.stdout
    assert (out / "overrides.csv").read_text().splitlines() == [
        "student,item,points,delta,reason,grader",
        "bob,doubles_like_reference,6,,regrade request accepted: right for integers,TA Kim",
        "cy,double,,0,regrade request rejected: the check is right: 1.5 doubles to 3,TA Kim"]
    again = _run(out, requests, "--decide", "--grader", "TA Lee", tmp_path=tmp_path, answers="")
    assert "decided: overrides.csv row 2: regrade request accepted: right for integers" in again.stdout
    assert "decided: overrides.csv row 3: regrade request rejected" in again.stdout
    assert "0 decision(s) written" in again.stdout
    assert (out / "overrides.csv").read_text().count("\n") == 3


def test_a_delta_is_written_as_given_and_decide_needs_a_grader(tmp_path):
    out, requests = _out(tmp_path)
    requests.write_text("student,item,message\nbob,,The whole grade please\n")
    proc = _run(out, requests, "--decide", "--grader", "TA Kim", tmp_path=tmp_path,
                answers="a\n+2\npartial credit\n")
    assert proc.returncode == 0, proc.stderr
    assert "bob,total,,2,regrade request accepted: partial credit,TA Kim" in (out / "overrides.csv").read_text()
    assert "doubles_like_reference]: 0/10 failed" in proc.stdout         # the total: every lost point
    proc = _run(out, requests, "--decide")
    assert proc.returncode == 2 and proc.stderr.strip() == \
        "error: --decide needs --grader NAME (written with each decision)"


def test_a_rejection_changes_no_score_and_its_reason_reaches_the_results(tmp_path):
    """A rejected request is a delta 0 row: applied as grade-all applies overrides, the score
    stands and the reason is in the student's results (and so on their feedback page)."""
    import json

    from autograder.classdata import overrides
    from autograder.people import ledger, roster
    out, requests = _out(tmp_path)
    requests.write_text("student,task,message\ncy,double,Please look again\n")
    proc = _run(out, requests, "--decide", "--grader", "TA Kim", tmp_path=tmp_path,
                answers="r\nthe check is right\n")
    assert proc.returncode == 0, proc.stderr
    asg = classes.tiny_asg()
    row = ledger.existing(out, roster.layout(out), asg)[("cy", "double")]
    results = json.loads((out / "cy" / "results.json").read_text())
    applied = overrides.apply(results, [row], asg)
    assert applied["score"] == results["score"] == 0.0
    assert applied["overrides"][0]["reason"] == "regrade request rejected: the check is right"
    assert overrides.describe(applied) == "double 0 (was 0): regrade request rejected: the check is right"


def test_a_delta_that_takes_an_item_outside_its_points_is_asked_again(tmp_path):
    """ann has 10 of 10 on the check and cy 0: +2 for ann or -1 for cy would give a score the item
    cannot have, so each is refused with a line and asked again; a delta inside 0..10 is written."""
    out, requests = _out(tmp_path)
    requests.write_text("student,check,message\nann,doubles_like_reference,More please\n"
                        "cy,doubles_like_reference,Look again\n")
    proc = _run(out, requests, "--decide", "--grader", "TA Kim", tmp_path=tmp_path,
                answers="a\n+2\n-1.5\ncareless slip\na\n-1\n+4\npartial credit\n")
    assert proc.returncode == 0, proc.stderr
    assert ("  doubles_like_reference has 10 of 10 points: +2 would make it 12; give +N / -N that "
            "keeps it from 0 to 10, or the new points") in proc.stdout
    assert ("  doubles_like_reference has 0 of 10 points: -1 would make it -1; give +N / -N that "
            "keeps it from 0 to 10, or the new points") in proc.stdout
    assert (out / "overrides.csv").read_text().splitlines()[1:] == [
        "ann,doubles_like_reference,,-1.5,regrade request accepted: careless slip,TA Kim",
        "cy,doubles_like_reference,,4,regrade request accepted: partial credit,TA Kim"]


def test_a_decision_for_a_group_member_is_written_for_the_group(tmp_path):
    """A Gradescope group has one grade: the decision on a member's request names the group, as
    grade-all takes it (a row naming one member would stop grade-all and this command)."""
    root = classes.gradescope_group(tmp_path / "export", {"double.py": "def double(x):\n    return x * x\n"})
    out = tmp_path / "out"
    asg = classes.tiny_asg()
    classes.write_out(out, discover.discover(root, asg), asg, {"501": 0.0})
    requests = tmp_path / "requests.csv"
    requests.write_text("student,check,message\n502,doubles_like_reference,integers work\n")
    proc = _run(out, requests, "--decide", "--grader", "TA Kim", tmp_path=tmp_path,
                answers="a\n5\nright for integers\n")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (out / "overrides.csv").read_text().splitlines()[1:] == [
        "group:501,doubles_like_reference,5,,regrade request accepted: right for integers,TA Kim"]
