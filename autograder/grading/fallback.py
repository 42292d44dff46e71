"""One mistake, one charge: a student file whose checks need another student file runs with a
stand-in for that file when the student's is broken.

An assignment's Lesson may declare ``depends={"roofline": ("predict",)}`` (autograder/core/lesson.py):
roofline.py imports predict.py, so a slip in predict.py would also fail the roofline checks. Before
the first check of such a file runs, each file it needs is judged: missing, not importable, or
failing any of its own checks graded so far (its task comes first in course.yml). Then the
dependent file's child runs from a copy of the submission in which that file is the grader's
stand-in (``<grader>/standin/<module>.py``), and every check of the dependent file says so; the
mistake stays charged where it was made.

The stand-in is code the student may read: the formulas of the public stub's docstrings, with
no argument checks. The reference solution is never put where student code can reach it (not
copied, not imported, not in a child's memory); a Lesson that depends on a file and ships no
stand-in for it is refused when it loads (UsageError), before any student code runs.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from autograder.core import lesson
from autograder.core.errors import StudentError


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


def stand_in(submission_dir: Path, module: str, grader: str, dest: Path) -> Path:
    """A copy of the submission at ``dest`` with ``module``.py replaced by the grader's stand-in."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(submission_dir, dest)
    shutil.copyfile(lesson.load(grader).stand_in(module), dest / f"{module}.py")
    return dest


def with_stand_ins(ctx, sub, grader: str, module: str, needs: tuple[str, ...], tests: list[dict],
                   checks_of: dict[str, tuple[str, ...]]) -> tuple[Path, list[str]]:
    """Before ``module``'s first check: the folder its child runs from and the lines saying why.

    Each file in ``needs`` that ``why_broken`` judges broken is replaced by the grader's stand-in
    in a copy of the submission ``sub`` (autograder/core/submission.py) beside it; with none
    broken, the submission's own folder and no lines. ``tests`` and ``checks_of`` as in
    ``why_broken``.
    """
    lines, folder = [], sub.folder
    for need in needs:
        reason = why_broken(ctx, need, tests, checks_of)
        if reason is not None:
            folder = stand_in(folder, need, grader, sub.scratch(f"{module}-with-{need}"))
            lines.append(note(module, need, reason))
    return folder, lines


def note(dependent: str, module: str, reason: str) -> str:
    """The line every check of ``dependent`` carries when it ran with the stand-in ``module``."""
    return (f"Your {dependent}.py was graded with a stand-in {module}.py (the stub's documented "
            f"formulas) because {reason}; this check judges your {dependent}.py alone.")
