"""Running a student's own timing modules in this process on the simulated GPU.

A test or a tool that wants the student's functions in its own process uses this Runner: the
student's code on the student's machine needs no sandbox, and there is no reference solution to
run, so ``reference`` answers from the device model (the lesson's ``model_reference``). Every
call meets a fresh device, but the process and the module's state carry over from setting to
setting: ``python -m shared.simgpu`` and the public tests use processes.ProcessRunner instead,
each setting in a fresh process as in the grader.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Callable

from shared import simgpu


class UsageError(Exception):
    """A path that is not a student module: one line for the command to print."""


def load(path: Path, cfg: dict | None = None, name: str | None = None):
    """Import the student's module at ``path`` under its own name, or under ``name`` when given
    (beside a plain import of the same file, as in the public tests). Which file names a lesson
    times is the caller's to check (``python -m shared.simgpu`` does, from the lesson's rubric).

    The import runs on the simulated device ``cfg`` (default: the H100 profile), as on a GPU
    machine, so a device picked at import time (``torch.cuda.is_available()``) is CUDA.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    simgpu.install()                     # before the import: `from time import perf_counter` binds it
    with simgpu.active(cfg or simgpu.config()):
        return import_file(path, name or path.stem)


def import_file(path: Path, name: str):
    """Import the file ``path`` as module ``name`` (its folder first on sys.path), on whatever
    device is active."""
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class LocalRunner:
    """judging.Runner over modules imported in this process; ``reference(module, function, args,
    kwargs, sim)`` answers for a correct function (the lesson's model)."""

    def __init__(self, modules: dict, reference: Callable):
        self.modules = modules
        self._reference = reference
        self.memo: dict = {}      # the verdicts' shared calls (shared.simgpu.judging.Session)

    def _fn(self, module: str, function: str):
        if module not in self.modules:
            raise LookupError(f"no {module}.py given")
        return getattr(self.modules[module], function)

    def student(self, module, function, *args, sim, **kwargs):
        with simgpu.active(sim):
            return self._fn(module, function)(*args, **kwargs)

    def student_traced(self, module, function, *args, sim, **kwargs):
        value = self.student(module, function, *args, sim=sim, **kwargs)
        return value, simgpu.trace()

    def reference(self, module, function, *args, sim, **kwargs):
        return self._reference(module, function, args, kwargs, sim)
