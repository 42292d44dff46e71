"""When a submission was handed in, and how we know: the evidence late work is judged on.

Only the platform dates a submission, never the student: no time inside the submission (a zip's
member times, file times, a ``submission_metadata.json`` or ``timestamp.txt`` the student put in a
folder of their own) counts. In order:

- ``gradescope``: Gradescope's ``created_at``, from the export's own ``submission_metadata.yml``
  (read by discover into ``Submission.created_at``); on Gradescope itself, ``grade
  --submission-metadata`` reads the file the harness writes, /autograder/submission_metadata.json,
  outside the submission folder (``from_gradescope_json``, autograder/core/platform_time.py);
- ``nbgrader``: the ``timestamp.txt`` nbgrader writes into each collected assignment folder
  (``nbgrader submit`` writes it over any file of that name the student had), in the nbgrader
  layout only; UTC when it names no offset, as nbgrader does;
- ``collected``: the time of the entry itself in SUBMISSIONS_DIR (a .zip's or folder's own
  modification time: when the LMS download or the collection put it there), never of the files
  inside it. Copying the class without preserving times moves it: the weakest evidence, and the
  output says when it was used.

results.json's ``late.time_source`` names the one used.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from autograder.classdata.discover import Submission
from autograder.core.errors import UsageError
from autograder.core.late import parse_time
from autograder.core.platform_time import GRADESCOPE_JSON, MAX_METADATA_BYTES, Submitted, from_gradescope_json

__all__ = ["GRADESCOPE_JSON", "MAX_METADATA_BYTES", "NBGRADER_STAMP", "Submitted", "collected",
           "from_gradescope_json", "submission_time"]

NBGRADER_STAMP = "timestamp.txt"


def _utc(text: str, where: str) -> dt.datetime:
    """An nbgrader-style stamp: ISO 8601, UTC when it names no offset."""
    try:
        return parse_time(text, where)
    except UsageError:
        return parse_time(text.strip() + " UTC", where)


def submission_time(sub: Submission) -> Submitted:
    """The platform's evidence of when ``sub`` was handed in (see the module docstring)."""
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
    return collected(path)


def collected(path: Path | None) -> Submitted:
    """The time of the entry ``path`` itself (not of anything inside it): when the LMS download or
    the collection put it in SUBMISSIONS_DIR."""
    try:
        mtime = path.lstat().st_mtime if path is not None else None
    except OSError:
        mtime = None
    if mtime is None:
        return Submitted(None, "no time found (no platform timestamp; the entry is unreadable)")
    return Submitted(dt.datetime.fromtimestamp(mtime, dt.timezone.utc),
                     "collected: the entry's own time in SUBMISSIONS_DIR (no platform timestamp)")
