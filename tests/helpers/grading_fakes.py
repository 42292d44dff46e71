"""A made-up grading context for the tests of grade.py's steps and its lanes: what run_check, the
stand-in step and the lanes ask of a GradingContext, without a child."""
from __future__ import annotations

import math
import time
from pathlib import Path


class FakeContext:
    """``student``: the sandbox of the lane it belongs to (None: the first lane's)."""

    def __init__(self, folder: Path, deadline: float = math.inf, student=None):
        self.submission_dir, self.deadline, self.student = folder, deadline, student

    def has(self, name):
        return (self.submission_dir / name).exists()

    def require(self, module):
        pass

    def budget_left(self) -> float:
        return self.deadline - time.monotonic()

    def beside(self, student) -> FakeContext:
        return FakeContext(self.submission_dir, self.deadline, student)
