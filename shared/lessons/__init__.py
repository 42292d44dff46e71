"""Each lesson's student-visible code that is not the assignment itself: for why17, the Break It
verdicts students run on the simulated GPU (``python -m shared.simgpu``, the public tests). The
hidden grader adds its own probes to the same rubric (autograder/gpu/probe.py).

A lesson with GPU checks has a ``shared.lessons.<name>.gpu`` package exposing ``RUBRIC`` (a
``shared.simgpu.judging.Rubric``) and ``show(modules, cfg)`` (what the student command prints
before the verdicts); ``rubrics()`` finds them, so adding one needs no change elsewhere.
"""
from __future__ import annotations

import importlib
import pkgutil


def rubrics() -> dict:
    """Lesson name -> its ``gpu`` package, for every lesson here that has one."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        try:
            found[info.name] = importlib.import_module(f"{__name__}.{info.name}.gpu")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{info.name}.gpu":
                raise
    return found
