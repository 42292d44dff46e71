"""The graded class as OUT/gradebook.csv names it: who was graded, by every name they go by.

A command that works on a graded class (regrade requests, the Moodle worksheet) reads the class
from there rather than from the download, so it needs only OUT: a row per person (a Gradescope
group has a row per member, all under one student folder), each cell as it was before the file
was made spreadsheet-safe (autograder/core/csvsafe.py).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from autograder.classdata import entries, store
from autograder.classdata.discover import Layout, Member, Submission
from autograder.core import csvsafe
from autograder.core.errors import UsageError

GRADEBOOK = "gradebook.csv"


def rows(out: Path) -> list[dict]:
    """The rows of OUT/gradebook.csv; UsageError when there is none (grade the class first)."""
    path = Path(out) / GRADEBOOK
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"{path}: no gradebook to read ({exc.strerror or exc}); run grade-all "
                         f"with --out {out} first") from None
    found = [{k: csvsafe.restore(v or "") for k, v in r.items() if k} for r in csv.DictReader(io.StringIO(text))]
    if not found or "student" not in found[0]:
        raise UsageError(f"{path}: not a gradebook written by grade-all (no student column or no row)")
    return found


def layout(out: Path) -> Layout:
    """The class of OUT/gradebook.csv as grade-all's discovery gives it: one submission per
    student folder, a member per row."""
    members: dict[str, list[Member]] = {}
    for row in rows(out):
        members.setdefault(row["student"], []).append(
            Member(name=row.get("name", ""), sid=row.get("sid", ""), email=row.get("email", ""),
                   lms_id=row.get("lms_id", "")))
    subs = tuple(Submission(student=s, path=Path(out) / s, members=tuple(m)) for s, m in members.items())
    return Layout("gradebook", f"the class of {Path(out) / GRADEBOOK}", subs)


def names(lay: Layout) -> dict[str, str]:
    """Every name a student goes by (folder name, SID, email, name, LMS id) -> folder name."""
    return entries.names_of(lay.submissions)


def results(out: Path, student: str) -> dict | None:
    """OUT/<student>/results.json, or None when it is missing or does not parse."""
    try:
        data = json.loads((Path(out) / student / store.RESULTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
