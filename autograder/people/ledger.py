"""Rows a person decides, appended to OUT/overrides.csv (autograder/classdata/overrides.py).

The file is the TA's: rows are appended under its own header (whatever order its columns are
in), each write atomic, so an interrupted review keeps every row written before it. What the
file already holds is read and validated as grade-all reads it (``existing``: a bad row stops
the command with one line per row, before anything is asked), so a review or a decision never
scores an item twice.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.batch import plan
from autograder.classdata import overrides
from autograder.classdata.discover import Layout
from autograder.core import csvsafe
from autograder.core.atomic import atomic_write
from autograder.core.errors import UsageError


def existing(out: Path, layout: Layout, asg) -> dict[tuple[str, str], overrides.Override]:
    """(student folder name, item) -> its row in OUT/overrides.csv (the file and its header are
    written when OUT has none)."""
    rows = plan.load_overrides(Path(out), layout, asg)
    return {(student, o.item): o for student, found in rows.items() for o in found}


def _header(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the overrides ({exc.strerror or exc})") from None
    return [(f or "").strip() for f in next(csv.reader(io.StringIO(text)), [])] or list(overrides.FIELDS)


def append(out: Path, row: dict, layout: Layout) -> None:
    """Append one row (``student``, ``item``, ``points`` or ``delta``, ``reason``, ``grader``)
    to OUT/overrides.csv, under the file's own header; a column the file lacks is refused. A
    student of ``layout`` who handed in with a group is written as the group
    (``group:<folder>``): the group has one grade, and grade-all refuses a member's row."""
    if any(s.student == row["student"] and len(s.members) > 1 for s in layout.submissions):
        row = {**row, "student": f"{overrides.GROUP}{row['student']}"}
    path = overrides.ensure_template(Path(out))
    header = _header(path)
    missing = [k for k, v in row.items() if v not in ("", None) and k not in header]
    if missing:
        raise UsageError(f"{path}: its header has no {', '.join(missing)} column; add it to write this decision")
    text = path.read_text(encoding="utf-8-sig")
    if text and not text.endswith("\n"):
        text += "\n"
    buf = io.StringIO()
    csvsafe.Writer(buf).writerow([row.get(name, "") for name in header])
    atomic_write(path, text + buf.getvalue())


def points_cell(points: float) -> csvsafe.Number:
    """``points`` as overrides.csv holds them (at most 4 decimals, as results.json rounds)."""
    return csvsafe.number(points, 4)
