"""The reference solution's sandbox, kept from one grading to the next in the same process.

Every grading runs the reference beside the student (the GPU checks compare with it, and the
per-call limits come from its time). Its child is trusted code, and starting a sandboxed child
costs about a fifth of a CPU second (three forks of the fork server's image and a private root),
so a grade-all worker keeps one reference child for many submissions instead of one each. Each
grading gets it back as if new: nothing it failed at is remembered (``poisoned``), its output is
dropped, and after ``REUSES`` gradings (or a crash) it is replaced, so no CPU-time budget or
memory the child gathers carries far.
"""
from __future__ import annotations

import atexit
from pathlib import Path

from autograder.sandbox.parent import Limits, Sandbox

#: Gradings one reference child serves before a fresh one replaces it (its 1,200 CPU-second
#: backstop, Limits.cpu_seconds, is then far away: a grading costs it well under a second).
REUSES = 25

_kept: dict[tuple, tuple[Sandbox, int]] = {}


def sandbox(solutions_dir: Path, limits: Limits) -> Sandbox:
    """The reference's sandbox for one grading: the kept one when it has served fewer than
    ``REUSES`` gradings, else a new one. Give it back with ``release``."""
    key = (str(solutions_dir), limits)
    box, served = _kept.pop(key, (None, 0))
    if box is not None and served >= REUSES:
        box.close()
        box = None
    if box is None:
        box, served = Sandbox(solutions_dir, limits, preload=("torch",), label="the reference solution"), 0
    box.poisoned.clear()
    box.output_log.clear()
    box.key, box.served = key, served + 1
    return box


def release(box: Sandbox) -> None:
    """The grading is over: keep ``box`` for the next one (closed if another is kept already)."""
    if box.key in _kept:
        box.close()
        return
    _kept[box.key] = (box, box.served)


def close_all() -> None:
    """Stop every kept reference child (at exit; tests that count processes call it too)."""
    while _kept:
        _key, (box, _served) = _kept.popitem()
        box.close()


atexit.register(close_all)
