"""When a submission was handed in, and how we know: the evidence late work is judged on.

The platform's own word dates a submission where there is one; otherwise the newest time among
the files handed in. In order:

- ``gradescope``: Gradescope's ``created_at``, from the export's own ``submission_metadata.yml``
  (read by discover into ``Submission.created_at``); on Gradescope itself, ``grade
  --submission-metadata`` reads the file the harness writes, /autograder/submission_metadata.json,
  outside the submission folder (``from_gradescope_json``);
- ``nbgrader``: the ``timestamp.txt`` nbgrader writes into each collected assignment folder
  (``nbgrader submit`` writes it over any file of that name the student had), in the nbgrader
  layout only; UTC when it names no offset, as nbgrader does;
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
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.classdata.discover import Submission
from autograder.core import handin, late
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


#: The words of the weakest source: the files' own times (recorded in OUT on first sight).
FROM_FILES = "files: the newest time among the files handed in (no platform timestamp)"
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
    if sub.marked_late is not None:
        return Submitted(None, CANVAS_LATE if sub.marked_late else CANVAS_ON_TIME)
    return from_files(path, names)


def is_platform_word(found: Submitted) -> bool:
    """Whether ``found`` is the platform's own (stable wherever the download lies), not the files'."""
    return found.source != FROM_FILES


def from_files(path: Path | None, names=(), source: str = FROM_FILES) -> Submitted:
    """The newest time among the files handed in at ``path`` (autograder/core/handin.py)."""
    when = handin.newest_time(path, names) if path is not None else None
    if when is None:
        return Submitted(None, "no time found (no platform timestamp; no readable file)")
    return Submitted(when, source)


def _gradescope_json(path: Path | str) -> dict:
    """The metadata file Gradescope's harness writes, as a dict; UsageError (one line naming the
    file) when it cannot be read or is not a JSON object."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read Gradescope's submission metadata ({exc.strerror})") from None
    if len(raw) > MAX_METADATA_BYTES:
        raise UsageError(f"{path}: larger than {MAX_METADATA_BYTES // 2**20} MiB; not Gradescope's metadata")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not Gradescope's submission metadata (JSON with created_at)")
    return data


def from_gradescope_json(path: Path | str) -> Submitted:
    """Gradescope's ``created_at`` from the metadata file its harness writes (outside the
    submission folder). UsageError (one line naming the file) when it is missing or holds none."""
    data = _gradescope_json(path)
    if "created_at" not in data:
        raise UsageError(f"{path}: not Gradescope's submission metadata (JSON with created_at)")
    return Submitted(parse_time(data["created_at"], str(path)), f"Gradescope {GRADESCOPE_JSON}")


def gradescope_policy(path: Path | str, policy):
    """course.yml's late ``policy`` as Gradescope's harness metadata sets it for this submission:
    (policy with Gradescope's own due date, the extension Gradescope gave a submitter or None,
    the submission time). Gradescope's documented file (gradescope-autograders.readthedocs.io,
    "Submission Metadata") carries ``assignment.due_date``; each of ``users`` may carry its own
    ``assignment.due_date`` where Gradescope gave that student an extension: the latest of a
    group's counts. A date that does not parse is one line naming the file (UsageError)."""
    data = _gradescope_json(path)
    when = from_gradescope_json(path)
    course_due = data.get("assignment") if isinstance(data.get("assignment"), dict) else {}
    if course_due.get("due_date"):
        policy = late.with_due(policy, parse_time(course_due["due_date"], f"{path}: assignment.due_date"))
    personal = []
    for user in data.get("users") if isinstance(data.get("users"), list) else []:
        own = user.get("assignment") if isinstance(user, dict) and isinstance(user.get("assignment"), dict) else {}
        if own.get("due_date"):
            personal.append(parse_time(own["due_date"], f"{path}: users[].assignment.due_date"))
    extension = late.Extension(due=max(personal)) if personal and max(personal) > policy.due else None
    return policy, extension, when
