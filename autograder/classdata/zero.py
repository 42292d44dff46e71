"""Results for a submission that was not graded, in Gradescope's format.

``zero_results``: a zero with the reason, when a student's entry holds nothing gradable, when the
grader refuses it (unreadable zip, symlinks, absurd sizes), or when grading it ran past its time
budget or stopped twice. The reason goes in ``output`` (the student sees it) and in
``grade_all.reason`` (the gradebook's note column).

``grader_failure``: the grader itself failed on the submission (its reference solution did not
import, a bug in the grader): no score at all (``score`` is null), ``grade_all.grader_failed``
set. Every export leaves the student's cells empty with a note, never 0, and grade-all exits
non-zero; a rerun retries the student.
"""
from __future__ import annotations

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
