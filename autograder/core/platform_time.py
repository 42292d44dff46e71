"""When the platform says a submission was handed in: the evidence late work is judged on.

Only the platform dates a submission, never the student (no time inside the submission counts).
``Submitted`` is one piece of evidence; ``from_gradescope_json`` reads the metadata file
Gradescope's harness writes outside the submission folder (/autograder/submission_metadata.json),
for ``grade --submission-metadata``. grade-all's other evidence (an export's metadata, nbgrader's
timestamp.txt, the entry's own time) is autograder/batch/submitted.py's.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

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
        data = json.loads(raw.decode("utf-8"))
        created = data["created_at"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError):
        raise UsageError(f"{path}: not Gradescope's submission metadata (JSON with created_at)") from None
    return Submitted(parse_time(created, str(path)), f"Gradescope {GRADESCOPE_JSON}")
