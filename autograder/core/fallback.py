"""One mistake, one charge: a student file whose checks need another student file runs with the
reference's copy of that file when the student's is broken.

An assignment's ``<grader>.checks`` package may declare ``DEPENDS = {"roofline": ("predict",)}``:
roofline.py imports predict.py, so a slip in predict.py would also fail the roofline checks. Before
the first check of such a file runs, each file it needs is judged: missing, not importable, or
failing any of its own checks graded so far (its task comes first in course.yml). Then the
dependent file's child runs from a copy of the submission in which that file is the reference's,
and every check of the dependent file says so; the mistake stays charged where it was made.

The stand-in puts the reference's file where the student's code can read it. For predict.py that
gives nothing away: each of its formulas is in the stub's docstring the student already has.
"""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from autograder.core.errors import StudentError


def depends(grader: str) -> dict[str, tuple[str, ...]]:
    """Student module -> the student modules its checks also need (the grader's ``checks.DEPENDS``)."""
    raw = getattr(importlib.import_module(f"{grader}.checks"), "DEPENDS", {})
    return {module: tuple(needs) for module, needs in raw.items()}


def why_broken(ctx, module: str, tests: list[dict], checks_of: dict[str, tuple[str, ...]]) -> str | None:
    """Why the student's ``module`` cannot serve another file's checks, or None when it can.

    ``tests`` are the results so far; ``checks_of`` maps each check id to the files it needs.
    """
    if not (ctx.submission_dir / f"{module}.py").is_file():
        return f"you submitted no {module}.py"
    try:
        ctx.require(module)
    except StudentError as exc:
        return f"your {module}.py cannot be used ({exc})"
    failed = [t for t in tests if t["status"] == "failed" and module in checks_of.get(t["check"], ())]
    if failed:
        tasks = sorted({t["task"] for t in failed})
        return f"your {module}.py failed {len(failed)} of its checks, charged in {', '.join(tasks)}"
    return None


def stand_in(submission_dir: Path, module: str, reference_dir: Path, dest: Path) -> Path:
    """A copy of the submission at ``dest`` with ``module``.py replaced by the reference's."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(submission_dir, dest)
    shutil.copyfile(reference_dir / f"{module}.py", dest / f"{module}.py")
    return dest


def note(dependent: str, module: str, reason: str) -> str:
    """The line every check of ``dependent`` carries when it ran with the reference's ``module``."""
    return (f"Your {dependent}.py was graded with the reference's {module}.py because {reason}; "
            f"this check judges your {dependent}.py alone.")
