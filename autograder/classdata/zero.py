"""Results for a submission that was not graded, in Gradescope's format.

``zero_results``: a zero with the reason, when a student's entry holds nothing gradable, when the
grader refuses it (unreadable zip, symlinks, absurd sizes), or when grading it ran past its time
budget or stopped twice. The reason goes in ``output`` (the student sees it) and in
``grade_all.reason`` (the gradebook's note column).

``grader_failure``: the grader itself failed on the submission (its reference solution did not
import, a bug in the grader): no score at all (``score`` is null), ``grade_all.grader_failed``
set. Every export leaves the student's cells empty with a note, never 0, and grade-all exits
non-zero; a rerun retries the student.

``notebook_note``: a graded submission that holds a notebook and none of the files the checks
read (the work left in the notebook) scores 0 on every check of code; the note saying why goes in
``grade_all.note`` (the gradebook's note column and the summary show it; the feedback page's
overview says it too).
"""
from __future__ import annotations

from pathlib import Path

from autograder.core import handin, ziplimits

#: grade_all key of a note on a graded submission that needs saying why it scored what it did.
NOTE = "note"

#: The gradebook note's first words for a grader failure (the row's score cells are empty).
GRADER_FAILED = "GRADER FAILED, not a grade"


def zero_results(assignment, reason: str, *, execution_time: float = 0.0) -> dict:
    """A results dict worth 0 of the assignment's points, saying ``reason``."""
    return {
        "score": 0.0,
        "max_score": float(assignment.max_score),
        "execution_time": round(execution_time, 2),
        "output": f"Not graded: {reason}",
        "visibility": assignment.visibility,
        "tests": [],
        "grade_all": {"reason": reason},
    }


def grader_failure(assignment, reason: str, *, execution_time: float = 0.0) -> dict:
    """A results dict with no score: the grader failed on this submission, saying ``reason``."""
    results = zero_results(assignment, f"{GRADER_FAILED}: {reason}", execution_time=execution_time)
    results["score"] = None
    results["output"] = (f"Not graded: the grader failed on this submission ({reason}). This is not "
                         f"your score; the course staff will regrade it.")
    results["grade_all"]["grader_failed"] = True
    return results


def is_grader_failure(results: dict | None) -> bool:
    """Whether ``results`` record a failure of the grader (no score)."""
    info = (results or {}).get("grade_all")
    return isinstance(info, dict) and bool(info.get("grader_failed"))


def notebook_note(path: Path | str, names) -> str | None:
    """The note for a submission at ``path`` holding a notebook and none of the other ``names``
    (autograder/core/handin.py ``notebook_only``), else None."""
    try:
        files = handin.listing(handin.source(Path(path), names))
    except (OSError, ziplimits.ZipRefused):
        return None
    note = handin.notebook_only(files, names)
    return f"nothing graded: {note}" if note else None
