"""OUT/gradebook.csv (a row per student, a column per task, the total) and OUT/canvas.csv.

gradebook.csv columns: ``student`` (the OUT folder name), ``name``, ``sid``, ``email`` (filled
from a Gradescope export, else the folder name), one column per task id in course.yml order (points),
``total``, ``max_score``, ``note`` (why a submission got a zero without grading). A Gradescope
group submission gives each member a row with the group's scores.

canvas.csv has the columns Canvas's gradebook import expects (Student, ID, SIS User ID, SIS Login ID,
Section) and one assignment column, ``<assignment> (<points>)``, holding the total; README's
"Grading a class" says how to import it.
"""
from __future__ import annotations

import csv
import io

from autograder.batch.discover import Submission

#: Decimal places of scores in the CSV files.
PLACES = 2


def task_scores(results: dict, task_ids) -> dict[str, float]:
    """Points per task id from the results' tests (a task with no tests scores 0)."""
    scores = {t: 0.0 for t in task_ids}
    for test in results.get("tests", []):
        task = test.get("task")
        if task in scores:
            scores[task] += float(test.get("score") or 0.0)
    return scores


def note_of(results: dict) -> str:
    """The reason for a zero without grading (grade-all's own results), else ''."""
    batch = results.get("grade_all") or {}
    return str(batch.get("reason", "")) if isinstance(batch, dict) else ""


def _fmt(x: float) -> str:
    return f"{round(x, PLACES):g}"


def rows(entries: list[tuple[Submission, dict]], assignment) -> list[dict]:
    """One dict per person, in student order."""
    task_ids = [t.id for t in assignment.tasks]
    out = []
    for sub, results in entries:
        scores = task_scores(results, task_ids)
        for member in sub.members:
            row = {"student": sub.student, "name": member.name, "sid": member.sid,
                   "email": member.email}
            row.update({t: _fmt(scores[t]) for t in task_ids})
            row["total"] = _fmt(sum(scores.values()))
            row["max_score"] = _fmt(assignment.max_score)
            row["note"] = note_of(results)
            out.append(row)
    return out


def gradebook_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of gradebook.csv."""
    task_ids = [t.id for t in assignment.tasks]
    fields = ["student", "name", "sid", "email", *task_ids, "total", "max_score", "note"]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(entries, assignment))
    return buf.getvalue()


def canvas_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of canvas.csv: Canvas's identity columns and one column with the total."""
    column = f"{assignment.name} ({_fmt(assignment.max_score)})"
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column])
    writer.writerow(["Points Possible", "", "", "", "", _fmt(assignment.max_score)])
    for row in rows(entries, assignment):
        login = row["email"] or row["student"]
        writer.writerow([row["name"], "", row["sid"], login, "", row["total"]])
    return buf.getvalue()
