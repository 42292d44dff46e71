"""Fingerprints of the grader's code, so a fixed check regrades the class and the regrade log
can say which check changed.

- ``grader_digest(asg)``: sha256 of every code and data file (``DECIDING``: a law's table of
  cases, a mistake catalogue) of the assignment's grader package (course.yml ``grader``) but its
  fixtures: part of grade-all's grading key, read without importing the checks (the grade-all
  parent never imports torch).
- ``of_checks(asg, ids)``: per check id, ``<module file>:<sha256 of it>``; computed in the worker,
  which has the checks imported, and stored in the student's marker.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import sys
from pathlib import Path

#: Folders of a grader package that do not decide a grade.
SKIP = ("fixtures", "__pycache__")
#: What of a grader package's files decides a grade: its code and the data its checks read.
DECIDING = (".py", ".json", ".yml", ".yaml")


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def grader_digest(asg) -> str:
    """A digest of the grader package's code and data (checks, schemas, tables of cases)."""
    return _digest(asg.grader)


@functools.lru_cache(maxsize=8)
def _digest(grader: str) -> str:
    import importlib
    root = Path(importlib.import_module(grader).__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in DECIDING and p.is_file()):
        rel = path.relative_to(root)
        if any(part in SKIP for part in rel.parts):
            continue
        h.update(rel.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def of_checks(asg, ids) -> dict[str, str]:
    """``{check id: 'checks/<module>.py:<hash>'}`` for the registered checks among ``ids``."""
    from autograder.core import lesson
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
            # autograder/gpu/checks.py, but filed under the lesson's gpu_<check> module)
            path = Path(inspect.getsourcefile(sys.modules[check.fn.__module__])).resolve()
            out[check_id] = f"{path.relative_to(root).as_posix()}:{_file_hash(path)}"
        except (TypeError, OSError, ValueError):
            continue
    return out
