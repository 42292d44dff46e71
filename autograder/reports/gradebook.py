"""OUT/gradebook.csv (a row per student, a column per task, the total) and OUT/canvas.csv.

gradebook.csv columns: ``student`` (the OUT folder name), ``name``, ``sid``, ``email`` (filled
from a Gradescope export, else the folder name), ``lms_id`` (the LMS's id of the person, from a
Canvas or Moodle download), one column per task id in course.yml order (points, before any late
penalty) and one per manual item (course.yml ``manual:``; empty until OUT/overrides.csv scores it),
``raw_total``, ``late_penalty`` (points taken by the late policy),
``total`` (raw_total - late_penalty: the grade), ``max_score``, ``submitted_at`` and
``time_source`` (when the submission was handed in and how we know: autograder/batch/submitted.py;
empty without a late policy), ``checks`` (what the row covers: ``all``, or ``partial: ID ...``,
which only partial.csv holds), ``graded_at`` (when, ISO 8601 UTC), ``overrides`` (what
OUT/overrides.csv changed, with the reasons), ``note`` (why a submission got a zero without
grading, or why a graded one scored nothing: a notebook handed in alone; for a student graded
before but not in this download, that they are kept: the record only grows,
autograder/classdata/kept.py). A Gradescope group submission gives each member a
row with the group's scores.

A submission the grader itself failed on (autograder/classdata/zero.py: ``grader_failure``) is never
a number: its score cells are empty here, in canvas.csv and in checks.csv, and its note starts
"GRADER FAILED, not a grade".

canvas.csv has the columns Canvas's gradebook import expects (Student, ID, SIS User ID, SIS Login ID,
Section) and one assignment column named after the assignment (no points: Canvas reads
``(...)`` after the name as its assignment id, and a new name makes a new assignment), holding the total (``ID`` is the
Canvas user id when the submissions came from a Canvas download); README's
"Grading a class" says how to import it.

Both are spreadsheet-safe (autograder/core/csvsafe.py): a name, SID, email or folder name that
starts with a formula character is written with a quote in front; the scores stay numbers.
"""
from __future__ import annotations

import io

from autograder.classdata import kept, overrides, partial, zero
from autograder.classdata.discover import Submission
from autograder.core import csvsafe, late

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
    """The reason for a zero without grading (grade-all's own results), or the note on a graded
    one that says why it scored nothing (a notebook handed in alone), else ''."""
    batch = results.get("grade_all") or {}
    if not isinstance(batch, dict):
        return ""
    return str(batch.get("reason") or batch.get(zero.NOTE) or "")


def _fmt(x: float) -> csvsafe.Number:
    return csvsafe.number(x, PLACES)


def item_ids(assignment) -> list[str]:
    """The score columns: the task ids, then the manual items' ids, in course.yml order."""
    return [t.id for t in assignment.tasks] + [m.id for m in assignment.manual]


def rows(entries: list[tuple[Submission, dict]], assignment) -> list[dict]:
    """One dict per person, in student order."""
    ids = item_ids(assignment)
    manual = {m.id for m in assignment.manual}
    out = []
    for sub, results in entries:
        failed = zero.is_grader_failure(results)
        scores = task_scores(results, ids)
        scored = {t.get("check") for t in results.get("tests", []) if t.get(overrides.MANUAL)}
        raw = late.raw_score(results)
        verdict = results.get(late.RESULTS_KEY) if isinstance(results.get(late.RESULTS_KEY), dict) else {}
        penalty = float(verdict.get("penalty") or 0.0)
        for member in sub.members:
            row = {"student": sub.student, "name": member.name, "sid": member.sid,
                   "email": member.email, "lms_id": member.lms_id}
            if failed:   # never a number: the grader failed, not the student
                row.update({k: "" for k in (*ids, "raw_total", "late_penalty", "total")})
            else:
                row.update({t: _fmt(scores[t]) if t not in manual or t in scored else "" for t in ids})
                row["raw_total"] = _fmt(raw)
                row["late_penalty"] = _fmt(penalty)
                row["total"] = _fmt(raw - penalty)
            row["max_score"] = _fmt(assignment.max_score)
            row["submitted_at"] = verdict.get("submitted_at") or ""
            row["time_source"] = verdict.get("time_source") or ""
            row["checks"], row["graded_at"] = partial.coverage(results)
            if failed:
                row["checks"] = "none (grader failed)"
            row["overrides"] = overrides.describe(results)
            row["note"] = note_of(results)
            if sub.layout == kept.ABSENT:   # kept from an earlier run: the record only grows
                row["note"] = kept.NOTE + (f"; {row['note']}" if row["note"] else "")
            out.append(row)
    return out


def gradebook_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of gradebook.csv."""
    fields = ["student", "name", "sid", "email", "lms_id", *item_ids(assignment), "raw_total",
              "late_penalty", "total", "max_score", "submitted_at", "time_source", "checks",
              "graded_at", "overrides", "note"]
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, fields)
    writer.writeheader()
    writer.writerows(rows(entries, assignment))
    return buf.getvalue()


def canvas_csv(entries: list[tuple[Submission, dict]], assignment) -> str:
    """The text of canvas.csv: Canvas's identity columns and one column with the total (empty
    where the grader failed: Canvas leaves an empty cell's grade as it was)."""
    # the assignment's name alone: Canvas reads "(...)" after a column's name as its own
    # assignment id, so points there would make a new assignment whenever they change
    column = assignment.name
    buf = io.StringIO()
    writer = csvsafe.Writer(buf)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column])
    writer.writerow(["Points Possible", "", "", "", "", _fmt(assignment.max_score)])
    for row in rows(entries, assignment):
        # an LMS download knows the person's LMS id, not their login: no folder name posing as one
        login = row["email"] if row["lms_id"] else (row["email"] or row["student"])
        writer.writerow([row["name"], row["lms_id"], row["sid"], login, "", row["total"]])
    return buf.getvalue()
