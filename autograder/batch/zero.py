"""Results for a submission that was not graded: a zero with the reason, in Gradescope's format.

Used when a student's entry holds nothing gradable, when the grader refuses it (unreadable zip,
symlinks, absurd sizes), or when grading it crashed or ran past its time budget. The reason goes
in ``output`` (the student sees it) and in ``grade_all.reason`` (the gradebook's note column).
"""
from __future__ import annotations


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
