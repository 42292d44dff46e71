"""When a submission was handed in, and how we know: the evidence late work is judged on.

In order of trust:

- ``gradescope``: Gradescope's ``created_at``, from the export's ``submission_metadata.yml`` (read
  by discover into ``Submission.created_at``) or a ``submission_metadata.json`` in the submission
  folder (what Gradescope's autograder sees);
- ``nbgrader``: the ``timestamp.txt`` nbgrader writes into each submitted assignment folder
  (UTC when it names no offset, as nbgrader does);
- ``file time``: the newest modification time of the files handed in (a zip's members carry the
  zipping machine's local time, read here as this machine's local time). Copying without
  preserving times changes it: the weakest evidence, and the output says when it was used.
"""
from __future__ import annotations

import datetime as dt
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.discover import JUNK_NAMES, Submission
from autograder.core.errors import UsageError
from autograder.core.late import parse_time

GRADESCOPE_JSON = "submission_metadata.json"
NBGRADER_STAMP = "timestamp.txt"


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
    """The best evidence of when ``sub`` was handed in (see the module docstring)."""
    if sub.created_at:
        try:
            return Submitted(parse_time(sub.created_at, "created_at"), "Gradescope submission_metadata.yml")
        except UsageError:
            pass
    path = sub.path
    if path is not None and path.is_dir():
        meta = path / GRADESCOPE_JSON
        if meta.is_file():
            try:
                data = json.loads(meta.read_text(encoding="utf-8"))
                return Submitted(parse_time(data["created_at"], str(meta)), f"Gradescope {GRADESCOPE_JSON}")
            except (OSError, ValueError, KeyError, TypeError, UsageError):
                pass
        stamp = path / NBGRADER_STAMP
        if stamp.is_file():
            try:
                return Submitted(_utc(stamp.read_text(encoding="utf-8").strip(), str(stamp)),
                                 f"nbgrader {NBGRADER_STAMP}")
            except (OSError, UnicodeDecodeError, UsageError):
                pass
    newest = _newest_file_time(path) if path is not None else None
    if newest is None:
        return Submitted(None, "no time found (no Gradescope or nbgrader timestamp, no files)")
    return Submitted(newest, "newest file time (no Gradescope or nbgrader timestamp)")


def _newest_file_time(path: Path) -> dt.datetime | None:
    try:
        if path.is_file():
            with zipfile.ZipFile(path) as zf:
                stamps = [dt.datetime(*info.date_time) for info in zf.infolist()
                          if not info.is_dir() and not any(p in JUNK_NAMES for p in info.filename.split("/"))]
            return max(stamps).astimezone() if stamps else None
        times = [p.stat().st_mtime for p in path.rglob("*")
                 if p.is_file() and not p.is_symlink() and not any(part in JUNK_NAMES for part in p.parts)]
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    return dt.datetime.fromtimestamp(max(times), dt.timezone.utc) if times else None
