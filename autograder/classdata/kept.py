"""Students OUT holds a grading of who are not in this run's download: the record only grows.

A student missing from the next download (a late batch graded into the same OUT, a student who
withdrew, a download cut short) keeps their row in gradebook.csv, canvas.csv and checks.csv,
with their stored grade and a note saying they were not in this download. Nothing of theirs is
deleted; a later download that holds them again grades them as usual.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from autograder.classdata.discover import Layout, Member, Submission
from autograder.classdata.store import Store

#: ``Submission.layout`` of a student kept from an earlier run.
ABSENT = "absent"
#: The gradebook note of a kept student.
NOTE = "not in this download: kept as graded before"


def absent(store: Store, layout: Layout) -> list[Submission]:
    """The students ``store`` holds a grading of that ``layout`` does not list, as submissions
    named as the download that brought them named them (their path: where that was)."""
    present = {s.student for s in layout.submissions}
    out = []
    for student in store.students():
        if student in present:
            continue
        rec = store.record(student)
        if rec is None:
            continue
        members = tuple(Member(**{k: str(m.get(k) or "") for k in ("name", "sid", "email", "lms_id")})
                        for m in rec.members if m.get("name") or m.get("sid") or m.get("email"))
        out.append(Submission(student=student, path=Path(rec.source or student),
                              members=members or (Member(student),), layout=ABSENT))
    return out


def stored_time(results: dict) -> tuple[dt.datetime | None, str] | None:
    """The submission time a stored result was judged on (its late verdict), or None."""
    verdict = results.get("late") if isinstance(results.get("late"), dict) else None
    if verdict is None:
        return None
    stamp = verdict.get("submitted_at")
    try:
        when = dt.datetime.fromisoformat(stamp) if stamp else None
    except (TypeError, ValueError):
        return None
    return when, str(verdict.get("time_source") or "")
