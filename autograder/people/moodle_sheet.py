"""Moodle's offline grading worksheet, filled from OUT/gradebook.csv.

The worksheet is what "Download grading worksheet" gives (feedback type "Offline grading
worksheet", assignfeedback_offline) and "Upload grading worksheet" takes back. Its columns, as
the download writes them: ``Identifier`` (``Participant <participant id>``), ``Full name``,
``Email address``, ``Status``, ``Grade``, ``Maximum Grade``, ``Grade can be changed``, ``Last
modified (submission)``, ``Last modified (grade)``, ``Feedback comments``. The import reads
only ``Identifier`` (the number after ``Participant ``), ``Grade``, ``Last modified (grade)`` and
each feedback plugin's column by its title (``Feedback comments``), and skips a row whose grade
is empty, out of range or unchanged, or whose grade Moodle changed more than a minute after the
row's ``Last modified (grade)`` (mod/assign/feedback/offline/importgradeslib.php, ``init`` and
``next``; locallib.php, ``process_import_grades``).

Students are matched by the participant id of the Moodle download (gradebook.csv's ``lms_id``).
Given the worksheet Moodle wrote (``template``), its rows and columns are kept and only
``Grade`` and ``Feedback comments`` are filled, so Moodle's own names, statuses and times stand;
without one, a row per graded participant is written, its ``Last modified (grade)`` the time the
worksheet was made (a grade changed in Moodle after that is not overwritten).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from autograder.classdata.moodle_dates import COLUMN, IDENTIFIER, PARTICIPANT
from autograder.core import csvsafe
from autograder.core.errors import UsageError
from autograder.people import roster

COLUMNS = (IDENTIFIER, "Full name", "Email address", "Status", "Grade", "Maximum Grade",
           "Grade can be changed", COLUMN, "Last modified (grade)",
           "Feedback comments")
NAME = "moodle-worksheet.csv"


@dataclass
class Sheet:
    """The worksheet's ``text``, the participants ``filled`` and a line per student ``notes``."""

    text: str = ""
    filled: int = 0
    notes: list[str] = field(default_factory=list)


def comment(row: dict, assignment: str) -> str:
    """The feedback comment of a gradebook row: the total, the late penalty and the staff's changes."""
    parts = [f"{assignment}: {row['total']} of {row['max_score']} points"]
    if row.get("late_penalty") not in ("", "0", None):
        parts.append(f"late penalty {row['late_penalty']} (raw {row['raw_total']})")
    if row.get("overrides"):
        parts.append(f"changed by the course staff: {row['overrides']}")
    return "; ".join(parts) + ". Every check is explained on your feedback page."


def _graded(out: Path) -> tuple[dict[str, dict], list[str]]:
    """Participant id -> gradebook row, and a note per row that cannot go to Moodle."""
    by_id, notes = {}, []
    for row in roster.rows(out):
        if not row.get("lms_id"):
            notes.append(f"{row['student']}: no Moodle participant id (not from a Moodle download); left out")
        elif row.get("total", "") == "":
            notes.append(f"{row['student']}: no grade ({row.get('note') or 'not graded'}); Grade left empty")
            by_id[row["lms_id"]] = row
        else:
            by_id[row["lms_id"]] = row
    return by_id, notes


def build(out: Path, assignment: str, made_at: str, template: Path | None = None) -> Sheet:
    """The worksheet for OUT's class; ``made_at`` (ISO 8601) is the new rows' Last modified (grade)."""
    by_id, notes = _graded(out)
    if not by_id:
        raise UsageError(f"{Path(out) / roster.GRADEBOOK}: no Moodle participant id in lms_id (grade a "
                         f"Moodle download: Ada Lovelace_12345_assignsubmission_file_)")
    sheet = Sheet(notes=notes)
    buf = io.StringIO()
    if template is None:
        writer = csvsafe.Writer(buf)
        writer.writerow(COLUMNS)
        for pid, row in sorted(by_id.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
            writer.writerow([PARTICIPANT + pid, row["name"], row["email"], "", _grade(row),
                             csvsafe.Number(row["max_score"]), "Yes", row.get("submitted_at", ""), made_at,
                             comment(row, assignment) if row["total"] else ""])
            sheet.filled += bool(row["total"])
    else:
        _fill(template, by_id, assignment, buf, sheet)
    sheet.text = buf.getvalue()
    return sheet


def _grade(row: dict):
    return csvsafe.Number(row["total"]) if row["total"] else ""


def _fill(template: Path, by_id: dict, assignment: str, buf, sheet: Sheet) -> None:
    """Moodle's own worksheet ``template`` with Grade and Feedback comments filled."""
    try:
        text = Path(template).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{template}: cannot read the worksheet ({getattr(exc, 'strerror', None) or exc})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = list(reader.fieldnames or [])
    if IDENTIFIER not in header or "Grade" not in header or "Last modified (grade)" not in header:
        raise UsageError(f"{template}: not a Moodle grading worksheet (it needs the Identifier, Grade "
                         f"and Last modified (grade) columns)")
    writer = csv.DictWriter(buf, header, lineterminator="\n")
    writer.writeheader()
    seen = set()
    for line, raw in enumerate(reader, start=2):
        pid = (raw.get(IDENTIFIER) or "").removeprefix(PARTICIPANT).strip()
        row = by_id.get(pid)
        if row is not None:
            seen.add(pid)
            raw["Grade"] = row["total"]
            sheet.notes += _above_maximum(row, raw.get("Maximum Grade"), f"row {line} of {template}")
            if "Feedback comments" in header:
                raw["Feedback comments"] = comment(row, assignment) if row["total"] else raw["Feedback comments"]
            sheet.filled += bool(row["total"])
        writer.writerow({k: csvsafe.cell(v) if k in ("Grade", "Feedback comments") else v for k, v in raw.items()})
    sheet.notes += [f"{by_id[p]['student']}: participant {p} is not in {template}; left out"
                    for p in sorted(set(by_id) - seen)]


def _above_maximum(row: dict, maximum: str | None, where: str) -> list[str]:
    """A note when the grade is above the worksheet's ``Maximum Grade``: Moodle refuses a grade
    above the assignment's maximum and the upload skips the row (mod/assign/locallib.php,
    ``update_grade``, called by ``process_import_grades``)."""
    try:
        above = float(row["total"]) > float(maximum or "") + 1e-9
    except ValueError:
        return []
    if not above:
        return []
    return [f"{row['student']}: grade {row['total']} is above the worksheet's Maximum Grade {maximum} ({where}), "
            f"and Moodle skips a grade above the assignment's maximum: set that to {row['max_score']} (the "
            f"course's points), then download the worksheet again and fill it"]
