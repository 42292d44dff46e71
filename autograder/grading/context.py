"""What a check may ask of the grader: the Context of autograder/core/registry.py, implemented.

Student calls go to the submission's sandbox; reference calls go to a second, trusted sandbox
running solutions/<folder> with the same runner, started only when a check first needs it and
cached by call key. Checks see plain data only.
"""
from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path
from typing import Any

from autograder.core.errors import GraderError, StudentMissing, StudentTimeout
from autograder.grading.simseed import Secret
from autograder.grading.simseed import sim_seed as seed_of_sim
from autograder.sandbox import cputime
from autograder.sandbox.parent import Sandbox


class GradingContext:
    """One submission being graded.

    Attributes:
        seed: stable per submission (from a hash of its files); seeds randomized profiles.
        device: 'sim', 'cpu' or 'cuda', as asked on the command line (or course.yml's default).
        submission_dir: the private copy of the submission (read it; never execute it here).
        time_limit_s: seconds per student call unless a check passes its own timeout_s.
        sim_profile: course.yml's base profile key of the simulated GPU (e.g. 'h100-sxm').
        sim_seed: the seed of the simulated GPU's profile: ``seed`` with the grader's secret
            (autograder/grading/simseed.py), so that a student cannot rebuild the profile.
        gpu_memo: the GPU checks' shared calls and verdicts (shared.simgpu.judging).
        deadline: time.monotonic() when the grading's budget ends (inf: none), moved on by the
            time its sandboxed children were starved of the CPU in calls (``budget_left``); a
            student call never runs past it.
    """

    def __init__(self, student: Sandbox, reference: Sandbox, *, seed: int, device: str,
                 submission_dir: Path, sim_profile: str, secret: Secret | str,
                 deadline: float = math.inf):
        self._student = student
        self._reference = reference
        self._reference_cache: dict[str, Any] = {}
        self.seed = seed
        self.device = device
        self.submission_dir = Path(submission_dir)
        self.time_limit_s = student.limits.time_limit_s
        self.sim_profile = sim_profile
        self.sim_seed = seed_of_sim(seed, secret)
        self.gpu_memo: dict = {}
        self.deadline = deadline
        self._starved_from = cputime.STARVED.seconds

    def beside(self, student) -> GradingContext:
        """A context for checks run side by side with this one's (autograder/grading/lanes.py):
        the same submission, seeds, reference and budget, with ``student`` (a sandbox of its own)
        and calls and verdicts of its own."""
        other = copy.copy(self)
        other._student, other._reference_cache, other.gpu_memo = student, {}, {}
        return other

    def budget_left(self) -> float:
        """Seconds left of the grading's budget: to ``deadline``, plus the seconds its sandboxed
        children waited for a core during calls (autograder/sandbox/cputime.py ``Starved``), so
        that a busy machine leaves the same checks run as a quiet one."""
        return self.deadline - time.monotonic() + (cputime.STARVED.seconds - self._starved_from)

    def _within_budget(self, timeout_s: float | None) -> float | None:
        """The call's time limit, cut to what is left of the grading's budget; StudentTimeout
        when nothing is left."""
        left = self.budget_left()
        if left <= 0:
            raise StudentTimeout("not run: grading this submission took its whole budget")
        return timeout_s if left >= (timeout_s or self.time_limit_s) else left

    def has(self, module: str, function: str | None = None) -> bool:
        """Whether the submission has ``module`` importable (and ``function`` callable in it).

        A name with a file extension ('measurements.json') asks whether that plain file exists.
        """
        if "." in module:
            return (self.submission_dir / module).is_file()
        try:
            names = self._student.has(module)
        except Exception:  # StudentError: absent, does not import, crashed
            return False
        return function is None or function in names

    def read_file(self, name: str, max_bytes: int) -> bytes | None:
        """Up to ``max_bytes`` of the submission's plain file ``name`` (a data file such as
        measurements.json, never code to run); None when there is no such regular file."""
        rel = Path(name)
        if rel.is_absolute() or ".." in rel.parts:
            return None
        path = self.submission_dir / rel
        if path.is_symlink() or not path.is_file():
            return None
        with open(path, "rb") as fh:
            return fh.read(max_bytes)

    def require(self, module: str) -> None:
        """Raise StudentMissing with its one-line reason unless ``module`` is importable."""
        self._student.has(module)

    def call(self, module: str, function: str, *args, sim: dict | None = None,
             timeout_s: float | None = None, **kwargs) -> Any:
        value, _trace = self._student.call(module, function, args, kwargs, sim=sim, trace=False,
                                           timeout_s=self._within_budget(timeout_s))
        return value

    def call_traced(self, module: str, function: str, *args, sim: dict | None = None,
                    timeout_s: float | None = None, **kwargs) -> tuple[Any, dict]:
        return self._student.call(module, function, args, kwargs, sim=sim, trace=True,
                                  timeout_s=self._within_budget(timeout_s))

    def call_watched(self, module: str, function: str, *args, timeout_s: float | None = None,
                     **kwargs) -> tuple[Any, dict]:
        """As ``call`` on the real CPU/GPU, plus what the function ran (autograder/runtime/
        torchwatch.py): ``{"ops": [...], "trace": {...}}``, its aten ops, each ``{"op", "shapes",
        "dtypes", "read_bytes", "written_bytes", "flops", "count"}``, and its trace (the clock
        readings in order among them: ``TorchWatch.trace``; empty without a CPU clock)."""
        value, trace = self._student.call(module, function, args, kwargs, watch=True,
                                          timeout_s=self._within_budget(timeout_s))
        trace = trace or {}
        return value, {"ops": list(trace.get("torch_ops", [])), "trace": dict(trace.get("torch_trace") or {})}

    def reference(self, module: str, function: str, *args, sim: dict | None = None,
                  **kwargs) -> Any:
        value, _trace = self.reference_traced(module, function, *args, sim=sim, **kwargs)
        return value

    def reference_traced(self, module: str, function: str, *args, sim: dict | None = None,
                         **kwargs) -> tuple[Any, dict]:
        """The reference's value and simulator trace, cached by (module, function, args, sim)."""
        from autograder.runtime import runner

        key = json.dumps([module, function, runner.encode(list(args)), runner.encode(kwargs), sim],
                         sort_keys=True, default=repr)
        if key not in self._reference_cache:
            try:
                self._reference_cache[key] = self._reference.call(module, function, args, kwargs, sim=sim,
                                                                  trace=True)
            except StudentMissing as exc:   # the reference has no such module or it does not import
                raise GraderError(f"the reference solution failed: {exc}") from None
        return self._reference_cache[key]

    @property
    def output(self) -> str:
        """What the student's code printed so far (capped)."""
        return self._student.output()
