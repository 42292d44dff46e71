"""When a submission was handed in, and how we know: the evidence late work is judged on.

The platform's own word dates a submission where there is one; otherwise the newest time among
the files handed in. In order:

- ``gradescope``: Gradescope's ``created_at``, from the export's own ``submission_metadata.yml``
  (read by discover into ``Submission.created_at``); on Gradescope itself, ``grade
  --submission-metadata`` reads the file the harness writes, /autograder/submission_metadata.json,
  outside the submission folder (``from_gradescope_json``, with its due dates
  ``gradescope_policy``: autograder/core/platform_time.py);
- ``nbgrader``: the ``timestamp.txt`` nbgrader writes into each collected assignment folder
  (``nbgrader submit`` writes it over any file of that name the student had), in the nbgrader
  layout only; UTC when it names no offset, as nbgrader does;
- ``moodle``: the ``Last modified (submission)`` of Moodle's grading worksheet, given with
  ``grade-all --moodle-worksheet`` (autograder/classdata/moodle_dates.py), for a Moodle download
  (whose files all carry the time of the download); kept in OUT/submitted.csv on first sight, so
  a later run without the worksheet keeps it, and it takes the place of a date from the files;
- ``canvas``: Canvas's download says on time or ``LATE`` (its file names) but not when: the times
  of its files are when the zip was made (lib/content_zipper.rb writes each entry as it streams
  the attachment). A file not marked ``LATE`` is on time; one marked ``LATE`` counts from just
  after the due date and grace (one started day: the least lateness Canvas's word proves;
  core/late.py ``just_after_due``); an extension moves that due date too;
- ``files``: the newest modification time among the files handed in (a zip's entries' own
  times; never the time of the student's folder or zip entry itself, which is when the download
  was unpacked or copied: autograder/core/handin.py ``newest_time``).

A date from the files is the weakest evidence: it is written in OUT/submitted.csv the first time
the submission is seen and read back from there ever after, so a rerun, ``--force`` or grading a
copy of the download never re-dates it (autograder/classdata/dates.py). A student's own
``submission_metadata.*`` or ``timestamp.txt`` dates nothing. results.json's ``late.time_source``
names the source used.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from autograder.classdata import dates
from autograder.classdata.discover import Submission
from autograder.core import handin
from autograder.core.errors import UsageError
from autograder.core.late import parse_time
from autograder.core.platform_time import (
    GRADESCOPE_JSON,
    MAX_METADATA_BYTES,
    Submitted,
    from_gradescope_json,
    gradescope_policy,
)

__all__ = ["GRADESCOPE_JSON", "MAX_METADATA_BYTES", "MOODLE_SHEET", "NBGRADER_STAMP", "Submitted",
           "from_files", "from_gradescope_json", "gradescope_policy", "kept_on_first_sight",
           "submission_time"]

NBGRADER_STAMP = "timestamp.txt"


def _utc(text: str, where: str) -> dt.datetime:
    """An nbgrader-style stamp: ISO 8601, UTC when it names no offset."""
    try:
        return parse_time(text, where)
    except UsageError:
        return parse_time(text.strip() + " UTC", where)


#: The words of the weakest source: the files' own times (recorded in OUT on first sight).
FROM_FILES = f"{dates.FROM_FILES} the newest time among the files handed in (no platform timestamp)"
MOODLE_SHEET = "Moodle grading worksheet: Last modified (submission)"
CANVAS_ON_TIME = "Canvas download: not marked LATE, so handed in on time"
CANVAS_LATE = "Canvas marked it LATE (the download has no time): counted from just after the due date"


def submission_time(sub: Submission, names=()) -> Submitted:
    """The platform's evidence of when ``sub`` was handed in, else its files' (see the module
    docstring). ``names``: the files the assignment expects (to find a zip one folder deeper)."""
    if sub.created_at:
        try:
            return Submitted(parse_time(sub.created_at, "created_at"), "Gradescope submission_metadata.yml")
        except UsageError:
            pass
    path = sub.path
    if sub.layout == "nbgrader" and path is not None and path.is_dir():
        stamp = path / NBGRADER_STAMP
        if stamp.is_file() and not stamp.is_symlink():
            try:
                with open(stamp, "rb") as fh:
                    text = fh.read(4096).decode("utf-8")
                return Submitted(_utc(text.strip(), str(stamp)), f"nbgrader {NBGRADER_STAMP}")
            except (OSError, UnicodeDecodeError, UsageError):
                pass
    if sub.lms_time is not None:
        return Submitted(sub.lms_time, MOODLE_SHEET)
    if sub.marked_late is not None:
        return Submitted(None, CANVAS_LATE if sub.marked_late else CANVAS_ON_TIME)
    return from_files(path, names)


def kept_on_first_sight(found: Submitted) -> bool:
    """Whether ``found`` is written in OUT/submitted.csv the first time (the files' date, and
    Moodle's worksheet, which a later run may not be given): the rest is the platform's word in
    the download itself, read again each run."""
    return found.source in (FROM_FILES, MOODLE_SHEET)


def from_files(path: Path | None, names=(), source: str = FROM_FILES) -> Submitted:
    """The newest time among the files handed in at ``path`` (autograder/core/handin.py)."""
    when = handin.newest_time(path, names) if path is not None else None
    if when is None:
        return Submitted(None, "no time found (no platform timestamp; no readable file)")
    return Submitted(when, source)
