"""OUT/submitted.csv: the time each submission was first dated with, so no later run re-dates it.

Where the platform gives no time of its own (a plain folder of students, a Moodle download, a
Canvas file marked LATE), a submission is dated by the newest time among its files
(autograder/batch/submitted.py). Those times move when the download is copied (``cp -r``) or
unpacked again, so the first time a submission is seen its date is written here, keyed by the
student and the content hash (autograder/classdata/store.py ``content_hash``: the same files give
the same hash wherever they lie; two students handing in the same files are two submissions),
and every later run, a rerun on a copy, ``--force`` or ``--student`` alike,
takes the date from here. A changed submission has a new hash and is dated afresh.

A platform's word that comes in a file of its own, beside the download (Moodle's grading
worksheet: autograder/classdata/moodle_dates.py), is kept here the same way, so a later run
without that file keeps its date. It wins over a date from the files: a row whose ``time_source``
starts with ``FROM_FILES`` (written before the worksheet was given) gives way to a later row with
the platform's word; among the platform's rows the first wins.

Columns: ``hash``, ``student``, ``submitted_at`` (ISO 8601, empty when nothing told),
``time_source`` (the words results.json shows), ``first_seen`` (when, ISO 8601 UTC). The file is
appended to, never rewritten; the first row of a student's hash wins.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

from autograder.core import csvsafe
from autograder.core.atomic import append_line

NAME = "submitted.csv"
FIELDS = ("hash", "student", "submitted_at", "time_source", "first_seen")
#: How the words of a date taken from the files begin (autograder/batch/submitted.py FROM_FILES).
FROM_FILES = "files:"


def from_files(source: str) -> bool:
    """Whether ``source`` (a row's time_source) is the files' word, not a platform's."""
    return source.startswith(FROM_FILES)


def read(out: Path) -> dict[tuple[str, str], tuple[dt.datetime | None, str]]:
    """(student, hash) -> (submitted_at, time_source) of every submission dated in OUT, first row
    winning."""
    try:
        text = (Path(out) / NAME).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[tuple[str, str], tuple[dt.datetime | None, str]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        key = (csvsafe.restore(row.get("student") or ""), (row.get("hash") or "").strip())
        if not key[1] or (key in found and not from_files(found[key][1])):
            continue
        stamp = csvsafe.restore(row.get("submitted_at") or "")
        try:
            when = dt.datetime.fromisoformat(stamp) if stamp else None
        except ValueError:
            continue
        if when is not None and when.tzinfo is None:
            continue
        source = csvsafe.restore(row.get("time_source") or "")
        if key not in found or not from_files(source):
            found[key] = (when, source)
    return found


def first_seen(out: Path, student: str, digest: str, when: dt.datetime | None, source: str,
               now: str) -> tuple[dt.datetime | None, str]:
    """The date OUT holds for ``student``'s submission of content hash ``digest``; when it holds
    none yet, or only the files' while ``source`` is a platform's word, ``when`` and ``source``
    are written (``now``: this run's time) and given back."""
    kept = read(out).get((student, digest))
    if kept is not None and (from_files(source) or not from_files(kept[1])):
        return kept
    path = Path(out) / NAME
    buf = io.StringIO()
    writer = csvsafe.DictWriter(buf, FIELDS)
    if not path.exists() or path.stat().st_size == 0:
        writer.writeheader()
    writer.writerow({"hash": digest, "student": student, "submitted_at": when.isoformat() if when else "",
                     "time_source": source, "first_seen": now})
    append_line(path, buf.getvalue())
    return read(out).get((student, digest), (when, source))
