"""Running a student's own bw.py / flops.py in this process on the simulated GPU.

The student command uses this Runner: the student's code on the student's machine needs no
sandbox, and there is no reference solution to run, so ``reference`` answers from the device
model (expected.py).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from shared import simgpu
from shared.simgpu import expected

#: The student modules the verdicts call.
MODULES = ("bw", "flops")


class UsageError(Exception):
    """A path that is not a student module: one line for the command to print."""


def load(path: Path, cfg: dict | None = None):
    """Import the student's module at ``path`` under its own name ('bw', 'flops').

    The import runs on the simulated device ``cfg`` (default: the H100 profile), as on a GPU
    machine, so a device picked at import time (``torch.cuda.is_available()``) is CUDA.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    name = path.stem
    if name not in MODULES:
        raise UsageError(f"{path}: expected bw.py or flops.py, got {path.name}")
    simgpu.install()                     # before the import: `from time import perf_counter` binds it
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with simgpu.active(cfg or simgpu.config()):
        spec.loader.exec_module(module)
    return module


class LocalRunner:
    """verdicts.Runner over modules imported in this process."""

    def __init__(self, modules: dict):
        self.modules = modules
        self.memo: dict = {}      # the verdicts' shared calls (shared.simgpu.verdicts._Session)

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
        if (module, function) == ("bw", "copy_bandwidth"):
            return expected.copy_gbs(sim, args[0])
        if (module, function) == ("flops", "matmul_tflops"):
            return expected.matmul_tflops(sim, args[0], kwargs.get("dtype", "bfloat16"))
        raise LookupError(f"no model answer for {module}.{function}")
