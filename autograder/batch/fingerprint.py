"""Fingerprints of what decides a grade, so a fixed check regrades the class and the regrade log
can say which check changed.

- ``grader_digest(asg)``: sha256 of every code and data file (``DECIDING``: a law's table of
  cases, a mistake catalogue) that the assignment's Lesson names (autograder/core/lesson.py): its
  grader package but its fixtures, the packages it declares ``deciding`` (the rubric the GPU
  checks judge with, the tables the oracles read), and the reference solution the checks compare
  with. Part of grade-all's grading key, read without importing the checks (the grade-all parent
  never imports torch).
- ``of_checks(asg, ids)``: per check id, ``<module file>:<sha256 of it>``; computed in the worker,
  which has the checks imported, and stored in the student's marker.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path

from autograder.core import lesson

#: Folders that do not decide a grade.
SKIP = ("fixtures", "__pycache__")
#: What of a folder's files decides a grade: its code and the data its checks read.
DECIDING = (".py", ".json", ".yml", ".yaml")


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def deciding_roots(asg) -> list[Path]:
    """The files and folders whose contents decide ``asg``'s verdicts, as its Lesson names them:
    the grader package, each ``deciding`` module or package, the reference solution."""
    declared = lesson.of(asg)
    roots = [declared.folder]
    for name in declared.deciding:
        spec = importlib.util.find_spec(name)
        locations = list(spec.submodule_search_locations or ()) if spec else []
        roots += [Path(p).resolve() for p in locations] or [Path(spec.origin).resolve()]
    return [*roots, asg.solutions_dir.resolve()]


def grader_digest(asg) -> str:
    """A digest of every file that decides ``asg``'s verdicts (``deciding_roots``)."""
    return _digest(tuple(deciding_roots(asg)))


def _digest(roots: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            rel = path.relative_to(root.parent)
            if path.suffix not in DECIDING or any(part in SKIP for part in rel.parts):
                continue
            h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def of_checks(asg, ids) -> dict[str, str]:
    """``{check id: 'checks/<module>.py:<hash>'}`` for the registered checks among ``ids``."""
    from autograder.grading.grade import load_checks
    registry = load_checks(asg)
    root = lesson.package_dir(asg)
    out = {}
    for check_id in ids:
        check = registry.get(check_id)
        if check is None:
            continue
        try:
            # the module the check is filed under (a rubric's checks are built by the engine,
            # autograder/gpu/checks.py, but filed under the lesson's module that registered them)
            path = Path(inspect.getsourcefile(sys.modules[check.module])).resolve()
            out[check_id] = f"{path.relative_to(root).as_posix()}:{_file_hash(path)}"
        except (TypeError, OSError, ValueError):
            continue
    return out
