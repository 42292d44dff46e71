"""When a submission was handed in, and how we know: the evidence late work is judged on.

Only the platform dates a submission, never the student: no time inside the submission (a zip's
member times, file times, a ``submission_metadata.json`` or ``timestamp.txt`` the student put in a
folder of their own) counts. In order:

- ``gradescope``: Gradescope's ``created_at``, from the export's own ``submission_metadata.yml``
  (read by discover into ``Submission.created_at``); on Gradescope itself, ``grade
  --submission-metadata`` reads the file the harness writes, /autograder/submission_metadata.json,
  outside the submission folder (``from_gradescope_json``);
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
from dataclasses import dataclass
from pathlib import Path

from autograder.classdata.discover import Submission
from autograder.core import bounded
from autograder.core.errors import UsageError
from autograder.core.late import parse_time

GRADESCOPE_JSON = "submission_metadata.json"
NBGRADER_STAMP = "timestamp.txt"
#: Largest platform metadata file read, in bytes (Gradescope's is a few KB).
MAX_METADATA_BYTES = 1 << 20


@dataclass(frozen=True)
class Submitted:
    """``when`` (aware datetime, or None when nothing tells) and ``source`` (words for the output)."""

    when: dt.datetime | None
    source: str


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


def from_gradescope_json(path: Path | str) -> Submitted:
    """Gradescope's ``created_at`` from the metadata file its harness writes (outside the
    submission folder). UsageError (one line naming the file) when it is missing or holds none."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read Gradescope's submission metadata ({exc.strerror})") from None
    if len(raw) > MAX_METADATA_BYTES:
        raise UsageError(f"{path}: larger than {MAX_METADATA_BYTES // 2**20} MiB; not Gradescope's metadata")
    try:
        data = bounded.load_json(raw, bounded.Limits(max_bytes=MAX_METADATA_BYTES))
        created = data["created_at"]
    except (bounded.Refused, KeyError, TypeError):
        raise UsageError(f"{path}: not Gradescope's submission metadata (JSON with created_at)") from None
    return Submitted(parse_time(created, str(path)), f"Gradescope {GRADESCOPE_JSON}")
