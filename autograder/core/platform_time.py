"""When the platform says a submission was handed in: the evidence late work is judged on.

Only the platform dates a submission, never the student (no time inside the submission counts).
``Submitted`` is one piece of evidence; ``from_gradescope_json`` reads the metadata file
Gradescope's harness writes outside the submission folder (/autograder/submission_metadata.json),
for ``grade --submission-metadata``, and ``gradescope_policy`` the due date and extensions Gradescope
set there. grade-all's other evidence (an export's metadata, nbgrader's timestamp.txt, the newest
time among the files handed in) is autograder/batch/submitted.py's.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from autograder.core import bounded, late
from autograder.core.errors import UsageError
from autograder.core.late import parse_time

GRADESCOPE_JSON = "submission_metadata.json"
#: Largest platform metadata file read, in bytes (Gradescope's is a few KB).
MAX_METADATA_BYTES = 1 << 20


@dataclass(frozen=True)
class Submitted:
    """``when`` (aware datetime, or None when nothing tells) and ``source`` (words for the output)."""

    when: dt.datetime | None
    source: str



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
        data = bounded.load_json(raw, bounded.Limits(max_bytes=MAX_METADATA_BYTES))
    except bounded.Refused:
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
