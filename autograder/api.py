"""What a lesson's grader package may use of the engine (course.yml's ``grader``; core/lesson.py
says which modules the engine looks for in it). Everything else in autograder/ may change without
notice to lessons; pyproject.toml's import-linter contract holds lessons to this module, core and
the runtime's data types.

The lesson:    ``Lesson``, the one declaration a grader package exports as ``LESSON``
Checks:        ``check`` (register one), ``CheckFailed`` (its failure message), ``Context`` (what
               a check may ask), ``CPU`` and ``SIMULATED_GPU`` (the device a check declares)
Student code:  ``StudentError`` and its kinds (raised, crashed, missing, timed out), as a check's
               context calls raise them; ``Dtype`` (a torch dtype passed by name to a child);
               ``TorchWatch`` (the aten ops a function ran, in a trusted process)
GPU checks:    ``gpu_checks.register`` and ``probe`` (a rubric's verdicts behind the hidden probe)
Plots:         ``svg`` (the feedback page's chart primitives); ``JUNK_NAMES`` and ``SEARCH_DEPTH``
               (how the engine finds a student's files in a submission, for reading them alike)
"""
from __future__ import annotations

from autograder.classdata.discover import JUNK_NAMES, SEARCH_DEPTH
from autograder.core.errors import StudentCrashed, StudentError, StudentMissing, StudentRaised, StudentTimeout
from autograder.core.lesson import Lesson
from autograder.core.registry import CPU, SIMULATED_GPU, CheckFailed, Context, check
from autograder.gpu import checks as gpu_checks
from autograder.gpu import probe
from autograder.reports import svg
from autograder.runtime.dtypes import Dtype
from autograder.runtime.torchwatch import TorchWatch

__all__ = ["CPU", "JUNK_NAMES", "SEARCH_DEPTH", "SIMULATED_GPU", "CheckFailed", "Context", "Dtype", "Lesson",
           "StudentCrashed", "StudentError",
           "StudentMissing", "StudentRaised", "StudentTimeout", "TorchWatch", "check", "gpu_checks",
           "probe", "svg"]
