"""What the exports and pages say about the record: overrides in checks.csv and on the feedback
page, late work and overrides in summary.html, the similarity report linked, Canvas's column,
and the warning when most of a class is late."""
from __future__ import annotations

import csv
import datetime as dt
import io

import pytest

from autograder.batch import class_files
from autograder.classdata import overrides
from autograder.classdata.discover import Member, Submission
from autograder.core import course, late
from autograder.reports import checks_csv, feedback_html, gradebook, summary, summary_html


@pytest.fixture(scope="module")
def asg():
    return course.load().assignment("why17")


def _results(asg) -> dict:
    tests = []
    for task in asg.tasks:
        for check, points in task.check_points:
            failed = check == "sync_present"
            tests.append({"name": check, "task": task.id, "check": check, "score": 0.0 if failed else points,
                          "max_score": points, "status": "failed" if failed else "passed",
                          "outcome": "failed" if failed else "passed", "output": "no sync" if failed else "ok"})
    return {"score": sum(t["score"] for t in tests), "output": "", "tests": tests}


def _override(item, points=None, delta=None):
    return overrides.Override("ann", item, points, delta, "regrade accepted", "TA Kim", 2)


def test_checks_csv_and_the_feedback_page_show_an_override(asg):
    raw = _results(asg)
    lost = sum(t["max_score"] - t["score"] for t in raw["tests"])
    total = overrides.apply(raw, [_override("total", delta=lost)], asg)
    entries = [(Submission("ann", None, (Member("ann"),)), total)]
    rows = list(csv.DictReader(io.StringIO(checks_csv.checks_csv(entries, asg))))
    assert rows[1]["total"] == "100" and rows[1]["overrides"].startswith("total 100 (was ")
    page = feedback_html.render("ann", total, asg)
    assert f"changed your score by +{lost:.3g} points" in page
    restored = overrides.apply(raw, [_override("sync_present", points=lost)], asg)
    assert "What went wrong" not in feedback_html.render("ann", restored, asg)   # nothing costs points now


def test_summary_html_shows_late_work_overrides_and_links_the_similarity_report(asg):
    policy = late.parse({"due": "2026-12-01T23:59:00Z", "policy": "percent_per_day", "percent_per_day": 10},
                        "course.yml", "late")
    raw = _results(asg)
    ann = late.apply(overrides.apply(raw, [_override("total", delta=1)], asg), policy,
                     dt.datetime(2026, 12, 2, 12, tzinfo=dt.timezone.utc), "files: the newest time")
    bob = late.apply(raw, policy, dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc), "files: the newest time")
    entries = [(Submission("ann", None, (Member("ann"),)), ann), (Submission("bob", None, (Member("bob"),)), bob)]
    data = summary.build(entries, asg, "one folder per student")
    page = summary_html.render(data, gradebook.rows(entries, asg), ["gradebook.csv", "similarity/report.html"])
    assert "Late: <b>1</b> of 2" in page and "on time" in page and "2026-12-02T12:00:00+00:00" in page
    assert "changed by staff" in page and 'href="similarity/report.html"' in page


def test_canvas_column_is_the_assignment_name_without_points(asg):
    entries = [(Submission("ann", None, (Member("ann"),)), _results(asg))]
    header = next(csv.reader(io.StringIO(gradebook.canvas_csv(entries, asg))))
    assert header[-1] == "why17"


def test_most_of_a_class_late_is_a_warning(asg):
    policy = late.parse({"due": "2026-12-01T23:59:00Z", "policy": "none"}, "course.yml", "late")
    asg_late = type("Asg", (), {"late": policy})()

    def entry(day):
        when = dt.datetime(2026, 11, day, tzinfo=dt.timezone.utc) if day < 31 else \
            dt.datetime(2026, 12, 3, tzinfo=dt.timezone.utc)
        return (None, late.apply(_results(asg), policy, when, "files: the newest time"))

    mostly_late = class_files.late_line([entry(31), entry(31), entry(30)], asg_late)
    assert mostly_late.splitlines()[1].startswith("warning: most of the class (2 of 3) is late")
    assert len(class_files.late_line([entry(31), entry(30), entry(29)], asg_late).splitlines()) == 1
