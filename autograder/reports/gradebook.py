"""OUT/gradebook.csv (a row per student, a column per task, the total) and OUT/canvas.csv.

gradebook.csv columns: ``student`` (the OUT folder name), ``name``, ``sid``, ``email`` (filled
from a Gradescope export, else the folder name), one column per task id in course.yml order (points,
before any late penalty), ``raw_total``, ``late_penalty`` (points taken by the late policy),
``total`` (raw_total - late_penalty: the grade), ``max_score``, ``submitted_at`` and
``time_source`` (when the submission was handed in and how we know: autograder/batch/submitted.py;
empty without a late policy), ``checks`` (what the row covers: ``all``, or ``partial: ID ...``,
which only partial.csv holds), ``graded_at`` (when, ISO 8601 UTC), ``note`` (why a submission got
a zero without grading). A Gradescope group submission gives each member a row with the group's scores.

canvas.csv has the columns Canvas's gradebook import expects (Student, ID, SIS User ID, SIS Login ID,
Section) and one assignment column, ``<assignment> (<points>)``, holding the total; README's
"Grading a class" says how to import it.

Both are spreadsheet-safe (autograder/reports/csvsafe.py): a name, SID, email or folder name that
starts with a formula character is written with a quote in front; the scores stay numbers.
"""
from __future__ import annotations

import io

from autograder.batch import partial
from autograder.batch.discover import Submission
from autograder.core import late
from autograder.reports import csvsafe

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


def _fmt(x: float) -> csvsafe.Number:
    return csvsafe.number(x, PLACES)


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
            raw = sum(scores.values())
            verdict = results.get(late.RESULTS_KEY) if isinstance(results.get(late.RESULTS_KEY), dict) else {}
            penalty = float(verdict.get("penalty") or 0.0)
            row["raw_total"] = _fmt(raw)
            row["late_penalty"] = _fmt(penalty)
            row["total"] = _fmt(raw - penalty)
            row["max_score"] = _fmt(assignment.max_score)
            row["submitted_at"] = verdict.get("submitted_at") or ""
            row["time_source"] = verdict.get("time_source") or ""
            row["checks"], row["graded_at"] = partial.coverage(results)
            row["note"] = note_of(results)
            out.append(row)
    return out


def gradebook_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of gradebook.csv."""
    task_ids = [t.id for t in assignment.tasks]
    fields = ["student", "name", "sid", "email", *task_ids, "raw_total", "late_penalty", "total",
              "max_score", "submitted_at", "time_source", "checks", "graded_at", "note"]
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, fields)
    writer.writeheader()
    writer.writerows(rows(entries, assignment))
    return buf.getvalue()


def canvas_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of canvas.csv: Canvas's identity columns and one column with the total."""
    column = f"{assignment.name} ({_fmt(assignment.max_score)})"
    buf = io.StringIO()
    writer = csvsafe.Writer(buf)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column])
    writer.writerow(["Points Possible", "", "", "", "", _fmt(assignment.max_score)])
    for row in rows(entries, assignment):
        login = row["email"] or row["student"]
        writer.writerow([row["name"], "", row["sid"], login, "", row["total"]])
    return buf.getvalue()
