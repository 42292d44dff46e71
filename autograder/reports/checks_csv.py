"""OUT/checks.csv: a row per student, a column per check (points earned), as nbgrader and Otter
users expect.

Columns: ``student``, ``name``, ``sid``, ``email``, ``lms_id`` (as in gradebook.csv), one column
per check id (course.yml's order: each task's ``checks`` mapping, then any other check in the order
the results list them), one per manual item, then ``total`` (the gradebook's total) and ``note``.
The first row after the header, ``Points Possible``, holds each column's maximum in points. A check
a student's result did not grade, a manual item nobody scored yet, and every score of a student the
grader failed on (autograder/classdata/zero.py) are empty cells, never 0. Check scores include
OUT/overrides.csv's changes of checks and manual items; task and total overrides show in the
total, and every override with its reason in the ``overrides`` column (as in gradebook.csv).
Spreadsheet-safe (autograder/core/csvsafe.py).
"""
from __future__ import annotations

import io

from autograder.classdata import overrides, zero
from autograder.classdata.discover import Submission
from autograder.core import csvsafe
from autograder.reports import gradebook

#: Decimal places of points.
PLACES = 4
IDENTITY = ("student", "name", "sid", "email", "lms_id")


def columns(entries: list[tuple[Submission, dict]], assignment) -> dict[str, float]:
    """Check id (then manual item id) -> most points, in column order."""
    cols: dict[str, float] = {}
    for task in assignment.tasks:
        cols.update(dict(task.check_points))
    seen: dict[str, float] = {}
    for _sub, results in entries:
        for test in results.get("tests", []):
            check = test.get("check")
            if check and not test.get(overrides.ADJUSTMENT) and not test.get(overrides.MANUAL):
                seen.setdefault(check, 0.0)
                seen[check] = max(seen[check], _max_of(results, check))
    for check, most in seen.items():
        cols.setdefault(check, most)
    cols.update({m.id: m.points for m in assignment.manual})
    return cols


def _max_of(results: dict, check: str) -> float:
    return sum(float(t.get("max_score") or 0.0) for t in results.get("tests", []) if t.get("check") == check)


def checks_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of checks.csv."""
    cols = columns(entries, assignment)
    by_person = {(r["student"], r["name"], r["sid"], r["email"]): r for r in gradebook.rows(entries, assignment)}
    buf = io.StringIO()
    writer = csvsafe.Writer(buf)
    writer.writerow([*IDENTITY, *cols, "total", "overrides", "note"])
    writer.writerow(["Points Possible", "", "", "", "",
                     *(csvsafe.number(m, PLACES) for m in cols.values()),
                     csvsafe.number(assignment.max_score, PLACES), "", ""])
    for sub, results in entries:
        failed = zero.is_grader_failure(results)
        points: dict[str, float] = {}
        for test in results.get("tests", []):
            check = test.get("check")
            if check in cols and not test.get(overrides.ADJUSTMENT):
                points[check] = points.get(check, 0.0) + float(test.get("score") or 0.0)
        for member in sub.members:
            row = by_person[(sub.student, member.name, member.sid, member.email)]
            cells = ["" if failed or c not in points else csvsafe.number(points[c], PLACES) for c in cols]
            writer.writerow([sub.student, member.name, member.sid, member.email, member.lms_id, *cells,
                             row["total"], row["overrides"], row["note"]])
    return buf.getvalue()
