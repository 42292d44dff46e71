"""When Moodle says each student handed in: the ``Last modified (submission)`` column of its
grading worksheet, read for grade-all's ``--moodle-worksheet``.

Moodle's "Download all submissions" zip stamps every file with the time of the download (its zip
writer keeps no file times), so a Moodle download's files cannot date a submission. The
assignment's grading worksheet (Assignment -> "Download grading worksheet", feedback type
"Offline grading worksheet") can: Moodle's grading table, downloaded (mod/assign/gradingtable.php),
writes the column ``Last modified (submission)`` (language string ``lastmodifiedsubmission`` of
mod/assign/lang/en/assign.php) with ``col_timesubmitted``: ``userdate`` of the submission's
``timemodified``, or ``-`` when there is none. ``userdate`` writes the language's
``strftimedaydatetime`` (lang/en/langconfig.php: ``%A, %d %B %Y, %I:%M %p``, the day and hour
without a leading zero: "Thursday, 3 December 2026, 4:05 PM") in the time zone of the person who
downloaded it (their Moodle profile), which the file does not say: it is given as an IANA name
(``--moodle-timezone`` or course.yml's ``late.timezone``: autograder/core/late.py
``zone_named``). Rows are matched to the download's students by ``Identifier`` (``Participant
<participant id>``, the id in the download's folder and file names: autograder/classdata/lms.py).

Only an English worksheet is read; a date that does not parse is one line naming the file and
the row.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
from pathlib import Path

from autograder.classdata.entries import Layout
from autograder.core.errors import UsageError

IDENTIFIER = "Identifier"
COLUMN = "Last modified (submission)"
#: What Moodle writes before the participant id (its string ``hiddenuser``).
PARTICIPANT = "Participant "
#: strftimedaydatetime of Moodle's English language pack, as Python reads it (%d and %I accept
#: the day and hour without a leading zero, as ``userdate`` writes them).
FORMAT = "%A, %d %B %Y, %I:%M %p"
EXAMPLE = "Thursday, 3 December 2026, 4:05 PM"
#: The largest worksheet read, in bytes (a row is a few hundred bytes).
MAX_BYTES = 32 << 20


def read(path: Path | str, tz: dt.tzinfo) -> dict[str, dt.datetime]:
    """Participant id -> when Moodle says they last changed their submission (aware, in ``tz``),
    for every row of the worksheet at ``path`` that has one. UsageError (one line naming the file,
    and the row) for a file that cannot be read, lacks a column, or holds a date that is not
    Moodle's."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise UsageError(f"{path}: larger than {MAX_BYTES >> 20} MiB; not a Moodle grading worksheet")
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise UsageError(f"{path}: cannot read the Moodle grading worksheet ({why})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [(f or "").strip() for f in reader.fieldnames or []]
    missing = [c for c in (IDENTIFIER, COLUMN) if c not in header]
    if missing:
        raise UsageError(f"{path}: not a Moodle grading worksheet (no column "
                         f"{', '.join(repr(m) for m in missing)}; download it from the assignment: "
                         f"Download grading worksheet)")
    found: dict[str, dt.datetime] = {}
    for row_no, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k}
        ident, stamp = row.get(IDENTIFIER, ""), row.get(COLUMN, "")
        if not ident.startswith(PARTICIPANT) or not ident[len(PARTICIPANT):].isdigit():
            raise UsageError(f"{path} row {row_no}: Identifier {ident!r} is not Moodle's "
                             f"'Participant <participant id>'")
        if stamp in ("", "-"):   # no submission
            continue
        try:
            when = dt.datetime.strptime(stamp, FORMAT)
        except ValueError:
            raise UsageError(f"{path} row {row_no}: {COLUMN} {stamp!r} is not a date as Moodle's "
                             f"English worksheet writes it (e.g. {EXAMPLE!r})") from None
        found[ident[len(PARTICIPANT):]] = when.replace(tzinfo=tz)
    return found


def attach(layout: Layout, times: dict[str, dt.datetime], path: Path | str) -> Layout:
    """``layout`` with each Moodle student's ``lms_time`` from ``times`` (participant id -> when)
    and a note naming those the worksheet does not date. UsageError when the layout is not a
    Moodle download or the worksheet dates none of its students (another assignment's)."""
    if layout.kind != "moodle":
        raise UsageError(f"--moodle-worksheet {path}: SUBMISSIONS_DIR is not a Moodle download "
                         f"({layout.description})")
    subs, undated = [], []
    for sub in layout.submissions:
        when = next((times[m.lms_id] for m in sub.members if m.lms_id in times), None)
        if when is None:
            undated.append(sub.student)
        subs.append(dataclasses.replace(sub, lms_time=when))
    if len(undated) == len(subs):
        raise UsageError(f"--moodle-worksheet {path}: dates none of the download's {len(subs)} "
                         f"participant(s); is it this assignment's worksheet?")
    notes = [f"dated by Moodle's grading worksheet {path}: {len(subs) - len(undated)} of {len(subs)}"]
    if undated:
        notes.append(f"{len(undated)} student(s) without a submission time in the worksheet, dated by "
                     f"their files: {', '.join(undated[:8])}{' ...' if len(undated) > 8 else ''}")
    return dataclasses.replace(layout, submissions=tuple(subs), notes=layout.notes + tuple(notes))
